"""`fanout queue RUN_DIR`: the edits the committee paused for a human, one line each with its diff link."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fanout.cli.terminal import say
from fanout.cli.committee_options import add_committee_options, committee_settings
from fanout.cli.epilog import BAD_INPUT, epilog
from fanout.cli.outputs import add_output, outputs_of
from fanout.cli.report import STDOUT, STDOUT_PATH, _is_csv_report
from fanout.base.errors import ConfigError

EPILOG = epilog(
    environment=[],
    exit_codes=["0 listed (also when nothing is paused, and when a reader such as `head` closes the output early)",
                BAD_INPUT + ", e.g. RUN_DIR is not a run directory"],
    examples=["fanout queue runs/exp1", "fanout queue runs/exp1 --pause 0.7 --delta 0.3",
              "fanout queue runs/exp1 --json - | jq -r '.queue[].diff_url'",
              "fanout queue runs/exp1 --csv queue.csv"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s RUN_DIR [--json [OUT]] [--csv [OUT]] [options]"
    parser.add_argument("run_dir", nargs="?", type=Path, metavar="RUN_DIR", help="the --run-dir of a `fanout run`")
    add_output(parser, "--json", nargs="?", const=STDOUT, metavar="OUT", ours=is_queue_json,
                        help="write the queue as JSON (the counts, the settings and one object per paused edit) to "
                             f"OUT (bare or {STDOUT}: standard output)")
    add_output(parser, "--csv", nargs="?", const=STDOUT, metavar="OUT", ours=_is_csv_report,
                        help="write one row per paused edit, with the columns of `fanout report --csv`, to OUT "
                             f"(bare or {STDOUT}: standard output)")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing --json/--csv file that is not an earlier queue (never the run's own "
                             "files or inputs)")
    add_committee_options(parser)


def is_queue_json(head: bytes) -> bool:
    """What --json writes: json.dumps(queue_json(...), indent=1), whose first key is run_dir."""
    return head.startswith(b'{\n "run_dir": ')


OURS = {"--json": is_queue_json, "--csv": _is_csv_report}


def run(args: argparse.Namespace) -> int:
    from fanout.report import ReportOptions, build_report
    from fanout.report.queue_view import queue_json, queue_rows, queue_table, render_queue

    _take_back_run_dir(args)
    outputs = {flag: Path(value) for flag, value in (("--json", args.json), ("--csv", args.csv)) if value is not None}
    if list(outputs.values()).count(STDOUT_PATH) > 1:
        raise ConfigError("only one of --json and --csv can write to standard output (-); give the other a file")
    writer = outputs_of(args)
    writer.add_run(args.run_dir)
    for flag, path in outputs.items():
        writer.check(path, flag, OURS[flag])
    # resamples=0: the queue shows no agreement interval, and the bootstrap behind them was most of its time
    report = build_report(args.run_dir, ReportOptions(**committee_settings(args), resamples=0))
    rows = queue_rows(report)
    written = []
    if "--json" in outputs:
        data = queue_json(report, args.run_dir, rows)
        text = json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False)
        written.append(writer.write(outputs["--json"], "--json", text, OURS["--json"]))
    if "--csv" in outputs:
        written.append(writer.write(outputs["--csv"], "--csv", queue_table(report).csv(), OURS["--csv"]))
    if not outputs:
        say(render_queue(report, rows), end="")
    for path in written:
        if path != STDOUT_PATH:
            say(f"wrote {path}", file=sys.stderr if STDOUT_PATH in outputs.values() else sys.stdout)
    return 0


def _take_back_run_dir(args: argparse.Namespace) -> None:
    """`fanout queue --json runs/exp1`: a bare --json before RUN_DIR took it for its file (an option whose value
    is optional eats the next word). A run directory is a directory, which no output file can be: give it back
    and write to standard output, as `--json` alone did before it took a file."""
    if args.run_dir is not None:
        return
    taken = [flag for flag in ("json", "csv") if getattr(args, flag) not in (None, STDOUT)
             and Path(getattr(args, flag)).is_dir()]
    if len(taken) != 1:
        raise ConfigError("RUN_DIR is missing: give the run directory, e.g. `fanout queue runs/exp1`")
    args.run_dir = Path(getattr(args, taken[0]))
    setattr(args, taken[0], STDOUT)
