"""The watch's edits (watch.edits.jsonl): each edit it hands to the engine, enriched, one JSON line, fsynced first.

A line is the edit as `fetch-edits --enrich` puts it in a snapshot, held to
the same checks (fanout.workloads.patrol.snapshot.validate_edit), so the
patrol workload opens this file as it opens a snapshot: the report, the queue
and the desk describe a watched run's edits from here, while it grows. A
restart hands over again the edits here that the journal does not say are
judged; a line is written before its edit is handed over, so no edit is in
the log without its line.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import anyio

from fanout.base.errors import ConfigError
from fanout.store.layout import WATCH_EDITS_NAME, run_file
from fanout.workloads.patrol.edit import Edit
from fanout.store.append_lines import AppendLines
from fanout.store.lines import ReadLines, each_record
from fanout.workloads.patrol.snapshot import validate_edit


class EditsFile:
    """The edits file open for appending."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / WATCH_EDITS_NAME
        self._file = AppendLines(self.path)

    async def add(self, edit: Mapping[str, Any]) -> None:
        """One edit, durable before this returns (fsynced in a worker thread)."""
        await anyio.to_thread.run_sync(lambda: self._file.write([edit], sync=True))

    def close(self) -> None:
        self._file.close()


def read_edits(path: Path, wanted: set[int] | None = None) -> Iterator[Edit]:
    """The file's edits in order (only those whose rcid is `wanted`, when given), each validated; a line that is
    not one is a ConfigError naming it, as a snapshot's bad edit is."""
    found = ReadLines(path)
    for number, entry in enumerate(each_record(path, run_file(WATCH_EDITS_NAME), found), start=1):
        if wanted is not None and entry.get("rcid") not in wanted:
            continue
        yield validate_edit(path, number, entry)
    if found.skipped:
        raise ConfigError(f"the watched edits {path}: {found.skipped} line(s) are not JSON objects; a watch writes "
                          "whole lines only, so the file was changed by hand")


def edit_rcids(path: Path) -> list[int]:
    """The rcid of every edit in the file, in order (without validating the edits)."""
    found = ReadLines(path)
    rcids = []
    for entry in each_record(path, run_file(WATCH_EDITS_NAME), found):
        rcid = entry.get("rcid")
        if isinstance(rcid, int) and not isinstance(rcid, bool):
            rcids.append(rcid)
    return rcids
