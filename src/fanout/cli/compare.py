"""`fanout compare RUN_A RUN_B`: two runs over the same edits, model by model and rule by rule, paired."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fanout.cli.terminal import say
from fanout.cli.committee_options import add_committee_options, committee_settings
from fanout.cli.epilog import BAD_INPUT, epilog
from fanout.cli.outputs import add_output, outputs_of
from fanout.cli.report import STDOUT, STDOUT_PATH
from fanout.base.errors import ConfigError

EPILOG = epilog(
    environment=[],
    exit_codes=["0 compared", BAD_INPUT + ", e.g. a RUN_DIR that holds no verdicts, or runs with no edit in common"],
    examples=["fanout compare runs/prompt-v1 runs/prompt-v2 --labels truth.yaml",
              "fanout compare runs/all runs/cascade --json - | jq '.subjects[] | {subject, difference, p_value}'",
              "fanout compare runs/a runs/b --html compare.html"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", type=Path, metavar="RUN_A", help="the first run directory (A)")
    parser.add_argument("run_b", type=Path, metavar="RUN_B", help="the second run directory (B)")
    parser.add_argument("--labels", type=Path, metavar="FILE",
                        help="ground truth for both runs (default: each run directory's own labels.yaml or "
                             "sim-labels.yaml, each run scored with its own; the output names which)")
    add_output(parser, "--json", nargs="?", const=STDOUT, metavar="OUT", ours=is_compare_json,
               help=f"write the comparison as JSON to OUT (bare or {STDOUT}: standard output)")
    add_output(parser, "--html", metavar="OUT", type=Path, ours=is_compare_html,
               help="write the comparison as one HTML page to OUT")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing --json/--html file that is not an earlier comparison (never a "
                             "run's own files or inputs)")
    add_committee_options(parser)


def is_compare_json(head: bytes) -> bool:
    """What --json writes: json.dumps(Comparison.to_json(), indent=1)."""
    return head.startswith(b'{\n "run_a": ')


def is_compare_html(head: bytes) -> bool:
    """What --html writes: a page titled "fanout compare · A vs B"."""
    return head.startswith(b"<!doctype html>") and b"<title>fanout compare" in head


def run(args: argparse.Namespace) -> int:
    from fanout.engine.settings import RunSettings
    from fanout.report import ReportOptions, build_report
    from fanout.report.compare_view import compare_reports, comparison_html, render_comparison

    json_out = Path(args.json) if args.json is not None else None
    writer = outputs_of(args)
    for run_dir in (args.run_a, args.run_b):
        writer.add_run(run_dir)
    for flag, path, ours in (("--json", json_out, is_compare_json), ("--html", args.html, is_compare_html)):
        if path is not None:
            writer.check(path, flag, ours)
    if args.html == STDOUT_PATH:
        raise ConfigError("--html needs a file, not -")
    # resamples=0: the comparison reads each model's mean kappa, never its bootstrap interval (most of the time)
    options = ReportOptions(labels_path=args.labels, **committee_settings(args), resamples=0)
    a, b = build_report(args.run_a, options), build_report(args.run_b, options)
    # the view may not import the engine: the settings that change results come from here
    comparison = compare_reports(a, b, RunSettings.results_keys())
    if comparison.shared == 0:
        raise ConfigError(f"{args.run_a} and {args.run_b} have no edit in common; compare runs over the same snapshot.")
    notes = sys.stderr if json_out == STDOUT_PATH else sys.stdout
    if json_out is not None:
        text = json.dumps(comparison.to_json(), indent=1, ensure_ascii=False, allow_nan=False)
        writer.write(json_out, "--json", text, is_compare_json)
    if args.html is not None:
        writer.write(args.html, "--html", comparison_html(comparison), is_compare_html)
    say(render_comparison(comparison), end="", file=notes)
    for path in (json_out, args.html):
        if path is not None and path != STDOUT_PATH:
            say(f"wrote {path}", file=notes)
    return 0
