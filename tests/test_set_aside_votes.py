"""Votes set aside in plain sight, and one set of answers per comparison (issue 28, item 3).

Under `--rule-violations abstain` a verified-* verdict without a verified source casts no committee vote: its
chip, the queue line and the edit page say so with the rule. Each model's accuracy and McNemar's test both
score the verdict as given, so a pair's McNemar n never exceeds what either model's accuracy counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_report_support import MODELS, make_record, write_run

from fanout.report import ReportOptions, build_report, render_html
from fanout.stats.decisions import QueuePolicy
from fanout.report.edit_pages import render_edit_pages
from fanout.cli import main

RULE = "verified without a verified source, --rule-violations abstain"


def broken_rule_run(tmp_path: Path) -> Path:
    """Edit 1: alpha says verified-high without a verified source; beta rejects and gamma accepts (a tie without
    alpha). Edits 2-5: alpha breaks the rule on 2 and 3; every model answers every edit."""
    rows = {1: ("verified-high", "incorrect", "plausible"), 2: ("verified-high", "plausible", "plausible"),
            3: ("verified-low", "incorrect", "plausible"), 4: ("incorrect", "incorrect", "plausible"),
            5: ("plausible", "plausible", "incorrect")}
    records = [make_record(rcid, m, v) for rcid, row in rows.items() for m, v in zip(MODELS, row)]
    for record in records:
        if record.model == MODELS[0] and record.edit_rcid in (1, 2, 3):
            record.rule_violations = ["verified_verdict_without_verified_source"]
    return write_run(tmp_path / "run", records)


def test_the_queue_reason_names_the_vote_set_aside_and_its_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = broken_rule_run(tmp_path)
    first = build_report(run_dir).decisions[0]
    assert first.reasons[-1] == f"set aside: {MODELS[0]} ({RULE})"
    assert first.set_aside == {MODELS[0]: RULE}
    assert main(["queue", str(run_dir), "--json"]) == 0
    row = next(r for r in json.loads(capsys.readouterr().out)["queue"] if r["rcid"] == 1)
    assert row["set_aside"] == {MODELS[0]: RULE}
    assert row["why"].endswith(f"; set aside: {MODELS[0]} ({RULE})")
    assert main(["queue", str(run_dir)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Q1 "))
    assert "alpha verified-high (set aside)" in line and "beta incorrect," in line


def test_a_decided_edit_with_a_vote_set_aside_says_so_in_its_why(tmp_path: Path) -> None:
    # beta and gamma agree on edit 2; alpha's verified-high is set aside (a quorum of half lets 2 of 3 decide;
    # Dawid–Skene on five edits is not asked for a confidence)
    report = build_report(broken_rule_run(tmp_path), ReportOptions(policy=QueuePolicy(quorum=0.5, min_confidence=0.0)))
    second = report.decisions[1]
    assert second.outcome == "decided" and second.why.endswith(f"; set aside: {MODELS[0]} ({RULE})")
    assert report.decisions[3].set_aside == {} and "set aside" not in report.decisions[3].why


def test_the_chip_of_a_vote_set_aside_is_struck_and_says_the_rule_in_the_edit_table_and_on_the_edit_page(
        tmp_path: Path) -> None:
    report = build_report(broken_rule_run(tmp_path))
    page = render_html(report)
    aside_chip = f'class="v v-verified-high aside"'
    assert page.count(aside_chip) == 2  # edits 1 and 2 (edit 3's is verified-low)
    assert page.count(f'<span class="warn set-aside">set aside: {RULE}</span>') == 3
    edit_page = dict(render_edit_pages(report, "../../report.html"))[1]
    assert edit_page.count(f'<span class="warn set-aside">set aside: {RULE}</span>') == 2  # table, alpha's section
    assert f"set aside: {MODELS[0]} ({RULE})" in edit_page  # the committee line
    assert 'class="v v-incorrect aside"' not in edit_page
    counted = render_html(build_report(tmp_path / "run", ReportOptions(rule_violations="count")))
    assert "set-aside" not in counted and "aside\"" not in counted


def test_mcnemar_and_accuracy_count_the_same_answers_and_the_table_shows_both_n(tmp_path: Path) -> None:
    run_dir = broken_rule_run(tmp_path)
    labels = tmp_path / "labels.yaml"
    truth = {1: "correct", 2: "correct", 3: "incorrect", 4: "incorrect", 5: "correct"}
    labels.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": t} for r, t in truth.items()]}), encoding="utf-8")
    report = build_report(run_dir, ReportOptions(labels_path=labels))
    accuracy = {r["subject"]: r["answered"] for r in report.table("scores") if r["kind"] == "model"}
    assert accuracy == dict.fromkeys(MODELS, 5)
    alpha_beta = next(r for r in report.table("model_comparison") if (r["model_a"], r["model_b"]) == MODELS[:2])
    # alpha's three set-aside verdicts are its answers all the same: McNemar pairs it on all 5 edits, not 2.
    assert (alpha_beta["answered_a"], alpha_beta["answered_b"], alpha_beta["edits"]) == (5, 5, 5)
    assert (alpha_beta["only_a_right"], alpha_beta["only_b_right"]) == (1, 1)  # edit 1, edit 3
    assert any(n.startswith("Each model's accuracy and McNemar's test score the verdict as the model gave it")
               for n in report.notes_on["accuracy"])


def test_queue_csv_has_one_row_per_paused_edit_with_the_report_csv_columns(tmp_path: Path,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = broken_rule_run(tmp_path)
    assert main(["queue", str(run_dir), "--csv", str(tmp_path / "queue.csv"), "--json", "-"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert out.err == f"wrote {tmp_path / 'queue.csv'}\n"
    lines = (tmp_path / "queue.csv").read_text(encoding="utf-8").splitlines()
    report_csv = build_report(run_dir).edit_table().csv().splitlines()
    assert lines[0] == report_csv[0]
    assert [int(line.split(",")[0]) for line in lines[1:]] == [row["rcid"] for row in data["queue"]]
    by_rcid = {int(line.split(",")[0]): line for line in report_csv[1:]}
    assert lines[1:] == [by_rcid[r["rcid"]] for r in data["queue"]]  # the report's rows, in the queue's order


def test_queue_json_to_a_file_writes_it_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = broken_rule_run(tmp_path)
    assert main(["queue", str(run_dir), "--json", str(tmp_path / "q.json")]) == 0
    assert capsys.readouterr().out == f"wrote {tmp_path / 'q.json'}\n"
    assert json.loads((tmp_path / "q.json").read_text(encoding="utf-8"))["paused"] == 5


def test_a_labels_file_in_the_run_directory_is_picked_up_and_the_report_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = broken_rule_run(tmp_path)
    assert build_report(run_dir).labels is None
    truth = {1: "correct", 2: "correct", 3: "incorrect", 4: "incorrect", 5: "correct"}
    (run_dir / "sim-labels.yaml").write_text(
        yaml.safe_dump({"labels": [{"rcid": r, "truth": t} for r, t in truth.items()]}), encoding="utf-8")
    report = build_report(run_dir)
    assert report.labels is not None and report.totals["labelled_edits"] == 5
    note = f"Labels from {run_dir / 'sim-labels.yaml'}, found in the run directory (no --labels given)."
    assert report.notes_on["accuracy"][0] == note
    assert main(["report", str(run_dir)]) == 0
    assert note in capsys.readouterr().out
    elsewhere = tmp_path / "other.yaml"
    elsewhere.write_text(yaml.safe_dump({"labels": [{"rcid": 1, "truth": "correct"}]}), encoding="utf-8")
    given = build_report(run_dir, ReportOptions(labels_path=elsewhere))
    assert given.totals["labelled_edits"] == 1 and note not in given.notes


def test_queue_json_before_the_run_directory_still_prints_the_queue(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = broken_rule_run(tmp_path)
    assert main(["queue", "--json", str(run_dir)]) == 0
    assert json.loads(capsys.readouterr().out)["paused"] == 5
    assert main(["queue"]) == 2
    assert "RUN_DIR is missing: give the run directory" in capsys.readouterr().err
