"""`fanout run --strategy cascade|router`: who is asked for which edit and why, resume, and the guards.

The engine runs with a scripted verdict function (each (edit, model) answer
planned), so escalation paths and router choices are exact; the simulator
runs the whole thing end to end, as a child process killed with -9 mid-way
(twice) and resumed.
"""

from __future__ import annotations

import json
import re
import signal
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest
import yaml

from fanout.workloads.patrol.workload import PATROL
from fanout.cli import main
from fanout.base.validate import package_data
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.engine.orchestrator import Schedule
from fanout.engine.runner import RunRequest, run
from fanout.base.errors import ConfigError
from fanout.report.router_accuracy import measure_accuracy
from fanout.judging.cascade import CascadeStrategy
from fanout.judging.policy import Cascade
from fanout.judging.registry import STRATEGIES, build_strategy
from fanout.judging.router import RouterStrategy
from fanout.judging.strategy import Answer, Plan, Replayer, Settlement, Step, StrategyOptions, retry_step
from fanout.base.records import Escalation, VerdictRecord
from fanout.research.record import new_record
from fanout.sim import SimConfig
import warm
from parsed_yaml import package_yaml
from simulated import serving_simulator

SAMPLE = package_data("sample_snapshot.yaml")
RCIDS = [int(e["rcid"]) for e in package_yaml("sample_snapshot.yaml")["edits"]]
CHEAP, MID, DEAR = ModelSpec("m/cheap", None, 0.1, 0.1), ModelSpec("m/mid", None, 1.0, 1.0), ModelSpec("m/dear", None, 9.0, 9.0)
MODELS = (DEAR, CHEAP, MID)  # given out of cost order: the cascade orders them
LOCAL = ["--base-url", "http://127.0.0.1:9/v1", "--searxng-url", "http://127.0.0.1:9"]

pytestmark = pytest.mark.timeout(120)


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


class Script:
    """Planned answers: (rcid index, model) -> (status, verdict); anything unplanned is a confident verified-high
    (stability 1.0, as from samples that all agreed). A planned verified-* verdict is as confident."""

    def __init__(self, plan: dict[tuple[int, str], tuple[str, str | None]], cost: dict[str, float] | None = None) -> None:
        self.plan = plan
        self.cost = cost or {}
        self.asked: Counter[tuple[int, str]] = Counter()

    async def __call__(self, edit, model) -> VerdictRecord:
        self.asked[(edit.rcid, model.name)] += 1
        await anyio.sleep(0)
        status, verdict = self.plan.get((RCIDS.index(edit.rcid), model.name), ("ok", "verified-high"))
        stability = 1.0 if verdict in ("verified-high", "verified-low") else None
        return new_record(edit, model.name, status, verdict=verdict, cost_usd=self.cost.get(model.name, 0.01),  # type: ignore[arg-type]
                          stability=stability,
                          error="HTTP 502" if status == "error" else None)


def settings(**strategy) -> RunSettings:
    return RunSettings(models=MODELS, concurrency=4, **strategy)


def run_scripted(run_dir: Path, script: Script, run_settings: RunSettings, limit: int = 12, stop_after: int | None = None) -> str:
    out = StringIO()
    request = RunRequest(SAMPLE, run_dir, run_settings, limit=limit, handle_signals=False, out=out, progress_interval_s=3600,
                         workload=PATROL)
    anyio.run(lambda: run(request, verdict_fn=script))
    return out.getvalue()


def logged(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "checkpoint.jsonl").read_text().splitlines()]


def paths(run_dir: Path) -> dict[int, list[tuple[int, str, str, str]]]:
    """Per edit index: (step, model, status, reason) in step order, from the log's latest records."""
    latest = {(r["edit_rcid"], r["model"]): r for r in logged(run_dir)}
    found: dict[int, list[tuple[int, str, str, str]]] = {}
    for r in latest.values():
        found.setdefault(RCIDS.index(r["edit_rcid"]), []).append(
            (r["escalation"]["step"], r["model"], r["status"], r["escalation"]["reason"]))
    return {edit: sorted(steps) for edit, steps in sorted(found.items())}


# --- cascade -------------------------------------------------------------------------------------------


ESCALATING = Script({
    (1, "m/cheap"): ("ok", "plausible"),  # not an auto-pass verdict -> m/mid, who agrees (accept)
    (2, "m/cheap"): ("ok", "suspect"),  # -> m/mid says verified-high: accepted on its own
    (2, "m/mid"): ("ok", "verified-high"),
    (3, "m/cheap"): ("timeout", None),  # no verdict -> m/mid incorrect -> m/dear suspect: agree (reject)
    (3, "m/mid"): ("ok", "incorrect"),
    (3, "m/dear"): ("ok", "suspect"),
    (4, "m/cheap"): ("ok", "unverifiable"),  # no two agree: the last model's verdict stands
    (4, "m/mid"): ("ok", "incorrect"),
    (4, "m/dear"): ("ok", "plausible"),
})


def test_a_cascade_asks_the_cheapest_first_and_escalates_exactly_as_the_cascade_rules_say(tmp_path):
    out = run_scripted(tmp_path, ESCALATING, settings(strategy=CascadeStrategy()), limit=5)
    assert paths(tmp_path) == {
        0: [(1, "m/cheap", "ok", "cheapest model first")],
        1: [(1, "m/cheap", "ok", "cheapest model first"),
            (2, "m/mid", "ok", "m/cheap said plausible, which does not pass on one model's word")],
        2: [(1, "m/cheap", "ok", "cheapest model first"),
            (2, "m/mid", "ok", "m/cheap said suspect, which does not pass on one model's word")],
        3: [(1, "m/cheap", "timeout", "cheapest model first"), (2, "m/mid", "ok", "m/cheap gave no verdict"),
            (3, "m/dear", "ok", "m/mid said incorrect, which does not pass on one model's word")],
        4: [(1, "m/cheap", "ok", "cheapest model first"),
            (2, "m/mid", "ok", "m/cheap said unverifiable, which does not pass on one model's word"),
            (3, "m/dear", "ok", "m/mid said incorrect, which does not pass on one model's word")],
    }
    assert all(r["strategy"] == "cascade" for r in logged(tmp_path))
    assert logged(tmp_path)[0]["aspect"] == "time/value_changed"
    assert "cascade: 5 edit(s) settled (1 at step 1, 2 at step 2, 2 at step 3); 6 escalation(s)" in out
    assert max(ESCALATING.asked.values()) == 1


def test_autopass_below_the_stability_or_outside_the_verdicts_escalates_with_the_reason(tmp_path):
    script = Script({(0, "m/cheap"): ("ok", "verified-low")})
    run_scripted(tmp_path, script, settings(strategy=CascadeStrategy(autopass_verdicts=frozenset({"verified-high"}))), limit=1)
    assert paths(tmp_path)[0] == [
        (1, "m/cheap", "ok", "cheapest model first"),
        (2, "m/mid", "ok", "m/cheap said verified-low, which does not pass on one model's word"),
    ]


def test_a_stopped_cascade_resumes_mid_escalation_and_asks_no_pair_twice(tmp_path):
    script = Script({(i, "m/cheap"): ("ok", "suspect") for i in range(12)}
                    | {(i, "m/mid"): ("ok", "plausible") for i in range(12)})
    first = settings(strategy=CascadeStrategy(), max_cost_usd=0.075)  # a stop after about 7 verdicts, mid-escalation
    run_scripted(tmp_path, script, first)
    assert 0 < len(logged(tmp_path)) < 36
    run_scripted(tmp_path, script, settings(strategy=CascadeStrategy()))
    assert max(script.asked.values()) == 1
    assert sum(script.asked.values()) == len(logged(tmp_path)) == 36  # every edit: cheap, mid, dear
    assert all([s for s, *_ in steps] == [1, 2, 3] for steps in paths(tmp_path).values())


def test_an_errored_step_waits_for_the_resume_which_asks_that_model_again_and_goes_on_from_its_answer(tmp_path):
    script = Script({(0, "m/cheap"): ("ok", "suspect"), (0, "m/mid"): ("error", None)})
    out = run_scripted(tmp_path, script, settings(strategy=CascadeStrategy()), limit=1)
    assert "1 edit(s) wait for a resume to retry their last step" in out
    assert [(r["model"], r["status"]) for r in logged(tmp_path)] == [("m/cheap", "ok"), ("m/mid", "error")]
    script.plan[(0, "m/mid")] = ("ok", "plausible")
    run_scripted(tmp_path, script, settings(strategy=CascadeStrategy()), limit=1)
    assert paths(tmp_path)[0] == [
        (1, "m/cheap", "ok", "cheapest model first"),
        (2, "m/mid", "ok", "m/cheap said suspect, which does not pass on one model's word"),
        (3, "m/dear", "ok", "m/mid said plausible, which does not pass on one model's word"),
    ]
    assert script.asked == Counter({(RCIDS[0], "m/cheap"): 1, (RCIDS[0], "m/mid"): 2, (RCIDS[0], "m/dear"): 1})


def test_a_resume_whose_measured_costs_reorder_the_models_keeps_each_edits_asked_models_first(tmp_path):
    # m/cheap is priced cheapest but its records cost more than m/mid's price: after the resume m/mid leads.
    script = Script({(i, "m/cheap"): ("ok", "suspect") for i in range(12)}, cost={"m/cheap": 0.02})
    run_scripted(tmp_path, script, settings(strategy=CascadeStrategy(), max_cost_usd=0.045))
    begun = {edit for edit, steps in paths(tmp_path).items() if len(steps) == 1 and steps[0][1] == "m/cheap"}
    out = run_scripted(tmp_path, script, settings(strategy=CascadeStrategy()))
    assert "(cost per verdict): m/mid $0.01425, m/cheap $0.02000, m/dear $0.12825." in out
    assert max(script.asked.values()) == 1
    for edit, steps in paths(tmp_path).items():
        assert steps[0][1] == ("m/cheap" if edit in begun else "m/mid")


# --- router --------------------------------------------------------------------------------------------


def test_the_router_asks_one_model_per_edit_the_cheapest_within_the_aspects_gate(tmp_path):
    gates = {"time": ("m/dear",), "wikibase-item/value_added": ("m/mid", "m/dear")}
    out = run_scripted(tmp_path, Script({}), settings(strategy=RouterStrategy(gates=gates)), limit=4)
    assert paths(tmp_path) == {
        0: [(1, "m/dear", "ok", "router: cheapest allowed for time/value_changed (gate 'time')")],
        1: [(1, "m/mid", "ok", "router: cheapest allowed for wikibase-item/value_added (gate 'wikibase-item/value_added')")],
        2: [(1, "m/cheap", "ok", "router: cheapest allowed for string/value_added (gate '*')")],
        3: [(1, "m/dear", "ok", "router: cheapest allowed for time/reference_added (gate 'time')")],
    }
    assert "router: 4 edit(s) settled (4 at step 1); 0 escalation(s)" in out


def test_the_router_by_measured_accuracy_takes_the_most_accurate_and_the_cheaper_of_near_equals(tmp_path):
    accuracy = {("*", "m/cheap"): 0.60, ("*", "m/mid"): 0.80, ("*", "m/dear"): 0.81,
                ("time", "m/cheap"): 0.95, ("time", "m/dear"): 0.90}
    run_scripted(tmp_path, Script({}), settings(strategy=RouterStrategy(accuracy=accuracy)), limit=3)
    assert [steps[0][1:] for steps in paths(tmp_path).values()] == [
        ("m/cheap", "ok", "router: accuracy 0.95 on time/value_changed (best 0.95; gate '*')"),
        ("m/mid", "ok", "router: accuracy 0.80 on wikibase-item/value_added (best 0.81; gate '*')"),
        ("m/mid", "ok", "router: accuracy 0.80 on string/value_added (best 0.81; gate '*')"),
    ]


def test_router_accuracy_is_measured_per_aspect_and_model_from_a_labelled_all_run(tmp_path, capsys):
    script = Script({(i, "m/cheap"): ("ok", "incorrect") for i in range(12)})
    run_scripted(tmp_path / "all", script, settings())
    labels = tmp_path / "labels.yaml"
    labels.write_text(yaml.safe_dump({"labels": [{"rcid": r, "truth": "correct"} for r in RCIDS]}))
    accuracy = measure_accuracy(tmp_path / "all", labels)
    assert accuracy[("*", "m/cheap")] == 0.0 and accuracy[("*", "m/mid")] == 1.0
    assert accuracy[("wikibase-item", "m/dear")] == 1.0  # 6 of the 12 edits
    assert ("time", "m/mid") not in accuracy  # 3 edits: fewer than MIN_LABELLED


# --- engine --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("max_lead", [1, 2])
async def test_the_lead_bound_never_deadlocks_a_cascade_whose_every_edit_escalates(tmp_path, max_lead):
    """The cheap model runs ahead until the lead bound holds it; the escalations it made must still run."""
    script = Script({(i, m): ("ok", v) for i in range(12) for m, v in (("m/cheap", "suspect"), ("m/mid", "plausible"))})
    run_settings = RunSettings(models=MODELS, concurrency=3, max_lead=max_lead, strategy=CascadeStrategy())
    request = RunRequest(SAMPLE, tmp_path, run_settings, handle_signals=False, out=StringIO(), progress_interval_s=3600,
                         workload=PATROL)
    with anyio.fail_after(60):
        await run(request, verdict_fn=script)
    assert sum(script.asked.values()) == 36 and max(script.asked.values()) == 1


def test_an_offered_pair_joins_its_models_queue_at_its_edits_place():
    schedule = Schedule(0, [1, 1], set(), concurrency=2, max_lead=100)
    schedule.pending = [[5, 6], []]
    schedule.offer(2, 0)
    schedule.offer(3, 1)
    assert [schedule.next_pair(), schedule.next_pair()] == [(2, 0), (3, 1)]


# --- guards --------------------------------------------------------------------------------------------


def test_a_run_directory_started_with_one_strategy_refuses_to_resume_with_another_and_writes_nothing(tmp_path, capsys):
    run_scripted(tmp_path, Script({}), settings(), limit=2)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    with pytest.raises(ConfigError, match="started with --strategy all"):
        run_scripted(tmp_path, Script({}), settings(strategy=CascadeStrategy()), limit=2)
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path), "--limit", "2", "-m", "m/dear,m/cheap,m/mid",
                 "--strategy", "cascade", "--autopass", "0.8", *LOCAL])
    assert code == 2
    assert one_line_error(capsys) == (
        "fanout run: error: cannot resume this run directory with --strategy cascade (autopass 0.8; autopass_verdicts "
        "verified-high,verified-low): it was started with --strategy all. Resume with those settings, or use a new --run-dir.")
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(("flags", "message"), [
    (["--strategy", "cheap"], "--strategy must be one of all, cascade, router (got 'cheap')."),
    (["--strategy", "cascade", "--autopass", "nan"], "--autopass must be a number from 0 to 1 (got nan)."),
    (["--strategy", "cascade", "--autopass", "1.5"], "--autopass must be from 0 to 1 (got 1.5)."),
    (["--autopass", "0.5"], "add --strategy cascade."),
    (["--strategy", "cascade", "--autopass-verdicts", "sure"], "--autopass-verdicts: sure is not a verdict"),
    (["--gates", "GATES"], "--gates, --router-accuracy and --cost-weights choose a router's model: add --strategy "
     "router."),
    (["--strategy", "router", "--gates", "MISSING"], "does not exist; pass the path of an existing file to --gates"),
    (["--strategy", "router", "--gates", "BADGATES"], "gate 'time' names m/other, which is not among the run's models"),
    (["--strategy", "router", "--router-accuracy", "RUN"], "--router-accuracy RUN_DIR and --labels FILE go together"),
])
def test_a_bad_strategy_flag_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, flags, message):
    (tmp_path / "gates.yaml").write_text("time: [m/a]\n")
    (tmp_path / "bad.yaml").write_text("time: [m/other]\n")
    swap = {"GATES": str(tmp_path / "gates.yaml"), "MISSING": str(tmp_path / "none.yaml"),
            "BADGATES": str(tmp_path / "bad.yaml"), "RUN": str(tmp_path)}
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), "-m", "m/a,m/b", *LOCAL,
                 *[swap.get(f, f) for f in flags]])
    assert code == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "run").exists()


# --- end to end ----------------------------------------------------------------------------------------


def log_lines(run_dir: Path) -> int:
    path = run_dir / "checkpoint.jsonl"
    return path.read_bytes().count(b"\n") if path.exists() else 0


def replayed(steps: list[dict], order: tuple[str, ...]) -> list[str]:
    """The models the policy's own Cascade asks over these records: what the run must have asked."""
    cascade, asked, answered = Cascade(order), [], []
    while True:
        decision = cascade.next_step(answered)
        if not hasattr(decision, "model"):
            return asked
        asked.append(decision.model)
        if len(answered) == len(steps):
            return asked
        answered.append(VerdictRecord.from_dict(steps[len(answered)]))


@pytest.mark.timeout(300)  # three `fanout run` processes: 94 s in a parallel run at a load average of 16 on 2 CPUs
def test_a_cascade_killed_with_minus_9_mid_escalation_resumes_and_never_asks_a_logged_step_again(tmp_path, capsys):
    with serving_simulator(SimConfig(seed=11)) as sim:
        argv = ["run", str(SAMPLE), "--run-dir", str(tmp_path), "--base-url", sim.api_base,
                "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0", "--concurrency", "3",
                "--strategy", "cascade"]
        for wait_for in (3, 9):
            process = warm.start([*warm.FANOUT, *argv])  # a real process, forked from a warm interpreter
            while log_lines(tmp_path) < wait_for:
                assert process.returncode is None, "the run ended before it could be killed"
                time.sleep(0.01)
            process.send_signal(signal.SIGKILL)
            assert process.wait_blocking() == -signal.SIGKILL
        code = main(argv)  # the resume reads what the killed processes left: it need not be a process of its own
    assert code == 0, capsys.readouterr()
    records = logged(tmp_path)
    assert max(Counter((r["edit_rcid"], r["model"]) for r in records).values()) == 1, "a logged step was asked again"
    order = ("nvidia/nemotron-3-nano-30b-a3b", "allenai/olmo-3.1-32b-instruct", "deepseek/deepseek-v3.2",
             "anthropic/claude-4.5-haiku-20251001")
    for rcid in RCIDS:
        steps = sorted((r for r in records if r["edit_rcid"] == rcid), key=lambda r: r["escalation"]["step"])
        assert [s["escalation"]["step"] for s in steps] == list(range(1, len(steps) + 1))
        assert [s["model"] for s in steps] == replayed(steps, order)
    assert any(len([r for r in records if r["edit_rcid"] == rcid]) > 1 for rcid in RCIDS), "nothing escalated"


# --- a new strategy ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FirstListed:
    """A strategy written as a new contributor would: one class and its plan, then one registration."""

    name: ClassVar[str] = "first-listed"
    flags: ClassVar[tuple[str, ...]] = ()
    misplaced: ClassVar[str] = ""
    asks_every_model: ClassVar[bool] = False

    @classmethod
    def from_options(cls, options: StrategyOptions, models: Sequence[str]) -> FirstListed:
        return cls()

    def settings(self) -> dict[str, Any]:
        return {"name": self.name}

    def most_pairs(self, models: int) -> int:
        return 1

    def plan(self, models: Sequence[str], cost: Mapping[str, float | None], retry_statuses: frozenset[str]) -> Plan:
        return FirstListedPlan(models[0], retry_statuses)

    def replayer(self, models: Sequence[str], cost: Mapping[str, float | None]) -> Replayer:
        raise NotImplementedError

    def replay_notes(self) -> list[str]:
        return []

    def settle(self, models: Sequence[str], answered: Sequence[Answer]) -> Settlement | None:
        if not answered:
            return None
        first = answered[0]
        return Settlement(first.verdict, True, True, "the first model listed decides", (first.model,), (first.model,))


@dataclass(frozen=True)
class FirstListedPlan:
    model: str
    retry_statuses: frozenset[str]

    def describe(self) -> str:
        return f"First listed: {self.model} judges every edit."

    def resume_step(self, edit, answered) -> Step | None:
        return retry_step(answered, self.retry_statuses) or self.next_step(edit, answered)

    def next_step(self, edit, answered) -> Step | None:
        return None if answered else Step(self.model, Escalation(1, "the first model listed"))


def test_a_new_strategy_is_one_class_and_a_registration_and_the_engine_runs_it(tmp_path, monkeypatch):
    monkeypatch.setitem(STRATEGIES, FirstListed.name, FirstListed)
    strategy = build_strategy("first-listed", StrategyOptions(), [m.name for m in MODELS])
    script = Script({})
    out = run_scripted(tmp_path, script, settings(strategy=strategy), limit=3)
    records = logged(tmp_path)
    assert [(r["model"], r["strategy"], r["escalation"]["step"]) for r in records] == [(MODELS[0].name, "first-listed", 1)] * 3
    assert f"First listed: {MODELS[0].name} judges every edit." in out
    assert "0 of at most 9 pairs already logged; the first-listed asks each unsettled edit's next step" in out
    manifest = yaml.safe_load((tmp_path / "manifest.yaml").read_text())
    assert manifest["settings"]["strategy"] == {"name": "first-listed"}
    with pytest.raises(ConfigError, match="it was started with --strategy first-listed"):
        run_scripted(tmp_path, script, settings(strategy=CascadeStrategy()), limit=3)
    from fanout.report import build_report

    report = build_report(tmp_path)  # the report reads back what the strategy settled, through the registry
    assert [(row.decision, row.settled_by, row.needs_human) for row in report.tables["committee"].rows] == [
        ("accept", "first-listed", False)] * 3


def test_no_module_outside_judging_names_a_strategy():
    """The engine, the manifest, the settings and the replay ask the Strategy; none compares its name."""
    source = Path(__file__).parents[1] / "src" / "fanout"
    named = [f"{path.relative_to(source)}:{n}" for path in sorted(source.rglob("*.py")) if "judging" not in path.parts
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"[\"'](cascade|router)[\"']", line)]
    assert named == []
