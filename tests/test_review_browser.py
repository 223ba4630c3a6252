"""The review desk in a real browser: Playwright driving the system Chromium over a simulated run.

A reviewer works the queue by keyboard, changes a decision, reloads, and the
decisions are in reviews.jsonl, the export and the report; a page of another
origin and a DNS-rebinding name cannot post decisions. Without Chromium the
tests skip (fail under CI) naming the package to install, as test_report_html does.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import yaml
from aiohttp import web
from loopback import serving
from playwright.async_api import Browser, async_playwright
from test_report_html import chromium_binary

from fanout.report import ReportOptions
from fanout.cli import main
from fanout.judging.policy import Thresholds
from fanout.review.desk import Desk
from fanout.review.server import running_desk
from simulated import SimulatedRuns

OPTIONS = ReportOptions(thresholds=Thresholds(delta=1))
"""--delta 1: every edit the models do not agree on unanimously pauses, so the queue holds more than three."""
REBOUND = "rebind.example"
"""A name the browser resolves to 127.0.0.1, as a DNS-rebinding attacker's would."""
pytestmark = pytest.mark.asyncio(loop_scope="module")
"""One event loop for the module, so its tests share one browser (each page is a context of its own)."""


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_binary()


@pytest.fixture(scope="module")
def sim_run(chromium: str, simulated_runs: SimulatedRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample snapshot through the four default models against the simulator (seed 8, as test_queue_cli)."""
    return simulated_runs.copy(8, tmp_path_factory.mktemp("review") / "run")


@pytest.fixture
def run_dir(sim_run: Path, tmp_path: Path) -> Path:
    """A fresh copy of the run per test, so each starts with no decisions."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(sim_run, copy, ignore=shutil.ignore_patterns("run.lock", "search-cache.sqlite*"))
    return copy


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    """One Chromium for the module: a launch is most of a browser test's cost, and `browser.new_page()` opens
    each page in a new context (no cookies, storage or cache shared between tests)."""
    async with async_playwright() as p:
        launched = await p.chromium.launch(
            executable_path=chromium,
            args=["--no-sandbox", "--no-proxy-server", f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"])
        try:
            yield launched
        finally:
            await launched.close()


def reviews(run_dir: Path) -> list[dict[str, object]]:
    path = run_dir / "reviews.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_a_reviewer_decides_three_edits_by_keyboard_changes_one_and_reloads(
        browser: Browser, run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        page = await browser.new_page(viewport={"width": 1280, "height": 800})
        violations: list[str] = []
        page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        await page.goto(url)
        await page.wait_for_selector("#detail h2")
        queue = await page.eval_on_selector_all("#edits li:not([hidden])", "els => els.map(e => +e.dataset.rcid)")
        assert len(queue) >= 3
        first, second, third = queue[:3]
        assert await page.get_attribute("#edits li.current", "data-rcid") == str(first)

        await page.keyboard.press("a")
        await page.wait_for_selector('body[data-saved="1"]')
        await page.keyboard.press("r")
        await page.wait_for_selector('body[data-saved="2"]')
        await page.keyboard.press("n")
        await page.keyboard.type("source is offline")
        await page.keyboard.press("Escape")
        await page.keyboard.press("u")
        await page.wait_for_selector('body[data-saved="3"]')
        assert await page.get_attribute("#edits li.current", "data-rcid") == str(queue[3])
        for _ in range(3):
            await page.keyboard.press("k")
        await page.wait_for_selector(f'#edits li.current[data-rcid="{first}"]')
        await page.wait_for_selector("#detail h2")
        await page.keyboard.press("r")  # changed her mind: the first edit is wrong after all
        await page.wait_for_selector('body[data-saved="4"]')
        counted = await page.text_content("#counts")

        await page.reload()
        await page.wait_for_selector("#detail h2")
        shown = {rcid: await page.get_attribute(f"#edit-{rcid}", "data-decision") for rcid in (first, second, third)}
        assert shown == {first: "reject", second: "reject", third: "unsure"}
        assert await page.text_content("#counts") == counted  # the page counted as the desk does
        assert counted is not None and "(3 decided) · 12 edits · 3 decided in all" in counted
        assert await page.text_content("#edits li.current .decision") == "reject"
        history = await page.text_content("#detail .history")
        assert history is not None and history.startswith("accept ana ") and " ← reject ana " in history
        assert violations == []
        await page.screenshot(path=str(tmp_path / "desk.png"))

    assert [(r["rcid"], r["decision"], r["note"], r["reviewer"]) for r in reviews(run_dir)] == [
        (first, "accept", "", "ana"), (second, "reject", "", "ana"), (third, "unsure", "source is offline", "ana"),
        (first, "reject", "", "ana")]
    out = tmp_path / "reviewed.yaml"
    assert main(["review", str(run_dir), "--export", str(out)]) == 0
    labels = yaml.safe_load(out.read_text(encoding="utf-8"))["labels"]
    assert [(e["rcid"], e["truth"]) for e in labels] == [(first, "incorrect"), (second, "incorrect")]
    capsys.readouterr()
    assert main(["report", str(run_dir), "--delta", "1"]) == 0
    summary = capsys.readouterr().out
    assert f"human decisions: {run_dir / 'reviews.jsonl'} (3 of 12 edits; 0 accept, 2 reject, 1 unsure; by ana)" in summary
    assert "queue: 3 of " in summary and "committee: majority" in summary


ATTACKER = """<!doctype html><title>cat pictures</title><script>
window.sent = Promise.all([
  fetch("{desk}api/decisions", {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}},
        body: JSON.stringify({{rcid: {rcid}, decision: "accept", note: "from another site"}})}}).then(() => "sent", e => "failed"),
  fetch("{desk}api/decisions", {{method: "POST", headers: {{"Content-Type": "application/json"}},
        body: JSON.stringify({{rcid: {rcid}, decision: "accept"}})}}).then(r => "read " + r.status, e => "blocked")
]);
</script>"""


FORM_POST = """() => {{ const f = document.createElement("form"); f.method = "post"; f.enctype = "text/plain";
  f.action = "{desk}api/decisions"; const i = document.createElement("input"); i.name = '{{"rcid": {rcid}, "x": "';
  i.value = '", "decision": "accept"}}'; f.appendChild(i); document.body.appendChild(f); f.submit(); }}"""


async def test_a_page_of_another_origin_cannot_post_a_decision(browser: Browser, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        rcid = 2540801101

        async def attacker_page(request: web.Request) -> web.Response:
            return web.Response(text=ATTACKER.format(desk=url, rcid=rcid), content_type="text/html")

        other = web.Application()
        other.router.add_get("/", attacker_page)
        async with serving(other) as port:
            page = await browser.new_page()
            failures: list[str] = []
            page.on("requestfailed", lambda r: failures.append(f"{r.method} {r.failure}"))
            await page.goto(f"http://127.0.0.1:{port}/")
            outcome = await page.evaluate("window.sent")
            # The classic cross-site form post, a navigation: the browser shows the desk's answer.
            async with page.expect_navigation() as navigation:
                await page.evaluate(FORM_POST.format(desk=url, rcid=rcid))
            answer = await navigation.value
            assert answer is not None
            refused = (answer.status, json.loads(await page.inner_text("body")))
    # The simple fetch reached the desk, whose answer (Cross-Origin-Resource-Policy: same-origin) the browser
    # kept from the page; the JSON fetch was stopped at its preflight; the form post was answered 403.
    assert outcome == ["failed", "blocked"]
    assert failures == ["POST net::ERR_BLOCKED_BY_RESPONSE.NotSameOrigin", "POST net::ERR_FAILED"]
    assert refused == (403, {"error": f"requests from http://127.0.0.1:{port} are refused; only pages of "
                                      f"{url.rstrip('/')} may call the desk"})
    assert reviews(run_dir) == []


async def test_a_dns_rebinding_name_gets_421_and_cannot_post(browser: Browser, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        page = await browser.new_page()
        response = await page.goto(f"http://{REBOUND}:{port}/")
        assert response is not None and response.status == 421
        assert json.loads(await page.inner_text("body")) == {
            "error": f"Host '{REBOUND}:{port}' is not this desk; open http://127.0.0.1:{port}/"}
        status = await page.evaluate("""() => fetch("/api/decisions", {method: "POST",
            headers: {"Content-Type": "application/json"}, body: JSON.stringify({rcid: 2540801101, decision: "accept"})
            }).then(r => r.status)""")
    assert status == 421
    assert reviews(run_dir) == []
