"""`fanout run` as a real process: kill -9 at random moments, Ctrl-C once and twice, stalls.

The simulator runs in the test's event loop on 127.0.0.1; `fanout run` runs as
a child process exactly as a user starts it, so signals, exit codes, fsync and
resume are the real ones. Waiting is on the log growing, never on speed.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import anyio
import pytest
import yaml

from fanout.base.validate import package_data
from fanout.llm.models import DEFAULT_MODELS
from fanout.sim import SimConfig, profile_from_dict, running_simulator

SAMPLE = package_data("sample_snapshot.yaml")
EDITS = yaml.safe_load(SAMPLE.read_text())["edits"]
ALL_PAIRS = {(int(e["rcid"]), m.name) for e in EDITS for m in DEFAULT_MODELS}


def pairs_of(limit: int) -> set[tuple[int, str]]:
    return {(int(e["rcid"]), m.name) for e in EDITS[:limit] for m in DEFAULT_MODELS}

pytestmark = pytest.mark.timeout(300)


def sim_config(**defaults) -> SimConfig:
    return SimConfig(seed=11, profile=profile_from_dict({"defaults": defaults}))


def run_command(sim, run_dir: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "fanout", "run", str(SAMPLE), "--run-dir", str(run_dir),
        "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0",
        "--concurrency", "8", *extra,
    ]


def log_lines(run_dir: Path) -> list[str]:
    path = run_dir / "checkpoint.jsonl"
    return path.read_text().splitlines() if path.exists() else []


async def wait_for_lines(run_dir: Path, n: int, process) -> None:
    while len(log_lines(run_dir)) < n:
        assert process.returncode is None, "the run ended before the test could act"
        await anyio.sleep(0.02)


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
        data = yaml.safe_load(view.read_text())
        record = by_key[(data["edit_rcid"], data["model"])]
        assert (data["verdict"], data["status"], data["cost_usd"]) == (record["verdict"], record["status"], record["cost_usd"])
    assert not list((run_dir / "verdicts").glob(".*.tmp"))


async def test_kill_9_at_twenty_random_moments_loses_and_repeats_nothing(tmp_path):
    rng = random.Random(20261122)
    async with running_simulator(sim_config(latency={"median_s": 0.15, "p95_s": 0.4})) as sim:
        cmd = run_command(sim, tmp_path, "--concurrency", "4")
        kills = 0
        while kills < 20:
            process = await anyio.open_process(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await anyio.sleep(rng.uniform(0.2, 2.5))
            if process.returncode is None:
                process.send_signal(signal.SIGKILL)
                kills += 1
            await process.wait()
        code, output = await run_to_end(cmd)
    assert code == 0, output
    assert_one_record_and_one_matching_view_per_pair(tmp_path)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGHUP])
async def test_one_ctrl_c_or_a_hang_up_lets_verdicts_in_flight_finish_exits_130_and_the_same_command_resumes(tmp_path, signum):
    async with running_simulator(sim_config(latency={"median_s": 0.4, "p95_s": 0.8})) as sim:
        cmd = run_command(sim, tmp_path, "--limit", "6")
        process = await anyio.open_process(cmd, stderr=subprocess.STDOUT)
        await wait_for_lines(tmp_path, 4, process)
        process.send_signal(signum)
        output = (await process.stdout.receive(1 << 20)).decode() if process.stdout else ""
        async for chunk in process.stdout:
            output += chunk.decode()
        await process.wait()
        assert process.returncode == 130
        assert f"Interrupted ({signum.name}): no new verdicts; those in flight get 30s to finish" in output
        assert output.strip().splitlines()[-1].startswith("Interrupted. Resume with: fanout run ")
        interrupted = [json.loads(line) for line in log_lines(tmp_path)]
        assert 4 <= len(interrupted) < 24
        assert all(r["status"] == "ok" for r in interrupted)
        code, resumed = await run_to_end(cmd)
    assert code == 0, resumed
    assert f"{len(interrupted)}/24 pairs already done" in resumed
    assert_one_record_and_one_matching_view_per_pair(tmp_path, pairs_of(6))


async def test_a_second_ctrl_c_cancels_at_once_and_leaves_a_valid_log(tmp_path):
    async with running_simulator(sim_config(latency={"median_s": 0.8, "p95_s": 1.5})) as sim:
        cmd = run_command(sim, tmp_path, "--limit", "3")
        process = await anyio.open_process(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await wait_for_lines(tmp_path, 1, process)
        process.send_signal(signal.SIGINT)
        await anyio.sleep(0.3)
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(20):  # far below the 30 s grace: the second press did cancel
            await process.wait()
        assert process.returncode == 130
        logged = [json.loads(line) for line in log_lines(tmp_path)]
        assert len(logged) < 12
        code, output = await run_to_end(cmd)
    assert code == 0, output
    assert_one_record_and_one_matching_view_per_pair(tmp_path, pairs_of(3))


async def test_a_model_that_stalls_past_the_timeout_gets_timeout_records_and_the_run_goes_on(tmp_path):
    stalling = "allenai/olmo-3.1-32b-instruct"
    profile = profile_from_dict({"models": {stalling: {"stall": 1.0, "stall_s": 120}}})
    async with running_simulator(SimConfig(seed=3, profile=profile)) as sim:
        # 30 s: far below the 120 s stall, and room for the others' verdicts on a loaded machine, where their pages
        # queue for two extraction workers (8 s was too short for every one of the 8 verdicts in a parallel run at
        # a load average of 13 on 2 CPUs). The stalled verdicts end at the timeout, not by the clock of the test.
        code, output = await run_to_end(run_command(sim, tmp_path, "--limit", "2", "--timeout", "30"))
    assert code == 0, output
    records = {(r["edit_rcid"], r["model"]): r for r in map(json.loads, log_lines(tmp_path))}
    assert len(records) == 8
    for (rcid, model), record in records.items():
        if model == stalling:
            assert (record["status"], record["timeout"], record["verdict"]) == ("timeout", True, None)
        else:
            assert record["status"] == "ok" and record["timeout"] is False


async def test_a_model_the_endpoint_refuses_stops_at_once_records_nothing_and_runs_once_its_name_is_corrected(tmp_path):
    haiku, typo, listed = "anthropic/claude-4.5-haiku-20251001", "deepseek/deepseek-v3.3", "deepseek/deepseek-v3.2"
    async with running_simulator(sim_config()) as sim:
        code, output = await run_to_end(run_command(sim, tmp_path, "--limit", "3", "-m", f"{haiku},{typo}"))
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
        assert {json.loads(line)["model"] for line in log_lines(tmp_path)} == {haiku}
        assert list((tmp_path / "inflight").iterdir()) == []  # a refusal costs nothing: no attempt to settle

        code, output = await run_to_end(run_command(sim, tmp_path, "--limit", "3", "-m", f"{haiku},{listed}"))
        assert code == 0, output
        assert Counter(json.loads(line)["model"] for line in log_lines(tmp_path)) == {haiku: 3, listed: 3}
