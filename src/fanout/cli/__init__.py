"""The `fanout` command: parses arguments and hands over to library code.

Each subcommand lives in its own module under fanout.cli, exposing
`configure(parser)` and `run(args) -> int` (`run(args, transport)` for the
commands that make HTTP requests). Only the chosen one is imported,
so `fanout status` does not pay for httpx, aiohttp or trafilatura at start-up.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import shlex
import sys
import textwrap
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

from fanout.base.version import __version__
from fanout.base.errors import ConfigError
from fanout.cli.outputs import outputs_for
from fanout.cli.terminal import error_line

if TYPE_CHECKING:
    import httpx

HELP_WIDTH = 78
"""Descriptions are wrapped to this; the epilog keeps its own lines (fanout.cli.epilog)."""

# name -> (module under fanout.cli, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "Run every (edit, model) pair of a snapshot; the same command resumes."),
    "status": ("status", "Show a run's progress, spend and errors from its log, without running anything."),
    "check": ("check", "Check SearXNG, the API key and each model before a run spends money."),
    "tool": ("tool", "Run web_search or web_fetch by hand and print what a model would receive."),
    "sim": ("sim", "Start the offline simulator (a stand-in for OpenRouter, SearXNG and the web)."),
    "report": ("report", "Compare the models of a run: agreement, committee votes, accuracy, cost."),
    "queue": ("queue", "List the edits of a run paused for a human, one line each with its Wikidata diff link."),
    "review": ("review", "Work the human queue of a run in the browser; decisions land in RUN_DIR/reviews.jsonl."),
    "compare": ("compare", "Compare two runs over the same edits: accuracy, agreement and cost, paired, and what flipped."),
    "fetch-edits": ("fetch_edits", "Fetch recent Wikidata edits and enrich them into a snapshot."),
    "outcomes": ("outcomes", "Find which edits of a snapshot were later reverted (ground truth)."),
    "watch": ("watch", "Judge Wikidata's edits as they happen, from its live stream; the same command goes on after a stop."),
}


RUN_DIR_ARGUMENTS = ("run_dir", "run_a", "run_b")
"""The names of the positional arguments that read a run directory (RUN_DIR; RUN_A and RUN_B of compare)."""


class OneLineErrorParser(argparse.ArgumentParser):
    """A command's parser whose errors (`--concurrency abc`) are one line like every other bad input, not the
    usage block above it: the line names the option and where the usage is. It also notes which of its
    positional arguments name a run directory to read (`fanout run --run-dir` names one to write)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.run_dirs: list[str] = []
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        if not action.option_strings and action.dest in RUN_DIR_ARGUMENTS:
            self.run_dirs.append(action.dest)
        return action

    def error(self, message: str) -> NoReturn:
        raise ConfigError(f"{message}; see `{self.prog} --help`")


def build_parser(available: dict[str, tuple[str, str]] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fanout",
        description="Run one verification task across many LLMs at once, unattended and resumable.",
    )
    parser.add_argument("--version", action="version", version=f"fanout {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_module, help_text) in (available or _available_commands()).items():
        sub.add_parser(name, help=help_text, description=help_text)
    return parser


def _available_commands() -> dict[str, tuple[str, str]]:
    """Commands whose module is installed (all of them in a release)."""
    return {n: c for n, c in COMMANDS.items() if find_spec(f"fanout.cli.{c[0]}") is not None}


def main(argv: list[str] | None = None, *, transport: httpx.AsyncBaseTransport | None = None) -> int:
    """`transport` carries the command's HTTP in place of the real wire: tests pass an httpx.MockTransport,
    as httpx's own tests do. Only the commands that make HTTP requests accept one."""
    argv = sys.argv[1:] if argv is None else argv
    available = _available_commands()
    name = argv[0] if argv and argv[0] in available else None
    if name is None:
        build_parser(available).parse_args(argv or ["--help"])
        return 2
    try:  # from the first import on: a Ctrl-C while the command starts is as quiet as one while it runs
        module, parser = command_parser(name, available)
        args = parser.parse_args(argv[1:])
        _refuse_a_file_for_a_run_dir(name, parser.run_dirs, args, argv[1:])
        args.outputs = outputs_for(parser, args)  # every output checked before any work (fanout.cli.outputs)
        code = int((module.run(args) if transport is None else module.run(args, transport)) or 0)
        sys.stdout.flush()  # a reader that closed early shows here, inside the try, not at interpreter exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except ConfigError as exc:
        print(error_line(name, exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"fanout {name}: interrupted", file=sys.stderr)
        return 130


def command_parser(name: str, available: dict[str, tuple[str, str]] | None = None,
                   ) -> tuple[ModuleType, OneLineErrorParser]:
    """A command's module and its parser, as main builds them (the tests generated from the command table walk
    these: every command and every output option it declares)."""
    listed = available or _available_commands()
    module = importlib.import_module(f"fanout.cli.{listed[name][0]}")
    parser = OneLineErrorParser(prog=f"fanout {name}", description=listed[name][1],
                                epilog=getattr(module, "EPILOG", None),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    module.configure(parser)
    parser.description = textwrap.fill(parser.description or "", width=HELP_WIDTH)
    return module, parser


def _refuse_a_file_for_a_run_dir(name: str, run_dirs: list[str], args: argparse.Namespace, words: list[str]) -> None:
    """`fanout queue runs/a/checkpoint.jsonl`: a file where a run directory goes is answered with the same
    command on the folder that holds it, once here for every command that reads a run (it named `fanout
    report` whatever the command was)."""
    given = [getattr(args, dest) for dest in run_dirs]
    files = {str(path) for path in given if path is not None and Path(path).is_file()}
    if files:
        fixed = [str(Path(word).parent) if word in files else word for word in words]
        raise ConfigError(f"{sorted(files)[0]} is a file; pass the run directory that holds it (the --run-dir of a "
                          f"`fanout run`): fanout {name} {shlex.join(fixed)}")


def _silence_stdout() -> None:
    """The reader of our output (`| head`) has gone: what is left to print has nobody to read it. Point
    standard output at /dev/null so the final flush at exit does not raise again (the Python docs' recipe
    for SIGPIPE), and end quietly: the reader got what it asked for."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, io.UnsupportedOperation):  # no real file behind stdout (a test's capture)
        pass
