"""`make chaos`: kill `fanout run` at random moments, many times, and check that nothing is lost or repeated.

Against the bundled simulator (no faults, a little latency), `fanout run` is
started on a run directory again and again and disturbed at a random moment,
in one of these kinds:
  stop            stopped by SIGKILL, SIGTERM or SIGINT (twice, sometimes);
  lock deleted    run.lock deleted while the run works, then a second start on
                  the directory, which must be refused (exit 2) while the first
                  lives; then the first is stopped as above;
  workers up      kill -9 once the run has extraction workers: every one of them
                  must be gone within 1 s;
  web_fetch busy  kill -9 of `fanout tool web_fetch` while its worker is busy on a
                  slow page (about 6 s of CPU, served here): gone within 1 s.
After the kill loop come the sweeps of scripts/chaos_bounds.py:
  bad bodies      every command against every kind of endpoint answering with
                  an endless trickle, a body over the cap, a gzip bomb or JSON
                  nested 100,000 deep;
  bad inputs      /dev/zero, a FIFO, a 5,000-deep YAML and a file over 1 GiB as every input
                  of `fanout run` and `fanout report`;
each command must end, print no traceback and stay under the RSS bound.
Between disturbances, every line of the log but a torn last one must be a
record and no pair may be logged twice; at the end one more start must finish
the run with exactly one record and one matching YAML view per pair, no temp
file, and no extraction worker left. When a run finishes before all the
disturbances are spent, the next round starts on a fresh run directory. Each
kind's figures are printed: tried (the moment came as planned) and held.

    python scripts/chaos.py [--kills 60] [--seed N] [--keep DIR] [--kinds KIND,...]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import yaml
from aiohttp import web
from anyio.abc import Process

from chaos_bounds import bad_server, body_cases, input_cases, output_cases, run_file_cases, try_cases
from fanout.base.validate import package_data
from fanout.llm.models import DEFAULT_MODELS
from fanout.sim import SimConfig, profile_from_dict, running_simulator

SAMPLE = package_data("sample_snapshot.yaml")
PAIRS = {(int(e["rcid"]), m.name) for e in yaml.safe_load(SAMPLE.read_text())["edits"] for m in DEFAULT_MODELS}
STOPS = (signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGINT)
KINDS = {"stop": 4, "lock deleted": 2, "workers up": 2, "web_fetch busy": 1}
"""Each kind of the kill loop and its weight in the random choice."""
SWEEPS = ("bad bodies", "bad inputs", "damaged run files", "outputs over inputs")
"""The kinds tried once each, every case in turn, after the kill loop (scripts/chaos_bounds.py)."""
WORKER = b"fanout.tools.extract_worker"
ZYGOTE = b"fanout.tools.extract_zygote"
"""A run's open pool forks its workers from a zygote (Linux): the zygote and its forks carry this command line."""
INPUTS_MODEL = DEFAULT_MODELS[0].name
"""The one model of the finished run `fanout report` reads under the bad inputs kind."""
SLOW_PAGE = b"<html><body>" + b"<p>x" * 200_000
"""About 6.5 s of CPU for trafilatura, within its 512 MB."""
BUSY_CPU_S = 1.0
"""A worker's start-up costs about 0.35 s of CPU: past this it is on the page."""
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=60, help="how many times the run is stopped (default 60)")
    parser.add_argument("--seed", type=int, default=int(time.time()), help="seed of the kill moments (printed)")
    parser.add_argument("--keep", type=Path, help="folder for the rounds' run directories, kept (default: a temporary one)")
    parser.add_argument("--kinds", type=kinds_argument, default=[*KINDS, *SWEEPS], metavar="KIND,...",
                        help=f"only these kinds (default all: {', '.join([*KINDS, *SWEEPS])})")
    args = parser.parse_args(argv)
    print(f"chaos: {args.kills} stops, seed {args.seed}, kinds {', '.join(args.kinds)}", flush=True)
    tried, held = Counter[str](), Counter[str]()
    with tempfile.TemporaryDirectory(prefix="fanout-chaos-") as tmp:
        problems = anyio.run(chaos, args.keep or Path(tmp), args.kills, random.Random(args.seed), args.kinds, tried, held)
    for problem in problems:
        print(f"FAIL: {problem}")
    for kind in args.kinds:
        print(f"chaos: {kind}: tried {tried[kind]}, held {held[kind]}")
    print("chaos: OK" if not problems else f"chaos: {len(problems)} problem(s); seed {args.seed}")
    return 1 if problems else 0


def kinds_argument(value: str) -> list[str]:
    kinds = [kind.strip() for kind in value.split(",") if kind.strip()]
    unknown = [kind for kind in kinds if kind not in (*KINDS, *SWEEPS)]
    if unknown or not kinds:
        raise argparse.ArgumentTypeError(f"unknown kind(s) {unknown}; choose from {', '.join([*KINDS, *SWEEPS])}")
    return kinds


async def chaos(base: Path, kills: int, rng: random.Random, kinds: list[str],
                tried: Counter[str], held: Counter[str]) -> list[str]:
    """The kill loop over the chosen kinds of KINDS, then the chosen sweeps; `tried` and `held` count, per kind,
    the disturbances that came as planned and those that held."""
    config = SimConfig(seed=rng.randrange(1 << 30), profile=profile_from_dict(
        {"defaults": {"latency": {"median_s": 0.3, "p95_s": 0.9}}}))
    problems: list[str] = []
    async with running_simulator(config) as sim:
        loop_kinds = {kind: weight for kind, weight in KINDS.items() if kind in kinds}
        if loop_kinds and kills > 0:
            problems += await kill_loop(sim.api_base, sim.searxng_url, base, kills, rng, loop_kinds, tried, held)
        if "bad bodies" in kinds:
            async with bad_server(sim.base_url) as (bad, _):
                cases = body_cases(bad, sim.api_base, sim.searxng_url, SAMPLE, base, run_dir_problems)
                problems += await try_cases("bad bodies", cases, tried, held)
        if {"bad inputs", "damaged run files", "outputs over inputs"} & set(kinds):
            finished = base / "inputs-finished-run"
            done = await anyio.run_process(
                [sys.executable, "-m", "fanout", "run", str(SAMPLE), "--run-dir", str(finished), "-m", INPUTS_MODEL,
                 "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls",
                 "--fetch-delay", "0", "--concurrency", "4"], check=False, stderr=subprocess.STDOUT)
            if done.returncode != 0:
                problems.append(f"bad inputs: the run to report on exited {done.returncode}: {done.stdout.decode()[-600:]}")
            else:
                if "bad inputs" in kinds:
                    cases = input_cases(SAMPLE, finished, sim.api_base, sim.searxng_url, base)
                    problems += await try_cases("bad inputs", cases, tried, held)
                if "damaged run files" in kinds:
                    problems += await try_cases("damaged run files", run_file_cases(finished, base), tried, held)
                if "outputs over inputs" in kinds:
                    problems += await try_cases("outputs over inputs", output_cases(finished, base), tried, held)
        left = [pid for pid in our_workers() if alive(pid)]
        if left:
            problems.append(f"extraction worker(s) left running at the end: {left}")
    return problems


async def kill_loop(api_base: str, searxng_url: str, base: Path, kills: int, rng: random.Random,
                    kinds: dict[str, int], tried: Counter[str], held: Counter[str]) -> list[str]:
    """Rounds of disturbances on a fresh run directory each, until `kills` are done; each round is then finished
    and checked."""
    problems: list[str] = []
    stops = Counter[str]()
    async with slow_site() as site:
        for round_no in range(1, kills + 1):
            if sum(stops.values()) >= kills:
                break
            run_dir = base / f"round-{round_no}"
            cmd = [sys.executable, "-m", "fanout", "run", str(SAMPLE), "--run-dir", str(run_dir),
                   "--base-url", api_base, "--searxng-url", searxng_url, "--allow-private-urls",
                   "--fetch-delay", "0", "--concurrency", "4", "--grace", "2"]
            while sum(stops.values()) < kills and len(logged_keys(run_dir)) < len(PAIRS):
                kind = rng.choices(list(kinds), weights=list(kinds.values()))[0]
                stopped, found = await disturb(kind, cmd, run_dir, site, rng)
                stops[kind] += 1
                found += log_problems(run_dir)
                tried[kind] += stopped is not None or bool(found)  # a moment that never came still counts if it broke
                held[kind] += stopped is not None and not found
                problems += [f"round {round_no}, after {kind}: {stopped}: {p}" for p in found]
            final = await anyio.run_process(cmd, check=False, stderr=subprocess.STDOUT)
            if final.returncode != 0:
                problems.append(f"round {round_no}: the last start exited {final.returncode}: {final.stdout.decode()[-2000:]}")
            problems += [f"round {round_no}: {p}" for p in final_problems(run_dir)]
            left = [pid for pid in our_workers() if alive(pid)]
            if left:
                problems.append(f"round {round_no}: extraction worker(s) left running: {left}")
            print(f"chaos: round {round_no} checked; stops so far {dict(stops)}", flush=True)
    return problems


async def disturb(kind: str, cmd: list[str], run_dir: Path, site: str, rng: random.Random) -> tuple[str | None, list[str]]:
    """One disturbance of `kind`: what was done (None when its moment never came: the run ended first) and what broke."""
    if kind == "web_fetch busy":
        return await kill_busy_web_fetch(site)
    async with await anyio.open_process(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
        if kind == "lock deleted":
            return await delete_lock_and_start_again(process, cmd, run_dir, rng)
        if kind == "workers up":
            return await kill_with_workers_up(process, rng)
        return await stop_at_random(process, run_dir, rng), []


async def stop_at_random(process: Process, run_dir: Path, rng: random.Random) -> str:
    """Let the run go on for a random while, stop it with a random signal; returns what was done."""
    grow = rng.choice((0, 1, 1, 1, 2, 3))  # 0: during start-up; else once the log has grown by this many lines
    delay = rng.uniform(0.0, 2.0) if grow == 0 else rng.uniform(0.0, 1.0)
    await wait_for_growth(process, run_dir, grow)
    with anyio.move_on_after(delay):
        await process.wait()
    return f"{await stop(process, rng)} {delay:.2f}s after {grow} new line(s), exit {process.returncode}"


async def wait_for_growth(process: Process, run_dir: Path, lines: int) -> None:
    before = len(log_lines(run_dir))
    with anyio.move_on_after(60):
        while lines and len(log_lines(run_dir)) < before + lines and process.returncode is None:
            await anyio.sleep(0.02)


async def stop(process: Process, rng: random.Random) -> str:
    signum = rng.choice(STOPS)
    if process.returncode is None:
        process.send_signal(signum)
        if signum == signal.SIGINT and rng.random() < 0.5:
            await anyio.sleep(rng.uniform(0.0, 0.5))
            if process.returncode is None:
                process.send_signal(signal.SIGINT)  # the second press: cancel at once
        await process.wait()
    return signum.name


async def delete_lock_and_start_again(process: Process, cmd: list[str], run_dir: Path,
                                      rng: random.Random) -> tuple[str | None, list[str]]:
    """Once the run has logged a line, delete run.lock and start a second run on the directory: refused (exit 2)
    is what holds. Only a second start that ended while the first still ran says anything."""
    await wait_for_growth(process, run_dir, 1)
    (run_dir / "run.lock").unlink(missing_ok=True)
    second = await anyio.run_process(cmd, check=False, stderr=subprocess.STDOUT)
    first_lived = process.returncode is None
    how = await stop(process, rng)
    if not first_lived:
        return None, []
    output = second.stdout.decode(errors="replace")
    refused = second.returncode == 2 and "is in use by another `fanout run`" in output
    problems = [] if refused else [f"a second start with run.lock deleted ran (exit {second.returncode}): {output[-300:]}"]
    return f"second start exit {second.returncode}, first then stopped by {how}", problems


async def kill_with_workers_up(process: Process, rng: random.Random) -> tuple[str | None, list[str]]:
    """kill -9 once the run has extraction workers (after a random further while): each must end within 1 s."""
    with anyio.move_on_after(60):
        while not workers_of(process.pid) and process.returncode is None:
            await anyio.sleep(0.02)
    await anyio.sleep(rng.uniform(0.0, 0.5))
    workers = workers_of(process.pid)
    if not workers or process.returncode is not None:
        await stop(process, rng)
        return None, []
    busy = sum(cpu_s(pid) > BUSY_CPU_S for pid in workers)
    zygotes = zygotes_of(process.pid)
    return (f"kill -9 with {len(workers)} worker(s) up, {busy} past start-up, {len(zygotes)} zygote(s)",
            await kill_and_check(process, zygotes + workers))


async def kill_busy_web_fetch(site: str) -> tuple[str | None, list[str]]:
    """kill -9 of `fanout tool web_fetch` while its worker is busy on the slow page: the worker ends within 1 s."""
    cmd = [sys.executable, "-m", "fanout", "tool", "web_fetch", f"{site}/slow", "--allow-private-urls"]
    async with await anyio.open_process(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
        with anyio.move_on_after(120):
            while process.returncode is None and not any(cpu_s(p) > BUSY_CPU_S for p in workers_of(process.pid)):
                await anyio.sleep(0.05)
        workers = workers_of(process.pid)
        if process.returncode is not None or not workers:
            if process.returncode is None:
                process.kill()
            await process.wait()
            return None, []
        return f"kill -9 with {len(workers)} worker(s) busy", await kill_and_check(process, workers)


async def kill_and_check(process: Process, workers: list[int]) -> list[str]:
    process.kill()
    await process.wait()
    for _ in range(50):  # at most 1 s
        if not any(alive(pid) for pid in workers):
            return []
        await anyio.sleep(0.02)
    left = [pid for pid in workers if alive(pid)]
    for pid in left:  # found and reported; not left to run on
        os.kill(pid, signal.SIGKILL)
    return [f"extraction worker(s) {left} outlived their owner by more than 1 s"]


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (state first), None when the process is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def parents() -> dict[int, int]:
    """Each of our extraction processes (workers and zygotes) and its parent."""
    return {pid: int(fields[1]) for pid in our_workers() if (fields := stat_fields(pid)) is not None}


def zygotes_of(owner: int) -> list[int]:
    return [pid for pid, parent in parents().items() if parent == owner and ZYGOTE in command_line(pid)]


def workers_of(owner: int) -> list[int]:
    """The owner's workers: started alone (its children) or forked (its zygotes' children); not the zygotes."""
    zygotes = set(zygotes_of(owner))
    return [pid for pid, parent in parents().items() if parent in zygotes or (parent == owner and pid not in zygotes)]


def command_line(pid: int) -> bytes:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes()
    except OSError:
        return b""


def our_workers() -> list[int]:
    """Extraction processes (workers and zygotes) started with this Python (another checkout's tests may run
    theirs beside us)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0] == os.fsencode(sys.executable) and (WORKER in argv or ZYGOTE in argv):
            found.append(int(entry.name))
    return found


def cpu_s(pid: int) -> float:
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS if fields else 0.0


def alive(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie runs no more; init may reap it late


@asynccontextmanager
async def slow_site() -> AsyncIterator[str]:
    """A loopback server of one slow page, for the web_fetch kind."""
    async def page(request: web.Request) -> web.Response:
        return web.Response(body=SLOW_PAGE, content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/slow", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


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


def run_dir_problems(run_dir: Path) -> list[str]:
    """After a run that met a bad body: whole lines, no pair twice, no temp file."""
    leftovers = [p.name for p in run_dir.rglob("*.tmp")] if run_dir.exists() else []
    return log_problems(run_dir) + ([f"temp files left: {leftovers}"] if leftovers else [])


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
