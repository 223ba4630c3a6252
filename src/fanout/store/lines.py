"""The one reader of a run's line files: bounded, and every line checked against its declared schema.

Each log of a run directory (fanout.store.layout.RUN_FILES: the checkpoint,
the evidence log, the reviews, the abandoned attempts, the in-flight files,
and any declared later) is read here, by every command that reads it:

- opened without following a symbolic link and without blocking, and only
  when it is a regular file within its declared bounds (a FIFO blocked
  `run`, `status` and `report`; /dev/zero was read for ever; a link led out
  of the run), each refusal one ConfigError naming the file;
- read line by line, at most MAX_LINE_BYTES a line, each parsed (a line of
  100,000 `[` is "not JSON", not a RecursionError) and checked against the
  file's schema (fanout.base.schema): a line that breaks it is a `Damage`,
  counted and named by its number and what is wrong, never used;
- a last line without its newline that is no record is torn (a crash
  mid-write); one that is a whole record still counts.

Readers say what they set aside with `damage_notes`: "2 damaged lines in
checkpoint.jsonl, set aside (line 3: verdict is 'bogus', ...)".
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from fanout.base.errors import ConfigError
from fanout.base.reading import check_regular, read_errors
from fanout.store.layout import MAX_LINE_BYTES, RunFile, logs


class Damage(NamedTuple):
    """A line that is not a record of its file: skipped by every reader, set aside by the next run."""

    number: int
    """Its line number (counted from the first line read: 1 unless the reader started further on)."""
    start: int
    end: int
    """Where it sits in the file, [start, end), its newline included."""
    torn: bool
    """The file's last line, without its newline: what a crash leaves."""
    problem: str = ""
    """What is wrong with it, naming the field: "confidence is 2, outside [0, 1]"."""


class Line(NamedTuple):
    """A line that holds a record of its file's schema."""

    number: int
    start: int
    end: int
    data: dict[str, Any]


@dataclass
class LinesRead:
    """A line file as read: its good lines (the records, as plain data) and what was set aside."""

    run_file: RunFile
    path: Path
    lines: list[Line] = field(default_factory=list)
    damaged: list[Damage] = field(default_factory=list)

    @property
    def records(self) -> list[dict[str, Any]]:
        return [line.data for line in self.lines]


def open_line_file(path: Path, run_file: RunFile, *, missing_ok: bool = True) -> BinaryIO | None:
    """`path` opened for reading when it is a regular file within the declared bounds, not through a symbolic
    link and without blocking (a FIFO); None when it does not exist and `missing_ok`; else one ConfigError."""
    name = f"the run's {path.name} {path}"
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise ConfigError(f"{name} does not exist; is RUN_DIR the right folder?") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{name} is a symbolic link; fanout reads the run's files only inside the run "
                              "directory: replace the link with the file it points to") from None
        raise ConfigError(f"{name} cannot be read: {exc.strerror or exc}") from None
    try:
        with read_errors(name, "is RUN_DIR the right folder?"):
            check_regular(name, os.fstat(fd), run_file.bounds)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def scan_lines(fh: BinaryIO, run_file: RunFile, *, first_line: int = 1) -> Iterator[Line | Damage]:
    """Each line from where `fh` stands, as a Line when it holds a record of the file's schema, else a Damage.

    Blank lines (a damaged line blanked in place by set_aside) are skipped.
    """
    offset = fh.tell()
    number = first_line - 1
    while True:
        raw = fh.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        start = offset
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            rest = _skip_to_newline(fh)
            offset += len(raw) + rest
            yield Damage(number, start, offset, False, f"longer than {MAX_LINE_BYTES:,} bytes")
            continue
        offset += len(raw)
        if not raw.strip():
            continue
        problem, data = check_line(raw, run_file)
        if problem is None:  # a whole record, its newline lost or not: a record (the run repairs the ending)
            yield Line(number, start, offset, data)
        else:
            yield Damage(number, start, offset, not raw.endswith(b"\n"), problem)


def _skip_to_newline(fh: BinaryIO) -> int:
    skipped = 0
    while True:
        chunk = fh.readline(1 << 20)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped


def check_line(raw: bytes, run_file: RunFile) -> tuple[str | None, Any]:
    """(None, the record as plain data), or (what is wrong, None): not JSON, or breaking the file's schema."""
    try:
        data = json.loads(raw)  # json's own decoder raises RecursionError past Python's depth: caught below
    except (ValueError, RecursionError):
        return "not JSON", None
    if run_file.schema is None:
        return None, data
    problem = run_file.schema.problem(data)
    return (problem, None) if problem is not None else (None, data)


def read_lines(run_dir: Path, run_file: RunFile, path: Path | None = None) -> LinesRead:
    """Every line of one of the run's line files (`path`, for a family such as inflight/*.jsonl); a file that is
    not there reads as no lines."""
    path = path if path is not None else run_dir / run_file.name
    found = LinesRead(run_file, path)
    opened = open_line_file(path, run_file)
    if opened is None:
        return found
    with opened:
        for item in scan_lines(opened, run_file):
            (found.lines if isinstance(item, Line) else found.damaged).append(item)  # type: ignore[arg-type]
    return found


def damage_note(name: str, damaged: Sequence[Damage], shown: int = 3) -> str | None:
    """One line saying what a reader set aside of a file, naming the first few lines and what is wrong; None
    when nothing was."""
    if not damaged:
        return None
    some = "; ".join(f"line {d.number}: {'torn (a crash mid-write)' if d.torn else d.problem}" for d in damaged[:shown])
    more = f"; and {len(damaged) - shown} more" if len(damaged) > shown else ""
    noun = "line" if len(damaged) == 1 else "lines"
    return f"{len(damaged)} damaged {noun} in {name}, set aside ({some}{more})"


def damage_notes(run_dir: Path, read: dict[str, Sequence[Damage]] | None = None) -> list[str]:
    """A damage_note for every declared log of the run with damaged lines: those in `read` as already read by
    the caller (name -> its damage), every other one read here. A log declared later is covered too."""
    notes = []
    for run_file in logs():
        if "*" in run_file.name:
            continue  # a family of files (in-flight attempts): the start that settles them says what it left
        damaged = (read or {}).get(run_file.name)
        if damaged is None:
            try:
                damaged = read_lines(run_dir, run_file).damaged
            except ConfigError as exc:
                notes.append(str(exc))
                continue
        note = damage_note(run_file.name, damaged)
        if note is not None:
            notes.append(note)
    return notes


@dataclass
class ReadLines:
    """What a streaming read of one line file found (each_record)."""

    path: Path
    skipped: int = 0
    """Lines set aside as not records of the file (a last line without its newline not counted: it is still being
    written, or the next writer repairs it)."""


def each_record(path: Path, run_file: RunFile, found: ReadLines | None = None) -> Iterator[dict[str, Any]]:
    """Each record of a line file that may still grow (a watch's files grow for weeks), streamed rather than read
    whole; `found` counts what was set aside. Nothing when the file is missing; a link, a FIFO or a file over its
    bounds is one ConfigError, as for every run file."""
    opened = open_line_file(path, run_file)
    if opened is None:
        return
    with opened:
        for item in scan_lines(opened, run_file):
            if isinstance(item, Line):
                yield item.data
            elif found is not None and not item.torn:
                found.skipped += 1
