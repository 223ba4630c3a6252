"""`fanout watch` as a real process against the simulator's live stream: no edit lost, none judged twice.

The simulator runs in the test's event loop on 127.0.0.1 and plays Wikidata
as it happens (its world: edits at a steady rate, some vandalism, reverts);
`fanout watch` runs as a process of its own, forked from a warm interpreter
that did its imports once (tests/warm.py: a fresh interpreter's imports were
about a third of each watch's CPU), so kill -9, SIGTERM, fsync and the
restarts are the real ones (`status`, `report`, `queue` and `compare`, which
only read the run's files, run in this process). Each test checks the
watch against the world itself: every edit the filters keep, from the first
accepted to the last, is accepted once and judged once by every model, and
nothing else is. Waiting is on the run's files changing, never on speed.
"""

from __future__ import annotations

import io
import json
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from fanout.cli import main
from fanout.report import ReportOptions
from fanout.review.desk import Desk
from fanout.sim import SimConfig, WorldSettings, profile_from_dict, running_simulator
from fanout.sim.wikidata_world import World
from fanout.wikidata.stream_events import iso_seconds

from jsonl import whole_lines
from warm import WarmInterpreter

pytestmark = pytest.mark.timeout(300)
MODELS = ("nvidia/nemotron-3-nano-30b-a3b", "deepseek/deepseek-v3.2")


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmInterpreter]:
    with WarmInterpreter() as interpreter:
        yield interpreter


def sim_config(*, rate: float = 5.0, revert_delay_s: float = 3600.0, stream: dict[str, Any] | None = None,
               seed: int = 5) -> SimConfig:
    return SimConfig(seed=seed, profile=profile_from_dict({"stream": stream or {}}),
                     world=WorldSettings(rate=rate, revert_delay_s=revert_delay_s))


SHORT_INVESTIGATIONS = ("--max-turns", "1")
"""One search per investigation, then the verdict: no page is read, so the watch never starts its extraction
zygote (a second of CPU a watch, as much as the rest of a 12-edit watch). The tests that pass it are about the
stream, the queue, the budget and the restarts, which are the same whatever a verdict looked at; the kill -9
test keeps full investigations, so a watch is killed with page readers at work."""


def watch_command(sim: Any, run_dir: Path, *extra: str, investigation: tuple[str, ...] = SHORT_INVESTIGATIONS,
                  ) -> list[str]:
    return [
        sys.executable, "-m", "fanout", "watch", "--run-dir", str(run_dir), "-m", ",".join(MODELS),
        "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0",
        "--stream-url", sim.stream_url, "--api-url", sim.wikidata_api_url, "--revertrisk-url", sim.revertrisk_url,
        "--concurrency", "8", *investigation, *extra,
    ]


def from_the_start(world: World) -> tuple[str, str]:
    """--since the world's first edit: what the watch accepts no longer depends on when the test got to start it."""
    return "--since", iso_seconds(world.started)


def records(run_dir: Path) -> list[dict[str, Any]]:
    return whole_lines(run_dir / "checkpoint.jsonl")


def journal(run_dir: Path) -> list[dict[str, Any]]:
    return whole_lines(run_dir / "watch.jsonl")


def accepted(run_dir: Path) -> list[int]:
    return [entry["accepted"] for entry in journal(run_dir) if "event" in entry]


def state(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "watch.state.json"
    try:
        return json.loads(path.read_text()) if path.exists() else {}
    except ValueError:  # replaced while read: the next look sees it whole
        return {}


def kept_by_default(world: World, first: int, last: int) -> set[int]:
    """The world's edits from rcid `first` to `last` that the watch's default filters keep: statement edits by
    anyone but a bot (label edits, bots and the patrollers' reverts are left out)."""
    return {r.rcid for r in world.revisions if first <= r.rcid <= last and r.change is not None
            and r.change.action != "set_label" and r.editor.kind != "bot"}


async def until(condition: Any, process: Any = None) -> None:
    """Wait for the run's files to show `condition` (polled), failing if the process ends first."""
    while not condition():
        assert process is None or process.returncode is None, "the watch ended before the test could act"
        await anyio.sleep(0.05)


async def fanout_here(*argv: str) -> str:
    """The standard output of `fanout ARGV`, which must exit 0, run through the entry point `python -m fanout` calls,
    in a worker thread of this process while the simulator goes on serving in the test's event loop.

    For commands that only read the run's files: a new interpreter for each cost about two seconds of CPU in imports
    and proved nothing the command's own result does not.
    """
    def call() -> str:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(argv))
        assert code == 0, f"fanout {' '.join(argv)} exited {code}:\n{err.getvalue()}"
        return out.getvalue()

    return await anyio.to_thread.run_sync(call)


def assert_judged_once_each(run_dir: Path, world: World, edits: int) -> list[int]:
    """`edits` accepted, each once, none missing between the first and the last, each judged once by each model."""
    taken = accepted(run_dir)
    assert len(taken) == len(set(taken)) == edits
    assert set(taken) == kept_by_default(world, min(taken), max(taken)), "an edit the filters keep was not accepted"
    keys = Counter((r["edit_rcid"], r["model"]) for r in records(run_dir))
    assert set(keys) == {(rcid, model) for rcid in taken for model in MODELS}
    assert max(keys.values()) == 1, "a pair was judged twice"
    return taken


async def test_kill_9_in_the_middle_and_a_restart_lose_no_edit_and_judge_none_twice(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config()) as sim:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, *from_the_start(world), "--max-edits", "12", investigation=())
        process = warm.start(cmd, stdout=tmp_path / "output.txt")
        await until(lambda: len(records(run_dir)) >= 5, process)
        process.send_signal(signal.SIGKILL)
        await process.wait()
        before = len(records(run_dir))
        code, output = await warm.run(cmd, tmp_path / "resumed.txt")
        assert code == 0, output
        assert_judged_once_each(run_dir, world, 12)
    assert len(records(run_dir)) == 24 and before < 24
    assert state(run_dir)["judged"] == 12 and state(run_dir)["running"] is False


async def test_drops_and_a_stall_reconnect_from_the_saved_position_with_no_edit_lost_or_repeated(tmp_path, warm):
    run_dir = tmp_path / "run"
    # Made on demand, mid-run: each reconnect reads the last 5 s again (ids are per millisecond) and drops the
    # events it has read already. (A drop every N events depended on how far the watch got between them.)
    async with running_simulator(sim_config()) as sim, httpx.AsyncClient() as http:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, "--max-edits", "30", "--stall", "1")
        process = warm.start(cmd, stdout=tmp_path / "output.txt")
        await until(lambda: len(accepted(run_dir)) >= 4, process)
        await http.post(f"{sim.base_url}/sim/stream/drop")  # every connection open now ends
        after_drop = len(accepted(run_dir)) + 3  # read from the next connection
        await until(lambda: len(accepted(run_dir)) >= after_drop, process)
        await http.post(f"{sim.base_url}/sim/stream/stall")  # every connection open now goes silent
        await until(lambda: state(run_dir).get("stream", {}).get("stalls", 0) >= 1, process)
        await process.wait()
        assert process.returncode == 0
        assert_judged_once_each(run_dir, world, 30)
    reader = state(run_dir)["stream"]
    assert (reader["drops"], reader["stalls"], reader["connections"]) == (1, 1, 3) and reader["duplicates"] >= 1


async def test_sigterm_stops_like_ctrl_c_and_the_same_command_goes_on(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config()) as sim:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, *from_the_start(world), "--max-edits", "8")
        process = warm.start(cmd, stdout=tmp_path / "output.txt")
        await until(lambda: len(records(run_dir)) >= 2, process)
        process.send_signal(signal.SIGTERM)
        await process.wait()
        assert process.returncode == 130
        assert state(run_dir)["running"] is False
        code, output = await warm.run(cmd, tmp_path / "resumed.txt")
        assert code == 0, output
        assert_judged_once_each(run_dir, world, 8)


async def test_above_the_hourly_budget_edits_wait_in_the_queue_and_the_status_says_why(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config()) as sim:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, *from_the_start(world), "--max-cost-per-hour", "0.000001",
                            "--queue-size", "5", "--enrich-workers", "1")  # one enricher: edits leave the queue in order
        process = warm.start(cmd, stdout=tmp_path / "output.txt")
        await until(lambda: state(run_dir).get("judged") == 1 and state(run_dir).get("holding")
                    and state(run_dir).get("dropped", {}).get("queue full", 0) >= 1, process)
        shown = await fanout_here("status", str(run_dir))
        process.send_signal(signal.SIGINT)
        await process.wait()
    assert process.returncode == 130
    assert "5 edit(s) waiting in the queue" in shown and "held back by --max-cost-per-hour 1e-06" in shown
    judged = {r["edit_rcid"] for r in records(run_dir)}
    assert len(judged) == 1 and len(records(run_dir)) == 2  # the first edit alone: nothing to estimate from before it
    taken = accepted(run_dir)
    dropped = {e["dropped"] for e in journal(run_dir) if "dropped" in e}
    assert taken[0] in judged and dropped.isdisjoint(judged) and max(dropped) < max(taken)  # the oldest go first


async def test_reverts_seen_in_the_stream_become_labels_the_report_reads_with_their_source(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config(rate=8, revert_delay_s=0.4, seed=7)) as sim:
        world = sim.state.world
        world.skip(20)  # the world's first 160 edits and their reverts are there before the watch starts
        cmd = watch_command(sim, run_dir, *from_the_start(world), "--max-edits", "12")
        code, output = await warm.run(cmd, tmp_path / "output.txt")
        assert code == 0, output
        taken = set(accepted(run_dir))
        reverted = {undone.rcid for r in world.revisions if r.reverts is not None
                    and (undone := world.revision(r.reverts)) is not None}
        report = await fanout_here("report", str(run_dir), "--json", "-")
    outcomes = [json.loads(line) for line in (run_dir / "outcomes.jsonl").read_text().splitlines()]
    learnt = {o["rcid"] for o in outcomes}
    assert learnt and learnt <= taken & reverted
    assert {o["outcome"] for o in outcomes} == {"reverted"} and {o["evidence"]["source"] for o in outcomes} == {"stream"}
    labels = json.loads(report)["labels"]
    assert labels["kind"] == "stream outcomes"
    assert labels["sources"] == {str(rcid): "reverts seen in the stream (outcomes.jsonl)" for rcid in sorted(learnt)}


async def test_a_gap_the_stream_cannot_replay_is_backfilled_and_the_status_says_how_much(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config(stream={"retention_events": 20})) as sim:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, "--max-edits", "4")  # from now
        code, output = await warm.run(cmd, tmp_path / "output.txt")
        assert code == 0, output
        world.skip(30)  # 150 edits while the watch is away; the stream keeps the last 20 events a topic
        cmd = watch_command(sim, run_dir, "--max-edits", "20")
        code, output = await warm.run(cmd, tmp_path / "resumed.txt")
        assert code == 0, output
        status = await fanout_here("status", str(run_dir))
        taken = assert_judged_once_each(run_dir, world, 20)
    final = state(run_dir)
    assert final["gaps"] >= 1 and final["backfilled"] >= 1
    assert f"{final['backfilled']} backfilled from {final['gaps']} gap(s)" in status
    backfilled = {e["accepted"] for e in journal(run_dir) if e.get("event", {}).get("source") == "backfill"}
    assert len(backfilled) == final["backfilled"] and backfilled <= set(taken)


def prefilter_lines(run_dir: Path) -> list[dict[str, Any]]:
    return whole_lines(run_dir / "prefilter.jsonl")


async def test_the_prefilter_sends_edits_scored_below_the_threshold_past_the_jury_and_the_jury_judges_the_rest(
        tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config()) as sim:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, *from_the_start(world), "--max-edits", "12", "--prefilter", "revertrisk",
                            "--prefilter-threshold", "0.5")
        code, output = await warm.run(cmd, tmp_path / "output.txt")
        assert code == 0, output
    decisions = {d["rcid"]: d for d in prefilter_lines(run_dir)}
    taken = set(accepted(run_dir))
    assert set(decisions) == taken and len(taken) == 12
    past = {rcid for rcid, d in decisions.items() if not d["passed"]}
    assert past and past != taken
    assert all(decisions[rcid]["score"] < 0.5 for rcid in past)
    assert all(decisions[rcid]["score"] >= 0.5 for rcid in taken - past)
    keys = Counter((r["edit_rcid"], r["model"]) for r in records(run_dir))
    assert set(keys) == {(rcid, model) for rcid in taken - past for model in MODELS} and max(keys.values()) == 1
    assert {e["prefiltered"]: e["score"] for e in journal(run_dir) if "prefiltered" in e} == {
        rcid: decisions[rcid]["score"] for rcid in past}
    assert state(run_dir)["prefiltered"] == len(past)


async def test_an_edit_the_prefilter_cannot_score_is_judged(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config(stream={"revertrisk_http_503": 1.0})) as sim:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, *from_the_start(world), "--max-edits", "4", "--prefilter", "revertrisk",
                            "--prefilter-threshold", "0.99")
        code, output = await warm.run(cmd, tmp_path / "output.txt")
        assert code == 0, output
        taken = assert_judged_once_each(run_dir, world, 4)
    decisions = prefilter_lines(run_dir)
    assert sorted(d["rcid"] for d in decisions) == sorted(taken)
    assert all(d["score"] is None and d["passed"] is True and d["reason"] for d in decisions)
    assert (state(run_dir)["prefilter_unscored"], state(run_dir)["prefiltered"]) == (4, 0)


async def fanout_json(*argv: str) -> Any:
    return json.loads(await fanout_here(*argv, "--json", "-"))


async def test_report_queue_compare_and_the_desk_read_a_watched_run_while_it_grows(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config()) as sim:
        world = sim.state.world
        cmd = watch_command(sim, run_dir, *from_the_start(world), "--max-edits", "12")
        process = warm.start(cmd, stdout=tmp_path / "output.txt")
        await until(lambda: len(records(run_dir)) >= 4, process)
        desk = Desk(run_dir, ReportOptions())
        early = {d.rcid for d in (await desk.report()).decisions}
        report, queue = await fanout_json("report", str(run_dir)), await fanout_json("queue", str(run_dir))
        compare = await fanout_json("compare", str(run_dir), str(run_dir))
        await process.wait()
        assert process.returncode == 0
        taken = assert_judged_once_each(run_dir, world, 12)
    assert len(early) >= 2 and early <= set(taken)  # read mid-run: the edits judged or being judged then
    assert 2 <= report["edits"] <= 12 and report["records"] >= 4
    assert {q["rcid"] for q in queue["queue"]} <= set(taken) and queue["edits"] >= 2
    assert compare["shared_edits"] >= 2
    assert {d.rcid for d in (await desk.report()).decisions} == set(taken)  # the desk sees the log grew
