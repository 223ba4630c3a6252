"""`fanout status RUN_DIR`: progress, spend and errors from the log, without running anything."""

from __future__ import annotations

import argparse
from pathlib import Path

from fanout.cli.terminal import say
from fanout.cli.epilog import BAD_INPUT, epilog
from fanout.engine.status import DEFAULT_ERRORS, read_status, render_status


EPILOG = epilog(
    environment=[],
    exit_codes=["0 shown", BAD_INPUT + ", e.g. RUN_DIR is not a run directory"],
    examples=["fanout status runs/exp1", "watch -n 10 fanout status runs/exp1 --errors 3",
              "fanout status runs/live   (a watched run: also how far behind real time, what waits and what was skipped)"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory made by `fanout run`")
    parser.add_argument("--errors", type=int, default=DEFAULT_ERRORS, metavar="N",
                        help=f"show the last N error and refusal messages (default {DEFAULT_ERRORS})")


def run(args: argparse.Namespace) -> int:
    report = read_status(args.run_dir, n_errors=args.errors)
    say("\n".join(render_status(report) + _watch_lines(args.run_dir, report.holder)))
    return 0


def _watch_lines(run_dir: Path, holder: int | None) -> list[str]:
    """A watched run's own lines (fanout watch): how far behind real time, what waits, what was skipped."""
    from fanout.workloads.patrol.live.state import read_state, status_lines

    state = read_state(run_dir)
    return status_lines(state, holder=holder) if state is not None else []
