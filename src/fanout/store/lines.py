"""Append-only run files of JSON lines (a watch's journal, its edits, outcomes): written whole, read line by line.

Each file has one writer (the process that holds the run's lock) which appends
whole lines, so a crash can tear only the last one: opening a file to append
sets a torn tail aside (`NAME.torn-N.jsonl`, as the checkpoint does) before
the first new line. A reader (a restart, `fanout status`, the report) reads a
file that may still grow: a last line without its newline is not read, and a
line that is not a JSON object is skipped and counted, never used.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from fanout.base.reading import SIDE_FILE_BOUNDS, Bounds, open_regular, read_errors
from fanout.base.errors import DiskFull
from fanout.store.atomic import DISK_FULL, cut_torn_tail, open_append

WATCH_FILE_BOUNDS: Bounds = SIDE_FILE_BOUNDS._replace(
    kind="run file", max_bytes=16 << 30, split_hint="a watch writes a line of under a kilobyte per edit (its edits "
    "file about 10 KB); start a new --run-dir for a new period", special_hint="fanout writes only regular files "
    "there; move it out of the run directory")
"""A watch's files: regular, and at most 16 GiB (a month of the whole stream's accepted edits)."""
CHUNK = 1 << 20


class AppendLines:
    """One such file, open for appending; a torn tail is set aside first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.torn: Path | None = None
        """Where a torn last line was kept, when opening found one."""
        if path.exists():
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
            try:
                self.torn = cut_torn_tail(fd, path, _is_object)
            finally:
                os.close(fd)
        self._fh: BinaryIO = open_append(path, buffering=0)

    def write(self, entries: Sequence[Mapping[str, Any]], *, sync: bool) -> None:
        """Append the entries, one line each, in one write; `sync`: fsynced before this returns."""
        if not entries:
            return
        data = b"".join(dump_line(entry) for entry in entries)
        try:
            self._fh.write(data)
            if sync:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            if exc.errno in DISK_FULL:
                raise DiskFull(self.path) from exc
            raise

    def close(self) -> None:
        self._fh.close()


def dump_line(entry: Mapping[str, Any]) -> bytes:
    return (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def _is_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


@dataclass
class ReadLines:
    """What reading one such file found."""

    path: Path
    skipped: int = 0
    """Lines that were not JSON objects (a torn last line not counted: it is still being written, or repaired)."""


def read_lines(path: Path, name: str, found: ReadLines | None = None) -> Iterator[dict[str, Any]]:
    """Each whole line of `path` that is a JSON object, in order; `found` counts the rest. Nothing when the file
    is missing; a file that is no regular file, or too big, is a ConfigError."""
    if not path.exists():
        return
    found = found if found is not None else ReadLines(path)
    with read_errors(name, "is RUN_DIR the right folder?"):
        fh = open_regular(path, name, WATCH_FILE_BOUNDS)
    with fh:
        rest = b""
        while chunk := fh.read(CHUNK):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for line in lines:
                entry = _entry(line)
                if entry is None:
                    found.skipped += line.strip() != b""
                else:
                    yield entry


def _entry(line: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None
