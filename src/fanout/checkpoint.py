"""The checkpoint log: the one source of truth about what a run has finished.

`checkpoint.jsonl` is append-only, one VerdictRecord per line. A record is
appended, flushed and fsynced before its YAML view exists, so a crash at any
moment leaves either a whole line (the pair is done) or a torn last line (it
is not). Opening the log repairs a torn tail by setting it aside in
`checkpoint.torn-N.jsonl` and truncating it away, so a crash is never fatal
and nothing is silently lost.

The latest line for a key (edit_rcid, model) wins: a pair retried on resume
appends a new line rather than rewriting history.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fanout.errors import ConfigError
from fanout.records import VerdictRecord

LOG_NAME = "checkpoint.jsonl"
VERDICT_DIR = "verdicts"


@dataclass
class LogEntry:
    """What resume needs to know about a logged pair, without the whole record."""

    status: str
    cost_usd: float | None
    file_name: str


@dataclass
class LogIndex:
    """The latest entry per (edit_rcid, model), plus what repair set aside."""

    entries: dict[tuple[int, str], LogEntry] = field(default_factory=dict)
    lines: int = 0
    spent_usd: float = 0.0
    """Recorded spend of the latest record per pair, kept as a running total."""

    def put(self, key: tuple[int, str], entry: LogEntry) -> LogEntry | None:
        """Record the latest entry for a pair; returns the one it replaces."""
        previous = self.entries.get(key)
        if previous is not None:
            self.spent_usd -= previous.cost_usd or 0.0
        self.entries[key] = entry
        self.spent_usd += entry.cost_usd or 0.0
        self.lines += 1
        return previous

    def done_keys(self, retry_statuses: frozenset[str]) -> set[tuple[int, str]]:
        """Pairs that resume skips: logged with a status that is a result."""
        return {k for k, e in self.entries.items() if e.status not in retry_statuses}


def log_path(run_dir: Path) -> Path:
    return run_dir / LOG_NAME


def repair_torn_tail(path: Path) -> Path | None:
    """Cut a partial last line (no newline, or not JSON) off the log and keep it aside.

    Only the tail can be torn: the single writer appends whole lines, so an
    incomplete line can only be the last one a crash interrupted.
    """
    if not path.exists() or path.stat().st_size == 0:
        return None
    with path.open("rb") as fh:
        data = fh.read()
    cut = _good_prefix_length(data)
    if cut == len(data):
        return None
    aside = _free_aside_path(path)
    aside.write_bytes(data[cut:])
    with path.open("r+b") as fh:
        fh.truncate(cut)
        fh.flush()
        os.fsync(fh.fileno())
    return aside


def _good_prefix_length(data: bytes) -> int:
    """Length of the log up to and including its last complete, parseable line."""
    end = data.rfind(b"\n") + 1
    if end == 0:
        return 0
    last_start = data.rfind(b"\n", 0, end - 1) + 1
    try:
        json.loads(data[last_start:end])
    except ValueError:
        return last_start
    return end


def _free_aside_path(path: Path) -> Path:
    n = 1
    while (aside := path.with_name(f"checkpoint.torn-{n}.jsonl")).exists():
        n += 1
    return aside


def iter_log(path: Path) -> Iterator[dict[str, Any]]:
    """Every record dict in the log, streamed; a corrupt middle line is an error.

    A bad line in the middle cannot come from a crash (see repair_torn_tail), so
    it is reported rather than skipped: skipping it would quietly lose a result.
    """
    if not path.exists():
        return
    with path.open("rb") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as exc:
                raise ConfigError(
                    f"{path}: line {number} is not valid JSON ({exc}). The log was edited or "
                    "damaged; move that line out of the file and run again."
                ) from None


def read_index(path: Path) -> LogIndex:
    """Scan the log once, keeping only what resume and progress need."""
    index = LogIndex()
    for data in iter_log(path):
        key = (int(data["edit_rcid"]), str(data["model"]))
        index.put(key, LogEntry(
            status=data["status"],
            cost_usd=data.get("cost_usd"),
            file_name=VerdictRecord.from_dict(data).file_name(),
        ))
    return index


def read_records(run_dir: Path) -> list[VerdictRecord]:
    """The latest record per (edit, model), in first-logged order."""
    latest: dict[tuple[int, str], VerdictRecord] = {}
    for data in iter_log(log_path(run_dir)):
        record = VerdictRecord.from_dict(data)
        latest[record.key] = record
    return list(latest.values())


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, default_flow_style=False, allow_unicode=True, sort_keys=False, width=100)


def write_atomically(path: Path, text: str) -> None:
    """Temp file in the same directory, fsync, rename: readers never see half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class CheckpointWriter:
    """The single writer: log line first (flushed, fsynced), then the YAML view.

    Blocking file work runs in a worker thread through `append` being called via
    anyio.to_thread by the orchestrator; this class itself is plain and synchronous
    so tests and the crash harness can drive it directly.
    """

    def __init__(self, run_dir: Path, index: LogIndex) -> None:
        self.run_dir = run_dir
        self.verdict_dir = run_dir / VERDICT_DIR
        self.verdict_dir.mkdir(parents=True, exist_ok=True)
        self.index = index
        self._fh = log_path(run_dir).open("ab")

    def append(self, record: VerdictRecord) -> LogEntry | None:
        """Make the record durable, then visible; returns the entry it supersedes."""
        line = json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":")) + "\n"
        self._fh.write(line.encode("utf-8"))
        self._fh.flush()
        os.fsync(self._fh.fileno())
        entry = LogEntry(record.status, record.cost_usd, record.file_name())
        previous = self.index.put(record.key, entry)
        write_atomically(self.verdict_dir / entry.file_name, dump_yaml(record.yaml_view()))
        if previous is not None and previous.file_name != entry.file_name:
            (self.verdict_dir / previous.file_name).unlink(missing_ok=True)
        return previous

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> CheckpointWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def restore_missing_views(run_dir: Path, index: LogIndex) -> int:
    """Re-create YAML views that are missing for logged records; returns how many.

    Cheap when nothing is missing: one directory listing, and the log is only
    read again when at least one view has to be rebuilt.
    """
    verdict_dir = run_dir / VERDICT_DIR
    verdict_dir.mkdir(parents=True, exist_ok=True)
    for leftover in verdict_dir.glob(".*.tmp"):  # a crash between write and rename
        leftover.unlink()
    present = set(os.listdir(verdict_dir))
    missing = {k for k, e in index.entries.items() if e.file_name not in present}
    if not missing:
        return 0
    for record in read_records(run_dir):
        if record.key in missing:
            write_atomically(verdict_dir / record.file_name(), dump_yaml(record.yaml_view()))
    return len(missing)
