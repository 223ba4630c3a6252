"""Every `fanout ...` command the README and the manual show runs, so an example cannot go stale: the machinery.

Commands come from fenced code blocks of README.md and docs/**/*.md. An unmarked command runs in a
scratch directory against a `fanout sim` on 127.0.0.1 and must exit 0 (or the `<!-- exit: N -->` the
block states); it runs through `fanout.cli.main`, what `python -m fanout` calls, in this process. A block
marked `<!-- needs: key -->` or `<!-- needs: network -->` is parsed by the
command's own argparse parser instead, so a flag that does not exist still fails. A block after
`<!-- file: NAME -->` is written to the scratch directory first, so example files are the ones the
commands read. A command named inline in the text must use only flags its --help lists.
docs/development.md describes the convention for writers.

Two test modules run the commands, each its share of the pages in a workspace (and simulator) of its own, so
that pytest-xdist (--dist loadfile) can run them on two workers: in one module they were the suite's longest
file, 85 s of wall alone on a quiet machine, one process's turns with its simulator one after the other. test_docs_commands.py runs the pages that read `runs/exp1` (FIRST_RUN_PAGES,
with the finished run the workspace starts with), test_docs_commands_own_runs.py every other page, in a workspace
without that run. Pages run in document order within a module, and no page reads what another module's page
made.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fanout.cli import COMMANDS, main
from fanout.base.validate import package_data

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
NEEDS = {"key", "network"}
"""What a marked block may need; anything else is a typo that would silently skip a command."""
DOC_SIM = "http://127.0.0.1:8765"
"""The simulator's address as the docs write it; the test's own simulator replaces it."""
SIM_FLAGS = {"run": ("--base-url", "--searxng-url", "--allow-private-urls", "--fetch-delay"),
             "watch": ("--base-url", "--searxng-url", "--allow-private-urls", "--fetch-delay"),
             "check": ("--base-url", "--searxng-url"),
             "tool": ("--searxng-url", "--allow-private-urls")}
"""The flags that point a command at the simulator, added unless the command gives them."""
TIMEOUT_S = 300
"""A bound for one command (half of pytest-timeout's bound per test), so a hung one fails its test, not the suite."""
INLINE = re.compile(r"`(?:\.venv/bin/)?fanout ([a-z][a-z-]*)([^`]*)`")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")
MARKER = re.compile(r"^\s*<!--\s*(needs|file|exit):\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(```+)(.*)$")


@dataclass(frozen=True)
class Command:
    page: str
    line: int
    argv: tuple[str, ...]
    """Without the leading `fanout`."""
    needs: frozenset[str] = frozenset()
    exit_code: int = 0

    @property
    def name(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass
class Page:
    commands: list[Command] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)
    prose: list[str] = field(default_factory=list)
    """The lines outside code blocks, where commands appear as inline code."""


def read_page(text: str, page: str) -> Page:
    """The commands and example files of one Markdown page, in document order."""
    found = Page()
    lines = text.split("\n")
    markers: dict[str, str] = {}
    i = 0
    while i < len(lines):
        marker = MARKER.match(lines[i])
        if marker:
            markers[marker.group(1)] = marker.group(2)
            i += 1
            continue
        fence = FENCE.match(lines[i])
        if not fence:
            if lines[i].strip():
                markers = {}
            found.prose.append(lines[i])
            i += 1
            continue
        indent, ticks = fence.group(1), fence.group(2)
        start = i + 1
        i = start
        while i < len(lines) and not lines[i].strip().startswith(ticks):
            i += 1
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[start:i]]
        i += 1
        if "file" in markers:
            found.files[markers["file"]] = "\n".join(body) + "\n"
        else:
            needs = frozenset(n.strip() for n in markers.get("needs", "").split(",") if n.strip())
            found.commands += _commands(body, start, page, needs, int(markers.get("exit", "0")))
        markers = {}
    return found


def _commands(body: list[str], first_line: int, page: str, needs: frozenset[str], exit_code: int) -> list[Command]:
    commands = []
    j = 0
    while j < len(body):
        number, text = first_line + j + 1, body[j]
        while text.rstrip().endswith("\\") and j + 1 < len(body):
            j += 1
            text = text.rstrip()[:-1] + " " + body[j].strip()
        j += 1
        text = text.strip().removeprefix("$ ")
        if text.split(" ", 1)[0] not in ("fanout", ".venv/bin/fanout"):
            continue
        words = shlex.split(text, comments=True)
        argv = words[1:words.index("|")] if "|" in words else words[1:]
        commands.append(Command(page, number, tuple(argv), needs, exit_code))
    return commands


def all_pages() -> dict[str, Page]:
    return {str(p.relative_to(ROOT)): read_page(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))
            for p in PAGES}


PAGES_READ = all_pages()
COMMANDS_SHOWN = [c for page in PAGES_READ.values() for c in page.commands]


def flags_unknown(command: str, rest: str) -> list[str]:
    """The --flags an inline `fanout COMMAND ...` names that the command's --help does not list."""
    if command not in COMMANDS:
        return [f"fanout {command}"]
    known = flags_listed(command)
    return [flag for flag in FLAG.findall(rest) if flag not in known]


@functools.cache
def flags_listed(command: str) -> frozenset[str]:
    """The --flags `fanout COMMAND --help` lists; once per command (the pages name some commands dozens of times)."""
    module = importlib.import_module(f"fanout.cli.{COMMANDS[command][0]}")
    parser = argparse.ArgumentParser(prog=f"fanout {command}")
    module.configure(parser)
    return frozenset(FLAG.findall(parser.format_help()))


def parse_only(argv: tuple[str, ...]) -> str | None:
    """None when the command's own parser accepts argv, else what it said."""
    if not argv or argv[0] not in COMMANDS:
        return f"no such command: fanout {' '.join(argv[:1])}"
    module = importlib.import_module(f"fanout.cli.{COMMANDS[argv[0]][0]}")
    parser = argparse.ArgumentParser(prog=f"fanout {argv[0]}")
    module.configure(parser)
    try:
        parser.parse_args(list(argv[1:]))
    except SystemExit as exc:
        return None if exc.code == 0 else f"fanout {' '.join(argv)}: refused by its parser"
    return None


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Workspace:
    path: Path
    sim: str
    """The simulator's base URL."""
    env: dict[str, str]
    """The environment of the `fanout sim` processes: this one's without any *_API_KEY."""

    def fanout(self, argv: list[str]) -> Finished:
        """`fanout ARGV` typed in the workspace, through the entry point `python -m fanout` calls, in this process.

        A new interpreter per command cost about two seconds of CPU in imports alone, for some fifty commands:
        the largest share of the suite's time. The command gets what a shell gives it: the workspace as its
        working directory, no *_API_KEY in its environment, its own standard output and error, and an exit code
        (--help's SystemExit included). An exception that would be a traceback fails the test with it.
        """
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch, redirect_stdout(out), redirect_stderr(err):
            patch.chdir(self.path)
            for name in [k for k in os.environ if k.endswith("_API_KEY")]:
                patch.delenv(name)
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        return Finished(code, out.getvalue(), err.getvalue())


def against_sim(argv: tuple[str, ...], sim: str) -> list[str]:
    """argv pointed at the test's simulator: its address replaces the docs' one, missing flags added."""
    words = [w.replace(DOC_SIM, sim) for w in argv]
    extra = {"--base-url": [f"{sim}/api/v1"], "--searxng-url": [sim], "--allow-private-urls": [],
             "--fetch-delay": ["0"]}
    for flag in SIM_FLAGS.get(words[0], ()):
        if flag not in words:
            words += [flag, *extra[flag]]
    return words


def run_shown(command: Command, ws: Workspace) -> str | None:
    """None when the command did what the docs say, else why not."""
    unknown = command.needs - NEEDS
    if unknown:
        return f"{command.name}: unknown needs {sorted(unknown)}; use {sorted(NEEDS)}"
    if command.needs:
        return parse_only(command.argv)
    if command.argv[:1] == ("sim",) and "--labels-only" not in command.argv:
        return _serve_and_stop(command, ws)
    result = ws.fanout(against_sim(command.argv, ws.sim))
    if result.returncode != command.exit_code:
        return (f"{command.name}: fanout {' '.join(command.argv)} exited {result.returncode}, "
                f"expected {command.exit_code}:\n{result.stderr[-2000:]}")
    return None


def _serve_and_stop(command: Command, ws: Workspace) -> str | None:
    """`fanout sim` as shown, on a free port: it must come up, serve, and stop with Ctrl-C."""
    argv = list(command.argv)
    if "--port" in argv:
        argv[argv.index("--port") + 1] = "0"
    else:
        argv += ["--port", "0"]
    process = subprocess.Popen([sys.executable, "-m", "fanout", *argv], cwd=ws.path, env=ws.env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        served = _lines_until_ready(process)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    if served is None or process.returncode != 0:
        return f"{command.name}: fanout {' '.join(command.argv)} did not serve and stop cleanly:\n{err[-2000:]}"
    return None


def _lines_until_ready(process: subprocess.Popen[str]) -> list[str] | None:
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("Ctrl-C stops the simulator."):
            return lines
    return None


FIRST_RUN_PAGES = frozenset({"docs/report.md", "docs/running.md", "docs/strategies.md", "docs/verdicts.md"})
"""The pages whose commands read `runs/exp1`, the finished run of the sample the workspace of
test_docs_commands.py starts with, as getting-started.md makes it; verdicts.md continues report.md's runs/exp2
(six edits more), so the two run in one workspace. A page added elsewhere that reads runs/exp1 fails there
(no such run) until it is named here."""


def commands_of(first_run: bool) -> list[Command]:
    """The commands of the pages that read runs/exp1 (first_run) or of every other page, in document order."""
    return [c for c in COMMANDS_SHOWN if (c.page in FIRST_RUN_PAGES) == first_run]


@contextmanager
def workspace(path: Path, *, first_run: bool) -> Iterator[Workspace]:
    """A scratch directory with the sample as the docs name it, the truth, the example files, a simulator
    serving it, and with first_run a finished run of the sample at runs/exp1."""
    sample = package_data("sample_snapshot.yaml")
    for name in ("runs/snapshots/today.yaml", "src/fanout/data/sample_snapshot.yaml"):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, path / name)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")} | {"PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "fanout", "sim", "--port", "0", "--profile", "clean",
                                "--seed", "7", "--latency-scale", "0"],
                               cwd=path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = _lines_until_ready(process)
        assert lines is not None, process.stderr.read() if process.stderr else ""
        api = next(line.split()[-1] for line in lines if line.startswith("OpenAI-compatible API:"))
        ws = Workspace(path, api.removesuffix("/api/v1"), env)
        for name in ("truth.yaml", "labels.yaml"):
            labels = ws.fanout(["sim", "--labels-out", name, "--labels-only"])
            assert labels.returncode == 0, labels.stderr
        for page in PAGES_READ.values():
            for name, text in page.files.items():
                (path / name).write_text(text, encoding="utf-8")
        if first_run:
            first = ws.fanout(against_sim(("run", "runs/snapshots/today.yaml", "--run-dir", "runs/exp1"), ws.sim))
            assert first.returncode == 0, first.stderr
        yield ws
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
