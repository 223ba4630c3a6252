"""The names of a run directory's files, in one place (the README's "The run directory" draws them).

Every module that reads or writes a run directory takes its names from here,
so the layout cannot drift between the writer, resume, `fanout status` and
`fanout report`; and every output option of every command asks
`refuse_run_file` first, so none can write over a file of a run.
"""

from __future__ import annotations

from pathlib import Path

from fanout.errors import ConfigError

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
"""Locked by the one `fanout run` that owns the directory (fanout.store.run_lock); the file itself may stay."""
TOOL_CACHE_NAME = "search-cache.sqlite"
"""The search and fetch answers every model of the run shares (fanout.tools.cache), with SQLite's -wal and -shm."""
EVIDENCE_NAME = "evidence.jsonl"
"""Under --evidence shared, one line per investigation of an edit, every judge of it reads (fanout.store.evidence_log)."""
_RUN_FILE_PREFIXES = ("checkpoint.", "evidence.", MANIFEST_NAME, SPOOL_NAME, LOCK_NAME, TOOL_CACHE_NAME, ABANDONED_NAME)
"""A run's own files by the start of their names: the log, its index and the lines set aside from it too."""


def refuse_run_file(path: Path, option: str) -> None:
    """ConfigError when writing `path` (an output option's value) would write over a file of a run directory."""
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


def _is_run_dir(folder: Path) -> bool:
    return (folder / LOG_NAME).exists() or (folder / MANIFEST_NAME).exists()
