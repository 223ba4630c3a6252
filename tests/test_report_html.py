"""The HTML report: model output escaped, one hashed script, a first page that stays small, checked in a real browser.

The browser tests run Debian's headless Chromium, driven by Playwright (one
launch for the module), on a report of a simulated run (the sample snapshot,
the four default models) at 1280 px, and measure the laid-out page with a
script the test adds (and names in the page's policy).
With FANOUT_SCREENSHOT=PATH set, the first screen is also saved there: that is
how docs/report-first-screen.png is made (`make screenshot`).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from test_report_support import MODELS, make_record, write_run

from fanout.report import ReportOptions, build_report, render_html, write_html_report
from fanout.report.first_page import EDIT_TABLE_SCRIPT
from fanout.base.validate import package_data
from fanout.base.records import Source, ToolCallLog, TranscriptEntry, VerdictRecord
from fanout.cli import main
from simulated import SimulatedRuns

if TYPE_CHECKING:  # Playwright is imported by the browser fixture: every xdist worker collects this file
    from playwright.sync_api import Browser, Page

TRUTH = package_data("sample_truth.yaml")
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
VERDICT_CYCLE = ("verified-high", "plausible", "unverifiable", "suspect", "incorrect", "verified-low")
pytestmark = pytest.mark.timeout(300)
"""The first browser test's set-up makes the shared demo run (tests/simulated.py) and its report: over 120 s at a
load average of 15 on 2 CPUs."""
FIRST_PAGE_LIMIT = 3_000_000
"""Bytes: the first page of a 500-edit, four-model run must stay under this (issue 14 §6)."""


def hostile_record(rcid: int, model: str, verdict: str | None) -> VerdictRecord:
    return make_record(
        rcid, model, verdict,
        cost=0.001 * (1 + MODELS.index(model)),
        rationale=f"Checked the source. {HOSTILE}",
        sources=[
            Source("https://example.org/page?a=1&b=2", True, "verified"),
            Source('javascript:alert("src")', True, "verified"),
            Source('https://evil.example/"><script>alert(2)</script>', False, "reported"),
        ],
        tool_calls=[ToolCallLog(1, "web_fetch", '{"url": "https://example.org/page?a=1&b=2"}', HOSTILE, True)],
        transcript=[
            TranscriptEntry("system", "SIFT prompt"),
            TranscriptEntry("assistant", None, [{"id": "c1", "name": "web_fetch", "arguments": HOSTILE}]),
            TranscriptEntry("tool", HOSTILE, [], "c1"),
            TranscriptEntry("assistant", f"Done. {HOSTILE}"),
        ],
    )


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first page of an 8-edit, 3-model run full of markup in model output; its edit pages beside it.
    Made once for the module: its tests only read the pages."""
    tmp_path = tmp_path_factory.mktemp("hostile")
    records = []
    for rcid in range(1, 9):
        for i, model in enumerate(MODELS):
            verdict = None if (rcid, i) == (3, 2) else VERDICT_CYCLE[(rcid + i * (rcid % 2)) % len(VERDICT_CYCLE)]
            records.append(hostile_record(rcid, model, verdict))
    run_dir = write_run(tmp_path / "run", records)
    labels = tmp_path / "labels.yaml"
    truth = ["correct", "incorrect", "unverifiable", "correct"]
    labels.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": truth[r % 4]} for r in range(1, 9)]}),
                      encoding="utf-8")
    page = tmp_path / "out" / "report.html"
    write_html_report(build_report(run_dir, ReportOptions(labels_path=labels)), page)
    return page


def pages_of(first: Path) -> dict[str, str]:
    found = {first.name: first.read_text(encoding="utf-8")}
    found.update({p.name: p.read_text(encoding="utf-8") for p in (first.parent / "report" / "edits").iterdir()})
    return found


def sha256_source(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"


def test_model_output_is_escaped_and_never_becomes_markup_on_any_page(hostile_report: Path) -> None:
    pages = pages_of(hostile_report)
    assert len(pages) == 9
    for name, html in pages.items():
        assert "<img" not in html, name
        assert 'href="javascript' not in html, name
        scripts = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
        assert scripts == ([EDIT_TABLE_SCRIPT] if name == "report.html" else []), name
    edit_page = pages["1.html"]
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in edit_page
    assert 'href="https://example.org/page?a=1&amp;b=2"' in edit_page
    assert 'title="Checked the source. &lt;script&gt;alert(&quot;x&quot;)' in pages["report.html"]


def test_the_policy_allows_the_page_s_own_script_by_hash_and_nothing_from_anywhere(hostile_report: Path) -> None:
    pages = pages_of(hostile_report)
    base = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
    assert f'content="{base}; script-src {sha256_source(EDIT_TABLE_SCRIPT)}"' in pages["report.html"]
    assert f'content="{base}"' in pages["1.html"]  # an edit page runs no script at all
    for name, html in pages.items():
        tags = Tags()
        tags.feed(html)
        assert tags.names & {"img", "link", "iframe", "object", "embed", "audio", "video", "base", "form"} == set()
        assert {a for a in tags.attributes if a == "src" or a.startswith("on")} == set(), name


class Tags(HTMLParser):
    """Every element and attribute name of a page, as a browser's parser sees them."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.add(tag)
        self.attributes.update(name for name, _ in attrs)


def test_the_first_page_has_the_charts_and_one_row_per_edit_linking_its_page(hostile_report: Path) -> None:
    html = hostile_report.read_text(encoding="utf-8")
    assert html.count("<svg") == 6  # two heatmaps, two distributions, cost against accuracy, reliability
    assert re.findall(r'<tr id="edit-(\d+)"', html) == [str(r) for r in range(1, 9)]
    assert html.count('href="report/edits/') == 8 + 24  # the edit's name and each model's verdict
    assert "<details" not in html


def test_a_single_model_run_without_labels_shows_cost_bars_and_no_heatmap(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", [make_record(1, "solo/model", "plausible", cost=0.5),
                                           make_record(2, "solo/model", None, status="timeout", cost=0.25)])
    page = render_html(build_report(run_dir))
    agreement_section = page.split('<section id="agreement">')[1].split("</section>")[0]
    assert "<svg" not in agreement_section
    assert "Cost per model (USD, known costs)" in page
    assert page.count("<svg") == 3  # two distributions and the cost bars
    assert '<a class="v v-none" href="report/edits/2.html#model-1" title="">timeout</a>' in page


# --- size ---------------------------------------------------------------------------------------

def long_record(rcid: int, model: str, n: int) -> VerdictRecord:
    """A verdict as long as a real one: a SIFT prompt, six tool calls with page text, a long rationale."""
    page_text = f"Page text about item Q{rcid}, read by {model}. " * 30
    calls = [ToolCallLog(t, "web_fetch", f'{{"url": "https://example.org/{rcid}/{t}"}}', page_text, True,
                         f"https://example.org/{rcid}/{t}") for t in range(1, 7)]
    transcript = [TranscriptEntry("system", "You are a Wikidata patroller following SIFT. " * 60),
                  TranscriptEntry("user", f"Verification question about Q{rcid}. " * 30)]
    for t in range(1, 7):
        transcript.append(TranscriptEntry("assistant", None, [{"id": f"c{t}", "name": "web_fetch",
                                                               "arguments": f'{{"url": "https://example.org/{rcid}/{t}"}}'}]))
        transcript.append(TranscriptEntry("tool", page_text, [], f"c{t}"))
    transcript.append(TranscriptEntry("assistant", f"TRANSCRIPT-END {rcid} {model}"))
    return make_record(rcid, model, VERDICT_CYCLE[(rcid + n) % 6], rationale="The sources agree. " * 40,
                       sources=[Source(f"https://example.org/{rcid}/{t}", True, "verified") for t in range(1, 4)],
                       tool_calls=calls, transcript=transcript)


@pytest.mark.timeout(300)  # 2,000 records reported: 79 s of wall at a load average of 16 on 2 CPUs
def test_a_500_edit_four_model_report_keeps_its_first_page_under_3_mb_and_every_transcript_a_link_away(
    tmp_path: Path,
) -> None:
    models = (*MODELS, "vendor/delta")
    records = [long_record(rcid, m, n) for rcid in range(1, 501) for n, m in enumerate(models)]
    run_dir = write_run(tmp_path / "run", records)
    assert (run_dir / "checkpoint.jsonl").stat().st_size > 25_000_000  # the transcripts are really there
    page = tmp_path / "report.html"
    # Fewer bootstrap resamples than a user's report (1,000): the page shows the same intervals, one figure each,
    # whatever their count (a 1.41 MB page either way), and 1,000 took a third of this test's CPU
    written = write_html_report(build_report(run_dir, ReportOptions(resamples=50)), page)

    assert page.stat().st_size < FIRST_PAGE_LIMIT
    first = page.read_text(encoding="utf-8")
    assert "TRANSCRIPT-END" not in first
    links = set(re.findall(r'<a href="(report/edits/\d+\.html)"><b>', first))
    assert len(links) == 500 and len(written) == 501
    for rcid in (1, 250, 500):
        edit_page = (tmp_path / f"report/edits/{rcid}.html").read_text(encoding="utf-8")
        assert all(f"TRANSCRIPT-END {rcid} {m}" in edit_page for m in models)


# --- the browser --------------------------------------------------------------------------------

def chromium_binary() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (Debian: apt-get update && apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@pytest.fixture(scope="module")
def chromium() -> str:
    """The browser's path; without one, the browser tests skip (fail under CI) naming the package to install."""
    return chromium_binary()


@pytest.fixture(scope="module")
def simulated_report(chromium: str, simulated_runs: SimulatedRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`fanout report --html` of the sample snapshot run through the four default models against the simulator.

    Made only when a browser is there to read it (`chromium` first): a skipped browser test costs no run.
    """
    root = tmp_path_factory.mktemp("simulated")
    # the demo run: the README's picture is of what `make demo` shows
    run_dir = simulated_runs.copy(7, root / "run", "demo")
    shutil.copyfile(TRUTH, root / TRUTH.name)
    # Relative paths, as a user in the run's folder types them: the screenshot shows no temporary directory.
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert main(["report", "run", "--labels", TRUTH.name, "--html", "-q"]) == 0
    return run_dir / "report.html"


MEASURE = """(function () {
  function wrapped(e) { var r = document.createRange(); r.selectNodeContents(e); return r.getClientRects().length > 1; }
  function shown() { return Array.prototype.filter.call(document.querySelectorAll("#edit-table tbody tr"),
                       function (r) { return !r.hidden; }).map(function (r) { return r.id; }); }
  function pick(id, value, kind) { var e = document.getElementById(id); e.value = value;
                                   e.dispatchEvent(new Event(kind)); return shown(); }
  var health = document.querySelector("#health .scroll");
  var out = {
    width: [document.documentElement.scrollWidth, window.innerWidth],
    health: [health.scrollWidth, health.clientWidth],
    broken: Array.prototype.filter.call(document.querySelectorAll(".v, .s-accept, .s-reject, .s-unsure, .card b"),
                                        wrapped).map(function (e) { return e.textContent; }),
    tools: !document.getElementById("edit-tools").hidden,
    count: document.getElementById("edit-count").textContent,
    queued: pick("edit-show", "queued", "change"),
    split: pick("edit-show", "split", "change"),
    found: (pick("edit-show", "all", "change"), pick("edit-find", "mozart", "input")),
    costly: (pick("edit-find", "", "input"), pick("edit-order", "cost", "change"))
  };
  var pre = document.createElement("pre"); pre.id = "measured"; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();"""
"""Run after the page's own script: layout at the window's width, and what the table's controls do."""


def with_measurement(html: str) -> str:
    """The page with MEASURE added at the end, and named in its policy beside the page's own script."""
    html = html.replace("script-src ", f"script-src {sha256_source(MEASURE)} ", 1)
    return html.replace("</body>", f"<script>{MEASURE}</script></body>", 1)


def test_headless_chromium_at_1280_px_lays_out_the_report_and_runs_its_table_script(
    page: Page, simulated_report: Path
) -> None:
    measured_page = simulated_report.with_name("measured.html")
    measured_page.write_text(with_measurement(simulated_report.read_text(encoding="utf-8")), encoding="utf-8")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(measured_page.as_uri())
    found = page.query_selector("pre#measured")
    assert found is not None, "the measuring script did not run"
    out = json.loads(found.text_content() or "")

    # resamples=0: the committee's rows and the costs only, without the agreement intervals (most of the time)
    report = build_report(simulated_report.parent, ReportOptions(labels_path=TRUTH, resamples=0))
    committee = report.table("committee")
    by_cost = sorted(report.run.by_edit().items(), key=lambda item: -sum(r.cost_usd or 0 for r in item[1].values()))
    assert out["width"][0] <= out["width"][1]  # nothing sticks out of the window
    assert out["health"][0] <= out["health"][1]  # the Health table is not clipped
    assert out["broken"] == []  # no verdict, stance or card figure is broken across lines
    assert (out["tools"], out["count"]) == (True, "12 of 12 edits")  # the page's own script ran under its policy
    assert out["queued"] == [f"edit-{row['rcid']}" for row in committee if row["needs_human"]]
    assert len(out["split"]) > 0
    assert out["found"] == ["edit-2540801109"]  # Wolfgang Amadeus Mozart
    assert out["costly"] == [f"edit-{rcid}" for rcid, _ in by_cost]


def test_headless_chromium_opens_an_edit_page_and_shows_every_transcript(
    page: Page, simulated_report: Path
) -> None:
    page.goto((simulated_report.parent / "report" / "edits" / "2540801101.html").as_uri())
    dom = page.content()
    assert dom.count('<section class="model" id="model-') == 4
    assert dom.count("Transcript (") == 4
    assert '<span class="old">11 March 1952</span> → <span class="new">11 March 1852</span>' in dom


FIRST_SCREEN = """() => {
  var trust = document.querySelector("#trust table"), box = document.querySelector("#trust .scroll");
  return {
    width: [document.documentElement.scrollWidth, window.innerWidth], height: window.innerHeight,
    box: [box.getBoundingClientRect().right, window.innerWidth], rows: trust.tBodies[0].rows.length,
    first_row_bottom: trust.tBodies[0].rows[0].getBoundingClientRect().bottom,
    queue: document.querySelector("#trust .queue-count a").getAttribute("href"),
    simulated: !!document.querySelector("header .simulated"),
    scripted: !document.getElementById("edit-tools").hidden
  };
}"""
"""Where the first screen's numbers are at the window's width: the trust table's first row above the fold."""


@pytest.fixture(scope="module")
def driven_chromium(chromium: str, simulated_report: Path) -> Iterator[Browser]:
    """One Chromium under Playwright for the module's browser tests: a launch is most of such a test's cost, and
    the tests' pages open in one tab of it (`tab`). The report is made first: its run needs an event loop, which
    cannot start in a thread where Playwright's sync API runs one."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def tab(driven_chromium: Browser) -> Iterator[Page]:
    """One page (one context, one tab) for the module's browser tests, each setting its window and opening its
    page of the report in it: a new context and its first page cost a test more than a second of Chromium's CPU, a
    navigation in a warm tab a quarter of it. The report's pages keep nothing in the browser (no storage, no
    cookie), so a test finds nothing of the one before but the tab's history."""
    context = driven_chromium.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture
def page(tab: Page) -> Iterator[Page]:
    """The module's tab for one test, at Playwright's default window (1280 x 720) until the test sets its own; left
    on a blank page when the test ends."""
    tab.set_viewport_size({"width": 1280, "height": 720})
    try:
        yield tab
    finally:
        tab.goto("about:blank")


@pytest.mark.parametrize(("width", "height"), [(1280, 900), (390, 844)])
def test_chromium_shows_whom_to_trust_above_the_fold_at_desktop_and_phone_width(
    page: Page, simulated_report: Path, width: int, height: int, tmp_path: Path
) -> None:
    """Playwright drives the same Chromium: its viewport goes down to a phone's 390 px (the command line's
    --window-size stops at 500). A screenshot of each width lands in the test's temporary folder."""
    page.set_viewport_size({"width": width, "height": height})
    page.goto(simulated_report.as_uri())
    out = page.evaluate(FIRST_SCREEN)
    page.screenshot(path=str(tmp_path / f"report-first-screen-{width}.png"))
    assert out["width"] == [width, width]  # nothing sticks out of the window: tables and charts scroll in their box
    assert out["box"][0] <= out["box"][1]
    assert out["rows"] == 4 and out["first_row_bottom"] <= out["height"]  # numbers, not only cards, above the fold
    assert (out["queue"], out["simulated"], out["scripted"]) == ("#queue", True, True)


def test_headless_chromium_screenshots_the_first_screen(
    page: Page, simulated_report: Path, tmp_path: Path
) -> None:
    shot = tmp_path / "report.png"
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(simulated_report.as_uri())
    page.screenshot(path=str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a blank page compresses to a few kilobytes
    wanted = os.environ.get("FANOUT_SCREENSHOT")
    if wanted:
        Path(wanted).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, wanted)
