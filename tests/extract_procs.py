"""Extraction processes read from /proc: the workers and zygotes an owner process has, for the extraction tests.

An open pool on Linux forks its workers from a zygote (a child of the owner whose command line names
fanout.tools.extract_zygote), so a worker is a grandchild there; a worker started alone (no open pool, or
no pidfds) is a child whose command line names fanout.tools.extract_worker.
"""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
WORKER = b"fanout.tools.extract_worker"
ZYGOTE = b"fanout.tools.extract_zygote"


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat after the command name (state first), None when the process is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def alive(pid: int) -> bool:
    fields = stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")  # a zombie no longer runs; its parent may reap it late


def children_of(parent: int, marker: bytes) -> list[int]:
    """Living children of `parent` whose command line holds `marker`.

    Each process's stat is read once, with os.open and os.read: the tests poll this every 10 to 50 ms, and the
    scan of /proc through pathlib (two reads of each stat) cost 11 ms of CPU on a machine of 116 processes, now 3."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = _read(f"/proc/{name}/stat").rsplit(b")", 1)[1].split(None, 2)
            if int(fields[1]) == parent and fields[0] not in (b"Z", b"X") and marker in _read(f"/proc/{name}/cmdline"):
                found.append(int(name))
        except (OSError, IndexError, ValueError):
            continue  # gone while being read
    return sorted(found)


def _read(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)


def zygotes_of(owner: int) -> list[int]:
    return children_of(owner, ZYGOTE)


def workers_of(owner: int) -> list[int]:
    """The owner's workers: started alone (its children) or forked (its zygotes' children)."""
    forked = [pid for zygote in zygotes_of(owner) for pid in children_of(zygote, ZYGOTE)]
    return sorted(children_of(owner, WORKER) + forked)


def cpu_s(pid: int) -> float:
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS if fields else 0.0
