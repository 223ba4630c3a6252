"""The names of a run directory's files, in one place (the README's "The run directory" draws them).

Every module that reads or writes a run directory takes its names from here,
so the layout cannot drift between the writer, resume, `fanout status` and
`fanout report`.
"""

from __future__ import annotations

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
LOCK_NAME = "run.lock"
"""Locked by the one `fanout run` that owns the directory (fanout.store.run_lock); the file itself may stay."""
