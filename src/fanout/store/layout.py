"""The names of a run directory's files, in one place (docs/run-directory.md draws them).

Every module that reads or writes a run directory takes its names from here,
so the layout cannot drift between the writer, resume, `fanout status` and
`fanout report`; and every output option of every command asks
`refuse_run_file` first, so none can write over a file of a run, an input the
command or the run reads (compared as files: the same inode under any path or
link), or (without --force) a file the command did not write itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from fanout.base.reading import open_if_regular
from fanout.base.errors import ConfigError

LOG_NAME = "checkpoint.jsonl"
"""The append-only log: the source of truth."""
INDEX_NAME = "checkpoint.index"
"""What resume needs from the log, saved beside it (a cache: may be deleted)."""
MANIFEST_NAME = "manifest.yaml"
"""What the run started with."""
VERDICT_DIR = "verdicts"
"""One YAML view per logged pair."""
SPOOL_NAME = "snapshot.cache"
"""The snapshot's edits on disk, so a resume skips the YAML parse."""
INFLIGHT_DIR = "inflight"
"""One small file per verdict in flight: its chat calls as they happen, so a kill cannot hide what they cost."""
ABANDONED_NAME = "abandoned.jsonl"
"""The cost of attempts that never reached the log (in flight at a kill or a cancel), settled on the next start."""
LOCK_NAME = "run.lock"
"""The PID of the one `fanout run` that owns the directory (the lock itself is on the directory: fanout.store.run_lock)."""
TOOL_CACHE_NAME = "search-cache.sqlite"
"""The search and fetch answers every model of the run shares (fanout.tools.cache), with SQLite's -wal and -shm."""
EVIDENCE_NAME = "evidence.jsonl"
"""Under --evidence shared, one line per investigation of an edit, every judge of it reads (fanout.store.evidence_log)."""
REVIEWS_NAME = "reviews.jsonl"
"""A reviewer's decisions (`fanout review`), appended like the log (fanout.store.reviews); torn tails go to reviews.torn-N.jsonl."""
WATCH_JOURNAL_NAME = "watch.jsonl"
"""`fanout watch`'s journal: each edit it accepted from the stream with the stream position after it (fsynced), and
what became of it (dropped from a full queue, prefiltered, unusable, judged); its torn tails go to watch.torn-N.jsonl."""
WATCH_EDITS_NAME = "watch.edits.jsonl"
"""`fanout watch`'s edits, enriched as `fetch-edits --enrich` writes them, one JSON line each (fsynced) when they are
handed to the engine: the run's input, which the report, the queue and the desk read as a snapshot's."""
WATCH_STATE_NAME = "watch.state.json"
"""What `fanout status` says of a watch: how far behind real time, what waits, what was skipped (replaced)."""
PREFILTER_NAME = "prefilter.jsonl"
"""Under `watch --prefilter revertrisk`, each edit's revert-risk score and whether it went past the jury."""
STREAM_OUTCOMES_NAME = "outcomes.jsonl"
"""Outcomes learnt from the stream as they happen (reverts), one entry of the `fanout outcomes` shape a line."""
_RUN_FILE_PREFIXES = ("checkpoint.", "evidence.", MANIFEST_NAME, SPOOL_NAME, LOCK_NAME, TOOL_CACHE_NAME, ABANDONED_NAME,
                      REVIEWS_NAME, "reviews.torn-", "watch.", PREFILTER_NAME, STREAM_OUTCOMES_NAME)
"""A run's own files by the start of their names: the log, its index and the lines set aside from it too."""


OUR_HEAD_BYTES = 4096
"""How much of an existing output `ours` is shown to tell whether this command wrote it."""


def refuse_run_file(
    path: Path,
    option: str,
    *,
    inputs: Mapping[Path, str] | None = None,
    ours: Callable[[bytes], bool] | None = None,
    force: bool = False,
) -> None:
    """ConfigError when writing `path` (an output option's value) would destroy something it must not.

    Never a file of a run directory, never one of `inputs` (each path with
    what it is, "the run's snapshot"), not even with --force: the data they
    hold is gone once written over. And when `ours` is given, an existing
    file whose first bytes it does not recognise as this command's own output
    is refused unless `force`.
    """
    _refuse_in_run_dir(path, option)
    for source, what in (inputs or {}).items():
        if _same_file(path, source):
            raise ConfigError(f"{option} {path} is {what}, which this command reads and must not write over; "
                              "choose another file")
    if ours is not None and not force:
        _refuse_foreign(path, option, ours)


def _same_file(path: Path, other: Path) -> bool:
    """The same file under any name: one inode (links, hard links, `..`), or one resolved path if either is missing."""
    try:
        return os.path.samefile(path, other)
    except OSError:
        return path.resolve() == other.resolve()


def _refuse_foreign(path: Path, option: str, ours: Callable[[bytes], bool]) -> None:
    try:
        head = _head(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{option} {path} cannot be checked before it is replaced: {exc.strerror or exc}") from None
    if head is None or not ours(head):
        raise ConfigError(f"{option} {path} already exists and this command did not write it; choose another "
                          "file, or pass --force to replace it")


def _head(path: Path) -> bytes | None:
    """The first bytes of a regular file; None for anything else (opened without blocking: a FIFO waits for no one)."""
    opened = open_if_regular(path)
    if opened is None:
        return None
    with opened:
        return opened.read(OUR_HEAD_BYTES)


def _refuse_in_run_dir(path: Path, option: str) -> None:
    target = path.resolve()
    folder = target.parent
    if _is_run_dir(folder) and (target.name.startswith(_RUN_FILE_PREFIXES) or target.name in (VERDICT_DIR, INFLIGHT_DIR)):
        what = f"the run's {target.name}"
    elif folder.name == VERDICT_DIR and _is_run_dir(folder.parent):
        what, folder = "a verdict view", folder.parent
    elif folder.name == INFLIGHT_DIR and _is_run_dir(folder.parent):
        what, folder = f"the run's {INFLIGHT_DIR} files", folder.parent
    else:
        return
    raise ConfigError(f"{option} {path} would write over {what} in the run directory {folder}; choose another file")


def own_folder(run_dir: Path, name: str) -> Path:
    """The run's folder `name` (verdicts/, inflight/), made when missing; ConfigError when it is a symbolic link
    or not a folder. fanout deletes and replaces files in these folders, and through a link it would do so
    wherever the link points: a symlinked inflight/ made it delete files outside the run directory."""
    path = run_dir / name
    try:
        path.mkdir(parents=True)
    except FileExistsError:
        pass
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        raise ConfigError(f"{path} is a symbolic link; fanout writes and deletes the run's files only inside the run "
                          "directory: replace the link with a folder (move what it points to there)")
    if not stat.S_ISDIR(mode):
        raise ConfigError(f"{path} is not a folder; move it away so fanout can keep the run's {name} files there")
    return path


APPENDED_FILES = (LOG_NAME, ABANDONED_NAME, TOOL_CACHE_NAME, WATCH_JOURNAL_NAME, WATCH_EDITS_NAME, PREFILTER_NAME,
                  STREAM_OUTCOMES_NAME)
"""The run's files fanout appends to, cuts or lets SQLite write in place (the others are replaced by a rename)."""


def refuse_linked_files(run_dir: Path) -> None:
    """ConfigError when one of APPENDED_FILES is a symbolic link: through it, a resume appended records to a file
    outside the run directory and cut that file's last line as a torn tail."""
    for name in APPENDED_FILES:
        path = run_dir / name
        if path.is_symlink():
            raise ConfigError(f"{path} is a symbolic link; fanout appends to and repairs the run's files only inside "
                              "the run directory: replace the link with the file it points to")


def _is_run_dir(folder: Path) -> bool:
    return (folder / LOG_NAME).exists() or (folder / MANIFEST_NAME).exists()
