"""`fanout queue RUN_DIR`: the edits paused for a human, on a run of the sample snapshot against the simulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from fanout.report import ReportOptions, build_report
from fanout.cli import main
from fanout.base.validate import package_data
from fanout.judging.policy import Thresholds
from simulated import SimulatedRuns

SAMPLE = package_data("sample_snapshot.yaml")


@pytest.fixture(scope="module")
def sim_run(simulated_runs: SimulatedRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample snapshot through the four default models against the simulator.

    Seed 8: the models disagree on the Douglas Adams edit (Nemotron says verified-high), so it pauses.
    """
    return simulated_runs.copy(8, tmp_path_factory.mktemp("queue") / "run")


def sample_edits() -> dict[int, dict[str, object]]:
    data = yaml.safe_load(SAMPLE.read_text(encoding="utf-8"))
    return {e["rcid"]: e for e in data["edits"]}


def test_queue_lists_each_paused_edit_on_one_line_with_its_diff_against_the_parent(
        sim_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --delta 1: every edit the models do not agree on unanimously pauses.
    assert main(["queue", str(sim_run), "--delta", "1"]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    report = build_report(sim_run, ReportOptions(thresholds=Thresholds(delta=1)))
    paused = [row["rcid"] for row in report.table("human_queue")]  # least sure first, as the report's queue
    assert sorted(paused) == sorted(d.rcid for d in report.decisions if d.outcome == "paused")
    assert head.startswith(f"{len(lines)} of {len(report.run.edits)} edits paused for a human (--pause 0.6, "
                           "--delta 1, --autopass 0.9); ")
    assert head.endswith(f"; {len(lines)} of 12 edits wait for a human; least sure first (mean confidence)")
    sure = [row["mean_confidence"] for row in report.table("human_queue")]
    assert sure == sorted(sure)
    assert len(lines) == len(paused) > 0
    edits = sample_edits()
    for rcid, line in zip(paused, lines):
        edit = edits[rcid]
        assert line.startswith(f"{edit['title']} (") and " · why: " in line
        assert line.endswith(f" · https://www.wikidata.org/w/index.php?diff={edit['revid']}&oldid={edit['parent_revid']}")
    adams = lines[paused.index(2540801101)]
    assert adams.startswith("Q42 (Douglas Adams) · date of birth (P569) · 11 March 1952 → 11 March 1852 · why: ")
    assert adams.endswith(" · https://www.wikidata.org/w/index.php?diff=2464599101&oldid=2463871150")


def test_queue_line_of_the_adams_edit_reads_item_property_change_why_verdicts_and_link(
        sim_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["queue", str(sim_run), "--delta", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    row = next(r for r in data["queue"] if r["rcid"] == 2540801101)
    assert (row["qid"], row["item"], row["property"], row["what"]) == ("Q42", "Douglas Adams", "P569",
                                                                       "date of birth (P569)")
    assert row["change"] == "11 March 1952 → 11 March 1852"
    assert row["diff_url"] == "https://www.wikidata.org/w/index.php?diff=2464599101&oldid=2463871150"
    assert set(row["verdicts"]) == set(build_report(sim_run).models)
    assert data["settings"]["delta"] == 1 and data["paused"] == len(data["queue"])


def test_queue_of_a_directory_that_is_not_a_run_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["queue", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"fanout queue: error: {tmp_path} has no checkpoint.jsonl; is it the "
                                       "--run-dir of a `fanout run`?\n")
