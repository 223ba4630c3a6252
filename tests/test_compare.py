"""`fanout compare RUN_A RUN_B`: each model and committee rule in both runs, paired on the edits both answered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from test_report_support import MODELS, make_record, write_run

from fanout.report import build_report
from fanout.report.compare_view import compare_reports, render_comparison, setting_notes
from fanout.stats.uncertainty import paired_difference_interval
from fanout.cli import main

ALPHA, BETA, GAMMA = MODELS
TRUTH = {1: "correct", 2: "incorrect", 3: "incorrect", 4: "correct"}


def make_run(run_dir: Path, table: dict[int, tuple[str, ...]], samples: int, prompt: str) -> Path:
    records = [make_record(rcid, m, v) for rcid, row in table.items() for m, v in zip(MODELS, row)]
    manifest = {"models": list(MODELS), "edits": len(table), "prompt_sha256": prompt, "snapshot_sha256": "s" * 64,
                "settings": {"samples": samples, "strategy": {"name": "all"}, "models": {}}}
    write_run(run_dir, records, manifest=manifest)
    (run_dir / "labels.yaml").write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": t} for r, t in TRUTH.items()]}),
                                         encoding="utf-8")
    return run_dir


@pytest.fixture()
def runs(tmp_path: Path) -> tuple[Path, Path]:
    a = make_run(tmp_path / "a", {1: ("plausible", "plausible", "incorrect"), 2: ("incorrect", "incorrect", "incorrect"),
                                  3: ("plausible", "incorrect", "plausible"), 4: ("plausible", "plausible", "plausible")},
                 samples=1, prompt="a" * 64)
    b = make_run(tmp_path / "b", {1: ("plausible", "plausible", "plausible"), 2: ("incorrect", "plausible", "incorrect"),
                                  3: ("incorrect", "incorrect", "plausible"), 4: ("plausible", "plausible", "plausible"),
                                  5: ("plausible", "plausible", "plausible")},
                 samples=3, prompt="b" * 64)
    return a, b


def test_each_model_is_scored_in_both_runs_and_paired_on_the_labelled_edits_both_answered(runs) -> None:
    c = compare_reports(build_report(runs[0]), build_report(runs[1]))
    rows = {r.subject: r for r in c.rows}
    alpha, beta = rows[ALPHA], rows[BETA]
    # alpha: wrong on edit 3 in A only; beta: wrong on edit 2 in B only
    assert (alpha.accuracy_a, alpha.accuracy_b, alpha.paired, alpha.difference) == (0.75, 1.0, 4, 0.25)
    assert (alpha.only_a_right, alpha.only_b_right, alpha.p_value, alpha.distinguishable) == (0, 1, 1.0, False)
    assert (beta.accuracy_a, beta.accuracy_b, beta.difference) == (1.0, 0.75, -0.25)
    assert (alpha.edits_a, alpha.edits_b) == (4, 4)  # edit 5 is only in B: left out
    assert alpha.cost_per_edit_a == pytest.approx(0.001) and alpha.cost_per_correct_b == pytest.approx(0.001)
    majority = rows["majority"]
    assert (majority.accuracy_a, majority.accuracy_b, majority.only_b_right) == (0.75, 1.0, 1)  # edit 3
    assert rows["majority"].cost_per_edit_a == pytest.approx(0.003)
    assert [s.subject for s in c.rows] == [*MODELS, "majority", "weighted", "dawid_skene", "decision"]
    assert c.shared == 4 and "Left out: 0 edit(s) only in A, 1 only in B." in c.notes


def test_the_edits_whose_decision_flipped_are_listed_with_both_decisions_and_the_truth(runs) -> None:
    a, b = build_report(runs[0]), build_report(runs[1])
    c = compare_reports(a, b)
    expected = [d.rcid for d in a.decisions if d.rcid in TRUTH
                and d.decision != next(x.decision for x in b.decisions if x.rcid == d.rcid)]
    assert [f.rcid for f in c.flips] == expected and 3 in expected
    flip = next(f for f in c.flips if f.rcid == 3)
    assert (flip.decision_a, flip.decision_b, flip.truth, flip.qid) == ("accept", "reject", "incorrect", "Q3")


def test_settings_that_differ_are_named_from_the_manifests(runs) -> None:
    c = compare_reports(build_report(runs[0]), build_report(runs[1]))
    assert [n for n in c.notes if n.startswith("Settings differ")] == [
        "Settings differ: prompt_sha256: aaaaaaaaaaaa in A, bbbbbbbbbbbb in B.",
        "Settings differ: samples: 1 in A, 3 in B."]
    assert setting_notes({"settings": {"strategy": {"name": "all"}}},
                         {"settings": {"strategy": {"name": "x", "autopass": 0.9}}}) == [
        "Settings differ: strategy.name: all in A, x in B.", "Settings differ: strategy.autopass: not set in A, 0.9 in B."]
    sim_a = {"settings": {"base_url": "http://127.0.0.1:1/api/v1", "searxng_url": "http://127.0.0.1:1", "samples": 1}}
    sim_b = {"settings": {"base_url": "http://127.0.0.1:2/api/v1", "searxng_url": "http://127.0.0.1:2", "samples": 1}}
    assert setting_notes(sim_a, sim_b, both_simulated=True) == ["Both runs are simulated models (fanout sim)."]
    assert len(setting_notes(sim_a, sim_b)) == 2  # the addresses, when the runs are not both simulated


def test_fanout_compare_prints_the_table_and_writes_json_and_html(runs, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "compare.html"
    assert main(["compare", str(runs[0]), str(runs[1]), "--json", "-", "--html", str(page)]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["shared_edits"] == 4 and [f["rcid"] for f in data["flipped"]].count(3) == 1
    alpha = next(s for s in data["subjects"] if s["subject"] == ALPHA)
    assert (alpha["difference"], alpha["paired"]) == (0.25, 4)
    assert out.err.startswith(f"A: {runs[0]}\nB: {runs[1]}\n") and f"wrote {page}" in out.err
    assert "n both" in out.err and "edit(s) whose decision flipped:" in out.err
    html = page.read_text(encoding="utf-8")
    assert "<th>B − A (paired) [95 %]</th>" in html and '<div class="scroll"><table>' in html


def test_runs_with_no_edit_in_common_are_one_line_and_exit_2(runs, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    other = write_run(tmp_path / "other", [make_record(99, ALPHA, "plausible")])
    assert main(["compare", str(runs[0]), str(other)]) == 2
    err = capsys.readouterr().err
    assert err == (f"fanout compare: error: {runs[0]} and {other} have no edit in common; compare runs over the "
                   "same snapshot.\n")


def test_each_difference_has_its_interval_and_coverage_and_an_absent_model_reads_not_in_this_run(
        runs, tmp_path: Path) -> None:
    import dataclasses

    b = runs[1]
    extra = [make_record(r, "vendor/delta", "plausible") for r in (1, 2, 3, 4)]
    log = b / "checkpoint.jsonl"
    log.write_text(log.read_text(encoding="utf-8") + "".join(json.dumps(r.to_dict()) + "\n" for r in extra),
                   encoding="utf-8")
    c = compare_reports(build_report(runs[0]), build_report(b))
    rows = {r.subject: r for r in c.rows}
    alpha = rows[ALPHA]  # 3 both right, 0 only A, 1 only B, 0 both wrong
    assert (alpha.difference, alpha.coverage) == (0.25, 1.0)
    assert (alpha.difference_low, alpha.difference_high) == pytest.approx(
        tuple(paired_difference_interval(3, 0, 1, 0) or ()))
    delta = rows["vendor/delta"]
    assert (delta.in_a, delta.in_b, delta.edits_a, delta.paired) == (False, True, 0, 0)
    text = render_comparison(c)
    line = next(x for x in text.splitlines() if x.startswith("delta"))
    assert "not in this run" in line and "?" not in line
    assert dataclasses.asdict(delta)["accuracy_b"] == 0.5


def test_each_run_is_scored_with_its_own_labels_and_the_files_are_named(runs, tmp_path: Path) -> None:
    a, b = runs
    (b / "labels.yaml").write_text(yaml.safe_dump({"labels": [{"rcid": 1, "truth": "correct"},
                                                              {"rcid": 2, "truth": "correct"}]}), encoding="utf-8")
    c = compare_reports(build_report(a), build_report(b))
    assert f"Labels: A scored with {a / 'labels.yaml'} (found in its run directory), B with {b / 'labels.yaml'} " \
           "(found in its run directory)." in c.notes
    assert "1 edit(s) the two runs' labels disagree on are left out of the pairs: 2." in c.notes
    beta = next(r for r in c.rows if r.subject == BETA)
    # beta accepts 1 and 2 in B: right on both by B's own labels (A's would call it wrong on 2), paired on 1 only
    assert (beta.accuracy_b, beta.paired) == (1.0, 1)
    given = tmp_path / "truth.yaml"
    given.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": t} for r, t in TRUTH.items()]}), encoding="utf-8")
    from fanout.report import ReportOptions

    options = ReportOptions(labels_path=given)
    both = compare_reports(build_report(a, options), build_report(b, options))
    assert f"Labels: both runs scored with {given} (given by --labels)." in both.notes


def test_only_settings_that_change_results_are_listed_when_the_keys_are_given() -> None:
    a = {"settings": {"samples": 1, "max_lead": 10, "concurrency": 8, "strategy": {"name": "all"}}}
    b = {"settings": {"samples": 3, "max_lead": 40, "concurrency": 2, "strategy": {"name": "all"}}}
    assert len(setting_notes(a, b)) == 3
    assert setting_notes(a, b, results_keys=("samples", "strategy")) == ["Settings differ: samples: 1 in A, 3 in B."]


def test_a_shared_runs_investigations_count_in_the_committees_cost_per_edit(runs) -> None:
    a, b = build_report(runs[0]), build_report(runs[1])
    b.run.investigation_usd.update({1: 0.01, 2: 0.01, 3: 0.01, 4: 0.01})
    b.run.investigations.append(b.run.earlier_attempts[0] if b.run.earlier_attempts else _attempt())
    c = compare_reports(a, b)
    majority = next(r for r in c.rows if r.subject == "majority")
    assert majority.cost_per_edit_b == pytest.approx(0.003 + 0.01)
    assert majority.cost_per_edit_a == pytest.approx(0.003)
    assert ("A: each model's own investigation; B: each model's own investigation, $0.0400. The evidence's cost "
            "(investigations, team steps) counts once per edit in the committee rules' cost per edit, not in each "
            "model's: a model's row is its verdicts alone.") in c.notes
    people = next(n for n in c.notes if n.startswith("Human decisions: "))
    assert people.startswith(f"Human decisions: A 0 of 4 edits decided by people, {a.totals['waiting_for_human']} "
                             "paused edits waiting; B 0 of 5 edits decided by people")


def _attempt() -> object:
    from fanout.stats.spend import AttemptCost

    return AttemptCost("vendor/alpha", 0.04, "reported")


def test_fanout_compare_names_only_the_settings_that_change_results(runs, capsys: pytest.CaptureFixture[str]) -> None:
    """How a run went (concurrency, the lead, a spend cap) is no difference between two runs; the samples are."""
    for run_dir, (lead, concurrency, cap) in zip(runs, [(10, 8, None), (40, 2, 5.0)]):
        path = run_dir / "manifest.yaml"
        manifest = yaml.safe_load(path.read_text(encoding="utf-8"))
        manifest["settings"] |= {"max_lead": lead, "concurrency": concurrency, "max_cost_usd": cap}
        path.write_text(yaml.safe_dump(manifest), encoding="utf-8")
    assert main(["compare", str(runs[0]), str(runs[1])]) == 0
    differ = [line for line in capsys.readouterr().out.splitlines() if line.startswith("Settings differ")]
    assert differ == ["Settings differ: prompt_sha256: aaaaaaaaaaaa in A, bbbbbbbbbbbb in B.",
                      "Settings differ: samples: 1 in A, 3 in B."]
