"""`fanout review RUN_DIR`: the review desk in the browser, or `--export FILE` its decisions as labels."""

from __future__ import annotations

import argparse
import getpass
from pathlib import Path

import anyio

from fanout.base.declare import check_declared, given_values
from fanout.cli.terminal import say
from fanout.cli.committee_options import add_committee_options, committee_settings
from fanout.cli.declared import add_declared, options_from_args
from fanout.cli.epilog import BAD_INPUT, INTERRUPTED, epilog
from fanout.base.errors import ConfigError
from fanout.cli.outputs import add_output, outputs_of
from fanout.report import ReportOptions
from fanout.report.run_data import load_run
from fanout.review.desk import Desk, DeskSettings
from fanout.review.export import exported_labels, is_export
from fanout.review.server import DEFAULT_PORT, serve_desk
from fanout.store.reviews import REVIEWER_CAP

EPILOG = epilog(
    environment=[],
    exit_codes=["0 exported (--export), or the desk stopped", BAD_INPUT + ", e.g. RUN_DIR is not a run directory "
                "or the port is in use", INTERRUPTED + " (how the desk is stopped)"],
    examples=["fanout review runs/exp1", "fanout review runs/exp1 --port 8800 --reviewer ana",
              "fanout review runs/exp1 --random-share 0.5 --target-agreement 0.95",
              "fanout review runs/exp1 --export reviewed.yaml && fanout report runs/exp1 --labels reviewed.yaml"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --run-dir of a `fanout run` (running or done)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, metavar="N",
                        help=f"serve on 127.0.0.1:N (default {DEFAULT_PORT}; 0 picks a free port); never another "
                             "interface")
    parser.add_argument("--reviewer", metavar="NAME", help="who decides, as written beside each decision "
                        "(default: the login name)")
    add_output(parser, "--export", type=Path, metavar="FILE", ours=is_export,
                        help="write the decisions that stand to FILE in the --labels format (accept = correct, "
                             "reject = incorrect, unsure left out) and exit, instead of serving the desk")
    parser.add_argument("--force", action="store_true",
                        help="let --export replace an existing file that is not an earlier export (never the "
                             "run's own files or inputs)")
    add_declared(parser, DeskSettings)
    add_committee_options(parser)


def desk_settings(args: argparse.Namespace) -> DeskSettings:
    """--random-share as given, checked (a message names the flag)."""
    options = options_from_args(args, DeskSettings, environ={})
    settings = DeskSettings(**given_values(options, DeskSettings))
    check_declared(settings, options.sources)
    return settings


def run(args: argparse.Namespace) -> int:
    if args.export is not None:
        return _export(args)
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be between 0 and 65535, got {args.port}")
    desk = Desk(args.run_dir, ReportOptions(**committee_settings(args)), desk_settings(args))
    reviewer = args.reviewer if args.reviewer is not None else _login()
    if len(reviewer) > REVIEWER_CAP:
        raise ConfigError(f"--reviewer is over {REVIEWER_CAP} characters")
    anyio.run(serve_desk, desk, reviewer, args.port, _announce)
    return 0


def _announce(url: str) -> None:
    say(f"review desk: {url} (127.0.0.1 only; Ctrl-C stops it)", flush=True)


def _export(args: argparse.Namespace) -> int:
    load_run(args.run_dir)  # RUN_DIR must be a run: one line otherwise
    done = exported_labels(args.run_dir)
    writer = outputs_of(args)
    writer.add_run(args.run_dir)
    writer.write(args.export, "--export", done.text, is_export)
    say(f"wrote {done.labels} labels to {args.export} ({done.unsure} unsure decisions left out)")
    return 0


def _login() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return ""
