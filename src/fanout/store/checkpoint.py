"""The checkpoint log: the one source of truth about what a run has finished.

`checkpoint.jsonl` is append-only, one VerdictRecord per line. A record is
appended, flushed and fsynced before its YAML view exists, so a crash at any
moment leaves either a whole line (the pair is done) or a torn last line (it
is not). Opening the log repairs a torn tail by setting it aside in
`checkpoint.torn-N.jsonl` and truncating it away, so a crash is never fatal
and nothing is silently lost.

The latest line for a key (edit_rcid, model) wins: a pair retried on resume
appends a new line rather than rewriting history. What resume needs from the
log is kept by fanout.store.log_index, which the writer saves next to the log so a
resume does not have to read the whole of it.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fanout.base.errors import ConfigError, DiskFull
from fanout.store.atomic import (
    DISK_FULL, append_durably, cut_torn_tail, dump_yaml, dump_yaml_utf8, open_append, write_aside, write_atomically,
)
from fanout.store.attempts import discard_attempt
from fanout.store.layout import INDEX_NAME, LOG_NAME, VERDICT_DIR, own_folder, run_file
from fanout.store.lines import Line, open_line_file, scan_lines
from fanout.store.log_index import DamagedLine, LogEntry, LogIndex, read_index, save_index
from fanout.base.records import VerdictRecord, log_line

__all__ = [
    "CheckpointWriter", "LogEntry", "LogIndex", "iter_log", "log_path", "read_index",
    "read_records", "repair_torn_tail", "restore_missing_views", "set_aside_damaged",
]

SAVE_EVERY_S = 60.0
"""The writer saves the index at most this often while a run goes on (and always when it closes)."""
SAVE_GROWTH = 0.1
"""... and only once the log has grown by this fraction since the last save (at least SAVE_MIN_LINES)."""
SAVE_MIN_LINES = 1000


def log_path(run_dir: Path) -> Path:
    return run_dir / LOG_NAME


def repair_torn_tail(path: Path) -> Path | None:
    """Cut a partial last line (no newline, or not JSON) off the log and keep it aside (store.atomic.cut_torn_tail).

    Only the tail can be torn: the single writer appends whole lines, so an
    incomplete line can only be the last one a crash interrupted. Only the
    tail is read, however long the log. The log is opened without following a
    link (a resume once cut the last line of a file outside the run) and only
    when it is a regular file (a FIFO there blocked the run).
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{path} is a symbolic link; fanout appends to and repairs the run's files only inside "
                              "the run directory: replace the link with the file it points to") from None
        raise ConfigError(f"the run's {path.name} {path} cannot be opened: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"the run's {path.name} {path} is not a regular file, so it may never end; fanout "
                              "writes only regular files there: move it out of the run directory")
        os.set_blocking(fd, True)
        return cut_torn_tail(fd, path, _parses)
    finally:
        os.close(fd)


def _parses(line: bytes) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: nested past json's depth, no record either
        return False
    return True


def iter_log(path: Path) -> Iterator[VerdictRecord]:
    """Every record in the log, streamed, each line checked against its schema; lines that are not records
    are skipped (a link or a FIFO in its place is one ConfigError).

    Which lines those are, read_index says (LogIndex.damaged); a run sets them
    aside (set_aside_damaged) and the readers say so, so none is lost quietly.
    """
    opened = open_line_file(path, run_file(LOG_NAME))
    if opened is None:
        return
    with opened:
        for item in scan_lines(opened, run_file(LOG_NAME)):
            if isinstance(item, Line) and (record := _record(item.data)) is not None:
                yield record


def _record(data: dict[str, Any]) -> VerdictRecord | None:
    try:
        return VerdictRecord.from_dict(data)
    except (TypeError, ValueError, KeyError, AttributeError):  # a nested part of another shape
        return None


def read_records(run_dir: Path) -> list[VerdictRecord]:
    """The latest record per (edit, model), in first-logged order."""
    latest: dict[tuple[int, str], VerdictRecord] = {}
    for record in iter_log(log_path(run_dir)):
        latest[record.key] = record
    return list(latest.values())


def set_aside_damaged(path: Path, damaged: list[DamagedLine]) -> Path | None:
    """Copy lines that are not records out of the log (as a torn tail is), then blank them in place.

    A bad line in the middle does not come from a crash: it was edited in or
    damaged. It is kept in `checkpoint.torn-N.jsonl` (fsynced first) and
    overwritten with spaces of its own length, so the offsets of every other
    line, and a saved index, stay true; every reader skips a blank line.
    """
    if not damaged:
        return None
    fd = os.open(path, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)  # repair_torn_tail has refused a link or a FIFO
    with os.fdopen(fd, "r+b") as fh:
        lines = [os.pread(fh.fileno(), d.end - d.start, d.start) for d in damaged]
        aside = write_aside(path, b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines))
        for d, line in zip(damaged, lines):
            blank = b" " * (len(line) - 1) + b"\n" if line.endswith(b"\n") else b" " * len(line)
            os.pwrite(fh.fileno(), blank, d.start)
        fh.flush()
        os.fsync(fh.fileno())
    return aside


class CheckpointWriter:
    """The single writer: log line first (flushed, fsynced), then the YAML view.

    Blocking file work runs in a worker thread through `append` being called via
    anyio.to_thread by the orchestrator; this class itself is plain and synchronous
    so tests and the crash harness can drive it directly. It also saves the
    index next to the log now and then and when it closes (see fanout.store.log_index).
    """

    def __init__(self, run_dir: Path, index: LogIndex) -> None:
        self.run_dir = run_dir
        self.verdict_dir = own_folder(run_dir, VERDICT_DIR)  # never a link: views are deleted and replaced here
        self.index = index
        self._fh = open_append(log_path(run_dir), buffering=0)
        self._offset = self._fh.seek(0, os.SEEK_END)
        self._saved_at = time.monotonic()
        self.out_of_space: DiskFull | None = None
        """Set when a file of the run did not fit; the writer's caller stops the run."""

    def append(self, record: VerdictRecord) -> LogEntry | None:
        """Make the record durable, then visible; returns the entry it supersedes.

        On a full disk the log is cut back to its last whole line and DiskFull
        raised: the record is not logged. A view that does not fit leaves no
        temp file and is rebuilt on resume; the record is logged, and
        `out_of_space` says the disk is full.
        """
        data = record.to_dict()
        line = log_line(data)
        self._append_line(line)
        discard_attempt(self.run_dir, record.edit_rcid, record.model)  # its calls' cost is in the record now
        entry = LogEntry(record.status, record.cost_usd, record.file_name(), record.cost_source)
        verified, self.index.views_verified = self.index.views_verified, False  # until this view exists
        previous = self.index.put(record.key, entry, self._offset)
        try:
            write_atomically(self.verdict_dir / entry.file_name, dump_yaml_utf8(record.yaml_view(data)))
        except DiskFull as exc:
            self.out_of_space = exc
            return previous
        if previous is not None and previous.file_name != entry.file_name:
            (self.verdict_dir / previous.file_name).unlink(missing_ok=True)
        self.index.views_verified = verified
        if self._time_to_save():
            self._save()
        return previous

    def _append_line(self, line: bytes) -> None:
        """Write, fsync; unbuffered, so a failed write leaves nothing queued to land later."""
        try:
            self._offset = append_durably(self._fh.fileno(), line, self._offset)
        except OSError as exc:
            if exc.errno in DISK_FULL:
                self.out_of_space = DiskFull(log_path(self.run_dir))
                raise self.out_of_space from exc
            raise

    def _time_to_save(self) -> bool:
        grown = self.index.lines - self.index.saved_lines
        due = max(SAVE_MIN_LINES, SAVE_GROWTH * self.index.saved_lines)
        return grown >= due and time.monotonic() - self._saved_at >= SAVE_EVERY_S

    def _save(self, *, closing: bool = False) -> None:
        """Save the index; on a full disk, not (it is a cache: the next start reads the log instead)."""
        try:
            save_index(self.index, self.run_dir / INDEX_NAME, views_dir=self.verdict_dir if closing else None)
        except DiskFull:
            pass
        self._saved_at = time.monotonic()

    def close(self) -> None:
        if self._fh.closed:
            return
        self._fh.close()
        if self.index.lines:
            self._save(closing=True)

    def __enter__(self) -> CheckpointWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def restore_missing_views(run_dir: Path, index: LogIndex) -> int:
    """Re-create YAML views that are missing for logged records; returns how many.

    Cheap when nothing is missing: one directory listing, and only the lines
    whose views are missing are read back from the log. Cheaper still after a
    clean close: when the index was saved with every view present and the
    directory has not changed since (its time says so), only the views of
    lines logged after that save are looked for.
    """
    verdict_dir = own_folder(run_dir, VERDICT_DIR)
    if index.views_verified:
        candidates = list(index.latest_positions(since=index.saved_lines))
        missing = [p for p in candidates if not (verdict_dir / index.file_name_at(p)).exists()]
    else:
        for leftover in verdict_dir.glob(".*.tmp"):  # a crash between write and rename
            leftover.unlink()
        present = set(os.listdir(verdict_dir))
        missing = [p for p in index.latest_positions() if index.file_name_at(p) not in present]
        missing = _adopt_legacy_views(verdict_dir, index, missing, present)
    _rebuild_views(run_dir, index, missing)
    index.views_verified = True
    return len(missing)


def _adopt_legacy_views(verdict_dir: Path, index: LogIndex, missing: list[int], present: set[str]) -> list[int]:
    """Rename the views of a run made before view names carried the model id's hash; returns what is still missing.

    A legacy name that two models shared (`nvidia/x` and `other/x` both wrote
    `...-x.yaml`) holds only the last one written, so it is removed and both
    views are rebuilt from the log instead.
    """
    claims: dict[str, list[int]] = {}
    for position in missing:
        legacy = index.legacy_file_name_at(position)
        if legacy is not None and legacy in present:
            claims.setdefault(legacy, []).append(position)
    adopted = set()
    for legacy, positions in claims.items():
        if len(positions) == 1:
            os.replace(verdict_dir / legacy, verdict_dir / index.file_name_at(positions[0]))
            adopted.add(positions[0])
        else:
            (verdict_dir / legacy).unlink()
    return [p for p in missing if p not in adopted]


def _rebuild_views(run_dir: Path, index: LogIndex, positions: list[int]) -> None:
    """Write the views of these lines from the log: read where they are, or by scanning when unknown."""
    if not positions:
        return
    verdict_dir = run_dir / VERDICT_DIR
    spans = [index.span(p) for p in positions]
    if any(span is None for span in spans):
        wanted = {index.file_name_at(p) for p in positions}
        for record in read_records(run_dir):
            if record.file_name() in wanted:
                write_atomically(verdict_dir / record.file_name(), dump_yaml_utf8(record.yaml_view()))
        return
    with log_path(run_dir).open("rb") as fh:
        for start, end in spans:  # type: ignore[misc]
            record = VerdictRecord.from_dict(json.loads(os.pread(fh.fileno(), end - start, start)))
            write_atomically(verdict_dir / record.file_name(), dump_yaml_utf8(record.yaml_view()))
