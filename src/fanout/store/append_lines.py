"""Append-only run files that grow while they are read (a watch's journal, its edits, outcomes): the writer.

Each file has one writer (the process that holds the run's lock) which appends
whole lines, so a crash can tear only the last one: opening a file to append
sets a torn tail aside (`NAME.torn-N.jsonl`, as the checkpoint does) before
the first new line. Readers go through the one reader of run files
(fanout.store.lines.each_record), which checks every line against the file's
schema in fanout.store.layout.RUN_FILES.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from fanout.base.errors import DiskFull
from fanout.store.atomic import DISK_FULL, cut_torn_tail, open_append


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
