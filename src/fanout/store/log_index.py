"""What resume needs to know about the checkpoint log, in little memory and found fast.

Resume needs, per (edit_rcid, model), the status, cost and view file name of
the latest line; progress needs the counts, and the spend of every line (a
retried pair's earlier attempts were paid for too). A million-line log is about 12 GB
(a line carries the whole record), so reading it all at every resume is not an
option, and neither is a Python object per line (about 400 bytes each).

So the index keeps its lines in arrays (about 30 bytes a line) plus one small
dict per model from rcid to the latest line (about 100 bytes a pair), and the
checkpoint writer saves it next to the log (`checkpoint.index`, a cache: it
may be deleted at any time). A resume loads the saved index, checks it still
describes the log (the log is at least as long, the last line and a sample of
others carry the keys the index says), and parses only the lines written
after it was saved. Without a usable index, the whole log is scanned, each
line checked whole against the verdict record's schema (fanout.store.lines):
a line that breaks it (a verdict of "bogus", a confidence of 2) is damaged,
reported by number, set aside by the run, and its pair runs again.

    checkpoint.index: one JSON header line, then the arrays (rcid int64,
    model uint16, status uint8, cost float64, file-name stem uint32, line end
    int64), then the file-name stems, newline-separated.
"""

from __future__ import annotations

import json
import os
import sys
import time
from array import array
from collections import Counter
from collections.abc import Iterator, KeysView, Mapping
from dataclasses import dataclass
from itertools import compress
from pathlib import Path
from typing import Any, BinaryIO

from fanout.base.reading import SNAPSHOT_BOUNDS, open_regular
from fanout.base.errors import ConfigError
from fanout.store.atomic import removed_on_failure
from fanout.store.layout import INDEX_NAME, LOG_NAME, VERDICT_DIR, run_file
from fanout.store.lines import Damage, Line, open_line_file, scan_lines
from fanout.base.records import STATUSES, legacy_model_slug, model_slug, read_line_key, verdict_file_name

INDEX_BOUNDS = SNAPSHOT_BOUNDS._replace(kind="index")
"""The saved index: a regular file of at most 1 GiB (about 30 bytes a line of the log); else rebuilt from the log."""
LOG_BOUNDS = SNAPSHOT_BOUNDS._replace(kind="run log", max_bytes=64 << 30,
                                     split_hint="a log of a million verdicts is about 10 GB",
                                     special_hint="fanout writes its log as a regular file; is RUN_DIR a run?")
"""The log, when read: a regular file (a FIFO there would block the open, /dev/zero be read for ever)."""
INDEX_HEADER_LIMIT = 1 << 20
"""Its first line, the JSON header, is read up to this many bytes (it names the models and the views)."""
FORMAT = "fanout-log-index"
VERSION = 1
COST_UNKNOWN = 0x80
"""Status byte flag: the line's cost_usd is null (the cost array then holds 0.0)."""
COST_ESTIMATED = 0x40
"""Status byte flag: the line's cost is estimated from tokens and prices (cost_source `estimated`)."""
COST_PARTIAL = 0x20
"""Status byte flag: the line's cost_usd counts only part of what it cost (cost_source `unknown`)."""
STATUS_MASK = 0x1F
"""The status id in a status byte, without the cost flags."""
SAMPLED_LINES = 16
"""Lines besides the last whose keys are checked against the log before a saved index is trusted."""
VIEW_NAMES = 2
"""How view file names are made (2: the model's slug carries its id's hash); a saved index of other names has
its views checked again, so resume renames the views of an older run (restore_missing_views)."""
RACY_NS = 30_000_000
"""A directory time this close to now may still change within the same clock tick; wait it out."""


DamagedLine = Damage
"""A line of the log that is not a verdict record (fanout.store.lines.Damage): skipped, set aside by the next run."""


@dataclass
class LogEntry:
    """What resume needs to know about a logged pair, without the whole record."""

    status: str
    cost_usd: float | None
    file_name: str
    cost_source: str | None = None
    """estimated and unknown are kept; reported and generation read back as None (both are the endpoint's own figure)."""


class LogIndex:
    """The latest entry per (edit_rcid, model), plus what repair set aside.

    `entries` reads like the dict it once was ({(rcid, model): LogEntry}),
    grouped by model. `views_verified` is True once every line's YAML view is
    known to exist (set by restore_missing_views, kept by the writer).
    """

    def __init__(self) -> None:
        self.lines = 0
        self.spent_usd = 0.0
        """Spend of every line, superseded attempts included: each attempt cost money (running total)."""
        self.estimated_usd = 0.0
        """The part of spent_usd that is estimated from tokens and prices."""
        self.unknown_cost_lines = 0
        """Lines whose cost is unknown, wholly or in part."""
        self.views_verified = False
        self.saved_lines = 0
        """Lines covered by the saved index this one was loaded from (0: none)."""
        self.damaged: list[DamagedLine] = []
        """Lines of the log this read skipped because they are not records (fanout.store.checkpoint sets them aside)."""
        self._models: list[str] = []
        self._model_ids: dict[str, int] = {}
        self._slugs: list[str] = []
        self._statuses: list[str] = list(STATUSES)
        self._status_ids: dict[str, int] = {s: i for i, s in enumerate(STATUSES)}
        self._latest: list[dict[int, int]] = []
        self._heads: list[str] = []
        self._head_ids: dict[str, int] = {}
        self._rcid = array("q")
        self._model = array("H")
        self._status = bytearray()
        self._cost = array("d")
        self._head = array("I")
        self._end = array("q")
        self._unplaced = 0
        """Lines put without their place in the log (only ever by hand); such an index is not saved."""

    @property
    def entries(self) -> Mapping[tuple[int, str], LogEntry]:
        return _Entries(self)

    @property
    def models(self) -> list[str]:
        """The models with a line in the log, in the order first logged."""
        return list(self._models)

    def put(self, key: tuple[int, str], entry: LogEntry, end: int = -1) -> LogEntry | None:
        """Record the latest entry for a pair (its line ending at byte `end` of the log); returns the one it replaces."""
        rcid, model = key
        model_id = self._model_id(model)
        latest = self._latest[model_id]
        position = latest.get(rcid)
        previous = self._entry_at(position) if position is not None else None
        latest[rcid] = self._append(rcid, model_id, entry, end)
        self.spent_usd += entry.cost_usd or 0.0
        self.estimated_usd += (entry.cost_usd or 0.0) if entry.cost_source == "estimated" else 0.0
        self.unknown_cost_lines += entry.cost_usd is None or entry.cost_source == "unknown"
        self.lines += 1
        return previous

    def forget(self, key: tuple[int, str]) -> LogEntry | None:
        """Treat a pair as not logged (a resume then asks it again); returns its latest entry. Its lines stay in
        the log and their spend counted: a new line for the pair supersedes them as a retry's does."""
        rcid, model = key
        model_id = self._model_ids.get(model)
        position = self._latest[model_id].pop(rcid, None) if model_id is not None else None
        return None if position is None else self._entry_at(position)

    def done_count(self, retry_statuses: frozenset[str]) -> int:
        """How many pairs resume skips (logged with a status that is a result), without a tuple per pair."""
        return sum(len(self.done_rcids(model, retry_statuses)) for model in self._models)

    def done_rcids(self, model: str, retry_statuses: frozenset[str]) -> set[int]:
        """The rcids resume skips for one model, without an object per pair."""
        model_id = self._model_ids.get(model)
        if model_id is None:
            return set()
        retry = {i for i, s in enumerate(self._statuses) if s in retry_statuses}
        retry_codes = {i | flags for i in retry for flags in range(0, 0x100, STATUS_MASK + 1)}
        latest = self._latest[model_id]
        # map/compress keep the loop over a million pairs in C (a set comprehension took 0.65 s)
        again = compress(latest.keys(), map(retry_codes.__contains__, map(self._status.__getitem__, latest.values())))
        return set(latest.keys()).difference(again)

    def logged_rcids(self, model: str) -> KeysView[int]:
        """Every rcid logged for one model (a view: nothing is copied)."""
        model_id = self._model_ids.get(model)
        return self._latest[model_id].keys() if model_id is not None else {}.keys()

    def rcids_with_status(self, model: str, statuses: frozenset[str]) -> set[int]:
        """The rcids of one model whose latest line has one of these statuses (few, usually: what --retry runs again)."""
        model_id = self._model_ids.get(model)
        if model_id is None:
            return set()
        wanted = {i for i, s in enumerate(self._statuses) if s in statuses}
        codes = {code for code in range(256) if code & STATUS_MASK in wanted}  # any cost flags
        latest = self._latest[model_id]
        return set(compress(latest.keys(), map(codes.__contains__, map(self._status.__getitem__, latest.values()))))

    def counts(self) -> dict[str, Counter[str]]:
        """Per model, the status counts of the latest entries."""
        result = {}
        for model_id, model in enumerate(self._models):
            codes = Counter(map(self._status.__getitem__, self._latest[model_id].values()))
            statuses: Counter[str] = Counter()
            for code, n in codes.items():
                statuses[self._statuses[code & STATUS_MASK]] += n
            result[model] = statuses
        return result

    def latest_end(self, key: tuple[int, str]) -> int | None:
        """Where the latest line of a pair ends in the log (None: not logged, or its place is unknown)."""
        rcid, model = key
        model_id = self._model_ids.get(model)
        position = self._latest[model_id].get(rcid) if model_id is not None else None
        if position is None or self._end[position] < 0:
            return None
        return self._end[position]

    def latest_span(self, key: tuple[int, str]) -> tuple[int, int] | None:
        """Where the latest line of a pair sits in the log (start, end); None: not logged, or its place is unknown."""
        rcid, model = key
        model_id = self._model_ids.get(model)
        position = self._latest[model_id].get(rcid) if model_id is not None else None
        return self.span(position) if position is not None else None

    def latest_positions(self, since: int = 0) -> Iterator[int]:
        """Lines that hold the latest record of their pair, from line `since` on."""
        for latest in self._latest:
            for position in latest.values():
                if position >= since:
                    yield position

    def file_name_at(self, position: int) -> str:
        return self._file_name(position)

    def legacy_file_name_at(self, position: int) -> str | None:
        """The name the view of line `position` had before VIEW_NAMES 2 (None for a name of another shape)."""
        head = self._heads[self._head[position]]
        if head.startswith("\0"):
            return None
        return f"{head}-{self._rcid[position]}-{legacy_model_slug(self._models[self._model[position]])}.yaml"

    def span(self, position: int) -> tuple[int, int] | None:
        """Where line `position` sits in the log (start, end), when known."""
        end = self._end[position]
        if end < 0:
            return None
        start = self._end[position - 1] if position > 0 else 0
        return (start, end) if start >= 0 else None

    @property
    def log_bytes(self) -> int:
        """Bytes of the log the index covers (-1 when some line's place is unknown)."""
        if not self.lines:
            return 0
        return self._end[-1] if not self._unplaced else -1

    # --- storage ---------------------------------------------------------------------

    def _model_id(self, model: str) -> int:
        model_id = self._model_ids.get(model)
        if model_id is None:
            model_id = self._model_ids[model] = len(self._models)
            self._models.append(model)
            self._slugs.append(model_slug(model))
            self._latest.append({})
        return model_id

    def _status_id(self, status: str) -> int:
        return _intern(self._status_ids, self._statuses, status)

    def _head_id(self, head: str) -> int:
        return _intern(self._head_ids, self._heads, head)

    def _append(self, rcid: int, model_id: int, entry: LogEntry, end: int) -> int:
        position = len(self._status)
        tail = f"-{rcid}-{self._slugs[model_id]}.yaml"
        name = entry.file_name
        head = name[: -len(tail)] if name.endswith(tail) and "\n" not in name else "\0" + name
        try:
            self._rcid.append(rcid)
        except OverflowError:  # an rcid past int64 (never from Wikidata): keep them as ints, do not save
            self._rcid = [*self._rcid, rcid]  # type: ignore[assignment]
        self._model.append(model_id)
        self._status.append(self._status_id(str(entry.status)) | _cost_flags(entry))
        self._cost.append(0.0 if entry.cost_usd is None else entry.cost_usd)
        self._head.append(self._head_id(head))
        self._end.append(end)
        self._unplaced += end < 0
        return position

    def _entry_at(self, position: int) -> LogEntry:
        code = self._status[position]
        cost = None if code & COST_UNKNOWN else self._cost[position]
        source = "estimated" if code & COST_ESTIMATED else "unknown" if code & COST_PARTIAL else None
        return LogEntry(self._statuses[code & STATUS_MASK], cost, self._file_name(position), source)

    def _total_costs(self) -> None:
        """spent_usd, estimated_usd and unknown_cost_lines from the arrays (a saved index, in C: milliseconds)."""
        self.spent_usd = sum(self._cost, 0.0)
        self.estimated_usd = sum(compress(self._cost, self._status.translate(_ESTIMATED_FLAG)), 0.0)
        self.unknown_cost_lines = self._status.translate(_UNKNOWN_FLAGS).count(1)

    def _file_name(self, position: int) -> str:
        head = self._heads[self._head[position]]
        if head.startswith("\0"):
            return head[1:]
        return f"{head}-{self._rcid[position]}-{self._slugs[self._model[position]]}.yaml"


def _cost_flags(entry: LogEntry) -> int:
    if entry.cost_usd is None:
        return COST_UNKNOWN
    return {"estimated": COST_ESTIMATED, "unknown": COST_PARTIAL}.get(str(entry.cost_source), 0)


_ESTIMATED_FLAG = bytes(int(bool(code & COST_ESTIMATED)) for code in range(256))
_UNKNOWN_FLAGS = bytes(int(bool(code & (COST_UNKNOWN | COST_PARTIAL))) for code in range(256))


class _Entries(Mapping[tuple[int, str], LogEntry]):
    def __init__(self, index: LogIndex) -> None:
        self._index = index

    def __getitem__(self, key: tuple[int, str]) -> LogEntry:
        rcid, model = key
        model_id = self._index._model_ids.get(model)
        if model_id is None:
            raise KeyError(key)
        return self._index._entry_at(self._index._latest[model_id][rcid])

    def __iter__(self) -> Iterator[tuple[int, str]]:
        for model, latest in zip(self._index._models, self._index._latest):
            for rcid in latest:
                yield (rcid, model)

    def __len__(self) -> int:
        return sum(len(latest) for latest in self._index._latest)


# --- reading the log ---------------------------------------------------------------------

def read_index(path: Path) -> LogIndex:
    """Index the log: from its saved index and the lines after it when that fits the log, else from every line."""
    index = _load_saved(path.parent / INDEX_NAME, path)
    if index is None:
        index = LogIndex()
    if not path.exists():
        return index
    with open_log(path) as fh:
        fh.seek(max(index.log_bytes, 0))
        _scan(fh, index, first_line=index.lines + 1)
    return index


def open_log(path: Path) -> BinaryIO:
    """The log opened for reading once it is known to be a regular file, not a link; else one ConfigError."""
    opened = open_line_file(path, run_file(LOG_NAME), missing_ok=False)
    assert opened is not None
    return opened


def _scan(fh: BinaryIO, index: LogIndex, *, first_line: int) -> None:
    """Every line from where `fh` stands, each checked whole against the verdict record's schema (a line whose
    key is fine but whose verdict is "bogus" is damaged too: set aside, and its pair runs again)."""
    for item in scan_lines(fh, run_file(LOG_NAME), first_line=first_line):
        if isinstance(item, Line):
            index.put(*_entry(item.data), item.end)
        else:
            index.damaged.append(item)


def _entry(data: dict[str, Any]) -> tuple[tuple[int, str], LogEntry]:
    """The key and what resume needs of a checked record, without building the record."""
    name = verdict_file_name(data["model"], data["edit_rcid"], data["qid"], data["property"], data["timestamp"])
    return (data["edit_rcid"], data["model"]), LogEntry(data["status"], data.get("cost_usd"), name,
                                                         data.get("cost_source"))


def _key_at(fh: BinaryIO, start: int, end: int) -> tuple[int, str] | None:
    """The (rcid, model) of the log line at [start, end), read from its first bytes."""
    return read_line_key(os.pread(fh.fileno(), min(end - start, 4096), start))


# --- the saved index ----------------------------------------------------------------------

_ARRAYS = (("_rcid", "q"), ("_model", "H"), ("_cost", "d"), ("_head", "I"), ("_end", "q"))


def _intern(ids: dict[str, int], values: list[str], value: str) -> int:
    """The id of `value` in an interning table (a dict and a list kept in step), added when new."""
    found = ids.get(value)
    if found is None:
        found = ids[value] = len(values)
        values.append(value)
    return found


def save_index(index: LogIndex, path: Path, *, views_dir: Path | None = None) -> bool:
    """Write the index next to the log (temp file and rename); False when it cannot describe the log."""
    if index.lines and index.log_bytes < 0 or not isinstance(index._rcid, array) or any("\n" in h for h in index._heads):
        return False
    views: dict[str, bool | int | None] = {"verified": False, "dir_mtime_ns": None}
    if views_dir is not None and index.views_verified:
        views = {"verified": True, "dir_mtime_ns": _settled_mtime_ns(views_dir), "names": VIEW_NAMES}
    heads = "\n".join(index._heads).encode("utf-8")
    header = {
        "format": FORMAT, "version": VERSION, "byteorder": sys.byteorder, "lines": index.lines,
        "log_bytes": index.log_bytes, "spent_usd": index.spent_usd, "models": index._models,
        "statuses": index._statuses, "heads": len(index._heads), "heads_bytes": len(heads), "views": views,
    }
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with removed_on_failure(tmp, path):
        with tmp.open("wb") as out:
            out.write(json.dumps(header).encode() + b"\n")
            for name, _code in _ARRAYS:
                out.write(getattr(index, name).tobytes())
            out.write(bytes(index._status))
            out.write(heads)
        os.replace(tmp, path)
    index.saved_lines = index.lines
    return True


def _settled_mtime_ns(directory: Path) -> int:
    """The directory's modification time, once no change in the current clock tick can share it.

    The saved time lets a resume skip listing a huge verdicts/ directory when
    nothing was added or removed since. A change made within the same tick
    as the time read here would keep that time, so the read waits until the
    time is old enough for any later change to show.
    """
    mtime = directory.stat().st_mtime_ns
    age = time.time_ns() - mtime
    if age < RACY_NS:
        time.sleep((RACY_NS - age) / 1e9)
        mtime = directory.stat().st_mtime_ns
    return mtime


def _load_saved(path: Path, log: Path) -> LogIndex | None:
    """The saved index, if it is whole and still describes the start of the log; None otherwise."""
    try:
        with open_regular(path, f"the run's index {path}", INDEX_BOUNDS) as fh, open_log(log) as log_fh:
            header = json.loads(fh.readline(INDEX_HEADER_LIMIT))
            index = _arrays_from(fh, header)
            if index is None or not _fits_log(index, log_fh):
                return None
    except (OSError, ValueError, KeyError, TypeError, EOFError, RecursionError, ConfigError):
        return None  # a cache: anything but a whole index of this log is rebuilt from the log
    views = header.get("views") or {}
    mtime = views.get("dir_mtime_ns")
    verdict_dir = log.parent / VERDICT_DIR
    index.views_verified = (bool(views.get("verified")) and views.get("names") == VIEW_NAMES
                            and mtime is not None and _mtime_ns(verdict_dir) == mtime)
    index.saved_lines = index.lines
    return index


def _arrays_from(fh: BinaryIO, header: dict[str, Any]) -> LogIndex | None:
    if header.get("format") != FORMAT or header.get("version") != VERSION or header.get("byteorder") != sys.byteorder:
        return None
    n = int(header["lines"])
    index = LogIndex()
    if not _read_columns(fh, header, index, n):
        return None
    _link(index, header)
    index.lines = n
    index._total_costs()  # not the header's spent_usd: indexes saved before counted only the latest attempts
    return index


def _read_columns(fh: BinaryIO, header: dict[str, Any], index: LogIndex, n: int) -> bool:
    """The saved arrays, statuses and line heads into `index`; False when the file is shorter or longer than its
    header says, or its last line's end is not the log's length the header names."""
    for name, code in _ARRAYS:
        values = array(code)
        values.fromfile(fh, n)
        setattr(index, name, values)
    index._status = bytearray(fh.read(n))
    heads = fh.read(int(header["heads_bytes"])).decode("utf-8")
    if len(index._status) != n or fh.read(1):
        return False
    index._heads = heads.split("\n") if int(header["heads"]) else []
    return len(index._heads) == int(header["heads"]) and int(header["log_bytes"]) == (index._end[-1] if n else 0)


def _link(index: LogIndex, header: dict[str, Any]) -> None:
    """The lookups the arrays imply, rebuilt rather than saved: ids of heads, models and statuses, latest lines."""
    index._head_ids = {head: i for i, head in enumerate(index._heads)}
    for model in header["models"]:
        index._model_id(str(model))
    index._statuses = [str(status) for status in header["statuses"]]
    index._status_ids = {status: i for i, status in enumerate(index._statuses)}
    for position, (rcid, model_id) in enumerate(zip(index._rcid, index._model)):
        index._latest[model_id][rcid] = position


def _fits_log(index: LogIndex, log_fh: BinaryIO) -> bool:
    """The log still starts with the lines the index describes: its length, and the keys of sampled lines."""
    n = index.lines
    if n == 0:
        return True
    size = os.fstat(log_fh.fileno()).st_size
    if size < index.log_bytes or os.pread(log_fh.fileno(), 1, index.log_bytes - 1) != b"\n":
        return False
    step = max(1, n // SAMPLED_LINES)
    for position in {*range(0, n, step), n - 1}:
        span = index.span(position)
        if span is None:
            return False
        key = _key_at(log_fh, *span)
        if key is not None and key != (index._rcid[position], index._models[index._model[position]]):
            return False
    return True


def _mtime_ns(directory: Path) -> int | None:
    try:
        return directory.stat().st_mtime_ns
    except OSError:
        return None
