"""The report's edit view shows the edit: what changed, a link to the diff, and a page per edit for reading.

Runs here are built from the bundled sample snapshot with the real record
factory, so the report finds what each edit changed where a real run leaves
it: in the snapshot the manifest names.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from test_report_support import MODELS, write_run

from fanout.report import Report, ReportOptions, build_report, render_html, write_html_report
from fanout.base.validate import package_data
from fanout.base.records import ToolCallLog, TranscriptEntry, VerdictRecord
from fanout.research.record import new_record
from fanout.workloads.patrol.snapshot import load_snapshot

SAMPLE = package_data("sample_snapshot.yaml")
TRUTH = package_data("sample_truth.yaml")
ADAMS = 2540801101  # date of birth changed from 11 March 1952 to 11 March 1852, revision 2464599101
OBAMA = 2540801106  # a start-time qualifier added to "position held: President of the United States"
VERDICTS = ("verified-high", "plausible", "unverifiable", "incorrect")


def sample_records(models: tuple[str, ...] = MODELS, revid_shift: int = 0) -> list[VerdictRecord]:
    records = []
    for n, edit in enumerate(load_snapshot(SAMPLE).edits):
        for i, model in enumerate(models):
            record = new_record(edit, model, "ok", verdict=VERDICTS[(n + i * (n % 3)) % 4], cost_usd=0.001 * (i + 1),
                                rationale=f"{model} read the sources about rcid {edit.rcid}.",
                                tool_calls=[ToolCallLog(1, "web_search", '{"query": "q"}', "result text", True)],
                                transcript=[TranscriptEntry("system", "SIFT prompt"),
                                            TranscriptEntry("assistant", f"investigation of {edit.rcid} by {model}")])
            record.edit_revid += revid_shift
            records.append(record)
    return records


def sample_run(run_dir: Path, *, snapshot: Path = SAMPLE, models: tuple[str, ...] = MODELS,
               revid_shift: int = 0) -> Path:
    manifest = {"snapshot_path": str(snapshot), "models": list(models), "edits": 12}
    return write_run(run_dir, sample_records(models, revid_shift), manifest=manifest)


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The report of the sample run, built once for the tests that only read it (a build is most of such a
    test's cost: the bootstrap behind its intervals)."""
    return build_report(sample_run(tmp_path_factory.mktemp("sample") / "run"))


@pytest.fixture(scope="module")
def sample_page(sample_report: Report) -> str:
    """The first page of that report."""
    return render_html(sample_report)


def row_of(page: str, rcid: int) -> str:
    return page.split(f'<tr id="edit-{rcid}"')[1].split("</tr>")[0]


def test_an_edit_row_shows_the_item_the_property_label_old_and_new_value_and_links_the_diff(sample_page: str) -> None:
    row = row_of(sample_page, ADAMS)
    assert '<a href="report/edits/2540801101.html"><b>Douglas Adams</b></a>' in row
    assert 'href="https://www.wikidata.org/wiki/Q42"' in row
    assert "date of birth (P569)" in row
    assert '<span class="old">11 March 1952</span> → <span class="new">11 March 1852</span>' in row
    assert '<a href="https://www.wikidata.org/w/index.php?diff=2464599101&amp;oldid=2463871150" rel="noopener noreferrer">diff</a>' in row


def test_a_qualifier_edit_shows_the_statement_plain_and_the_qualifier_as_the_change(sample_page: str) -> None:
    row = row_of(sample_page, OBAMA)
    assert ('President of the United States (Q11696) '
            '<span class="new">qualifier added: start time (P580) = 20 January 2009</span>') in row


def test_records_of_another_revision_than_the_snapshot_s_show_their_ids_only(tmp_path: Path) -> None:
    report = build_report(sample_run(tmp_path / "run", revid_shift=1))
    assert report.changes == {}
    row = row_of(render_html(report), ADAMS)
    assert "<b>Q42</b>" in row and "11 March 1952" not in row
    assert "index.php?diff=2464599102" in row  # the diff of the revision the records name


def test_a_snapshot_that_is_gone_leaves_ids_and_a_note_beside_the_edit_table(tmp_path: Path) -> None:
    moved = tmp_path / "moved.yaml"
    shutil.copy(SAMPLE, moved)
    run_dir = sample_run(tmp_path / "run", snapshot=moved)
    moved.unlink()
    report = build_report(run_dir)
    assert report.changes == {}
    edits = render_html(report).split('<section id="edits">')[1]
    note = re.search(r'<p class="note">(.*?)</p>', edits)
    assert note is not None and note.group(1).startswith(f"The snapshot {moved} could not be read (")
    assert note.group(1).endswith("): edits show their ids only, not what they changed.")


def test_each_edit_gets_a_page_with_every_model_s_whole_investigation(sample_report: Report, tmp_path: Path) -> None:
    written = write_html_report(sample_report, tmp_path / "out" / "report.html")
    pages = tmp_path / "out" / "report" / "edits"
    assert written[0] == tmp_path / "out" / "report.html"
    assert sorted(written[1:]) == sorted(pages / f"{e.rcid}.html" for e in load_snapshot(SAMPLE).edits)
    adams = (pages / f"{ADAMS}.html").read_text(encoding="utf-8")
    for i, model in enumerate(MODELS, start=1):
        section = adams.split(f'<section class="model" id="model-{i}">')[1].split("</section>")[0]
        assert f"investigation of {ADAMS} by {model}" in section
        assert f"{model} read the sources about rcid {ADAMS}." in section
    assert '<a href="../../report.html#edit-2540801101">← the report</a>' in adams
    assert "Is it correct that Douglas Adams (Q42) has date of birth (P569) 11 March 1852" in adams
    first = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert 'href="report/edits/2540801101.html#model-2"' in first
    assert "investigation of" not in first  # transcripts live on the edit pages only


def test_the_header_names_the_cheapest_and_the_most_agreeable_model_with_its_interval(
        sample_report: Report, sample_page: str) -> None:
    report = sample_report
    agreeable = next(r for r in report.table("model_agreement") if r["model"] == "vendor/alpha")
    assert report.totals["cheapest_model"] == "vendor/alpha"  # 0.001 a verdict, against 0.002 and 0.003
    assert report.totals["most_agreeable_model"] == "vendor/alpha"
    header = sample_page.split("</header>")[0]
    assert '<b>$0.00100</b><span>cheapest, per verdict</span><span class="who">alpha</span>' in header
    interval = f"{agreeable['mean_kappa']:.2f} [{agreeable['mean_kappa_low']:.2f}, {agreeable['mean_kappa_high']:.2f}]"
    assert (f'<b>{interval}</b><span>most agreeable: mean kappa [95 %]</span><span class="who">alpha</span>'
            in header)


def test_notes_stand_beside_the_figures_they_qualify_not_at_the_bottom(tmp_path: Path) -> None:
    report = build_report(sample_run(tmp_path / "run"), ReportOptions(labels_path=TRUTH))
    page = render_html(report)
    header, rest = page.split("</header>")
    cost = rest.split('<section id="cost">')[1].split("</section>")[0]
    assert "<li>Only 12 edits: agreement statistics and Dawid–Skene estimates are rough.</li>" in header
    scores, _ = cost.split("<h3>Is one model better than another?</h3>")
    assert scores.endswith('<p class="note">The weighted vote weighs each model by its accuracy on the labels; each '
                           "edit is decided with weights fitted on the other edits (leave-one-out), so its score is "
                           "out of sample.</p>")
    assert "Notes" not in page.split("<footer>")[1]
