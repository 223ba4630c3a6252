"""The client's CPU per verdict in a minute, without the whole bench: one `fanout run` against `fanout sim`.

    python bench/cpu_probe.py                          300 edits x 4 models at --concurrency 320
    python bench/cpu_probe.py --profile /tmp/run.prof  the same under cProfile (its own overhead included)
    python bench/cpu_probe.py --edits 50 --repeat 3

The simulator runs in its own process, so only the `fanout run` process is
measured: user + sys CPU from the kernel (os.wait4), which other work on the
machine does not inflate the way it does wall time. A one-edit run is measured
first and its CPU taken off as start-up and shutdown, so the figure is the
cost of the verdicts themselves; the load average is printed beside it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import harness  # noqa: E402
from harness import FANOUT, RunMeasure, Simulator, require_success, run_fanout  # noqa: E402
from scenarios import MODELS  # noqa: E402
from workload import write_snapshot  # noqa: E402


PROFILED = (
    "import cProfile, runpy, sys, time; out = sys.argv.pop(1); sys.argv[0] = 'fanout'; "
    "p = cProfile.Profile(time.thread_time)\n"
    "try:\n p.runcall(runpy.run_module, 'fanout', run_name='__main__')\n"
    "except SystemExit: pass\n"
    "finally: p.dump_stats(out)"
)
"""cProfile counting the main thread's CPU time (time.thread_time), not wall time: on a shared machine, wall
time would charge the waits for a CPU to whatever function happened to be running."""


class ThreadSplit(harness.CpuWait):
    """CpuWait, which also says how much of the CPU was the event loop's thread (the main one) and how much
    the worker threads' (the log writer, the tool cache, anyio's): only the first stalls verdicts."""

    def stop(self) -> dict[str, Any]:
        waited = super().stop()
        main = self._threads.get(str(self._pid), (0, 0))[0] / 1e9
        others = sum(t[0] for tid, t in self._threads.items() if tid != str(self._pid)) / 1e9
        return {**waited, "main_thread_cpu_s": round(main, 2), "worker_threads_cpu_s": round(others, 2)}


harness.CpuWait = ThreadSplit  # type: ignore[misc]


def measure(root: Path, edits: int, concurrency: int, scale: float, tag: str, wrap: list[str] | None = None) -> RunMeasure:
    """One `fanout run`; `wrap` replaces `python -m fanout` (a profiler's command line ending in fanout's)."""
    snapshot = write_snapshot(root / f"snapshot-{edits}.yaml", edits)
    run_dir = root / f"run-{tag}"
    plain = list(FANOUT)
    with Simulator(latency_scale=scale) as sim:
        if wrap is not None:
            FANOUT[:] = wrap
        try:
            result = run_fanout(snapshot, run_dir, sim, "--concurrency", str(concurrency))
        finally:
            FANOUT[:] = plain
        require_success(result, tag)
    return result


@contextlib.contextmanager
def source_tree(src: Path | None) -> Iterator[None]:
    """Child processes import fanout from `src` (PYTHONPATH first), or as installed when None."""
    saved = os.environ.get("PYTHONPATH")
    if src is not None:
        os.environ["PYTHONPATH"] = str(src.resolve())
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def profiler(args: argparse.Namespace) -> list[str] | None:
    if args.profile is not None:
        return [sys.executable, "-c", PROFILED, str(args.profile)]
    if args.py_spy is not None:
        return [args.py_spy_binary, "record", "--rate", "250", "--format", "raw", "--nonblocking", "--threads", "--gil",
                "-o", str(args.py_spy), "--", *FANOUT]
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/cpu_probe.py", description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=300)
    parser.add_argument("--concurrency", type=int, default=320)
    parser.add_argument("--latency-scale", type=float, default=0.3)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--profile", type=Path, default=None, help="write cProfile's stats of the big run here")
    parser.add_argument("--py-spy", type=Path, default=None, help="write py-spy's sampled stacks (collapsed) here")
    parser.add_argument("--py-spy-binary", default="py-spy")
    parser.add_argument("--against", type=Path, default=None, metavar="SRC",
                        help="alternate each run with one of the fanout package under SRC (e.g. a `git archive` of "
                             "the commit before a change, its src/ folder): before and after, in the same load")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fanout-cpu-") as tmp:
        root = Path(tmp)
        verdicts = args.edits * MODELS
        rows: list[dict[str, Any]] = []
        trees = [None] if args.against is None else [None, args.against]
        bases = {}
        for t, tree in enumerate(trees):
            with source_tree(tree):
                bases[tree] = measure(root, 1, 8, args.latency_scale, f"base-{t}")
        for n, tree in ((n, tree) for n in range(args.repeat) for tree in trees):
            load = os.getloadavg()[0]
            with source_tree(tree):
                big = measure(root, args.edits, args.concurrency, args.latency_scale, f"big{n}-{trees.index(tree)}",
                              profiler(args))
            base = bases[tree]
            net = big.cpu_s - base.cpu_s
            rows.append({"code": "this tree" if tree is None else str(tree), "verdicts": verdicts,
                         "cpu_s": round(big.cpu_s, 2), "startup_cpu_s": round(base.cpu_s, 2),
                         "cpu_ms_per_verdict": round(net / verdicts * 1000, 2),
                         "user_s": round(big.user_s, 2), "sys_s": round(big.sys_s, 2),
                         "main_thread_ms_per_verdict": round(big.extra["main_thread_cpu_s"] / verdicts * 1000, 2),
                         "workers_ms_per_verdict": round(big.extra["worker_threads_cpu_s"] / verdicts * 1000, 2),
                         "wall_s": round(big.wall_s, 1), "max_rss_mb": round(big.max_rss_mb),
                         "load_1m": round(load, 2)})
            print(json.dumps(rows[-1]), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
