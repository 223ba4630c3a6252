"""The report and `fanout queue` after a cascade or router run: the strategy's settlement is the decision.

Quorum counts the models the strategy asked; the queue holds only the edits it did not settle, settled
without agreement, or settled below the thresholds (issue 28, item 2).
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import anyio
import pytest
import yaml

from fanout.workloads.patrol.workload import PATROL
from fanout.report import ReportOptions, build_report
from fanout.cli import main
from fanout.base.validate import package_data
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.judging.cascade import CascadeStrategy
from fanout.judging.router import RouterStrategy
from fanout.judging.strategy import Strategy
from fanout.llm.models import ModelSpec
from fanout.base.records import VERIFIED_WITHOUT_SOURCE, VerdictRecord
from fanout.research.record import new_record

from parsed_yaml import package_yaml

SAMPLE = package_data("sample_snapshot.yaml")
RCIDS = [int(e["rcid"]) for e in package_yaml("sample_snapshot.yaml")["edits"]]
CHEAP, MID, DEAR = ModelSpec("m/cheap", None, 0.1, 0.1), ModelSpec("m/mid", None, 1.0, 1.0), ModelSpec("m/dear", None, 9.0, 9.0)

pytestmark = pytest.mark.timeout(120)

Plan = dict[tuple[int, str], tuple[str, str | None, float | None]]


class Script:
    """(edit index, model) -> (status, verdict, stability); unplanned pairs say verified-high at stability 1.0."""

    def __init__(self, plan: Plan, violating: frozenset[tuple[int, str]] = frozenset()) -> None:
        self.plan = plan
        self.violating = violating

    async def __call__(self, edit, model) -> VerdictRecord:  # type: ignore[no-untyped-def]
        await anyio.sleep(0)
        index = RCIDS.index(edit.rcid)
        status, verdict, stability = self.plan.get((index, model.name), ("ok", "verified-high", 1.0))
        record = new_record(edit, model.name, status, verdict=verdict, cost_usd=0.01,  # type: ignore[arg-type]
                            stability=stability, error="HTTP 502" if status == "error" else None)
        if (index, model.name) in self.violating:
            record.rule_violations = [VERIFIED_WITHOUT_SOURCE]
        return record


def run_strategy(run_dir: Path, script: Script, strategy: Strategy, limit: int) -> Path:
    settings = RunSettings(models=(DEAR, CHEAP, MID), concurrency=4, strategy=strategy)
    request = RunRequest(SAMPLE, run_dir, settings, limit=limit, handle_signals=False, out=StringIO(),
                         progress_interval_s=3600, workload=PATROL)
    anyio.run(lambda: run(request, verdict_fn=script))
    return run_dir


CASCADE = Script({
    # 0: m/cheap verified-high at 1.0: accepted on its own word.
    (1, "m/cheap"): ("ok", "suspect", None),  # -> m/mid verified-high at 1.0: accepted (a 1-1 split by vote)
    (2, "m/cheap"): ("ok", "plausible", None),  # -> m/mid plausible: the two agree (accept), no stability
    (2, "m/mid"): ("ok", "plausible", None),
    (3, "m/cheap"): ("ok", "unverifiable", None),  # no two of three agree: the last verdict stands
    (3, "m/mid"): ("ok", "incorrect", None),
    (3, "m/dear"): ("ok", "plausible", None),
    (4, "m/cheap"): ("ok", "verified-high", 0.6),  # below --autopass: m/mid agrees at 0.5: below --pause
    (4, "m/mid"): ("ok", "verified-low", 0.5),
})


@pytest.fixture(scope="module")
def cascade_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_strategy(tmp_path_factory.mktemp("cascade"), CASCADE, CascadeStrategy(), limit=5)


def test_a_cascade_runs_queue_holds_only_the_edits_it_left_unagreed_or_below_the_thresholds(cascade_run: Path) -> None:
    report = build_report(cascade_run)
    by_rcid = {d.rcid: d for d in report.decisions}
    assert [(RCIDS.index(d.rcid), d.outcome) for d in report.decisions] == [
        (0, "auto-passed"), (1, "auto-passed"), (2, "decided"), (3, "paused"), (4, "paused")]
    assert by_rcid[RCIDS[0]].why == "m/cheap said verified-high at stability 1.00; mean confidence 1.00 >= --autopass 0.90"
    assert by_rcid[RCIDS[1]].decision == "accept" and by_rcid[RCIDS[1]].majority.decision is None  # 1-1 by vote
    assert by_rcid[RCIDS[2]].why == ("m/cheap and m/mid agree (accept); no confidence (none stated and no "
                                     "--samples 2 or more to measure one)")
    assert by_rcid[RCIDS[3]].reasons == ["no two of 3 models agreed; the last model's verdict stands",
                                         "top two 0.33 and 0.33 closer than --delta 0.20"]
    assert by_rcid[RCIDS[3]].decision == "accept"  # the last model's verdict, as the cascade settled it
    assert by_rcid[RCIDS[4]].reasons == ["mean confidence 0.55 < --pause 0.60"]
    assert [row["rcid"] for row in report.table("human_queue")] == [RCIDS[3], RCIDS[4]]
    assert report.totals["paused"] == 2


def test_fanout_queue_after_a_cascade_lists_its_two_unsettled_edits_with_the_cascades_reason(
        cascade_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["queue", str(cascade_run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(row["rcid"], row["why"]) for row in data["queue"]] == [
        (RCIDS[3], "no two of 3 models agreed; the last model's verdict stands; "
                   "top two 0.33 and 0.33 closer than --delta 0.20"),
        (RCIDS[4], "mean confidence 0.55 < --pause 0.60")]
    assert data["paused"] == 2


def test_a_cascade_that_has_not_settled_an_edit_queues_it_with_what_it_waits_for(tmp_path: Path) -> None:
    # m/mid errs on edit 1: the cascade waits for a resume to ask it again; nothing settled the edit.
    script = Script({(1, "m/cheap"): ("ok", "suspect", None), (1, "m/mid"): ("error", None, None)})
    report = build_report(run_strategy(tmp_path, script, CascadeStrategy(), limit=2))
    second = report.decisions[1]
    assert second.outcome == "paused" and second.settlement is not None and not second.settlement.settled
    assert second.reasons == ["the cascade has not settled it: m/mid gave no verdict"]
    assert report.models == ["m/cheap", "m/mid"] and report.run.planned_models() == ["m/dear", "m/cheap", "m/mid"]
    assert report.decisions[0].outcome == "auto-passed"


def test_quorum_counts_the_models_the_cascade_asked_not_every_model_of_the_run(tmp_path: Path) -> None:
    # m/cheap times out; m/mid and m/dear agree: 2 of the 3 asked voted, under the quorum of 3 (0.75 of 3).
    script = Script({(0, "m/cheap"): ("timeout", None, None), (0, "m/mid"): ("ok", "incorrect", None),
                     (0, "m/dear"): ("ok", "suspect", None)})
    report = build_report(run_strategy(tmp_path, script, CascadeStrategy(), limit=2))
    assert report.decisions[0].reasons == ["only 2 of 3 asked models gave a verdict (quorum 3)"]
    assert report.decisions[0].decision == "reject"
    # edit 1: m/cheap alone, asked alone: 1 of 1 is a quorum (the run's 3 models would make it 1 of 3).
    assert report.decisions[1].outcome == "auto-passed" and report.decisions[1].reasons == []
    lenient = build_report(tmp_path, ReportOptions(policy=report.options.policy.__class__(quorum=0.5)))
    assert lenient.decisions[0].reasons == []


def test_a_cascade_verdict_resting_on_a_vote_set_aside_pauses_and_says_whose_and_which_rule(tmp_path: Path) -> None:
    script = Script({}, violating=frozenset({(0, "m/cheap")}))
    report = build_report(run_strategy(tmp_path, script, CascadeStrategy(), limit=1))
    assert report.decisions[0].reasons == [
        "the strategy's verdict rests on m/cheap, whose vote is set aside: without it the strategy's rule is not met",
        "set aside: m/cheap (verified without a verified source, --rule-violations abstain)"]
    counted = build_report(tmp_path, ReportOptions(rule_violations="count"))
    assert counted.decisions[0].outcome == "auto-passed"


def test_a_router_runs_queue_holds_the_edits_whose_one_model_gave_no_verdict(tmp_path: Path) -> None:
    script = Script({(1, "m/cheap"): ("error", None, None), (2, "m/cheap"): ("ok", "plausible", None)})
    report = build_report(run_strategy(tmp_path, script, RouterStrategy(), limit=3))
    assert [d.outcome for d in report.decisions] == ["auto-passed", "paused", "decided"]
    assert report.decisions[1].reasons == ["the router's model m/cheap gave no verdict (error); a resume asks it again"]
    assert report.decisions[2].decision == "accept"
    assert report.decisions[2].why.startswith("m/cheap said plausible, chosen by the router as the cheapest allowed for ")
    assert [row["rcid"] for row in report.table("human_queue")] == [RCIDS[1]]


def test_with_labels_the_scores_table_scores_what_the_strategy_settled(cascade_run: Path, tmp_path: Path) -> None:
    # truth: edits 0-2 correct, 3 incorrect, 4 correct; the cascade settled accept on all five (edit 3 by default)
    truth = dict(zip(RCIDS[:5], ("correct", "correct", "correct", "incorrect", "correct")))
    labels = tmp_path / "labels.yaml"
    labels.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": t} for r, t in truth.items()]}), encoding="utf-8")
    report = build_report(cascade_run, ReportOptions(labels_path=labels))
    row = next(r for r in report.table("scores") if r["subject"] == "cascade")
    assert (row["kind"], row["answered"], row["correct"], row["accuracy"]) == ("strategy", 5, 4, 0.8)
    assert row["cost_usd"] == pytest.approx(0.01 * 10)  # the ten records the cascade asked for (1+2+2+3+2)
