"""`fanout report`: the report as tables, the JSON file, the terminal summary and the CLI."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from test_report_support import MODELS, run_from_table, write_run

from fanout.report import ReportOptions, build_report, render_html, render_summary
from fanout.cli import main
from fanout.base.records import VerdictRecord
from fanout.judging.policy import Thresholds

TABLE = {
    1: ("plausible", "verified-high", "plausible"),  # unanimous accept
    2: ("incorrect", "suspect", "incorrect"),  # unanimous reject
    3: ("plausible", "incorrect", None),  # split: a tie
    4: ("unverifiable", "unverifiable", "plausible"),  # 2 of 3: under 0.75
}
TRUTH = {1: "correct", 2: "incorrect", 3: "incorrect", 4: "unverifiable"}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return run_from_table(tmp_path / "run", TABLE, cost=0.25)


@pytest.fixture
def labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.yaml"
    path.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": t} for r, t in TRUTH.items()]}), encoding="utf-8")
    return path


def test_committee_rows_show_majority_decisions_and_why_edits_are_queued(run_dir: Path) -> None:
    report = build_report(run_dir)
    rows = {r["rcid"]: r for r in report.table("committee")}
    assert [rows[r]["majority"] for r in (1, 2, 3, 4)] == ["accept", "reject", None, "unsure"]
    assert (rows[3]["votes"], rows[3]["accept"], rows[3]["reject"]) == (2, 1, 1)
    assert "tie" in rows[3]["reasons"].split("; ")
    assert "agreement 0.67 < 0.75" in rows[4]["reasons"].split("; ")
    assert [r["rcid"] for r in report.table("human_queue")] == [3, 4]
    assert not rows[1]["needs_human"] and not rows[2]["needs_human"]


def test_scores_per_model_match_the_labels(run_dir: Path, labels: Path) -> None:
    report = build_report(run_dir, ReportOptions(labels_path=labels))
    scores = {r["subject"]: r for r in report.table("scores")}
    alpha, beta, gamma = (scores[m] for m in MODELS)
    assert (alpha["answered"], alpha["correct"], alpha["accuracy"]) == (4, 3, 0.75)
    assert (beta["answered"], beta["correct"], beta["accuracy"]) == (4, 4, 1.0)
    assert (gamma["labelled"], gamma["answered"], gamma["correct"]) == (4, 3, 2)
    assert (beta["reject_precision"], beta["reject_recall"]) == (1.0, 1.0)
    assert (alpha["cost_usd"], alpha["cost_per_correct_usd"]) == (1.0, 1.0 / 3)
    assert scores["majority"]["answered"] == 3 and scores["majority"]["correct"] == 3
    assert scores["majority"]["cost_usd"] == 3.0
    weights = {r["model"]: (r["weight"], r["weight_source"]) for r in report.table("reliability")}
    assert weights[MODELS[1]] == (1.0, "labels")


def test_without_labels_weights_come_from_dawid_skene_and_scores_are_empty(run_dir: Path) -> None:
    report = build_report(run_dir)
    assert report.table("scores") == []
    assert {r["weight_source"] for r in report.table("reliability")} == {"dawid_skene"}


def test_json_tables_are_lists_of_flat_rows_with_one_set_of_columns(run_dir: Path, labels: Path) -> None:
    data = build_report(run_dir, ReportOptions(labels_path=labels, project_edits=10)).to_json()
    json.dumps(data, allow_nan=False)
    assert data["models"] == list(MODELS)
    assert (data["edits"], data["records"]) == (4, 12)
    assert data["labels"]["kind"] == "labels" and data["labels"]["labelled_edits"] == 4
    assert data["totals"]["total_cost_usd"] == 3.0
    assert data["totals"]["projected_cost_usd"] == 7.5  # 3 models x 0.25 x 10 edits
    expected = {"health", "verdict_distribution", "pairwise_agreement", "overall_agreement", "model_agreement",
                "verdicts", "committee",
                "human_queue", "reliability", "calibration", "dawid_skene_confusion", "scores", "model_comparison",
                "score_confusion", "cost", "policy_replay", "human_scores", "human_agreement", "trust", "certificates",
                "accuracy_ppi", "factuality", "claim_verdicts", "prefilter",
                "team_roles", "team_workers", "team_sources", "team_rounds"}  # the team's: empty without one
    assert set(data["tables"]) == expected
    for name, rows in data["tables"].items():
        assert isinstance(rows, list), name
        assert all(set(row) == set(rows[0]) for row in rows), name
        for row in rows:
            assert all(v is None or isinstance(v, (str, int, float, bool)) for v in row.values()), name
    assert len(data["tables"]["verdicts"]) == 12
    assert len(data["tables"]["pairwise_agreement"]) == 3


def test_the_summary_shows_every_section(run_dir: Path, labels: Path) -> None:
    text = render_summary(build_report(run_dir, ReportOptions(labels_path=labels)))
    for heading in ("Health (per model)", "Verdicts", "Agreement", "Committee", "Accuracy against labels", "Cost"):
        assert f"\n{heading}" in text
    assert "4 edits x 3 models: 12 records, 11 with a verdict" in text
    total = next(line for line in text.splitlines() if line.startswith("total"))
    assert total.split() == ["total", "12", "$3.0000", "12,000/1,200", "$375.00"]


def test_cli_writes_json_and_html_and_exits_zero(run_dir: Path, labels: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out_json, out_html = tmp_path / "out" / "r.json", tmp_path / "out" / "r.html"
    code = main(["report", str(run_dir), "--labels", str(labels), "--json", str(out_json), "--html", str(out_html)])
    assert code == 0
    assert json.loads(out_json.read_text(encoding="utf-8"))["edits"] == 4
    assert out_html.read_text(encoding="utf-8").startswith("<!doctype html>")
    out = capsys.readouterr().out
    assert f"wrote {out_json}" in out and "Needs a human:" in out


def test_bare_output_flags_write_into_the_run_directory(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_dir), "--json", "--html", "-q"]) == 0
    assert (run_dir / "report.json").exists() and (run_dir / "report.html").exists()
    assert capsys.readouterr().out == (f"wrote {run_dir / 'report.json'}\nwrote {run_dir / 'report.html'}\n"
                                       f"wrote 4 edit pages in {run_dir / 'report' / 'edits'}\n")
    assert sorted(p.name for p in (run_dir / "report" / "edits").iterdir()) == [f"{r}.html" for r in (1, 2, 3, 4)]


def test_cli_names_a_missing_run_directory_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fanout report: error: run directory") and "does not exist" in err


def test_cli_refuses_an_empty_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 2
    assert "has no checkpoint.jsonl" in capsys.readouterr().err
    (tmp_path / "checkpoint.jsonl").write_text("", encoding="utf-8")
    assert main(["report", str(tmp_path)]) == 2
    assert "holds no verdicts yet" in capsys.readouterr().err


def test_cli_refuses_thresholds_outside_zero_to_one(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_dir), "--min-confidence", "1.5"]) == 2
    assert "--min-confidence must be between 0 and 1" in capsys.readouterr().err
    assert main(["report", str(run_dir), "--quorum", "nan"]) == 2
    assert "--quorum must be between 0 and 1, got nan." in capsys.readouterr().err


def test_cli_reports_a_bad_labels_file_in_one_line(run_dir: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("labels: [{rcid: 1, truth: perhaps}]\n", encoding="utf-8")
    assert main(["report", str(run_dir), "--labels", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "truth must be one of correct, unverifiable, incorrect" in err and err.count("\n") == 1


def test_the_weighted_vote_decides_each_edit_with_weights_fitted_without_its_label() -> None:
    from fanout.stats.decisions import held_out_weights

    truth = {1: "correct", 2: "correct", 3: "correct", 4: "incorrect"}
    stances = {1: {"m": "accept"}, 2: {"m": "accept"}, 3: {"m": "accept"}, 4: {"m": "accept"}, 5: {"m": "reject"}}
    weights_for = held_out_weights({"m": 0.75, "n": 0.5}, {"m": "labels", "n": "dawid_skene"}, stances, truth)
    assert weights_for(1) == {"m": 2 / 3, "n": 0.5}  # right on 1: the other three give 2 of 3
    assert weights_for(4) == {"m": 1.0, "n": 0.5}  # wrong on 4: the other three are all right
    assert weights_for(5) == {"m": 0.75, "n": 0.5}  # no label: every label counts


def broken_rule_run(tmp_path: Path) -> Path:
    """Edit 1: alpha says verified-high without a verified source; beta and gamma reject."""
    from test_report_support import make_record, write_run

    records = [make_record(1, m, v) for m, v in zip(MODELS, ("verified-high", "incorrect", "plausible"))]
    records[0].rule_violations = ["verified_verdict_without_verified_source"]
    return write_run(tmp_path / "run", records)


def test_rule_violations_are_counted_per_model_in_the_health_table(tmp_path: Path) -> None:
    report = build_report(broken_rule_run(tmp_path))
    assert {r["model"]: r["rule_violations"] for r in report.table("health")} == dict(zip(MODELS, (1, 0, 0)))
    assert "rule viol." in render_summary(report)


def test_by_default_a_verdict_that_breaks_the_rule_casts_no_committee_vote(tmp_path: Path) -> None:
    report = build_report(broken_rule_run(tmp_path))
    [row] = report.table("committee")
    assert (row["majority"], row["votes"], row["accept"], row["reject"]) == (None, 2, 1, 1)
    assert report.to_json()["settings"]["rule_violations"] == "abstain"
    assert ("1 verdict(s) are verified-high/verified-low without a verified source, against the prompt's rule; "
            "they cast no committee vote (--rule-violations abstain).") in report.notes


def test_rule_violations_count_lets_such_a_verdict_vote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = broken_rule_run(tmp_path)
    report = build_report(run_dir, ReportOptions(rule_violations="count"))
    [row] = report.table("committee")
    assert (row["majority"], row["votes"], row["accept"], row["reject"]) == ("accept", 3, 2, 1)
    assert main(["report", str(run_dir), "--rule-violations", "count", "--json", "-q"]) == 0
    written = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    assert written["settings"]["rule_violations"] == "count"


def test_each_edit_is_auto_passed_decided_or_paused_and_the_counts_reach_every_output(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # One verdict per model, asked once: no confidence is measured, so nothing passes on it. Edit 4 is 2 of 3.
    assert main(["report", str(run_dir), "--pause", "0.7", "--delta", "0.5", "--autopass", "0.95", "--json"]) == 0
    data = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))
    rows = {r["rcid"]: r for r in data["tables"]["committee"]}
    assert [(rows[r]["outcome"], rows[r]["mean_confidence"]) for r in (1, 2, 3, 4)] == [
        ("decided", None), ("decided", None), ("paused", None), ("paused", None)]
    assert rows[1]["why"] == "no confidence (none stated and no --samples 2 or more to measure one)"
    assert rows[4]["reasons"] == "agreement 0.67 < 0.75; top two 0.67 and 0.33 closer than --delta 0.50"
    assert rows[3]["reasons"].endswith("; tie; top two 0.50 and 0.50 closer than --delta 0.50")
    assert (data["totals"]["auto_passed"], data["totals"]["decided"], data["totals"]["paused"]) == (0, 2, 2)
    assert (data["settings"]["pause"], data["settings"]["delta"], data["settings"]["autopass"]) == (0.7, 0.5, 0.95)
    out = capsys.readouterr().out
    assert "Thresholds (--pause 0.70, --delta 0.50, --autopass 0.95): 0 auto-passed / 2 decided / 2 paused\n" in out
    page = render_html(build_report(run_dir))
    assert "<b>0 / 2 / 2</b><span>auto-passed / decided / paused</span>" in page


def test_measured_confidence_passes_an_edit_on_its_own(tmp_path: Path) -> None:
    run_dir = run_from_table(tmp_path / "run", TABLE, cost=0.25)
    records = [VerdictRecord.from_dict(json.loads(line)) for line in (run_dir / "checkpoint.jsonl").read_text().splitlines()]
    for record in records:  # as if each verdict had been asked three times, all agreeing
        record.stability = 1.0 if record.verdict else None
    write_run(run_dir, records)
    assert main(["report", str(run_dir), "--pause", "0.7", "--delta", "0.5", "--autopass", "0.95", "--json"]) == 0
    rows = {r["rcid"]: r for r in json.loads((run_dir / "report.json").read_text(encoding="utf-8"))["tables"]["committee"]}
    assert [(rows[r]["outcome"], rows[r]["mean_confidence"]) for r in (1, 2, 3, 4)] == [
        ("auto-passed", 1.0), ("auto-passed", 1.0), ("paused", 1.0), ("paused", 1.0)]
    assert rows[1]["why"] == "mean confidence 1.00 >= --autopass 0.95"


def test_the_mean_confidence_is_named_for_what_it_averages_stated_or_measured(tmp_path: Path) -> None:
    """A run asked once averages stated confidences; a run asked with --samples averages stabilities: the queue's
    column and the committee's cell say which, never "stated" for a figure the samples measured."""
    stated = run_from_table(tmp_path / "stated", TABLE, cost=0.25)
    records = [VerdictRecord.from_dict(json.loads(line)) for line in (stated / "checkpoint.jsonl").read_text().splitlines()]
    for record in records:
        record.confidence = 0.8 if record.verdict else None
    write_run(stated, records)
    measured = write_run(tmp_path / "measured", [dataclasses.replace(r, stability=1.0 if r.verdict else None)
                                                 for r in records])
    options = ReportOptions(thresholds=Thresholds(pause=0.9))  # every edit pauses: the queue lists them all
    for run_dir, words in ((stated, "stated"), (measured, "stability")):
        report = build_report(run_dir, options)
        assert report.confidence_read == words
        page = render_html(report)
        assert f"<th>mean confidence ({words})</th>" in page  # the queue's column
        cell = "mean stated confidence 0.80" if words == "stated" else "mean confidence (stability) 1.00"
        assert f'<span class="muted">{cell}</span>' in page  # the committee's cell in the edit table


def test_cli_refuses_thresholds_that_thresholds_refuse(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(run_dir), "--pause", "1.5"]) == 2
    assert capsys.readouterr().err == "fanout report: error: --pause must be from 0 to 1 (got 1.5).\n"
    assert main(["report", str(run_dir), "--pause", "0.95"]) == 2
    assert capsys.readouterr().err == "fanout report: error: --pause (0.95) must not be above --autopass (0.9).\n"
    assert not (run_dir / "report.json").exists()


def test_each_verdicts_confidence_and_each_models_reliability_bins_are_in_the_json(tmp_path: Path) -> None:
    import dataclasses

    from test_report_support import make_record, write_run

    stated = {(1, MODELS[0]): 0.95, (1, MODELS[1]): 0.85, (2, MODELS[0]): 0.75, (2, MODELS[1]): 0.15}
    records = [dataclasses.replace(make_record(r, m, v), confidence=stated.get((r, m)))
               for r, row in {1: ("plausible", "plausible", "incorrect"), 2: ("incorrect", "plausible", None)}.items()
               for m, v in zip(MODELS, row)]
    run_dir = write_run(tmp_path / "run", records)
    (run_dir / "labels.yaml").write_text(yaml.safe_dump({"labels": [{"rcid": 1, "truth": "correct"},
                                                                     {"rcid": 2, "truth": "incorrect"}]}))
    data = build_report(run_dir).to_json()
    verdicts = {(r["rcid"], r["model"]): (r["confidence"], r["confidence_kind"]) for r in data["tables"]["verdicts"]}
    assert verdicts[(1, MODELS[0])] == (0.95, "stated confidence") and verdicts[(1, MODELS[2])] == (None, "none")
    assert data["tables"]["committee"][0]["mean_confidence"] == pytest.approx(0.9)
    bins = data["calibration_bins"][MODELS[1]]  # beta: right at 0.85, wrong at 0.15
    assert [(b["low"], b["high"], b["n"], b["mean_confidence"], b["accuracy"]) for b in bins if b["n"]] == [
        (0.1, pytest.approx(0.2), 1, 0.15, 0.0), (0.8, pytest.approx(0.9), 1, 0.85, 1.0)]
    assert len(bins) == 10
