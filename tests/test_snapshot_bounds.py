"""Snapshots that would exhaust memory or hang are refused in one line, by every reader, before anything is built.

Each test writes a real file (a FIFO, a sparse file, a billion laughs) and
reads it the three ways a snapshot is read: load_snapshot, the event reader
`fanout run` streams with, and the spool that feeds a run. The limits are
fanout.base.reading.SNAPSHOT_BOUNDS'.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fanout.cli import main
from fanout.base.errors import ConfigError
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.snapshot import file_sha256, load_snapshot, stream_snapshot
from fanout.base.reading import SNAPSHOT_BOUNDS
from fanout.workloads.patrol import edit_spool
from fanout.workloads.patrol.edit_spool import cache_edits, spool_snapshot
from fanout.store.layout import SPOOL_NAME
from edits import edit_data

MAX_SNAPSHOT_BYTES, MAX_NESTING = SNAPSHOT_BOUNDS.max_bytes, SNAPSHOT_BOUNDS.max_nesting
MAX_TEXT_CHARS, MAX_REPEATED = SNAPSHOT_BOUNDS.max_text, SNAPSHOT_BOUNDS.max_repeated

LOCAL = ["--base-url", "http://127.0.0.1:9/v1", "--searxng-url", "http://127.0.0.1:9", "--models", "m/a"]


class ListSink:
    def __init__(self) -> None:
        self.edits: list[Edit] = []

    def add(self, edit: Edit) -> None:
        self.edits.append(edit)

    def clear(self) -> None:
        self.edits.clear()


def by_load(path: Path) -> list[Edit]:
    return load_snapshot(path).edits


def by_stream(path: Path) -> list[Edit]:
    sink = ListSink()
    stream_snapshot(path, sink)
    return sink.edits


def by_spool(path: Path) -> list[Edit]:
    with spool_snapshot(path) as snapshot:
        return list(snapshot.edits)


def by_composing(path: Path) -> list[Edit]:
    """load_snapshot of the same file made to need PyYAML's composer: an explicit tag comes first."""
    path.write_text("fetched: !!str today\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    return load_snapshot(path).edits


FILE_READERS = [pytest.param(by_load, id="load_snapshot"), pytest.param(by_stream, id="stream_snapshot"),
                pytest.param(by_spool, id="spool_snapshot"), pytest.param(file_sha256, id="file_sha256")]
READERS = [*FILE_READERS[:3], pytest.param(by_composing, id="composed")]
Reader = Callable[[Path], list[Edit]]


def refusal(read: Reader, path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        read(path)
    return str(caught.value)


def snapshot_with(tmp_path: Path, notes: str, *, edit: dict[str, Any] | None = None) -> Path:
    """One valid edit whose extra key `notes:` holds the YAML text given (indented under it)."""
    text = yaml.safe_dump({"edits": [edit or edit_data(1)]}, sort_keys=False, width=1000)
    path = tmp_path / "snap.yaml"
    path.write_text(text + "  notes:\n" + "".join(f"    {line}\n" for line in notes.splitlines()), encoding="utf-8")
    return path


def position(path: Path, line_start: str, needle: str, nth: int = 1, plus: int = 0) -> str:
    """'line L, column C' of the nth `needle` (then `plus` characters on) on the line that starts with line_start."""
    lines = path.read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines) if line.lstrip().startswith(line_start))
    column = -1
    for _ in range(nth):
        column = lines[number].index(needle, column + 1)
    return f"line {number + 1}, column {column + plus + 1}"


# --- aliases --------------------------------------------------------------------------------


def laughs(levels: int) -> str:
    """a0 holds ten strings; each next level holds ten aliases of the one before: 10^levels strings in all."""
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"a{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]" for k in range(1, levels)]
    return "\n".join(lines)


@pytest.mark.parametrize("read", READERS)
def test_a_billion_laughs_inside_an_edit_is_refused_before_anything_expands(tmp_path: Path, read: Reader) -> None:
    path = snapshot_with(tmp_path, laughs(10))
    # a_k stands for 1 + 10 * size(a_k-1) nodes and characters (a0: 1 + 10 * 4); by the second *a5
    # in a6 the aliases have repeated 12,790,072 of them.
    assert refusal(read, path) == (
        f"snapshot {path} repeats more than 10,000,000 nodes and characters through YAML aliases (*name) "
        f"by {position(path, 'a6:', '*a5', nth=2)}; a snapshot needs few aliases, so write the repeated parts out in full instead"
    )


@pytest.mark.parametrize("read", READERS)
@pytest.mark.parametrize(("uses", "refused"), [(MAX_REPEATED // 100_000, False), (MAX_REPEATED // 100_000 + 1, True)])
def test_aliases_may_repeat_ten_million_nodes_and_characters_in_all(
    tmp_path: Path, read: Reader, uses: int, refused: bool
) -> None:
    text = "x" * (100_000 - 1)  # one node and 99,999 characters
    path = snapshot_with(tmp_path, f"s: &s {text}\nrepeats: [{', '.join(['*s'] * uses)}]")
    if refused:
        assert "repeats more than 10,000,000 nodes and characters through YAML aliases" in refusal(read, path)
    else:
        [edit] = read(path)
        assert edit.source["notes"]["repeats"] == [text] * uses


@pytest.mark.parametrize("read", READERS)
def test_aliases_that_real_snapshots_use_are_read_as_before(tmp_path: Path, read: Reader) -> None:
    shared = yaml.safe_dump({"edits": [edit_data(1)]}, sort_keys=False).replace("  tags:\n", "  tags: &tags\n", 1)
    rest = yaml.safe_dump([{k: v for k, v in edit_data(2).items() if k != "tags"}], sort_keys=False) + "  tags: *tags\n"
    edits = [rest.replace("- rcid: 2\n", f"- rcid: {n}\n", 1) for n in range(2, 1002)]
    path = tmp_path / "snap.yaml"
    path.write_text(shared + "".join(edits), encoding="utf-8")
    assert [(e.rcid, e.tags) for e in read(path)] == [(n, ("wikidata-ui",)) for n in range(1, 1002)]


@pytest.mark.parametrize("read", READERS)
def test_an_alias_inside_the_node_it_names_is_a_loop_and_refused(tmp_path: Path, read: Reader) -> None:
    path = snapshot_with(tmp_path, "loop: &loop [1, [2, *loop]]")
    assert refusal(read, path) == (
        f"snapshot {path} has an alias at {position(path, 'loop:', '*loop')} inside the very node it names, "
        "a loop no snapshot can hold; remove that alias"
    )


# --- nesting --------------------------------------------------------------------------------


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("read", READERS)
def test_a_list_100_000_levels_deep_is_refused_at_its_51st_level(tmp_path: Path, read: Reader) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("edits: " + nested(100_000) + "\n", encoding="utf-8")
    # the top mapping is level 1 and the first bracket (`edits`) level 2: the 50th bracket is level 51
    assert refusal(read, path) == (
        f"snapshot {path} nests lists and mappings more than 50 levels deep at {position(path, 'edits:', '[', plus=49)}; "
        "an edit needs about 10, so look for unclosed brackets or stray indentation there"
    )


@pytest.mark.parametrize("read", READERS)
def test_fifty_levels_are_allowed_and_fifty_one_are_not(tmp_path: Path, read: Reader) -> None:
    # edits (2), the edit (3) and notes (4) hold `deep`: its own brackets may add MAX_NESTING - 4 levels
    allowed = snapshot_with(tmp_path, f"deep: {nested(MAX_NESTING - 4)}")
    [edit] = read(allowed)
    assert json.dumps(edit.source["notes"]["deep"]) == nested(MAX_NESTING - 4)
    too_deep = snapshot_with(tmp_path, f"deep: {nested(MAX_NESTING - 3)}")
    message = refusal(read, too_deep)
    assert f"more than 50 levels deep at {position(too_deep, 'deep:', '[', plus=MAX_NESTING - 4)};" in message


@pytest.mark.parametrize("read", READERS)
def test_an_alias_counts_the_depth_of_what_it_stands_for(tmp_path: Path, read: Reader) -> None:
    # each alias is written at a legal depth, but b stands for a inside 30 more levels: 4 + 30 + 30 > 50
    notes = f"a: &a {nested(30)}\nb: &b {'[' * 29}*a{']' * 29}"
    path = snapshot_with(tmp_path, notes)
    assert refusal(read, path) == (
        f"snapshot {path} nests lists and mappings more than 50 levels deep at {position(path, 'b:', '*a')}; "
        "an edit needs about 10, so look for unclosed brackets or stray indentation there"
    )


# --- values ---------------------------------------------------------------------------------


@functools.cache
def fifty_mb_label() -> bytes:
    """snapshot_with's one edit with a label of 50,000,000 characters, as bytes: built once, written by each test."""
    template = yaml.safe_dump({"edits": [edit_data(1)]}, sort_keys=False, width=1000) + "  notes:\n    n: 1\n"
    return template.replace("Douglas Adams", "x" * 50_000_000).encode("utf-8")


@pytest.mark.parametrize("read", READERS)
def test_a_50_mb_label_is_refused_and_100_000_characters_are_not(tmp_path: Path, read: Reader) -> None:
    path = snapshot_with(tmp_path, "n: 1")
    template = path.read_text(encoding="utf-8")
    path.write_text(template.replace("Douglas Adams", "x" * MAX_TEXT_CHARS), encoding="utf-8")
    [edit] = read(path)
    assert edit.item.label_en == "x" * MAX_TEXT_CHARS
    at = position(path, "label_en:", "x")  # where the 100,000 characters start: the 50,000,000 start there too
    path.write_bytes(fifty_mb_label())
    assert refusal(read, path) == (
        f"snapshot {path} has a value of 50,000,000 characters at {at}, "
        "more than the 100,000 one may have; shorten it (Wikidata's own values have at most 1,500)"
    )


# --- the file -------------------------------------------------------------------------------

@pytest.mark.parametrize("read", FILE_READERS)
def test_a_fifo_is_refused_at_once_without_waiting_for_a_writer(tmp_path: Path, read: Callable[[Path], Any]) -> None:
    fifo = tmp_path / "snap.yaml"
    os.mkfifo(fifo)
    assert refusal(read, fifo) == (
        f"snapshot {fifo} is a named pipe (FIFO), not a regular file, so it may never end; "
        "save the snapshot to a file and pass that file"
    )


@pytest.mark.parametrize("read", FILE_READERS)
def test_dev_zero_is_refused_instead_of_read_for_ever(tmp_path: Path, read: Callable[[Path], Any]) -> None:
    link = tmp_path / "snap.yaml"
    link.symlink_to("/dev/zero")
    assert refusal(read, link) == (
        f"snapshot {link} is a character device, not a regular file, so it may never end; "
        "save the snapshot to a file and pass that file"
    )


@pytest.mark.parametrize("read", FILE_READERS)
def test_a_file_over_a_gibibyte_is_refused_without_being_read(tmp_path: Path, read: Callable[[Path], Any]) -> None:
    path = tmp_path / "snap.yaml"
    with path.open("wb") as fh:
        fh.truncate(MAX_SNAPSHOT_BYTES + 1)  # sparse: nothing is written, and a read would take seconds
    assert refusal(read, path) == (
        f"snapshot {path} has 1,073,741,825 bytes, more than the 1,073,741,824 a snapshot may have; "
        "split its edits into smaller snapshots, each run in its own --run-dir"
    )


def test_a_directory_keeps_its_own_message(tmp_path: Path) -> None:
    assert refusal(by_stream, tmp_path) == f"snapshot {tmp_path} is a directory; pass the snapshot YAML file inside it"


# --- as a user meets it ---------------------------------------------------------------------


def bomb(tmp_path: Path) -> Path:
    """16 KB: the billion laughs of issue 13, padded with comments to the size found there."""
    path = snapshot_with(tmp_path, laughs(10))
    path.write_text(path.read_text(encoding="utf-8") + "#" * (16_384 - path.stat().st_size - 1) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("dry_run", [["--dry-run"], []], ids=["dry-run", "run"])
def test_fanout_run_refuses_the_bomb_in_one_line_and_writes_nothing(tmp_path: Path, capsys, dry_run) -> None:
    path = bomb(tmp_path)
    code = main(["run", str(path), "--run-dir", str(tmp_path / "run"), *LOCAL, *dry_run])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.splitlines() == [err]
    assert err.startswith(f"fanout run: error: snapshot {path} repeats more than 10,000,000 nodes and characters")
    assert not (tmp_path / "run").exists()


def deep_file(tmp_path: Path) -> Path:
    path = tmp_path / "deep.yaml"
    path.write_text("edits: " + nested(100_000) + "\n", encoding="utf-8")
    return path


def long_label(tmp_path: Path) -> Path:
    path = snapshot_with(tmp_path, "n: 1")
    path.write_bytes(fifty_mb_label())
    return path


def fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo.yaml")
    return tmp_path / "fifo.yaml"


def dev_zero(tmp_path: Path) -> Path:
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    return tmp_path / "zero.yaml"


def over_a_gibibyte(tmp_path: Path) -> Path:
    with (tmp_path / "big.yaml").open("wb") as fh:
        fh.truncate(MAX_SNAPSHOT_BYTES + 1)
    return tmp_path / "big.yaml"


@pytest.mark.parametrize(("make", "problem"), [
    (bomb, "repeats more than 10,000,000 nodes and characters through YAML aliases"),
    (deep_file, "nests lists and mappings more than 50 levels deep"),
    (long_label, "has a value of 50,000,000 characters"),
    (fifo, "is a named pipe (FIFO), not a regular file"),
    (dev_zero, "is a character device, not a regular file"),
    (over_a_gibibyte, "has 1,073,741,825 bytes"),
], ids=["bomb", "deep", "long-label", "fifo", "dev-zero", "too-big"])
def test_a_resume_with_a_snapshot_over_the_limits_leaves_the_run_directory_as_it_was(
    tmp_path: Path, capsys, make: Callable[[Path], Path], problem: str
) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "checkpoint.jsonl").write_text('{"earlier": "lines"}\n', encoding="utf-8")
    before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    bad = make(tmp_path)
    capsys.readouterr()
    code = main(["run", str(bad), "--run-dir", str(run_dir), *LOCAL, "--force"])
    err = capsys.readouterr().err.strip()
    assert (code, err.splitlines()) == (2, [err])
    assert err.startswith(f"fanout run: error: snapshot {bad} {problem}")
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before


def test_a_snapshot_cache_from_before_the_limits_is_not_trusted(tmp_path: Path, monkeypatch) -> None:
    """A run directory's cache holds edits validated by an older fanout, which had no limits: it is read again."""
    data = edit_data(1)
    data["item"]["label_en"] = "x" * (MAX_TEXT_CHARS + 1)
    path = snapshot_with(tmp_path, "n: 1", edit=data)
    monkeypatch.setattr(edit_spool, "VERSION", 1)
    cache_edits(tmp_path, path, [Edit.from_validated(yaml.safe_load(path.read_text())["edits"][0])])
    monkeypatch.undo()
    assert (tmp_path / SPOOL_NAME).exists()

    def resume(snapshot: Path) -> list[Edit]:
        with spool_snapshot(snapshot, cache_dir=tmp_path) as spooled:
            return list(spooled.edits)

    assert refusal(resume, path).startswith(f"snapshot {path} has a value of 100,001 characters")


def test_a_small_snapshot_is_read_without_reserving_the_whole_size_cap(tmp_path: Path) -> None:
    """read(1 GiB + 1) allocates the whole GiB before it reads 10 bytes: a MemoryError under `ulimit -v 900000`."""
    import subprocess
    import sys

    path = tmp_path / "small.yaml"
    path.write_text("edits: []\n", encoding="utf-8")
    script = ("import resource, sys\n"
              "from fanout.base.errors import ConfigError\n"
              "from fanout.workloads.patrol.snapshot import load_snapshot\n"
              "resource.setrlimit(resource.RLIMIT_AS, (900_000 * 1024, resource.RLIM_INFINITY))\n"
              "try:\n    load_snapshot(sys.argv[1])\nexcept ConfigError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (
        0, f"snapshot {path} has no edits; the `edits:` list is empty\n", "")
