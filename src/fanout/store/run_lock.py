"""One process owns a run directory at a time: an OS lock on `RUN_DIR/run.lock`.

Two `fanout run` on one directory would both run every pair (each paid for
twice) and both save the log's index as if alone. So a run holds an exclusive
`flock` on the lock file for as long as it runs. The lock belongs to the open
file, so the kernel drops it when the process ends in any way, `kill -9`
included: the file left behind is just a file, and never blocks a resume.
The holder writes its PID into it, so a second run can say who holds it.
Readers (`fanout status`, `fanout report`) take no lock; `lock_holder` tells
them whether a run holds the directory now.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

KERNEL_LOCKS = Path("/proc/locks")
"""Linux's table of the locks held now: read, it answers who holds a lock without taking one."""

from fanout.errors import ConfigError
from fanout.store.atomic import DISK_FULL
from fanout.store.layout import LOCK_NAME


@contextmanager
def hold_run_lock(run_dir: Path) -> Iterator[None]:
    """Own `run_dir` until the block ends; ConfigError at once when another process owns it.

    A run that is refused before it writes anything (the pre-flight finds a
    bad key, a price missing for --max-cost) leaves no directory behind it
    had to create just to hold the lock.
    """
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(run_dir / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"{run_dir} is in use by another `fanout run` (PID {_holder(fd)}); wait for it to finish "
                "or stop it, or pass another --run-dir"
            ) from None
        _write_pid(fd)
        try:
            yield
        except BaseException:
            if created:
                _remove_if_only_the_lock(run_dir)
            raise
    finally:
        os.close(fd)  # closing the only descriptor releases the lock


def _remove_if_only_the_lock(run_dir: Path) -> None:
    if [p.name for p in run_dir.iterdir()] == [LOCK_NAME]:
        (run_dir / LOCK_NAME).unlink()
        run_dir.rmdir()


def _write_pid(fd: int) -> None:
    """Say who holds the lock; on a full disk the lock holds all the same, and the run reports the disk itself."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise


def _holder(fd: int) -> str:
    """The PID the holder wrote, as text ("unknown" when it has not written it yet)."""
    text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    return text if text.isdigit() else "unknown"


def lock_holder(run_dir: Path) -> int | None:
    """The PID of the process holding the run's lock now, None when no run holds the directory.

    Read from the kernel's table: a probe with a lock of our own would, for
    that instant, refuse a `fanout run` starting on the directory. Where there
    is no such table, the probe is the only way to ask.
    """
    lock = run_dir / LOCK_NAME
    try:
        if not KERNEL_LOCKS.exists():
            return _probe(lock) if lock.exists() else None
        inode = lock.stat().st_ino
        table = KERNEL_LOCKS.read_text()
    except FileNotFoundError:  # no lock file: no run ever held the directory
        return None
    for line in table.splitlines():
        fields = line.split()  # "3: FLOCK  ADVISORY  WRITE 23640 fe:00:2146364 0 EOF"; a waiter's line has "->"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(inode):
            return int(fields[4])
    return None


def _probe(lock: Path) -> int | None:
    """A shared lock tried and let go at once; the holder's PID as it wrote it (0 when it has not yet)."""
    fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        return int(holder) if holder.isdigit() else 0
    finally:
        os.close(fd)
    return None
