"""The review desk in a real browser: Playwright driving the system Chromium over a simulated run.

A reviewer works the queue by keyboard, changes a decision, reloads, and the
decisions are in reviews.jsonl, the export and the report; a page of another
origin and a DNS-rebinding name cannot post decisions. Without Chromium the
tests skip (fail under CI) naming the package to install, as test_report_html does.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import pytest_asyncio
import yaml
from aiohttp import web
from loopback import serving
from test_report_html import chromium_binary

from fanout.report import ReportOptions, build_report
from fanout.cli import main
from fanout.judging.policy import Thresholds
from fanout.review.desk import Desk
from fanout.review.server import running_desk
from fanout.store.reviews import Review, append_review
from simulated import SimulatedRuns

if TYPE_CHECKING:  # Playwright is imported by the browser fixture: every xdist worker collects this file
    from playwright.async_api import Browser, Page

OPTIONS = ReportOptions(thresholds=Thresholds(delta=1))
"""--delta 1: every edit the models do not agree on unanimously pauses, so the queue holds more than three."""
REBOUND = "rebind.example"
"""A name the browser resolves to 127.0.0.1, as a DNS-rebinding attacker's would."""
Listen = Callable[[str, Callable[[Any], object]], None]
"""The `listen` fixture: `page.on` for one test."""
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(300)]
"""One event loop for the module, so its tests share one browser and one tab (`tab`). The first
test's set-up makes the shared demo run (tests/simulated.py): over 120 s at a load average of 15 on 2 CPUs."""


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_binary()


@pytest.fixture(scope="module")
def sim_run(chromium: str, simulated_runs: SimulatedRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo run (`make demo`: the sample snapshot through the four default models against the simulator's
    `demo` profile, seed 7), so the desk's pictures in the docs are of the run the README's picture shows."""
    return simulated_runs.copy(7, tmp_path_factory.mktemp("review") / "run", "demo")


@pytest.fixture
def run_dir(sim_run: Path, tmp_path: Path) -> Path:
    """A fresh copy of the run per test, so each starts with no decisions."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(sim_run, copy, ignore=shutil.ignore_patterns("run.lock", "search-cache.sqlite*"))
    return copy


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser(chromium: str) -> AsyncIterator[Browser]:
    """One Chromium for the module: a launch is most of a browser test's cost."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        launched = await p.chromium.launch(
            executable_path=chromium,
            args=["--no-sandbox", "--no-proxy-server", f"--host-resolver-rules=MAP {REBOUND} 127.0.0.1"])
        try:
            yield launched
        finally:
            await launched.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tab(browser: Browser) -> AsyncIterator[Page]:
    """One page (one context, one tab) for the module's tests, each navigating it to a desk of its own: a new context
    and its first page cost a test more than a second of Chromium's CPU, a navigation in a warm tab a quarter of it.
    Nothing of one test reaches the next: each test's desk listens on a port of its own, so its pages are of an
    origin of their own (sessionStorage, cache entries and CORS preflights are per origin; the desk sets no
    cookie), and the `page` fixture gives each test the tab on a blank page, at 1280 x 800 (`listen` takes the
    test's handlers off it when the test ends)."""
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        yield await context.new_page()
    finally:
        await context.close()


@pytest_asyncio.fixture(loop_scope="module")
async def page(tab: Page) -> AsyncIterator[Page]:
    """The module's tab for one test. Afterwards it leaves the test's desk for a blank page: an open desk page
    keeps polling its (stopped) desk and drawing, Chromium CPU spent on no test."""
    await tab.set_viewport_size({"width": 1280, "height": 800})
    try:
        yield tab
    finally:
        await tab.goto("about:blank")


@pytest_asyncio.fixture(loop_scope="module")
async def listen(tab: Page) -> AsyncIterator[Listen]:
    """`page.on` for one test: its handlers come off the module's tab when the test ends."""
    added: list[tuple[str, Callable[[Any], object]]] = []

    def on(event: str, handler: Callable[[Any], object]) -> None:
        tab.on(event, handler)  # type: ignore[call-overload]
        added.append((event, handler))

    yield on
    for event, handler in added:
        tab.remove_listener(event, handler)


def reviews(run_dir: Path) -> list[dict[str, object]]:
    path = run_dir / "reviews.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def shown(page: Page, count: int) -> int:
    """Wait until the desk has drawn its `count`-th edit in full (only then does a key decide it); its rcid."""
    await page.wait_for_selector(f'body[data-drawn="{count}"]')
    return int(await page.get_attribute("body", "data-shown") or 0)


async def test_a_reviewer_decides_three_edits_by_keyboard_undoes_one_changes_another_and_reloads(
        page: Page, listen: Listen, run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        violations: list[str] = []
        listen("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
        listen("pageerror", lambda e: violations.append(str(e)))
        await page.goto(url)
        first = await shown(page, 1)
        queue = await page.eval_on_selector_all("#edits li[data-rcid]", "els => els.map(e => +e.dataset.rcid)")
        assert len(queue) == 12 and queue[0] == first  # to decide: every edit, in the working order

        await page.keyboard.press("a")
        second = await shown(page, 2)
        await page.keyboard.press("r")
        third = await shown(page, 3)
        await page.keyboard.press("n")
        await page.keyboard.type("source is offline")
        await page.keyboard.press("Escape")
        await page.keyboard.press("u")
        fourth = await shown(page, 4)
        assert [first, second, third, fourth] == queue[:4]  # each decision draws the next of the working order
        await page.keyboard.press("z")  # took the unsure back: the third edit is drawn again, undecided
        assert await shown(page, 5) == third
        said = await page.text_content("#status")
        assert said is not None and said.startswith(f"undone: unsure on {await label_of(page, third)} (Q")
        await page.keyboard.press("u")
        await shown(page, 6)
        await page.select_option("#show", "decided")
        assert await click_edit(page, first) == first
        await page.keyboard.press("r")  # changed her mind: the first edit is wrong after all
        await page.wait_for_selector('body[data-saved="5"]')
        counted = await page.text_content("#counts")

        await page.reload()
        await page.wait_for_selector("body[data-drawn]")
        decided = {rcid: await page.get_attribute(f"#edit-{rcid}", "data-decision") for rcid in (first, second, third)}
        assert decided == {first: "reject", second: "reject", third: "unsure"}
        assert await page.text_content("#counts") == counted  # the page counts as the desk does
        await click_edit(page, third)
        history = await drawn_history(page)
        assert [h.split(" ")[0] for h in history] == ["unsure", "undo", "unsure"]  # oldest first, each with its time
        assert "took back the decision of" in history[1] and history[0].endswith("“source is offline”")
        assert violations == []
        await page.screenshot(path=str(tmp_path / "desk.png"))

    lines = reviews(run_dir)
    assert [(r["rcid"], r["decision"]) for r in lines] == [
        (first, "accept"), (second, "reject"), (third, "unsure"), (third, "undo"), (third, "unsure"), (first, "reject")]
    assert lines[3]["undoes"] == lines[2]["time"] and lines[5]["drawn"] == "chosen"
    out = tmp_path / "reviewed.yaml"
    assert main(["review", str(run_dir), "--export", str(out)]) == 0
    labels = yaml.safe_load(out.read_text(encoding="utf-8"))["labels"]
    assert sorted((e["rcid"], e["truth"]) for e in labels) == sorted([(first, "incorrect"), (second, "incorrect")])
    capsys.readouterr()
    assert main(["report", str(run_dir), "--delta", "1"]) == 0
    summary = capsys.readouterr().out
    assert f"human decisions: {run_dir / 'reviews.jsonl'} (3 of 12 edits; 0 accept, 2 reject, 1 unsure; by ana)" in summary


PLACED = """els => els.map(e => { const badge = e.querySelector(".decision").getBoundingClientRect(),
  time = e.querySelector("time").getBoundingClientRect(); return [badge.top, time.top, badge.right <= time.left]; })"""


async def drawn_history(page: Page) -> list[str]:
    """The edit's decision history as drawn: each line's text, checked to be on screen in the order made with
    each badge on the line of its time and before it (the issue's r-then-u badges drifted away from their times)."""
    placed = await page.eval_on_selector_all("#detail ol.history li", PLACED)
    assert [top for top, _, _ in placed] == sorted(top for top, _, _ in placed)
    assert all(abs(badge - time) < 4 and before for badge, time, before in placed)
    return list(await page.eval_on_selector_all("#detail ol.history li", "els => els.map(e => e.textContent)"))


async def click_edit(page: Page, rcid: int) -> int:
    """Click an edit in the list and wait until it is drawn in full."""
    await page.wait_for_selector(f"#edit-{rcid}")
    drawn = int(await page.get_attribute("body", "data-drawn") or 0)
    await page.click(f"#edit-{rcid}")
    await page.wait_for_function("([r, n]) => document.body.dataset.shown === String(r) && +document.body.dataset.drawn > n",
                                 arg=[rcid, drawn])
    return rcid


async def label_of(page: Page, rcid: int) -> str:
    return str(await page.evaluate(f"document.querySelector('#edit-{rcid} b').textContent"))


async def test_holding_a_key_decides_the_edit_on_screen_once(page: Page, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        await page.goto(url)
        first = await shown(page, 1)
        for _ in range(12):  # a held key: the first keydown, then eleven auto-repeats (event.repeat)
            await page.keyboard.down("a")
        await page.keyboard.up("a")
        await shown(page, 2)
        await page.keyboard.press("a")
        await shown(page, 3)
    assert [(r["rcid"], r["decision"]) for r in reviews(run_dir)][:1] == [(first, "accept")]
    assert len(reviews(run_dir)) == 2


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


async def test_a_page_of_another_origin_cannot_post_a_decision(page: Page, listen: Listen, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        rcid = 2540801101

        async def attacker_page(request: web.Request) -> web.Response:
            return web.Response(text=ATTACKER.format(desk=url, rcid=rcid), content_type="text/html")

        other = web.Application()
        other.router.add_get("/", attacker_page)
        async with serving(other) as port:
            failures: list[str] = []
            listen("requestfailed", lambda r: failures.append(f"{r.method} {r.failure}"))
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


async def test_a_dns_rebinding_name_gets_421_and_cannot_post(page: Page, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        response = await page.goto(f"http://{REBOUND}:{port}/")
        assert response is not None and response.status == 421
        assert json.loads(await page.inner_text("body")) == {
            "error": f"Host '{REBOUND}:{port}' is not this desk; open http://127.0.0.1:{port}/"}
        status = await page.evaluate("""() => fetch("/api/decisions", {method: "POST",
            headers: {"Content-Type": "application/json"}, body: JSON.stringify({rcid: 2540801101, decision: "accept"})
            }).then(r => r.status)""")
    assert status == 421
    assert reviews(run_dir) == []


SHOTS = Path(os.environ["FANOUT_DESK_SCREENSHOTS"]).resolve() if os.environ.get("FANOUT_DESK_SCREENSHOTS") else None
"""A folder (docs/ under `make screenshot`) the layout test copies its screenshots into."""
LAYOUT = """() => {
  const box = s => { const r = document.querySelector(s).getBoundingClientRect();
                     return [Math.round(r.left), Math.round(r.top), Math.round(r.right), Math.round(r.bottom)]; };
  return { scroll: [document.documentElement.scrollWidth, window.innerWidth, window.innerHeight],
           buttons: ["accept", "reject", "unsure"].map(d => box(`button[data-decision=${d}]`)),
           undo: box("#undo"), note: box("#note") };
}"""


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
async def test_the_desk_fits_a_desktop_and_a_phone_with_its_buttons_on_screen(
        page: Page, run_dir: Path, width: int, height: int, monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    """No sideways scroll on the list, on an edit or on its transcript; the three decisions and undo inside the
    window; a note box as wide as the edit's column; screenshots of both (make screenshot copies them into docs/).
    The desk runs with the report's defaults, as `fanout review` does: its counts are the demo's (4 of 12 edits
    wait for a human), with one edit the committee decided already checked by a person."""
    append_review(run_dir, Review(2540801101, "reject", "born 1952, not 1852: the diff changes the century", "ana"))
    monkeypatch.chdir(run_dir.parent)  # the run as a user names it, not a temporary path: the picture is the docs'
    async with running_desk(Desk(Path(run_dir.name), ReportOptions()), "ana", port=0) as url:
        await page.set_viewport_size({"width": width, "height": height})
        await page.goto(url)
        await shown(page, 1)
        counts = await page.text_content("#counts")
        shots = [tmp_path / f"review-desk-{width}.png"]
        await page.screenshot(path=str(shots[0]))
        listed = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        await click_edit(page, int(await page.get_attribute("#edits li[data-rcid]", "data-rcid") or 0))
        layout = await page.evaluate(LAYOUT)
        if width < 760:
            shots.append(tmp_path / f"review-desk-{width}-edit.png")
            await page.screenshot(path=str(shots[1]))
        rcids = await page.evaluate("fetch('/api/edits').then(r => r.json()).then(d => d.edits.map(e => e.rcid))")
        wide = {}
        for rcid in rcids:  # every transcript: long source URLs and tool arguments wrap on each
            await page.goto(url + f"edits/{rcid}")
            wide[rcid] = await page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert counts is not None and counts.startswith("4 of 12 edits wait for a human · 1 of 12 decided by people")
    assert listed == [width, width] and len(wide) == 12 and set(map(tuple, wide.values())) == {(width, width)}
    assert layout["scroll"] == [width, width, height]
    for left, top, right, bottom in [*layout["buttons"], layout["undo"]]:
        assert 0 <= left < right <= width and 0 <= top < bottom <= height
    left, _, right, _ = layout["note"]
    assert right - left >= min(width - 40, 800)
    if SHOTS:
        for shot in shots:
            shutil.copyfile(shot, SHOTS / shot.name)


async def test_the_list_shows_the_stance_filters_by_stance_and_disagreement_and_groups_by_editor(
        page: Page, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        await page.goto(url)
        await shown(page, 1)
        rows = {r["rcid"]: r for r in await page.evaluate("fetch('/api/edits').then(r => r.json()).then(d => d.edits)")}
        texts = await page.eval_on_selector_all("#edits li[data-rcid] .stance", "els => els.map(e => e.textContent)")
        assert all("passed" not in t for t in texts) and len(texts) == 12
        for stance in ("accept", "reject"):
            await page.select_option("#stance", stance)
            listed = await page.eval_on_selector_all("#edits li[data-rcid]", "els => els.map(e => +e.dataset.rcid)")
            assert sorted(listed) == sorted(r for r, row in rows.items() if row["stance"] == stance)
        await page.select_option("#stance", "any")
        await page.select_option("#models", "split")
        listed = await page.eval_on_selector_all("#edits li[data-rcid]", "els => els.map(e => +e.dataset.rcid)")
        assert sorted(listed) == sorted(r for r, row in rows.items() if row["split"]) and listed
        await page.select_option("#models", "any")
        await page.select_option("#group", "editor")
        groups = await page.eval_on_selector_all("#edits li.group b", "els => els.map(e => e.textContent)")
        editors = {row["editor"]["name"] for row in rows.values()}
        assert sorted(groups) == sorted(editors)
        first_group = await page.text_content("#edits li.group")
        assert first_group is not None and " to decide" in first_group


async def test_a_finished_queue_says_so_and_each_models_kappa_follows_the_decisions(
        page: Page, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        await page.goto(url)
        await shown(page, 1)
        count = 0
        await page.select_option("#show", "queue")
        paused = await page.eval_on_selector_all("#edits li[data-rcid]", "els => els.map(e => +e.dataset.rcid)")
        assert paused and await page.get_attribute("body", "data-finished") == "0"
        await click_edit(page, paused[0])
        for n, _ in enumerate(paused, start=1):  # after each decision the desk draws the next paused edit
            drawn = int(await page.get_attribute("body", "data-drawn") or 0)
            await page.keyboard.press("r")
            await page.wait_for_selector(f'body[data-saved="{n}"]')
            await shown(page, drawn + 1)
            count = n
        assert sorted(r["rcid"] for r in reviews(run_dir)) == sorted(paused)
        await page.wait_for_selector('body[data-finished="1"]')
        finished = await page.text_content("#finished")
        assert finished is not None and finished.startswith(f"Queue finished: all {len(paused)} paused edits are decided.")
        counts = await page.text_content("#counts")
        assert counts is not None and counts.startswith(f"no edit waits for a human ({len(paused)} paused, all decided")
        await page.click("#people summary")
        kappas = await page.eval_on_selector_all("#kappas tbody tr", "els => els.map(e => e.lastChild.textContent)")
        assert kappas == [str(len(paused))] * 4 and count == len(paused)
    capsys_report = build_report(run_dir, dataclasses.replace(OPTIONS, resamples=0))  # no agreement intervals: the
    assert capsys_report.totals["waiting_for_human"] == 0  # report counts the same decided edits, in a tenth the time


async def test_the_transcripts_back_link_returns_to_the_edit_in_the_view_it_was_in(page: Page, run_dir: Path) -> None:
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        await page.goto(url)
        await shown(page, 1)
        await page.select_option("#group", "editor")
        listed = await page.eval_on_selector_all("#edits li[data-rcid]", "els => els.map(e => +e.dataset.rcid)")
        target = listed[3]
        await click_edit(page, target)
        await page.keyboard.press("o")
        await page.wait_for_url(f"{url}edits/{target}")
        await page.click("text=← the desk")
        await page.wait_for_selector(f'body[data-shown="{target}"]')
        assert page.url == f"{url}#edit-{target}"
        assert await page.get_attribute("#edits li.current", "data-rcid") == str(target)
        assert await page.input_value("#group") == "editor"
        banner = await page.text_content("#simulated")
        assert banner is not None and banner.startswith("Simulated run: the verdicts come from fanout's offline simulator")


async def test_new_edits_appear_without_a_reload_and_run_text_stays_text(page: Page, run_dir: Path) -> None:
    from fanout.report.run_data import load_run

    template = load_run(run_dir).records[0]
    evil = '<img src=x onerror="document.body.dataset.owned=1">'
    added = [dataclasses.replace(r, edit_rcid=999, qid=evil, edit_revid=999) for r in load_run(run_dir).records[:4]]
    assert template.edit_rcid != 999
    async with running_desk(Desk(run_dir, OPTIONS), "ana", port=0) as url:
        await page.goto(url)
        await shown(page, 1)
        assert await page.query_selector("#edit-999") is None
        with (run_dir / "checkpoint.jsonl").open("a", encoding="utf-8") as log:  # a `fanout watch` grows the run
            for record in added:
                log.write(json.dumps(record.to_dict()) + "\n")
        await page.wait_for_selector("#edit-999", timeout=20_000)  # the next poll brings it
        assert await page.text_content("#edit-999 b") == evil
        assert await page.query_selector("#edits img") is None and await page.get_attribute("body", "data-owned") is None
        counts = await page.text_content("#counts")
        assert counts is not None and " of 13 decided by people" in counts
