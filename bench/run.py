"""`make bench`: throughput, overhead and scale of `fanout run`, measured against the ideal (issue 8).

    python bench/run.py                   every scenario at full size (about 30 minutes on 2 cores)
    python bench/run.py --quick           smaller sizes, for a check in a few minutes
    python bench/run.py --only efficiency resume

Each scenario runs the real `fanout run` against `fanout sim` in subprocesses
on 127.0.0.1 and compares what it measured with what the simulated latencies
or rate limits allow. Prints a table and writes bench/results/<date>.json.
Timings live here only, never in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import scenarios  # noqa: E402
import watching  # noqa: E402
from report import print_table  # noqa: E402

RESULTS = Path(__file__).parent / "results"
SCENARIOS = ("startup", "extraction", "speedup", "efficiency", "rate_limits", "pacing", "memory", "resume", "watch",
             "scale")
PACING_CASES = ("window_told", "window_not_told", "bucket_told", "bucket_not_told", "halving")
FULL = {"efficiency_verdicts": 2000, "memory_sizes": (2000, 100_000), "resume_pairs": 1_000_000,
        "watch_edits": {1: 60, 10: 600}, "scale_verdicts": 5120}
QUICK = {"efficiency_verdicts": 400, "memory_sizes": (2000, 10_000), "resume_pairs": 100_000,
         "watch_edits": {1: 20, 10: 200}, "scale_verdicts": 2560}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/run.py", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (400 verdicts, 10 000, a 100 000-line log)")
    parser.add_argument("--only", nargs="+", choices=SCENARIOS, metavar="NAME", help=f"run only these: {', '.join(SCENARIOS)}")
    parser.add_argument("--out", type=Path, default=None, help="results file (default bench/results/<date>.json)")
    parser.add_argument("--workdir", type=Path, default=None, help="keep snapshots and run directories here")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    chosen = args.only or SCENARIOS
    root = args.workdir or Path(tempfile.mkdtemp(prefix="fanout-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    work = scenarios.Workdir(root)
    results: dict[str, Any] = {"machine": machine(), "started": utc_now(), "quick": args.quick, "scenarios": {}}
    try:
        for name in chosen:
            say(f"--- {name}")
            start, load_before = time.monotonic(), os.getloadavg()
            results["scenarios"][name] = RUNNERS[name](work, sizes)
            # The machine may be shared: its load beside each figure says how much CPU the runs could get.
            results.setdefault("load_average", {})[name] = {"before": [round(x, 2) for x in load_before],
                                                             "after": [round(x, 2) for x in os.getloadavg()]}
            say(f"    done in {time.monotonic() - start:.0f} s: {json.dumps(results['scenarios'][name])}")
    finally:
        if args.workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    results["finished"] = utc_now()
    out = args.out or RESULTS / f"{datetime.now().strftime('%Y-%m-%d')}{'-quick' if args.quick else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print()
    print_table(results)
    print(f"\nResults: {out}")
    return 0


def run_speedup(work: scenarios.Workdir, sizes: dict[str, Any]) -> dict[str, Any]:
    return scenarios.speedup(work)


def run_efficiency(work: scenarios.Workdir, sizes: dict[str, Any]) -> dict[str, Any]:
    if not work.calibrated:
        scenarios.calibrate(work)
    return {f"c{c}": scenarios.efficiency(work, c, verdicts=sizes["efficiency_verdicts"]) for c in (8, 64, 256)}


def run_rate_limits(work: scenarios.Workdir, sizes: dict[str, Any]) -> dict[str, Any]:
    return {"told": scenarios.rate_limited(work, told=True), "not_told": scenarios.rate_limited(work, told=False)}


def run_pacing(work: scenarios.Workdir, sizes: dict[str, Any]) -> dict[str, Any]:
    return {case: scenarios.pacing(work, case) for case in PACING_CASES}


def run_memory(work: scenarios.Workdir, sizes: dict[str, Any]) -> dict[str, Any]:
    runs = {str(n): scenarios.memory(work, n) for n in sizes["memory_sizes"]}
    small, large = (runs[str(n)] for n in sizes["memory_sizes"])
    extra = (large["max_rss_mb"] - small["max_rss_mb"]) * 1e6 / (large["verdicts"] - small["verdicts"])
    return {**runs, "growth_bytes_per_verdict": round(extra, 1)}


def run_watch(work: scenarios.Workdir, sizes: dict[str, Any]) -> dict[str, Any]:
    """The live patrol at 1 and 10 edits a second, verdicts of about 30 s (10 x 4 x 30 = 1,200 in flight)."""
    return {f"rate_{rate}": watching.watch(work.root, rate=rate, edits=edits, concurrency=max(64, rate * 160))
            for rate, edits in sizes["watch_edits"].items()}


def run_scale(work: scenarios.Workdir, sizes: dict[str, Any]) -> dict[str, Any]:
    """`fanout run` at --concurrency 1280 with verdicts of about 30 s: what 10 edits a second x 4 models needs.

    Then the same 1,280 in flight with verdicts of about 60 s, half the verdicts a second: whether a shortfall
    comes from holding that many verdicts at once or from the CPU the verdicts a second need.
    """
    if not work.calibrated:
        scenarios.calibrate(work)
    verdicts = sizes["scale_verdicts"]
    return {f"c1280_{seconds}s": scenarios.efficiency(work, 1280, verdicts=verdicts, target_s=verdicts * seconds / 1280)
            for seconds in (30, 60)}


RUNNERS = {
    "startup": lambda work, sizes: scenarios.startup(work),
    "extraction": lambda work, sizes: scenarios.extraction_cost(),
    "speedup": run_speedup,
    "efficiency": run_efficiency,
    "rate_limits": run_rate_limits,
    "pacing": run_pacing,
    "memory": run_memory,
    "resume": lambda work, sizes: scenarios.resume(work, pairs=sizes["resume_pairs"]),
    "watch": run_watch,
    "scale": run_scale,
}


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_gb = None
    try:
        memory_gb = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9, 1)
    except (ValueError, OSError):
        pass
    from fanout.base.version import __version__

    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "os": platform.platform(),
        "python": platform.python_version(),
        "fanout": __version__,
        "commit": _commit(),
    }


def _commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=Path(__file__).parent)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def say(text: str) -> None:
    print(text, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
