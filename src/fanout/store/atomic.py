"""Writing files that readers must never see half-written: temp file, fsync, rename.

Every human-readable file of a run directory (the manifest, each verdict view)
is written through here, so a crash at any moment leaves the old file or the
new one, never a mix.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fanout.errors import DiskFull
from fanout.yamlio import dump_yaml as dump_yaml  # re-exported: the store's writers take the YAML from here


def write_atomically(path: Path, text: str) -> None:
    """Temp file in the same directory, fsync, rename: readers never see half a file.

    A write that fails (a full disk: DiskFull) takes its temp file with it.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    with removed_on_failure(tmp, path):
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
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
