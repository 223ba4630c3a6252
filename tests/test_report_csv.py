"""`fanout report RUN --csv OUT`: one row per edit for a spreadsheet, made by the tables' CSV renderer."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
import yaml
from test_report_support import run_from_table
from test_report_edit_view import ADAMS, sample_run
from test_report_json import TABLE, TRUTH

from fanout.report import ReportOptions, build_report
from fanout.cli import main

DECIDED = "no confidence (none stated and no --samples 2 or more to measure one)"
HEADER = ("rcid,qid,item,property,what,change,diff_url,{truth}decision,mean_confidence,dawid_skene_posterior,"
          "vendor/alpha verdict,vendor/alpha cost_usd,vendor/alpha confidence,vendor/beta verdict,vendor/beta cost_usd,"
          "vendor/beta confidence,other/gamma verdict,other/gamma cost_usd,other/gamma confidence,outcome,reason")
"""The page's edit table in its order (edit, truth, committee, models), each part of a cell in its own column; each
confidence named for what it is (the models' mean stated one, Dawid–Skene's posterior, each verdict's)."""


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return run_from_table(tmp_path / "run", TABLE, cost=0.25)


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.yaml"
    path.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": t} for r, t in TRUTH.items()]}), encoding="utf-8")
    return path


def test_the_csv_on_standard_output_is_one_row_per_edit_with_each_model_and_the_committee(
        run_dir: Path, labels: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_dir), "--labels", str(labels), "--csv", "-"]) == 0
    out, err = capsys.readouterr()
    diff = "https://www.wikidata.org/w/index.php?diff=100000"
    assert out.splitlines() == [
        HEADER.format(truth="truth,"),
        # no verdict states a confidence here: the mean and each verdict's confidence are empty
        f"1,Q1,,P31,,value changed,{diff}1,correct,accept,,0.8479914791002303,plausible,0.25,,verified-high,0.25,,"
        f"plausible,0.25,,decided,{DECIDED}",
        f"2,Q2,,P31,,value changed,{diff}2,incorrect,reject,,0.8625387767545585,incorrect,0.25,,suspect,0.25,,"
        f"incorrect,0.25,,decided,{DECIDED}",
        # a 1-1 tie: Dawid–Skene, with its prior, leans to the stance more common in the run (accept), unsure of it
        f"3,Q3,,P31,,value changed,{diff}3,incorrect,accept,,0.42823868193396364,plausible,0.25,,incorrect,0.25,,"
        "invalid_json,0.25,,paused,only 2 of 3 verdicts (quorum 3); tie; top two 0.50 and 0.50 closer than --delta 0.20",
        f"4,Q4,,P31,,value changed,{diff}4,unverifiable,unsure,,0.6040186493842485,unverifiable,0.25,,unverifiable,"
        "0.25,,plausible,0.25,,paused,agreement 0.67 < 0.75",
    ]
    assert "Needs a human: 2 of 4 edits" in err  # the summary keeps off standard output


def test_without_labels_the_csv_has_no_truth_column_and_a_bare_flag_writes_into_the_run(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "-q", "--csv", str(run_dir)]) == 0  # a bare --csv before RUN_DIR leaves it RUN_DIR
    assert capsys.readouterr().out == f"wrote {run_dir / 'report.csv'}\n"
    text = (run_dir / "report.csv").read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADER.format(truth="")
    assert [row["decision"] for row in csv.DictReader(io.StringIO(text))] == ["accept", "reject", "accept", "unsure"]


def test_an_edit_the_snapshot_describes_gives_its_item_its_old_and_new_value_and_its_diff(tmp_path: Path) -> None:
    report = build_report(sample_run(tmp_path / "run"), ReportOptions())
    rows = {row["rcid"]: row for row in csv.DictReader(io.StringIO(report.edit_table().csv()))}
    adams = rows[str(ADAMS)]
    assert {k: adams[k] for k in ("qid", "item", "property", "what", "change", "diff_url")} == {
        "qid": "Q42", "item": "Douglas Adams", "property": "P569", "what": "date of birth (P569)",
        "change": "11 March 1952 → 11 March 1852",
        "diff_url": "https://www.wikidata.org/w/index.php?diff=2464599101&oldid=2463871150",
    }
    assert (adams["vendor/alpha verdict"], adams["vendor/alpha cost_usd"]) == ("verified-high", "0.001")


def test_a_csv_naming_a_run_file_is_refused_in_one_line_and_the_run_is_untouched(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = run_dir / "checkpoint.jsonl"
    before = log.read_bytes()
    assert main(["report", str(run_dir), "--csv", str(log)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--csv" in err and "Traceback" not in err
    assert log.read_bytes() == before and not (run_dir / "report.csv").exists()


def test_json_and_csv_cannot_both_take_standard_output(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_dir), "--json", "-", "--csv", "-"]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "only one of --json and --csv can write to standard output (-); give the other a file")


def test_each_verdicts_confidence_and_the_committees_two_confidences_are_columns_of_their_own(tmp_path: Path) -> None:
    import dataclasses

    from test_report_support import MODELS, make_record, write_run

    stated = {MODELS[0]: 0.9, MODELS[1]: 0.7, MODELS[2]: None}
    run_dir = write_run(tmp_path / "run", [dataclasses.replace(make_record(1, m, "plausible"), confidence=stated[m])
                                           for m in MODELS])
    row = next(csv.DictReader(io.StringIO(build_report(run_dir).edit_table().csv())))
    assert [row[f"{m} confidence"] for m in MODELS] == ["0.9", "0.7", ""]
    assert row["mean_confidence"] == "0.8"  # the mean of the stated ones; gamma stated none
    assert 0.5 < float(row["dawid_skene_posterior"]) < 1  # a posterior, not the models' own word
