"""The HTML report: one self-contained file, model output escaped, charts rendered by a real browser."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from test_analysis_support import MODELS, make_record, write_run

from fanout.analysis import ReportOptions, build_report, render_html
from fanout.records import Source, ToolCallLog, TranscriptEntry

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
VERDICT_CYCLE = ("verified-high", "plausible", "unverifiable", "suspect", "incorrect", "verified-low")


def hostile_record(rcid: int, model: str, verdict: str | None) -> object:
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


@pytest.fixture
def report_html(tmp_path: Path) -> str:
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
    return render_html(build_report(run_dir, ReportOptions(labels_path=labels)))


def test_model_output_is_escaped_and_never_becomes_markup(report_html: str) -> None:
    assert "<script" not in report_html
    assert "<img" not in report_html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in report_html
    assert 'href="javascript' not in report_html
    assert 'href="https://example.org/page?a=1&amp;b=2"' in report_html


def test_the_page_loads_nothing_from_anywhere_and_runs_no_script(report_html: str) -> None:
    assert "Content-Security-Policy" in report_html and "default-src 'none'" in report_html
    assert re.search(r"<(link|iframe|object|embed|audio|video)\b", report_html) is None
    assert re.search(r"\ssrc=", report_html.replace("src=x", "")) is None


def test_the_page_has_the_charts_and_one_row_per_edit(report_html: str) -> None:
    assert report_html.count("<svg") == 5  # two heatmaps, two distributions, cost against accuracy
    assert report_html.count('<tr id="edit-') == 8
    assert report_html.count("<details><summary><span class=\"v ") == 24


def chromium_binary() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (Debian: apt-get update && apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=False)


def test_headless_chromium_renders_the_charts_and_the_edit_table(report_html: str, tmp_path: Path) -> None:
    binary = chromium_binary()
    page = tmp_path / "report.html"
    page.write_text(report_html, encoding="utf-8")
    dom = run_chromium(binary, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count("<svg") == 5
    assert len(re.findall(r"<rect\b", dom.stdout)) > 40
    assert dom.stdout.count('<tr id="edit-') == 8
    assert "<script" not in dom.stdout and "<img" not in dom.stdout

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    result = run_chromium(binary, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,2000",
                          page.as_uri())
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 20_000  # a blank page compresses to a few kilobytes


def test_a_single_model_run_without_labels_shows_cost_bars_and_no_heatmap(tmp_path: Path) -> None:
    run_dir = write_run(tmp_path / "run", [make_record(1, "solo/model", "plausible", cost=0.5),
                                           make_record(2, "solo/model", None, status="timeout", cost=0.25)])
    page = render_html(build_report(run_dir))
    agreement_section = page.split('<section id="agreement">')[1].split("</section>")[0]
    assert "<svg" not in agreement_section
    assert "Cost per model (USD, known costs)" in page
    assert page.count("<svg") == 3  # two distributions and the cost bars
    assert '<span class="v v-none">timeout</span>' in page
