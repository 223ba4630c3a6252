"""Writing files that readers must never see half-written: temp file, fsync, rename.

Every human-readable file of a run directory (the manifest, each verdict view)
is written through here, so a crash at any moment leaves the old file or the
new one, never a mix.
"""

from __future__ import annotations

import errno
import contextlib
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from fanout.base.errors import DiskFull
from fanout.base.yamlio import dump_yaml as dump_yaml  # re-exported: the store's writers take the YAML from here
from fanout.base.yamlio import dump_yaml_utf8 as dump_yaml_utf8


def write_atomically(path: Path, text: str | bytes) -> None:
    """Temp file in the same directory, fsync, rename: readers never see half a file.

    Text is written as UTF-8; bytes as they are (a verdict view comes from
    libyaml already encoded: dump_yaml_utf8). A write that fails (a full
    disk: DiskFull) takes its temp file with it.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    data = text.encode("utf-8") if isinstance(text, str) else text
    with removed_on_failure(tmp, path):
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


@contextmanager
def removed_on_failure(tmp: Path, target: Path) -> Iterator[None]:
    """Delete `tmp` when the block fails; a full disk becomes DiskFull naming `target`, the file that did not fit."""
    try:
        yield
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in DISK_FULL:
            raise DiskFull(target) from exc
        raise


def write_aside(log: Path, data: bytes) -> Path:
    """`data` kept in the first free `STEM.torn-N.jsonl` beside the log `STEM.jsonl`, fsynced; returns its path.

    The file is made anew (O_EXCL, O_NOFOLLOW): a name taken by anything, a
    dangling symlink to a file outside the run included, is skipped, never
    written through.
    """
    stem = log.name.removesuffix(".jsonl")
    n = 1
    while True:
        aside = log.with_name(f"{stem}.torn-{n}.jsonl")
        try:
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            n += 1
            continue
        break
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    return aside


def open_append(path: Path, *, buffering: int = -1) -> BinaryIO:
    """`path` opened for appending, created if missing, never through a symlink (OSError ELOOP for one): a link
    left in the run directory must not make a run append to a file outside it."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    return os.fdopen(fd, "ab", buffering=buffering)


def append_durably(fd: int, line: bytes, offset: int) -> int:
    """Append `line` whole to an unbuffered append-only log open as `fd` (whose end is `offset`), then fsync;
    returns the new end. On a failed write the log is cut back to `offset`, so nothing half-written stays (when
    it cannot be cut, the next start sets the torn tail aside instead), and the error is raised."""
    try:
        written = 0
        while written < len(line):
            written += os.write(fd, line[written:])
        os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, offset)
        raise
    return offset + len(line)


def cut_torn_tail(fd: int, log: Path, whole: Callable[[bytes], bool] = lambda line: True) -> Path | None:
    """Keep what follows the last whole line of the append-only `log` (open as `fd`, read-write) aside, fsynced,
    then cut it off; returns the aside file (write_aside), None when the log ends in a whole line.

    Only the tail can be torn: a single writer appends whole lines, so a line
    without its newline is the write a crash cut short. `whole` may refuse the
    last complete line too (the checkpoint's must parse). Only the tail is
    read, however long the log.
    """
    size = os.fstat(fd).st_size
    if size == 0:
        return None
    end = size if os.pread(fd, 1, size - 1) == b"\n" else _line_start(fd, size)
    cut = end
    if end > 0:
        start = _line_start(fd, end - 1)
        if not whole(os.pread(fd, end - start, start)):
            cut = start
    if cut == size:
        return None
    aside = write_aside(log, os.pread(fd, size - cut, cut))
    os.ftruncate(fd, cut)
    os.fsync(fd)
    return aside


def _line_start(fd: int, before: int) -> int:
    """Offset just after the last newline before offset `before` (0 when there is none), read backwards in chunks."""
    end = before
    while end > 0:
        begin = max(0, end - TAIL_CHUNK)
        cut = os.pread(fd, end - begin, begin).rfind(b"\n")
        if cut >= 0:
            return begin + cut + 1
        end = begin
    return 0


TAIL_CHUNK = 64 * 1024
