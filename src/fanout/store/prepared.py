"""A workload's prepared items: what its preparation step made before any item was judged, one line per unit.

Some workloads must do paid work before their items exist: the claims
workload asks a model to split each text into claims. `prepared.jsonl` holds
that work as it is done, with the checkpoint's rules: append-only, one JSON
object per unit of input (a text), each written whole, flushed and fsynced
before any of its items is judged; a torn last line is set aside
(`prepared.torn-N.jsonl`) and cut off when the log is opened. So a kill never
loses a unit's items once they may have been judged, and a unit whose line is
in the log is never prepared (paid for) again.

The store knows only the fields every line has: the `unit` it prepared, the
`model` that did the work, its `status`, and what it cost (`cost_usd`,
`cost_source`); the rest of a line (the claims, the text's hash) is the
workload's and passes through untouched. Progress, `fanout status`, the
report and --max-cost count the cost of every line, as they count a shared
investigation's: each was paid for.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from fanout.base.reading import parse_json
from fanout.base.records import log_line
from fanout.store.atomic import append_durably, cut_torn_tail, open_append
from fanout.store.layout import PREPARED_NAME, run_file
from fanout.store.line_schemas import PREPARED_LINE
from fanout.store.lines import read_lines

def prepared_path(run_dir: Path) -> Path:
    return run_dir / PREPARED_NAME


class PreparedLine(NamedTuple):
    """One unit's line: the fields the store knows, and the whole object for the workload."""

    unit: str
    model: str
    status: str
    cost_usd: float | None
    cost_source: str | None
    data: Mapping[str, Any]


class PreparedSpend(NamedTuple):
    """What the preparation logged so far cost: known dollars, and lines whose cost nobody knows."""

    spent_usd: float
    lines: int
    unknown: int


def _line(data: Mapping[str, Any]) -> PreparedLine:
    """A line PREPARED_LINE has checked, as the store knows it."""
    cost = data.get("cost_usd")
    return PreparedLine(data["unit"], data["model"], data["status"], None if cost is None else float(cost),
                        data.get("cost_source"), data)


def read_prepared(run_dir: Path) -> list[PreparedLine]:
    """Every line of the log in order (a run without preparation has none). Read by the one reader of run files
    (fanout.store.lines): bounded, a link or a FIFO refused, damaged lines set aside and named by damage_notes."""
    return [_line(line.data) for line in read_lines(run_dir, run_file(PREPARED_NAME)).lines]


def prepared_spend(run_dir: Path) -> PreparedSpend:
    """What every logged unit's preparation cost (retried ones included: each was paid for)."""
    lines = read_prepared(run_dir)
    return PreparedSpend(sum(line.cost_usd or 0.0 for line in lines), len(lines),
                         sum(line.cost_usd is None or line.cost_source == "unknown" for line in lines))


def _repair_torn_tail(path: Path) -> Path | None:
    """Cut a partial or unparsable last line off the log and keep it aside (as the checkpoint's is)."""
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    try:
        return cut_torn_tail(fd, path, _parses)
    finally:
        os.close(fd)


def _parses(line: bytes) -> bool:
    try:
        parse_json(line)
    except (ValueError, RecursionError):
        return False
    return True


class PreparedLog:
    """The run's prepared items, open for appending (from worker threads: appends are serialised)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = prepared_path(run_dir)
        self.torn: Path | None = _repair_torn_tail(self.path)
        """Where a torn last line was set aside when the log was opened (None: the log was whole)."""
        self._lock = threading.Lock()
        self._fh = open_append(self.path, buffering=0)
        self._offset = self._fh.seek(0, os.SEEK_END)

    def append(self, data: Mapping[str, Any]) -> None:
        """Durable when this returns: written whole, then fsynced (blocking; run it in a worker thread). A line
        without the fields every line has is a bug of its workload, refused before anything is written."""
        problem = PREPARED_LINE.problem(dict(data))
        if problem is not None:
            raise ValueError(f"not a prepared line: {problem}")
        line = log_line(dict(data))
        with self._lock:
            self._offset = append_durably(self._fh.fileno(), line, self._offset)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> PreparedLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

