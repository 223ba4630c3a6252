"""Decisions with a guarantee in the report: `--target-agreement A --risk D` certifies auto-accept and auto-reject
from the run's random human decisions and lets them replace --autopass; the accuracy from few labels beside the
labels-only intervals; which source of human decisions was used."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from test_report_support import MODELS, make_record, write_run

from fanout.cli import main
from fanout.report import ReportOptions, build_report, render_html, render_summary
from fanout.report.guarantee import GuaranteeSettings, run_order_seed
from fanout.stats.draw import random_order
from fanout.store.reviews import Review, append_review

MANIFEST = {"models": list(MODELS), "starts": ["2026-12-01T00:00:00Z"], "snapshot_sha256": "a" * 64}
SEED = run_order_seed(MANIFEST)
SPLIT = range(71, 81)
"""Edits 71..80: two models accept, one rejects; paused (agreement 0.67 < 0.75)."""


def guarantee_run(tmp_path: Path, sure: float) -> Path:
    """80 edits: 1..70 every model accepts at confidence `sure`, 71..80 split (paused)."""
    records = []
    for rcid in range(1, 81):
        row = ("plausible", "plausible", "incorrect") if rcid in SPLIT else ("plausible",) * 3
        records += [dataclasses.replace(make_record(rcid, m, v), confidence=sure) for m, v in zip(MODELS, row)]
    return write_run(tmp_path / "run", records, manifest=MANIFEST)


def decide_random_front(run_dir: Path, count: int, *, reject: frozenset[int] = frozenset()) -> list[int]:
    """People accept the first `count` edits of the run's random order (reject those in `reject`), drawn at random."""
    front = random_order(range(1, 81), SEED)[:count]
    for rcid in front:
        append_review(run_dir, Review(rcid, "reject" if rcid in reject else "accept", "", "ana",
                                      "2026-12-01T01:00:00Z", drawn="random"))
    return front


def with_target(target: float | None, **more: object) -> ReportOptions:
    return ReportOptions(guarantee=GuaranteeSettings(target_agreement=target), **more)  # type: ignore[arg-type]


def test_a_certified_auto_accept_replaces_autopass_and_decides_the_edits_it_covers(tmp_path: Path) -> None:
    run_dir = guarantee_run(tmp_path, sure=0.85)  # below --autopass 0.9: nothing passes alone by the fixed threshold
    decide_random_front(run_dir, 60)
    fixed = build_report(run_dir)
    assert (fixed.totals["auto_passed"], fixed.totals["decided"], fixed.totals["paused"]) == (0, 70, 10)
    report = build_report(run_dir, with_target(0.95))
    assert (report.totals["auto_passed"], report.totals["decided"], report.totals["paused"]) == (70, 0, 10)
    first = next(d for d in report.decisions if d.rcid == 1)
    rests_on = sum(1 for r in random_order(range(1, 81), SEED)[:60] if r not in SPLIT)
    assert first.why == (f"auto-accept certified at confidence >= 0.85: mean confidence 0.85 (95 % agreement at risk "
                         f"0.1, on {rests_on} human decisions)")
    rows = {r["rule"]: r for r in report.table("certificates")}
    accept = rows["auto-accept"]
    assert (accept["threshold"], accept["decided_alone"], accept["coverage"], accept["applied"]) == (
        0.85, 70, 70 / 80, True)
    assert (accept["rests_on"], accept["disagreements"]) == (rests_on, 0)
    assert (rows["auto-reject"]["certified"], rows["auto-reject"]["decisions"]) == (False, 0)
    data = report.to_json()
    assert data["guarantee"] == {"source": "reviews", "path": str(run_dir / "reviews.jsonl"), "decided": 60,
                                 "random_sample": 60, "drawn_random": 60, "seed": SEED, "target_agreement": 0.95,
                                 "risk": 0.1, "applied": True}
    summary = render_summary(report)
    assert ("Decisions with a guarantee (at 95 % agreement, risk 0.1; they decide what passes alone, in place of "
            "--autopass)") in summary
    assert f"from 60 random of the 60 human decisions in {run_dir / 'reviews.jsonl'}" in summary
    assert "auto-decisions certified at 0.95 agreement, risk 0.1): 70 auto-passed / 0 decided / 10 paused" in summary
    assert '<section id="guarantee"><h2>Decisions with a guarantee</h2>' in render_html(report)


def test_too_few_decisions_to_certify_means_nothing_is_decided_alone(tmp_path: Path) -> None:
    run_dir = guarantee_run(tmp_path, sure=0.95)  # above --autopass: every unanimous edit passes alone by it
    decide_random_front(run_dir, 10)
    assert build_report(run_dir).totals["auto_passed"] == 70
    report = build_report(run_dir, with_target(0.95))
    assert (report.totals["auto_passed"], report.totals["decided"]) == (0, 70)
    assert next(d for d in report.decisions if d.rcid == 1).why == (
        "auto-accept is not certified, so nothing is decided by it alone")
    accept = next(r for r in report.table("certificates") if r["rule"] == "auto-accept")
    assert accept["threshold"] is None and accept["more_needed"] is not None and accept["more_needed"] > 0
    assert accept["why"].startswith("too few decisions to certify auto-accept: ")


def test_a_disagreement_among_the_random_decisions_is_counted(tmp_path: Path) -> None:
    run_dir = guarantee_run(tmp_path, sure=0.95)
    front = decide_random_front(run_dir, 70)
    unanimous = [r for r in front if r not in SPLIT]
    decide = frozenset(unanimous[:3])  # people reject three edits every model accepted
    (run_dir / "reviews.jsonl").unlink()
    decide_random_front(run_dir, 70, reject=decide)
    accept = next(r for r in build_report(run_dir, with_target(0.95)).table("certificates") if r["rule"] == "auto-accept")
    assert (accept["certified"], accept["decisions"], accept["observed_agreement"]) == (
        False, len(unanimous), pytest.approx(1 - 3 / len(unanimous)))


def test_only_the_decided_front_of_the_random_order_is_the_sample(tmp_path: Path) -> None:
    run_dir = guarantee_run(tmp_path, sure=0.9)
    order = random_order(range(1, 81), SEED)
    decide_random_front(run_dir, 5)
    for rcid in order[6:20]:  # edits decided after a gap: not part of the random sample
        append_review(run_dir, Review(rcid, "accept", "", "ana", "2026-12-01T02:00:00Z", drawn="chosen"))
    report = build_report(run_dir)
    assert report.people is not None and report.people.sample == order[:5]
    assert report.to_json()["guarantee"]["decided"] == 19


def test_accuracy_from_few_labels_sits_beside_the_labels_only_interval_and_is_flagged_below_50(tmp_path: Path) -> None:
    run_dir = guarantee_run(tmp_path, sure=0.9)
    front = decide_random_front(run_dir, 30, reject=frozenset(random_order(range(1, 81), SEED)[:2]))
    report = build_report(run_dir)
    rows = {r["subject"]: r for r in report.table("accuracy_ppi")}
    assert list(rows) == [*MODELS, "majority", "weighted", "dawid_skene"]
    alpha, gamma = rows[MODELS[0]], rows[MODELS[2]]
    assert (alpha["labelled"], alpha["unlabelled"], alpha["few"]) == (30, 50, True)
    assert alpha["labels_only"] == pytest.approx(28 / 30)
    # alpha always agrees with the committee: a proxy that never varies adds nothing (lambda 0)
    assert (alpha["lam"], alpha["ppi_plus_low"]) == (0.0, alpha["labels_only_low"])
    # gamma rejects the split edits, which people accept: its disagreeing with the committee predicts its errors
    split = sum(r in SPLIT for r in front)
    assert gamma["labels_only"] == pytest.approx((28 - split) / 30) and split > 0
    assert gamma["narrower"] == pytest.approx(0.1026, abs=1e-4) and gamma["worth"] > 30  # 10 % narrower
    summary = render_summary(report)
    assert "Accuracy from few labels (95 % intervals" in summary
    assert "* Fewer than 50 random human decisions: normal intervals" in summary


def test_without_reviews_a_labels_file_stands_in_and_the_report_says_so(tmp_path: Path) -> None:
    run_dir = guarantee_run(tmp_path, sure=0.9)
    labels = tmp_path / "labels.yaml"
    labels.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": "correct"} for r in range(1, 81)]}))
    report = build_report(run_dir, ReportOptions(labels_path=labels))
    assert report.to_json()["guarantee"]["source"] == "labels"
    assert report.people is not None and len(report.people.sample) == 80
    assert any(n.startswith(f"No decision in reviews.jsonl: the labels file {labels} stands in") for n in report.notes)
    append_review(run_dir, Review(1, "accept", "", "ana", "2026-12-01T01:00:00Z"))
    assert build_report(run_dir, ReportOptions(labels_path=labels)).to_json()["guarantee"]["source"] == "reviews"


def test_fanout_report_and_queue_take_target_agreement_and_risk(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = guarantee_run(tmp_path, sure=0.85)
    decide_random_front(run_dir, 60)
    assert main(["report", str(run_dir), "--target-agreement", "0.95", "--risk", "0.05", "--json", "-", "-q"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["target_agreement"] == 0.95 and data["settings"]["risk"] == 0.05
    # at risk 0.05 a first test needs 59 decisions (0.95^59 <= 0.05): the 50-odd random ones are too few
    assert data["totals"]["auto_passed"] == 0
    assert "at least 59 needed even if all agree" in data["tables"]["certificates"][0]["why"]
    assert main(["queue", str(run_dir), "--target-agreement", "0.95"]) == 0
    out = capsys.readouterr().out
    rests_on = sum(1 for r in random_order(range(1, 81), SEED)[:60] if r not in SPLIT)
    assert "70 auto-passed" in out.splitlines()[0]
    assert out.splitlines()[-2:] == [
        f"auto-accept: certified at confidence >= 0.85, decides 88% of the edits alone (70), on {rests_on} random "
        "human decisions (0 disagree)",
        "auto-reject: too few decisions to certify auto-reject: 0 random human decisions of its edits, at least 45 "
        "needed even if all agree (95 % agreement at risk 0.1)"]
    assert main(["queue", str(run_dir), "--target-agreement", "0.95", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["guarantee"]["applied"] is True and data["certificates"][0]["decided_alone"] == 70
    assert main(["report", str(run_dir), "--risk", "1"]) == 2
    assert capsys.readouterr().err.strip() == "fanout report: error: --risk must be strictly between 0 and 1, got 1.0."


def test_report_csv_writes_the_accuracy_or_the_certificates_table_on_request(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    run_dir = guarantee_run(tmp_path, sure=0.85)
    assert main(["report", str(run_dir), "-q", "--csv", "-", "--csv-table", "accuracy"]) == 2
    assert capsys.readouterr().err.startswith("fanout report: error: --csv-table accuracy: no rows yet: nobody has ")
    decide_random_front(run_dir, 60)
    assert main(["report", str(run_dir), "-q", "--csv", "-", "--csv-table", "accuracy"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["subject"] for r in rows] == [*MODELS, "majority", "weighted", "dawid_skene"]
    assert rows[0]["labelled"] == "60" and rows[0]["few"] == "false" and rows[0]["labels_only"] == ""
    assert rows[0]["why"].startswith("too few to estimate: all 60 human decisions score it right")
    out = tmp_path / "certificates.csv"
    assert main(["report", str(run_dir), "-q", "--csv", str(out), "--csv-table", "certificates"]) == 0
    assert main(["report", str(run_dir), "-q", "--csv", str(out), "--csv-table", "certificates"]) == 0  # its own
    assert [r["rule"] for r in csv.DictReader(io.StringIO(out.read_text(encoding="utf-8")))] == [
        "auto-accept", "auto-reject"]
