"""Invariant 15, generated: every output option of every command, and every run file of the layout, is guarded.

Nothing here names a command or an output flag: the cases come from the
command table (fanout.cli.COMMANDS, each command's parser, every option
declared with add_output) and from the layout (fanout.store.layout.RUN_FILES).
A command or a run file added later is covered without a test of its own,
as the throwaway ones registered at run time below show.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import inspect
import os
import re
import shutil
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from fanout.base.schema import record, text, whole
from fanout.base.validate import package_data
from fanout.cli import COMMANDS, command_parser, main
from fanout.cli.outputs import OutputPath, add_output, output_actions, outputs_of
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.store.layout import RUN_FILES, Kind, RunFile, declare_run_file
from fanout.workloads.patrol.workload import PATROL

from test_output_guard import verdict

NO_NETWORK = httpx.MockTransport(lambda request: httpx.Response(503))
pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of a copied sample snapshot; each test works on a copy."""
    root = tmp_path_factory.mktemp("generated")
    snapshot = root / "today.yaml"
    shutil.copyfile(package_data("sample_snapshot.yaml"), snapshot)
    settings = RunSettings(models=(ModelSpec("m/a"), ModelSpec("m/b")))
    request = RunRequest(snapshot, root / "run", settings, limit=2, handle_signals=False, progress_interval_s=3600,
                         workload=PATROL)
    anyio.run(lambda: run(request, verdict_fn=verdict))
    return root


@pytest.fixture
def world(finished: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(run directory, its snapshot), copied: the run's manifest names the copy's snapshot as its input."""
    shutil.copytree(finished, tmp_path / "w")
    run_dir, snapshot = tmp_path / "w" / "run", tmp_path / "w" / "today.yaml"
    manifest = run_dir / "manifest.yaml"
    manifest.write_text(manifest.read_text().replace(str(finished), str(tmp_path / "w")))
    return run_dir, snapshot


def every_output() -> Iterator[tuple[str, OutputPath]]:
    for name in COMMANDS:
        _module, parser = command_parser(name)
        for action in output_actions(parser):
            yield name, action


def argv_for(name: str, action: OutputPath, target: Path | str, run_dir: Path) -> list[str]:
    """The command with every required argument filled (a path one with the run directory) and the output."""
    _module, parser = command_parser(name)
    argv = [name]
    for other in parser._actions:
        if other.option_strings or other.dest == "help":
            continue
        if other.choices:
            argv.append(str(next(iter(other.choices))))
        else:
            argv.append(str(run_dir) if other.type is Path or other.metavar in ("RUN_DIR",) else "x")
    return [*argv, action.option_strings[0], str(target)]


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def files_of(folder: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in folder.rglob("*") if p.is_file() and not p.is_symlink()}


OUTPUTS = list(every_output())
IDS = [f"{name} {action.option_strings[0]}" for name, action in OUTPUTS]


def test_the_command_table_declares_output_options() -> None:
    assert len(OUTPUTS) >= 10, IDS  # report x3, queue x2, compare x2, review, sim, outcomes, fetch-edits


def _refused(capsys, name: str, action: OutputPath, target: Path | str, run_dir: Path, *more: str) -> str:
    module, _parser = command_parser(name)
    talks_http = len(inspect.signature(module.run).parameters) > 1  # those take a transport: nothing goes out
    capsys.readouterr()
    assert main([*argv_for(name, action, target, run_dir), *more], transport=NO_NETWORK if talks_http else None) == 2
    return one_line(capsys)


@pytest.mark.parametrize(("name", "action"), OUTPUTS, ids=IDS)
def test_every_output_refuses_a_run_file_and_a_hard_link_to_one(world, tmp_path, capsys, name, action) -> None:
    run_dir, _ = world
    before = files_of(run_dir)
    error = _refused(capsys, name, action, run_dir / "checkpoint.jsonl", run_dir, "--force")
    assert "would write over the run's checkpoint.jsonl in the run directory" in error
    linked = tmp_path / "linked.out"
    os.link(run_dir / "checkpoint.jsonl", linked)
    error = _refused(capsys, name, action, linked, run_dir, "--force")
    assert "hard link" in error
    assert files_of(run_dir) == before


@pytest.mark.parametrize("how", ["name", "symlink", "hard link", "dotdot"])
@pytest.mark.parametrize(("name", "action"), OUTPUTS, ids=IDS)
def test_every_output_refuses_an_input_by_any_name(world, tmp_path, capsys, name, action, how) -> None:
    run_dir, snapshot = world
    _module, parser = command_parser(name)
    inputs = [a for a in parser._actions if a.type is Path and not isinstance(a, OutputPath)]
    if not inputs:
        pytest.skip(f"fanout {name} reads no file a path names")
    target = {"name": snapshot, "dotdot": run_dir / ".." / snapshot.name}.get(how)
    if target is None:
        target = tmp_path / "other-name.out"
        (target.symlink_to if how == "symlink" else lambda p: os.link(p, target))(snapshot)
    before = snapshot.read_bytes()
    positional = [a for a in inputs if not a.option_strings]
    extra = [] if positional else [inputs[0].option_strings[0], str(snapshot)]
    error = _refused(capsys, name, action, target, run_dir, "--force", *extra) if "--force" in parser._option_string_actions \
        else _refused(capsys, name, action, target, run_dir, *extra)
    assert "which this command reads and must not write over; choose another file" in error
    assert snapshot.read_bytes() == before


@pytest.mark.parametrize(("name", "action"), OUTPUTS, ids=IDS)
def test_every_output_needs_force_for_a_file_it_did_not_write(world, tmp_path, capsys, name, action) -> None:
    run_dir, _ = world
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    error = _refused(capsys, name, action, notes, run_dir)
    assert error.endswith("already exists and this command did not write it; choose another file, or pass --force "
                          "to replace it")
    assert notes.read_text() == "my notes\n"


@pytest.mark.parametrize("bad", ["", "folder"])
@pytest.mark.parametrize(("name", "action"), OUTPUTS, ids=IDS)
def test_every_output_answers_an_empty_path_or_a_directory_in_one_line(world, tmp_path, capsys, name, action, bad):
    run_dir, _ = world
    target = "" if bad == "" else tmp_path
    error = _refused(capsys, name, action, target, run_dir, "--force")
    assert ("is empty; name a file to write" in error) if bad == "" else ("is a directory; name a file" in error)


# --- a command and a run file added later are covered without tests of their own ----------------------------------


@pytest.fixture
def throwaway_command(monkeypatch: pytest.MonkeyPatch) -> str:
    module = types.ModuleType("fanout.cli._throwaway")
    module.__spec__ = importlib.machinery.ModuleSpec("fanout.cli._throwaway", None)

    def configure(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("run_dir", type=Path, metavar="RUN_DIR")
        add_output(parser, "--out", metavar="FILE", ours=lambda head: head.startswith(b"throwaway"))
        parser.add_argument("--force", action="store_true")

    def run_command(args: argparse.Namespace) -> int:
        outputs_of(args).write(Path(args.out), "--out", "throwaway\n")
        return 0

    module.configure, module.run = configure, run_command  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fanout.cli._throwaway", module)
    monkeypatch.setitem(COMMANDS, "throwaway", ("_throwaway", "A command added after these tests were written."))
    return "throwaway"


def test_a_command_added_at_run_time_is_in_the_generated_cases_and_refused_like_the_others(
        world, tmp_path, capsys, throwaway_command) -> None:
    run_dir, snapshot = world
    [(name, action)] = [(n, a) for n, a in every_output() if n == throwaway_command]
    test_every_output_refuses_a_run_file_and_a_hard_link_to_one(world, tmp_path, capsys, name, action)
    test_every_output_refuses_an_input_by_any_name(world, tmp_path / "in", capsys, name, action, "symlink") \
        if (tmp_path / "in").mkdir() is None else None
    test_every_output_needs_force_for_a_file_it_did_not_write(world, tmp_path, capsys, name, action)
    assert main([name, str(run_dir), "--out", str(tmp_path / "mine.out")]) == 0
    assert main([name, str(run_dir), "--out", str(tmp_path / "mine.out")]) == 0  # its own file: no --force


@pytest.fixture
def throwaway_run_file(monkeypatch: pytest.MonkeyPatch) -> RunFile:
    declared = RunFile("claims/items.jsonl", Kind.LOG, "a later workload's items",
                       record({"id": whole(low=0), "text": text()}, ("id", "text"), "claim"),
                       example={"id": 1, "text": "The sky is green."})
    monkeypatch.setitem(RUN_FILES, declared.name, declared)
    return declared


def test_a_run_file_declared_at_run_time_is_refused_as_an_output_and_its_damage_counted(
        world, capsys, throwaway_run_file) -> None:
    run_dir, _ = world
    (run_dir / "claims").mkdir()
    (run_dir / "claims" / "items.jsonl").write_text('{"id": 1, "text": "ok"}\n{"id": -4, "text": 7}\n')
    capsys.readouterr()
    assert main(["report", str(run_dir), "-q", "--json", str(run_dir / "claims" / "items.jsonl")]) == 2
    assert "would write over the run's items.jsonl in the run directory" in one_line(capsys)
    assert main(["status", str(run_dir)]) == 0
    assert ("1 damaged line in claims/items.jsonl, set aside (line 2: id is -4, outside [0, 9223372036854775807])"
            in capsys.readouterr().out.splitlines())


# --- no command writes an output any other way -------------------------------------------------------------------

SRC = Path(__file__).resolve().parents[1] / "src" / "fanout"
WRITES = re.compile(r"\.write_text\(|\.write_bytes\(|os\.replace\(|write_atomically\(|\bopen\([^)]*[\"'][wax]b?\+?[\"']"
                    r"|os\.open\([^)]*O_(WRONLY|RDWR|CREAT)")
RUN_FILE_WRITERS = {
    "store/outputs.py": "the output writer itself",
    "store/atomic.py": "the run's atomic files and the lines set aside",
    "store/checkpoint.py": "the log, its views, its repairs",
    "store/log_index.py": "the saved index (a cache)",
    "store/attempts.py": "in-flight files and abandoned.jsonl",
    "store/reviews.py": "reviews.jsonl, appended",
    "store/run_lock.py": "run.lock",
    "store/manifest.py": "the run's manifest (through store.atomic)",
    "store/evidence_log.py": "evidence.jsonl, appended",
    "workloads/patrol/edit_spool.py": "the run's snapshot.cache",
    "store/prepared.py": "prepared.jsonl, appended (its torn tail cut)",
    "workloads/patrol/live/state.py": "the run's watch.state.json, a declared view (through store.atomic)",
    "store/append_lines.py": "a watch's appended files (journal, edits, prefilter, outcomes), their torn tails cut",
    "workloads/claims/source.py": "the run's input-labels.yaml, a declared view (through store.atomic)",
    "report/gate.py": "the run's quarantine.json, a declared view (through store.atomic)",
    "wikidata/snapshot_writer.py": "fetch-edits' own sidecar (<output>.partial.jsonl); its output goes through the writer",
    "cli/__init__.py": "standard output pointed at /dev/null when the reader has gone",
    "tools/extract_worker.py": "the worker's reply pipe",
    "tools/cache.py": "the SQLite tool cache",
}
"""Where src/ may write files other than through fanout.store.outputs, and why."""


def test_no_module_writes_an_output_file_other_than_through_the_writer() -> None:
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC).as_posix()
        hits = [n for n, line in enumerate(path.read_text().splitlines(), 1) if WRITES.search(line)]
        if hits and relative not in RUN_FILE_WRITERS:
            found[relative] = hits
    assert found == {}, "write outputs through fanout.store.outputs (Outputs.write / write_atomic)"
