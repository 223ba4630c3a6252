"""`fanout queue RUN_DIR`: the edits the committee paused for a human, one line each with its diff link."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fanout.cli.committee_options import add_committee_options, committee_settings
from fanout.cli.epilog import BAD_INPUT, epilog

EPILOG = epilog(
    environment=[],
    exit_codes=["0 listed (also when nothing is paused)", BAD_INPUT + ", e.g. RUN_DIR is not a run directory"],
    examples=["fanout queue runs/exp1", "fanout queue runs/exp1 --pause 0.7 --delta 0.3",
              "fanout queue runs/exp1 --json | jq -r '.queue[].diff_url'"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --run-dir of a `fanout run`")
    parser.add_argument("--json", action="store_true",
                        help="print the queue as JSON (the counts, the settings and one object per paused edit)")
    add_committee_options(parser)


def run(args: argparse.Namespace) -> int:
    from fanout.analysis import ReportOptions, build_report
    from fanout.analysis.queue import queue_rows, render_queue

    report = build_report(args.run_dir, ReportOptions(**committee_settings(args)))
    rows = queue_rows(report)
    if args.json:
        t = report.totals
        data = {"run_dir": str(args.run_dir), "edits": t["edits"], "paused": t["paused"],
                "auto_passed": t["auto_passed"], "decided": t["decided"],
                "settings": {k: v for k, v in report.to_json()["settings"].items() if k not in ("project_edits", "policy")},
                "queue": rows}
        print(json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False))
    else:
        print(render_queue(report, rows), end="")
    return 0
