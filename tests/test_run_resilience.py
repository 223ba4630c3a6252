"""`fanout run` as a real process: kill -9 at random moments, Ctrl-C once and twice, stalls.

The simulator runs in the test's event loop on 127.0.0.1; `fanout run` runs as
a process of its own, forked from a warm interpreter that did the imports once
(tests/warm.py: each fresh start paid its imports, twenty-odd times here), so
signals, exit codes, fsync and resume are the real ones. Waiting is on the log
growing, never on speed; once the kill or the signal has landed, the simulator
answers at once, as the slow answers were there only for it to land mid-work.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
import yaml

from fanout.base.validate import package_data
from fanout.base.yamlio import SAFE_LOADER
from fanout.llm.models import DEFAULT_MODELS
from fanout.sim import SimConfig, profile_from_dict, running_simulator

from parsed_yaml import package_yaml
from warm import WarmInterpreter

SAMPLE = package_data("sample_snapshot.yaml")
EDITS = package_yaml("sample_snapshot.yaml")["edits"]
ALL_PAIRS = {(int(e["rcid"]), m.name) for e in EDITS for m in DEFAULT_MODELS}


def pairs_of(limit: int) -> set[tuple[int, str]]:
    return {(int(e["rcid"]), m.name) for e in EDITS[:limit] for m in DEFAULT_MODELS}

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmInterpreter]:
    with WarmInterpreter() as server:
        yield server


def sim_config(**defaults) -> SimConfig:
    return SimConfig(seed=11, profile=profile_from_dict({"defaults": defaults}))


def run_command(sim, run_dir: Path, *extra: str) -> list[str]:
    """One tool turn per verdict (a search, never a page): a run that reads a page starts its extraction zygote,
    0.7 s of CPU before its first page, paid by each of the twenty-odd runs killed here. No test here is about
    pages (test_extract_orphans kills a run at work on its pages; test_disk_full's run reads them)."""
    return [
        sys.executable, "-m", "fanout", "run", str(SAMPLE), "--run-dir", str(run_dir),
        "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0",
        "--concurrency", "8", "--max-turns", "1", *extra,
    ]


def log_lines(run_dir: Path) -> list[str]:
    path = run_dir / "checkpoint.jsonl"
    return path.read_text().splitlines() if path.exists() else []


async def wait_for_lines(run_dir: Path, n: int, process) -> None:
    while len(log_lines(run_dir)) < n:
        assert process.returncode is None, "the run ended before the test could act"
        await anyio.sleep(0.02)


async def took_the_lock(run_dir: Path, process) -> bool:
    """Wait until `process` holds the run directory's lock (past its start, at work on the run): False if it
    ended before."""
    while holder_named(run_dir) != f"{process.pid}\n":
        if process.returncode is not None:
            return False
        await anyio.sleep(0.01)
    return True


def holder_named(run_dir: Path) -> str | None:
    """What run.lock says: None while there is none (a run that starts makes it anew)."""
    try:
        return (run_dir / "run.lock").read_text()
    except FileNotFoundError:
        return None


async def run_to_end(cmd: list[str]) -> tuple[int, str]:
    result = await anyio.run_process(cmd, check=False, stderr=subprocess.STDOUT)
    return result.returncode, result.stdout.decode()


def assert_one_record_and_one_matching_view_per_pair(run_dir: Path, expected: set[tuple[int, str]] = ALL_PAIRS) -> None:
    records = [json.loads(line) for line in log_lines(run_dir)]
    keys = Counter((r["edit_rcid"], r["model"]) for r in records)
    assert set(keys) == expected
    assert max(keys.values()) == 1, "a pair was logged twice"
    views = sorted((run_dir / "verdicts").glob("*.yaml"))
    assert len(views) == len(expected)
    by_key = {(r["edit_rcid"], r["model"]): r for r in records}
    for view in views:
        data = yaml.load(view.read_text(), Loader=SAFE_LOADER)  # libyaml: PyYAML's own took 1.5 s for 48 views
        record = by_key[(data["edit_rcid"], data["model"])]
        assert (data["verdict"], data["status"], data["cost_usd"]) == (record["verdict"], record["status"], record["cost_usd"])
    assert not list((run_dir / "verdicts").glob(".*.tmp"))


async def test_kill_9_at_twenty_random_moments_loses_and_repeats_nothing(tmp_path, warm):
    rng = random.Random(20261122)
    run_dir = tmp_path / "run"
    # A pair (a search, two chat calls) takes about a second at this latency, two at a time: a killed run logs
    # one or two pairs, three at most, and the twenty log some 30 of the 48 (29 and 33 measured), the rest is resumed.
    async with running_simulator(sim_config(latency={"median_s": 0.3, "p95_s": 0.8})) as sim:
        cmd = run_command(sim, run_dir, "--concurrency", "2")
        kills = 0
        starts = 0
        while kills < 20:
            starts += 1
            process = warm.start(cmd, stdout=tmp_path / f"start-{starts}.txt")
            if await took_the_lock(run_dir, process):  # the moment is drawn from there: none is spent on start-up
                # At most 1.5 s: a kill loses the work in flight, so twenty kills land before the last pair.
                await anyio.sleep(rng.uniform(0.2, 1.5))
                process.send_signal(signal.SIGKILL)
            code = await process.wait()
            assert code in (-signal.SIGKILL, 0), (code, (tmp_path / f"start-{starts}.txt").read_text()[-3000:])
            assert code != 0 or len(log_lines(run_dir)) < 48, f"the run finished with {kills} of 20 kills landed"
            kills += code == -signal.SIGKILL
        sim.state.latency_scale = 0.0  # the kills have landed: the resume need not be slow
        code, output = await warm.run(cmd, tmp_path / "output.txt")
    assert code == 0, output
    assert_one_record_and_one_matching_view_per_pair(run_dir)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
async def test_one_ctrl_c_or_a_hang_up_lets_verdicts_in_flight_finish_exits_130_and_the_same_command_resumes(
        tmp_path, warm, signum):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config(latency={"median_s": 0.4, "p95_s": 0.8})) as sim:
        cmd = run_command(sim, run_dir, "--limit", "6")
        process = warm.start(cmd, stdout=tmp_path / "interrupted.txt")
        await wait_for_lines(run_dir, 4, process)
        process.send_signal(signum)
        while "no new verdicts" not in (tmp_path / "interrupted.txt").read_text() and process.returncode is None:
            await anyio.sleep(0.01)
        sim.state.latency_scale = 0.0  # the signal has landed: those in flight need not finish slowly
        assert await process.wait() == 130
        output = (tmp_path / "interrupted.txt").read_text()
        assert f"Interrupted ({signum.name}): no new verdicts; those in flight get 30s to finish" in output
        assert output.strip().splitlines()[-1].startswith("Interrupted. Resume with: fanout run ")
        interrupted = [json.loads(line) for line in log_lines(run_dir)]
        assert 4 <= len(interrupted) < 24
        assert all(r["status"] == "ok" for r in interrupted)
        code, resumed = await warm.run(cmd, tmp_path / "resumed.txt")
    assert code == 0, resumed
    assert f"{len(interrupted)}/24 pairs already done" in resumed
    assert_one_record_and_one_matching_view_per_pair(run_dir, pairs_of(6))


async def test_a_second_ctrl_c_cancels_at_once_and_leaves_a_valid_log(tmp_path, warm):
    run_dir = tmp_path / "run"
    async with running_simulator(sim_config(latency={"median_s": 0.8, "p95_s": 1.5})) as sim:
        cmd = run_command(sim, run_dir, "--limit", "3")
        process = warm.start(cmd)
        await wait_for_lines(run_dir, 1, process)
        process.send_signal(signal.SIGINT)
        await anyio.sleep(0.3)
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(20):  # far below the 30 s grace: the second press did cancel
            await process.wait()
        assert process.returncode == 130
        sim.state.latency_scale = 0.0
        logged = [json.loads(line) for line in log_lines(run_dir)]
        assert len(logged) < 12
        code, output = await warm.run(cmd, tmp_path / "output.txt")
    assert code == 0, output
    assert_one_record_and_one_matching_view_per_pair(run_dir, pairs_of(3))


async def test_a_model_that_stalls_past_the_timeout_gets_timeout_records_and_the_run_goes_on(tmp_path, warm):
    stalling = "allenai/olmo-3.1-32b-instruct"
    profile = profile_from_dict({"models": {stalling: {"stall": 1.0, "stall_s": 120}}})
    async with running_simulator(SimConfig(seed=3, profile=profile)) as sim:
        # 15 s: far below the 120 s stall, and room for the others' verdicts on a loaded machine: a search and two
        # chat calls each, no page (8 s was too short when their pages queued for two extraction workers, in a
        # parallel run at a load average of 13 on 2 CPUs). The stalled verdicts end at the timeout, not by the
        # clock of the test; the run waits for it, so it is the test's wall time.
        code, output = await warm.run(run_command(sim, tmp_path / "run", "--limit", "2", "--timeout", "15"),
                                      tmp_path / "output.txt")
    assert code == 0, output
    records = {(r["edit_rcid"], r["model"]): r for r in map(json.loads, log_lines(tmp_path / "run"))}
    assert len(records) == 8
    for (rcid, model), record in records.items():
        if model == stalling:
            assert (record["status"], record["timeout"], record["verdict"]) == ("timeout", True, None)
        else:
            assert record["status"] == "ok" and record["timeout"] is False


async def test_a_model_the_endpoint_refuses_stops_at_once_records_nothing_and_runs_once_its_name_is_corrected(
        tmp_path, warm):
    haiku, typo, listed = "anthropic/claude-4.5-haiku-20251001", "deepseek/deepseek-v3.3", "deepseek/deepseek-v3.2"
    async with running_simulator(sim_config()) as sim:
        run_dir = tmp_path / "run"
        code, output = await warm.run(run_command(sim, run_dir, "--limit", "3", "-m", f"{haiku},{typo}"),
                                      tmp_path / "refused.txt")
        assert code == 1, output
        lines = output.splitlines()
        assert f"warning: model {typo}: not listed by the endpoint (using it anyway); did you mean {listed}?" in lines
        refusals = [line for line in lines if line.startswith(f"{typo}: refused by the endpoint")]
        assert len(refusals) == 1, output
        assert refusals[0] == (f"{typo}: refused by the endpoint (HTTP 400: {typo} is not a valid model ID); "
                               "none of its 3 pair(s) left is recorded, and none starts again. Correct the model name "
                               "and run again.")
        assert lines[-1] == (f"Not run: {typo}, refused by the endpoint (HTTP 400: {typo} is not a valid model ID). "
                             "Its pairs are not recorded: correct the name with -m and run again.")
        assert {json.loads(line)["model"] for line in log_lines(run_dir)} == {haiku}
        assert list((run_dir / "inflight").iterdir()) == []  # a refusal costs nothing: no attempt to settle

        code, output = await warm.run(run_command(sim, run_dir, "--limit", "3", "-m", f"{haiku},{listed}"),
                                      tmp_path / "corrected.txt")
        assert code == 0, output
        assert Counter(json.loads(line)["model"] for line in log_lines(run_dir)) == {haiku: 3, listed: 3}
