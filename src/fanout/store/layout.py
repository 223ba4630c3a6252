"""The files of a run directory, each declared once: its name, its kind, its record schema and its bounds.

Every module that reads or writes a run directory takes its names from here,
so the layout cannot drift between the writer, resume, `fanout status` and
`fanout report`. RUN_FILES declares every file with what it is:

    log       append-only, one JSON record a line, its schema checked on every
              read; a line that breaks it is set aside, counted and named
              (fanout.store.lines), never used
    attempts  a folder of small line files (in-flight verdicts), read as logs
    aside     lines set aside from a log (torn tails, damaged lines): kept for
              a person, never read back
    view      rebuilt from a log when missing (the YAML verdicts)
    manifest  what the run started with (YAML, checked field by field)
    cache     may be deleted at any time; rebuilt (the index, the spool, the
              tool cache)
    lock      the PID of the run that owns the directory

A new run file is one more `RunFile` in RUN_FILES (or `declare_run_file` at
run time): the output writer then refuses to write over it
(fanout.store.outputs), a run refuses it as a symbolic link when it appends
to it, the readers' damage counts cover it when it is a log, and
docs/run-directory.md's table lists it (`run_file_table`, kept current by a test).
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from fanout.base.errors import ConfigError
from fanout.base.reading import SIDE_FILE_BOUNDS, Bounds
from fanout.base.records import EVIDENCE_LINE, TEAM_LINE, VERDICT_LINE
from fanout.store.line_schemas import (
    ABANDONED_LINE, ATTEMPT_LINE, PREFILTER_LINE, PREPARED_LINE, REVIEW_LINE, STREAM_OUTCOME_LINE, WATCH_EDIT_LINE,
    WATCH_JOURNAL_LINE,
)


class LineSchema(Protocol):
    """What a line of a log must be (fanout.base.schema.Schema, or one of several: line_schemas.Either)."""

    @property
    def what(self) -> str: ...

    def problem(self, data: Any) -> str | None: ...


class Kind(Enum):
    LOG = "append-only log"
    ATTEMPTS = "in-flight lines"
    ASIDE = "lines set aside"
    VIEW = "view"
    MANIFEST = "manifest"
    CACHE = "cache"
    LOCK = "lock"


LINE_BOUNDS = SIDE_FILE_BOUNDS._replace(
    kind="run file", max_bytes=64 << 30, split_hint="a log of a million verdicts is about 10 GB",
    special_hint="fanout writes only regular files there; move it out of the run directory",
)
"""A run's log when read: a regular file (not a link, a FIFO or a device) of at most 64 GiB."""
MAX_LINE_BYTES = 64 << 20
"""One line of a log: a verdict with its whole transcript is a few hundred KB; a longer line is damaged."""


@dataclass(frozen=True)
class RunFile:
    """One file (or, with a glob, a family of files) of a run directory."""

    name: str
    """Its path inside the run directory; `*` stands for any part (`verdicts/*.yaml`)."""
    kind: Kind
    what: str
    """What it holds and who writes it, for the docs and the messages."""
    schema: LineSchema | None = None
    """Each line's record (logs and attempts): checked by every reader."""
    bounds: Bounds = LINE_BOUNDS
    appended: bool = False
    """fanout appends to it, cuts its torn tail or lets SQLite write it in place: never through a link."""
    example: Mapping[str, Any] | None = None
    """A line as fanout writes it (a log's): the docs show it, and the generated tests damage it field by field."""

    def matches(self, relative: str) -> bool:
        return fnmatch.fnmatchcase(relative, self.name)


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
TEAM_NAME = "team.jsonl"
"""Under --evidence team, one line per finished step of a research team (planner, worker, aggregator), appended and
fsynced as it finishes, so a resume never pays for a step twice (fanout.store.team_log)."""
REVIEWS_NAME = "reviews.jsonl"
"""A reviewer's decisions (`fanout review`), appended like the log (fanout.store.reviews); torn tails go to reviews.torn-N.jsonl."""
PREPARED_NAME = "prepared.jsonl"
"""The items a workload's preparation made before any is judged (the claims workload: one line per text, its
claims and what splitting it cost), appended and fsynced like the log (fanout.store.prepared); torn tails go to
prepared.torn-N.jsonl."""
INPUT_LABELS_NAME = "input-labels.yaml"
"""Truth labels the workload's input carried, keyed by item (the claims workload: its texts' labelled claims
matched to the claims extracted), rewritten after each preparation; the report reads it when no labels are given."""
QUARANTINE_NAME = "quarantine.json"
"""What `fanout run --gate` held back: each text whose committee factuality is below the gate, with its refuted
and unsure claims and their sources, for a pipeline to act on (fanout.report.gate)."""

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
WATCH_BOUNDS = LINE_BOUNDS._replace(
    max_bytes=16 << 30, split_hint="a watch writes a line of under a kilobyte per edit (its edits file about 10 KB); "
    "start a new --run-dir for a new period")
"""A watch's files: at most 16 GiB (a month of the whole stream's accepted edits)."""
_T = "2026-11-22T10:00:00Z"
RUN_FILES: dict[str, RunFile] = {f.name: f for f in (
    RunFile(LOG_NAME, Kind.LOG, "one verdict record per finished (edit, model) pair; the source of truth",
            VERDICT_LINE, LINE_BOUNDS._replace(special_hint="fanout writes its log as a regular file; is RUN_DIR a run?"),
            appended=True, example={
                "model": "m/a", "edit_rcid": 1, "edit_revid": 2, "qid": "Q1", "property": "P31",
                "diff_type": "value_changed", "timestamp": _T, "status": "ok", "verdict": "plausible",
                "cost_usd": 0.01, "cost_source": "reported", "confidence": 0.8, "evidence_id": None}),
    RunFile(EVIDENCE_NAME, Kind.LOG, "under --evidence shared, one investigation of an edit per line (team: the pooled evidence)",
            EVIDENCE_LINE, appended=True, example={
                "evidence_id": "1-1", "edit_rcid": 1, "investigator": "m/a", "status": "ok", "timestamp": _T,
                "cost_usd": 0.5, "cost_source": "reported"}),
    RunFile(REVIEWS_NAME, Kind.LOG, "a reviewer's decisions (`fanout review`), the latest of an edit standing",
            REVIEW_LINE, LINE_BOUNDS._replace(max_bytes=64 << 20, split_hint="is it a reviews file of `fanout review`?"),
            appended=True, example={"rcid": 1, "decision": "accept", "note": "", "reviewer": "ana", "time": _T}),
    RunFile(TEAM_NAME, Kind.LOG, "under --evidence team, one finished step of a team's research per line",
            TEAM_LINE, appended=True, example={
                "edit_rcid": 1, "step": "plan-1", "role": "planner", "model": "m/a", "round": 1, "status": "ok",
                "timestamp": _T, "finished_ns": 1, "cost_usd": 0.01, "cost_source": "reported"}),
    RunFile(PREPARED_NAME, Kind.LOG, "a workload's prepared items (the claims workload: a text's claims), one unit a line",
            PREPARED_LINE, appended=True, example={
                "unit": "t1", "model": "m/a", "status": "ok", "cost_usd": 0.002, "cost_source": "reported",
                "items": []}),
    RunFile(WATCH_JOURNAL_NAME, Kind.LOG, "`fanout watch`'s journal: each accepted edit with the stream position after "
            "it, and what became of it", WATCH_JOURNAL_LINE, WATCH_BOUNDS, appended=True,
            example={"accepted": 1, "event": {}, "position": {}}),
    RunFile(WATCH_EDITS_NAME, Kind.LOG, "`fanout watch`'s edits, enriched, one a line: the run's input",
            WATCH_EDIT_LINE, WATCH_BOUNDS, appended=True, example={"rcid": 1, "revid": 2, "title": "Q1"}),
    RunFile(PREFILTER_NAME, Kind.LOG, "under `watch --prefilter revertrisk`, each edit's score and whether it passed",
            PREFILTER_LINE, WATCH_BOUNDS, appended=True,
            example={"rcid": 1, "revid": 2, "qid": "Q1", "score": 0.2, "threshold": 0.5, "passed": False}),
    RunFile(STREAM_OUTCOMES_NAME, Kind.LOG, "outcomes learnt from the stream as they happen (reverts)",
            STREAM_OUTCOME_LINE, WATCH_BOUNDS, appended=True,
            example={"rcid": 1, "revid": 2, "qid": "Q1", "outcome": "reverted"}),
    RunFile(ABANDONED_NAME, Kind.LOG, "the settled cost of attempts cut off by a stop", ABANDONED_LINE,
            appended=True, example={"edit_rcid": 1, "model": "m/a", "attempt": "1-ab.jsonl@1", "calls": 1, "cut_off": 0,
                                    "cost_usd": 0.01, "cost_source": "reported", "response_ids": [], "settled_at": _T}),
    RunFile(f"{INFLIGHT_DIR}/*.jsonl", Kind.ATTEMPTS, "a verdict in flight: a header, then one line per chat call",
            ATTEMPT_LINE, LINE_BOUNDS._replace(max_bytes=1 << 20),
            example={"edit_rcid": 1, "model": "m/a", "log_bytes": 0, "started_ns": 1}),
    RunFile("checkpoint.torn-*.jsonl", Kind.ASIDE, "torn tails and damaged lines set aside from the log"),
    RunFile("evidence.torn-*.jsonl", Kind.ASIDE, "torn tails and damaged lines set aside from the evidence log"),
    RunFile("reviews.torn-*.jsonl", Kind.ASIDE, "torn tails set aside from the reviews"),
    RunFile("team.torn-*.jsonl", Kind.ASIDE, "torn tails and damaged lines set aside from the team's steps"),
    RunFile("prepared.torn-*.jsonl", Kind.ASIDE, "torn tails set aside from the prepared items"),
    RunFile("watch.torn-*.jsonl", Kind.ASIDE, "torn tails set aside from the watch's journal"),
    RunFile("watch.edits.torn-*.jsonl", Kind.ASIDE, "torn tails set aside from the watch's edits"),
    RunFile("prefilter.torn-*.jsonl", Kind.ASIDE, "torn tails set aside from the prefilter's decisions"),
    RunFile("outcomes.torn-*.jsonl", Kind.ASIDE, "torn tails set aside from the stream's outcomes"),
    RunFile(WATCH_STATE_NAME, Kind.VIEW, "what `fanout status` says of a watch (replaced as it runs)"),
    RunFile(f"{VERDICT_DIR}/*.yaml", Kind.VIEW, "one YAML view per logged pair, rebuilt from the log when missing"),
    RunFile(INPUT_LABELS_NAME, Kind.VIEW, "truth labels the workload's input carried, rewritten after each preparation"),
    RunFile(QUARANTINE_NAME, Kind.VIEW, "what `fanout run --gate` held back, rewritten by each gated run"),
    RunFile(MANIFEST_NAME, Kind.MANIFEST, "what the run started with: snapshot, models, prompt, pinned settings"),
    RunFile(INDEX_NAME, Kind.CACHE, "what resume needs from the log, saved beside it"),
    RunFile(SPOOL_NAME, Kind.CACHE, "the snapshot's items on disk, so a resume skips the YAML parse"),
    RunFile(TOOL_CACHE_NAME, Kind.CACHE, "the search and fetch answers the run's models share (SQLite)",
            appended=True),
    RunFile(f"{TOOL_CACHE_NAME}-*", Kind.CACHE, "SQLite's journal files of the tool cache"),
    RunFile(LOCK_NAME, Kind.LOCK, "the PID of the `fanout run` that owns the directory"),
)}
"""Every file of a run directory. A new one is one more entry here (with its schema, when it is a log)."""
RUN_FOLDERS = (VERDICT_DIR, INFLIGHT_DIR)
"""Folders of the run's own files: fanout deletes and replaces files in them."""


def declare_run_file(run_file: RunFile) -> RunFile:
    """Add a run file at run time (a plugin's, or a test's); everything derived from RUN_FILES covers it."""
    RUN_FILES[run_file.name] = run_file
    return run_file


def run_file(name: str) -> RunFile:
    return RUN_FILES[name]


def run_file_of(relative: str) -> RunFile | None:
    """The declaration a path inside a run directory falls under (its temporary `.NAME.tmp` too), if any."""
    folder, _, base = relative.rpartition("/")
    candidates = [relative]
    if base.startswith(".") and base.endswith(".tmp"):  # a temp file on its way to being the file
        candidates.append(f"{folder}/{base[1:].split('.tmp')[0]}".lstrip("/"))
        candidates.append(f"{folder}/{'.'.join(base[1:].split('.')[:2])}".lstrip("/"))
    return next((f for c in candidates for f in RUN_FILES.values() if f.matches(c)), None)


def _line_text(schema: LineSchema | None) -> str:
    if schema is None:
        return ""
    kinds = getattr(schema, "kinds", (schema,))
    return "; or ".join(f"{k.what}: " + ", ".join(f"`{name}`" for name in getattr(k, "required", ())) for k in kinds)


def logs() -> Iterator[RunFile]:
    """The run's line files whose every line a reader checks (logs, then in-flight attempts)."""
    return (f for f in RUN_FILES.values() if f.schema is not None)


def run_file_table() -> str:
    """docs/run-directory.md's table of the run's files, made from RUN_FILES (a test keeps the page current)."""
    rows = ["| File | Kind | What it holds | Each line (its required fields) |", "|---|---|---|---|"]
    for f in RUN_FILES.values():
        rows.append(f"| `{f.name}` | {f.kind.value} | {f.what} | {_line_text(f.schema)} |")
    return "\n".join(rows) + "\n"


def run_file_at(path: Path) -> tuple[Path, str] | None:
    """The run directory and what `path` is in it ("the run's checkpoint.jsonl", "a verdict view") when `path`
    (resolved: links and `..` followed) is a file of a run, declared in RUN_FILES or in one of RUN_FOLDERS."""
    target = path.resolve()
    for depth, folder in enumerate(target.parents):
        if depth > 1 or not is_run_dir(folder):
            continue
        relative = target.relative_to(folder).as_posix()
        top = relative.split("/")[0]
        if relative in RUN_FOLDERS:
            return folder, f"the run's {relative}"
        if top == VERDICT_DIR:
            return folder, "a verdict view"
        if top == INFLIGHT_DIR:
            return folder, f"the run's {INFLIGHT_DIR} files"
        if run_file_of(relative) is not None:
            return folder, f"the run's {target.name}"
    return None


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


def appended_files() -> tuple[str, ...]:
    """The run's files fanout appends to, cuts or lets SQLite write in place (the others are replaced by a rename)."""
    return tuple(f.name for f in RUN_FILES.values() if f.appended)


APPENDED_FILES = appended_files()
"""As declared when fanout starts (appended_files() for one declared since)."""


def refuse_linked_files(run_dir: Path) -> None:
    """ConfigError when one of the appended files is a symbolic link: through it, a resume appended records to a
    file outside the run directory and cut that file's last line as a torn tail."""
    for name in appended_files():
        path = run_dir / name
        if path.is_symlink():
            raise ConfigError(f"{path} is a symbolic link; fanout appends to and repairs the run's files only inside "
                              "the run directory: replace the link with the file it points to")


def is_run_dir(folder: Path) -> bool:
    """A folder holding a run: its log or its manifest."""
    return (folder / LOG_NAME).exists() or (folder / MANIFEST_NAME).exists()
