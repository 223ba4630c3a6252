"""`fanout run --evidence team` as a real process, killed with -9 at scripted points and resumed.

The simulator runs in the test's event loop and counts every billed chat call
by edit, model and part played (planner, reviewer, worker of round 1 or 2,
aggregator, judge); `fanout run` runs as a process of its own, forked from a
warm interpreter that did its imports once (tests/warm.py).
The kill lands right after a given line reaches team.jsonl (a step logged)
or evidence.jsonl (an edit's pooled evidence logged), with whatever was in
flight then. After the resume: no step logged before the kill was asked
again (the simulator billed exactly the calls its line counts), no judge
logged before the kill was asked again, every step and every record is
logged once, and the run's spend is what the simulator billed, each cent once.
"""

from __future__ import annotations

import signal
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from fanout.base.validate import package_data
from fanout.engine.status import read_status
from fanout.llm.models import DEFAULT_MODELS
from fanout.sim import SimConfig, profile_from_dict, running_simulator
from fanout.store.attempts import read_abandoned

from jsonl import whole_lines
from parsed_yaml import package_yaml
from warm import WarmInterpreter

SAMPLE = package_data("sample_snapshot.yaml")
RCIDS = [int(e["rcid"]) for e in package_yaml("sample_snapshot.yaml")["edits"]][:2]
"""Two edits: every kill point below lands in the first or the second edit's team (a third, researched after every
kill, cost each test a third more and asserted nothing these do not)."""
MODELS = [m.name for m in DEFAULT_MODELS]
CANONICAL = {m.name: m.name for m in DEFAULT_MODELS} | {"anthropic/claude-haiku-4.5": "anthropic/claude-4.5-haiku-20251001"}
AGGREGATOR = "deepseek/deepseek-v3.2"

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmInterpreter]:
    with WarmInterpreter() as server:
        yield server


def role(step: dict[str, Any]) -> str:
    """The part a logged step played, as the simulator's tally names it."""
    kind = step["step"].split("-")[0]
    return {"plan": "plan" if step["round"] == 1 else "review", "work": f"worker-{step['round']}"}.get(kind, "aggregate")


async def kill_when(path: Path, count: int, process: Any) -> None:
    while len(whole_lines(path)) < count:
        assert process.returncode is None, "the run ended before the kill"
        await anyio.sleep(0.001)
    process.send_signal(signal.SIGKILL)
    await process.wait()


@pytest.mark.parametrize(("file", "count"), [
    ("team.jsonl", 1),      # the first edit's brief
    ("team.jsonl", 2),      # one worker of round 1 done, the other in flight
    ("team.jsonl", 4),      # the planner's review
    ("team.jsonl", 7),      # into the second edit's team
    ("evidence.jsonl", 1),  # the first edit's pooled evidence, its judges asking
])
async def test_kill_9_after_a_team_step_repeats_no_paid_step_and_asks_no_logged_judge_again(
        tmp_path, warm, file, count):
    config = SimConfig(seed=11, profile=profile_from_dict({"defaults": {"latency": {"median_s": 0.02, "p95_s": 0.05}}}))
    run_dir = tmp_path / "run"
    async with running_simulator(config) as sim:
        cmd = [sys.executable, "-m", "fanout", "run", str(SAMPLE), "--run-dir", str(run_dir), "--limit",
               str(len(RCIDS)), "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls",
               "--fetch-delay", "0", "--concurrency", "1", "--evidence", "team", "--aggregator", AGGREGATOR]
        process = warm.start(cmd)
        await kill_when(run_dir / file, count, process)
        sim.state.latency_scale = 0.0  # the kill has landed: the resume need not wait on latency
        steps_at_kill = whole_lines(run_dir / "team.jsonl")
        assert len(whole_lines(run_dir / file)) >= count
        records_at_kill = whole_lines(run_dir / "checkpoint.jsonl")
        code, output = await warm.run(cmd, tmp_path / "output.txt")
        tally = sim.stats()
    assert code == 0, output
    assert len(steps_at_kill) >= count and len(whole_lines(run_dir / "evidence.jsonl")) == len(RCIDS)

    steps = whole_lines(run_dir / "team.jsonl")
    assert steps[:len(steps_at_kill)] == steps_at_kill  # nothing logged before the kill was logged again
    assert max(Counter((s["edit_rcid"], s["step"]) for s in steps).values()) == 1
    calls = tally["calls_by_role"]
    for step in steps_at_kill:  # the simulator billed exactly the calls its line counts: never asked again
        assert calls[str(step["edit_rcid"])][CANONICAL[step["model"]]][role(step)] == step["token_usage"]["turns"]
    records = whole_lines(run_dir / "checkpoint.jsonl")
    for record in records_at_kill:
        assert calls[str(record["edit_rcid"])][CANONICAL[record["model"]]]["verdict"] == record["token_usage"]["turns"]
    assert Counter((r["edit_rcid"], r["model"]) for r in records) == Counter(
        {(rcid, model): 1 for rcid in RCIDS for model in MODELS})
    evidence = whole_lines(run_dir / "evidence.jsonl")
    assert [e["edit_rcid"] for e in evidence] == RCIDS  # one pooled record per edit
    ids = {e["edit_rcid"]: e["evidence_id"] for e in evidence}
    assert all(r["evidence_id"] == ids[r["edit_rcid"]] for r in records)
    assert_every_cent_counted_once(run_dir, tally)


def assert_every_cent_counted_once(run_dir: Path, tally: dict[str, Any]) -> None:
    """The run's spend is the simulator's bill, less only calls the kill cut off before their answer came back."""
    spent = read_status(run_dir).tally.spent_usd
    billed = tally["cost_usd"]["total"]
    cut_off = sum(a.cut_off for a in read_abandoned(run_dir))
    if cut_off:
        assert spent <= billed + 1e-9
    else:
        assert spent == pytest.approx(billed, rel=1e-9)
