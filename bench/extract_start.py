"""The CPU that extraction workers cost to start: a pool's first two, and a worker replaced after each page.

    python bench/extract_start.py                        this tree, 5 rounds
    python bench/extract_start.py --against /tmp/old/src  alternate with the fanout package under SRC (e.g. a
                                                          `git archive` of the commit before a change), same load

Each measurement runs in a child process of its own (PYTHONPATH chooses the tree) and reads user + sys CPU of
that process and the children it reaped (a zygote counts its forked workers, as they are its children), never
wall time: the machine is shared. "first_two" is two tiny pages at once on an open pool of two workers;
"replaced" is one page, then ten more each on a new worker (the previous one stopped, as a page's time limit does).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from functools import partial
from pathlib import Path

PAGE = b"<html><body><article><p>A short article, to be read by a new worker.</p></article></body></html>"
REPLACEMENTS = 10


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _first_two() -> None:
    import anyio
    from fanout.tools.extract_pool import ExtractionPool

    async with ExtractionPool(workers=2) as pool, anyio.create_task_group() as tasks:
        for n in range(2):
            tasks.start_soon(partial(pool.extract, "html", PAGE, url=f"http://127.0.0.1/{n}", encoding="utf-8"))


async def _replaced() -> None:
    from fanout.tools.extract_pool import ExtractionPool

    async with ExtractionPool(workers=1) as pool:
        for _ in range(REPLACEMENTS + 1):
            await pool.extract("html", PAGE, url="http://127.0.0.1/page", encoding="utf-8")
            await pool._idle.pop().stop()  # bench only: the next page needs a new worker, as after a timeout


def child(what: str) -> None:
    import anyio

    before = _cpu_s()
    anyio.run(_first_two if what == "first_two" else _replaced)
    print(json.dumps({what: round(_cpu_s() - before, 3)}))


def measure(what: str, src: Path | None) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if src is not None:
        env["PYTHONPATH"] = str(src.resolve())
    out = subprocess.run([sys.executable, __file__, "--child", what], env=env, capture_output=True, check=True)
    return float(json.loads(out.stdout)[what])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/extract_start.py", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--against", type=Path, default=None, metavar="SRC")
    parser.add_argument("--child", choices=["first_two", "replaced"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    trees = [None] if args.against is None else [None, args.against]
    for _ in range(args.rounds):
        for tree in trees:
            row = {"code": "this tree" if tree is None else str(tree), "load_1m": round(os.getloadavg()[0], 2)}
            row.update({what + "_cpu_s": measure(what, tree) for what in ("first_two", "replaced")})
            print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
