"""One process owns a run directory at a time: an OS lock on the run directory itself.

Two `fanout run` on one directory would both run every pair (each paid for
twice) and both save the log's index as if alone. So a run holds an exclusive
`flock` on a descriptor of the directory for as long as it runs. It was once a
lock on the file `run.lock`, and deleting that file while a run worked let a
second run in (7 of 8 pairs logged twice): a new file is a new lock. A
directory cannot be removed while it holds the run's files, and deleting any
file in it leaves the directory's lock as it was. The lock belongs to the open
descriptor, so the kernel drops it when the process ends in any way, `kill -9`
included: nothing left behind ever blocks a resume.

The holder still writes its PID into `run.lock`, for systems without a lock
table; where there is one (Linux's /proc/locks), a second run and
`lock_holder` read the holder's PID from the kernel by the directory's inode,
so the message names the holder even when `run.lock` was deleted. Readers
(`fanout status`, `fanout report`) take no lock.
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
    fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"{run_dir} is in use by another `fanout run` (PID {_holder(run_dir, fd)}); wait for it to finish "
                "or stop it, or pass another --run-dir"
            ) from None
        _write_pid(run_dir)
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


def _write_pid(run_dir: Path) -> None:
    """Say who holds the lock, in a file made anew: never through a symlink someone left in its place.
    On a full disk the lock holds all the same, and the run reports the disk itself."""
    path = run_dir / LOCK_NAME
    try:
        path.unlink(missing_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            os.write(fd, f"{os.getpid()}\n".encode())
        finally:
            os.close(fd)
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise


def _holder(run_dir: Path, dir_fd: int) -> str:
    """The holder's PID as text: from the kernel's table, else as the holder wrote it, else "unknown"."""
    if KERNEL_LOCKS.exists():
        pid = _kernel_holder(os.fstat(dir_fd).st_ino)
        if pid is not None:
            return str(pid)
    return str(_written_pid(run_dir) or "unknown")


def _written_pid(run_dir: Path) -> int | None:
    try:
        fd = os.open(run_dir / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:  # deleted, or not a file fanout wrote
        return None
    try:
        text = os.read(fd, 32).decode("ascii", "replace").strip()
    finally:
        os.close(fd)
    return int(text) if text.isdigit() else None


def lock_holder(run_dir: Path) -> int | None:
    """The PID of the process holding the run's lock now, None when no run holds the directory.

    Read from the kernel's table: a probe with a lock of our own would, for
    that instant, refuse a `fanout run` starting on the directory. Where there
    is no such table, the probe is the only way to ask (0: held, PID not written).
    """
    try:
        if not KERNEL_LOCKS.exists():
            return _probe(run_dir)
        return _kernel_holder(run_dir.stat().st_ino)
    except (FileNotFoundError, NotADirectoryError):  # no directory: no run holds it
        return None


def _kernel_holder(inode: int) -> int | None:
    for line in KERNEL_LOCKS.read_text().splitlines():
        fields = line.split()  # "3: FLOCK  ADVISORY  WRITE 23640 fe:00:2146364 0 EOF"; a waiter's line has "->"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5].rsplit(":", 1)[-1] == str(inode):
            return int(fields[4])
    return None


def _probe(run_dir: Path) -> int | None:
    """A shared lock tried and let go at once; the holder's PID as it wrote it (0 when it has not, or it is gone)."""
    fd = os.open(run_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _written_pid(run_dir) or 0
    finally:
        os.close(fd)
    return None
