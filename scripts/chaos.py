"""`make chaos`: kill `fanout run` at random moments, many times, and check that nothing is lost or repeated.

Against the bundled simulator (no faults, a little latency), `fanout run` is
started on a run directory again and again and stopped at a random moment
by SIGKILL, SIGTERM or SIGINT (twice, sometimes). Between kills, every line of
the log but a torn last one must be a record and no pair may be logged twice;
at the end one more start must finish the run with exactly one record and one
matching YAML view per pair, and no temp file. When a run finishes before all
the stops are spent, the next round starts on a fresh run directory.

    python scripts/chaos.py [--kills 60] [--seed N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import anyio
import yaml

from fanout.config import package_data
from fanout.llm.models import DEFAULT_MODELS
from fanout.sim import SimConfig, profile_from_dict, running_simulator

SAMPLE = package_data("sample_snapshot.yaml")
PAIRS = {(int(e["rcid"]), m.name) for e in yaml.safe_load(SAMPLE.read_text())["edits"] for m in DEFAULT_MODELS}
STOPS = (signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGINT)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=60, help="how many times the run is stopped (default 60)")
    parser.add_argument("--seed", type=int, default=int(time.time()), help="seed of the kill moments (printed)")
    parser.add_argument("--keep", type=Path, help="folder for the rounds' run directories, kept (default: a temporary one)")
    args = parser.parse_args(argv)
    print(f"chaos: {args.kills} stops, seed {args.seed}", flush=True)
    with tempfile.TemporaryDirectory(prefix="fanout-chaos-") as tmp:
        problems = anyio.run(chaos, args.keep or Path(tmp), args.kills, random.Random(args.seed))
    for problem in problems:
        print(f"FAIL: {problem}")
    print("chaos: OK" if not problems else f"chaos: {len(problems)} problem(s); seed {args.seed}")
    return 1 if problems else 0


async def chaos(base: Path, kills: int, rng: random.Random) -> list[str]:
    """Rounds of stops on a fresh run directory each, until `kills` stops are done; each round is then finished and checked."""
    config = SimConfig(seed=rng.randrange(1 << 30), profile=profile_from_dict(
        {"defaults": {"latency": {"median_s": 0.3, "p95_s": 0.9}}}))
    problems: list[str] = []
    stops = Counter[str]()
    async with running_simulator(config) as sim:
        for round_no in range(1, kills + 1):
            if sum(stops.values()) >= kills:
                break
            run_dir = base / f"round-{round_no}"
            cmd = [sys.executable, "-m", "fanout", "run", str(SAMPLE), "--run-dir", str(run_dir),
                   "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls",
                   "--fetch-delay", "0", "--concurrency", "4", "--grace", "2"]
            while sum(stops.values()) < kills and len(logged_keys(run_dir)) < len(PAIRS):
                stopped = await stop_at_random(cmd, run_dir, rng)
                stops[stopped.split()[0]] += 1
                problems += [f"round {round_no}, after {stopped}: {p}" for p in log_problems(run_dir)]
            final = await anyio.run_process(cmd, check=False, stderr=subprocess.STDOUT)
            if final.returncode != 0:
                problems.append(f"round {round_no}: the last start exited {final.returncode}: {final.stdout.decode()[-2000:]}")
            problems += [f"round {round_no}: {p}" for p in final_problems(run_dir)]
            print(f"chaos: round {round_no} checked; stops so far {dict(stops)}", flush=True)
    return problems


async def stop_at_random(cmd: list[str], run_dir: Path, rng: random.Random) -> str:
    """Start the run, let it go on for a random while, stop it with a random signal; returns what was done."""
    signum = rng.choice(STOPS)
    grow = rng.choice((0, 1, 1, 1, 2, 3))  # 0: during start-up; else once the log has grown by this many lines
    delay = rng.uniform(0.0, 2.0) if grow == 0 else rng.uniform(0.0, 1.0)
    before = len(log_lines(run_dir))
    async with await anyio.open_process(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
        with anyio.move_on_after(60):
            while grow and len(log_lines(run_dir)) < before + grow and process.returncode is None:
                await anyio.sleep(0.02)
        with anyio.move_on_after(delay):
            await process.wait()
        if process.returncode is None:
            process.send_signal(signum)
            if signum == signal.SIGINT and rng.random() < 0.5:
                await anyio.sleep(rng.uniform(0.0, 0.5))
                if process.returncode is None:
                    process.send_signal(signal.SIGINT)  # the second press: cancel at once
            await process.wait()
    return f"{signum.name} {delay:.2f}s after {grow} new line(s), exit {process.returncode}"


def log_lines(run_dir: Path) -> list[bytes]:
    path = run_dir / "checkpoint.jsonl"
    return path.read_bytes().splitlines(keepends=True) if path.exists() else []


def logged_keys(run_dir: Path) -> list[tuple[int, str]]:
    keys = []
    for line in log_lines(run_dir):
        try:
            record = json.loads(line)
            keys.append((record["edit_rcid"], record["model"]))
        except (ValueError, KeyError, TypeError):
            continue
    return keys


def log_problems(run_dir: Path) -> list[str]:
    """Between kills: whole records only (but a torn last line), and no pair twice (the profile has no errors)."""
    lines = [line for line in log_lines(run_dir) if line.strip()]
    problems = []
    for number, line in enumerate(lines, start=1):
        try:
            json.loads(line)
        except ValueError:
            if number != len(lines) or line.endswith(b"\n"):
                problems.append(f"line {number} of the log is damaged")
    twice = [key for key, n in Counter(logged_keys(run_dir)).items() if n > 1]
    return problems + [f"{key} logged {Counter(logged_keys(run_dir))[key]} times" for key in twice]


def final_problems(run_dir: Path) -> list[str]:
    """At the end: every pair once, each with its view holding the logged verdict, and no temp file anywhere."""
    records = [json.loads(line) for line in log_lines(run_dir) if line.strip()]
    keys = Counter((r["edit_rcid"], r["model"]) for r in records)
    problems = [f"{len(PAIRS - set(keys))} pair(s) missing"] if PAIRS - set(keys) else []
    problems += [f"{key} logged {n} times" for key, n in keys.items() if n > 1]
    views = {}
    for path in (run_dir / "verdicts").glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        views[(data["edit_rcid"], data["model"])] = (data["verdict"], data["status"], data["cost_usd"])
    logged = {(r["edit_rcid"], r["model"]): (r["verdict"], r["status"], r["cost_usd"]) for r in records}
    if views != logged:
        problems.append(f"views differ from the log for {len(set(views.items()) ^ set(logged.items()))} pair(s)")
    leftovers = [p.name for p in run_dir.rglob("*.tmp")]
    if leftovers:
        problems.append(f"temp files left: {leftovers}")
    return problems


if __name__ == "__main__":
    raise SystemExit(main())
