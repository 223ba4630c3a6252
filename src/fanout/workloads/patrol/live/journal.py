"""The watch's journal (watch.jsonl): what it accepted from the stream, where the stream stood, what became of each.

One JSON object a line, of these kinds:

    {"accepted": RCID, "event": {...}, "position": {...}}   an edit the filters kept, with the stream's
                                                            position after it: fsynced before the next is read
    {"position": {...}}                                     the position after events it left out
    {"dropped": RCID, "why": "queue full" | "not sampled"}  the queue had no room for it
    {"prefiltered": RCID, "score": P}                       the revert-risk score sent it past the jury
    {"unusable": RCID, "why": "..."}                        enriching it failed for good (a deleted revision)
    {"judged": RCID}                                        every verdict asked of it is logged
    {"gap": {...}, "listed": N, "kept": M}                  events the stream could not replay, backfilled

An edit is accepted once (its rcid, whatever the stream or a backfill
repeats); a restart reads the journal back (`resume`): the last position to
read the stream from, the edits waiting in the queue (accepted, and nothing
else yet), and the counts `fanout status` shows. The edits handed to the
engine are in the edits file (fanout.workloads.patrol.live.edits_file), whose
lines the journal does not repeat: an edit there and not judged here is
handed over again. A `judged` line is not fsynced: when a crash loses it, the
edit is handed over again and the engine, which finds its verdicts in the
log, finishes it at once.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from fanout.base.errors import ConfigError
from fanout.store.layout import WATCH_JOURNAL_NAME, run_file
from fanout.wikidata.autocomment import parse_summary
from fanout.wikidata.eventstream import StreamGap
from fanout.wikidata.live_outcomes import WATCHED_MAX
from fanout.wikidata.stream_events import RECENTCHANGE, EventMeta, RecentChangeEvent, StreamPosition
from fanout.store.append_lines import AppendLines
from fanout.store.lines import ReadLines, each_record

RECENT_EDITS = WATCHED_MAX
"""Accepted edits a restart builds again for the revert watch, the newest: as many as it keeps."""
DROPPED_FULL = "queue full"
DROPPED_SAMPLE = "not sampled"


def event_entry(event: RecentChangeEvent) -> dict[str, Any]:
    """What the journal keeps of an accepted edit: enough to enrich it and to recognise its revert later."""
    return {
        "rcid": event.rcid, "type": event.type, "ns": event.namespace, "title": event.title, "user": event.user,
        "timestamp": event.timestamp, "comment": event.comment, "bot": event.bot, "patrolled": event.patrolled,
        "old": event.revision_old, "new": event.revision_new, "tags": list(event.tags), "source": event.source,
        "dt": event.meta.dt, "wiki": event.wiki,
    }


def event_of(entry: Mapping[str, Any]) -> RecentChangeEvent:
    """The event an `event_entry` was made from (as the filters and the enricher read it); ValueError if damaged."""
    return _event(_fields_of(entry))


Fields = dict[str, Any]
"""An accepted edit's event as event_of checks and converts it, not built yet (RecentChangeEvent's fields)."""


def _fields_of(entry: Any) -> Fields:
    """event_of's checks and conversions, without building the event or taking its comment apart: those are
    most of a journal line's cost, which a restart spends only on the edits it keeps (see resume)."""
    if not isinstance(entry, Mapping):
        raise ValueError("a damaged accepted edit: its event is not an object")
    try:
        return {
            "rcid": int(entry["rcid"]), "type": str(entry.get("type") or "edit"), "wiki": str(entry.get("wiki") or ""),
            "namespace": int(entry.get("ns") or 0), "title": str(entry["title"]), "user": entry.get("user"),
            "timestamp": int(entry.get("timestamp") or 0), "comment": str(entry.get("comment") or ""),
            "bot": entry.get("bot") is True,
            "patrolled": entry.get("patrolled") if isinstance(entry.get("patrolled"), bool) else None,
            "revision_old": _number(entry.get("old")), "revision_new": _number(entry.get("new")),
            "tags": tuple(str(t) for t in entry.get("tags") or ()),
            "source": "backfill" if entry.get("source") == "backfill" else "stream",
            "dt": str(entry.get("dt") or ""),
        }
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"a damaged accepted edit: {exc}") from None


def _event(fields: Fields) -> RecentChangeEvent:
    own = {k: v for k, v in fields.items() if k != "dt"}
    meta = EventMeta(id=f"journal-{fields['rcid']}", dt=fields["dt"], stream=RECENTCHANGE)
    return RecentChangeEvent(meta=meta, summary=parse_summary(fields["comment"]), **own)


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def position_entry(position: StreamPosition) -> dict[str, Any]:
    return {"last_event_id": position.last_event_id, "offsets": [list(o) for o in position.offsets],
            "event_time": position.event_time}


def position_of(entry: Any) -> StreamPosition | None:
    if not isinstance(entry, Mapping):
        return None
    try:
        offsets = tuple((str(t), int(p), int(o)) for t, p, o in entry.get("offsets") or ())
        return StreamPosition(str(entry["last_event_id"]), offsets, str(entry.get("event_time") or ""))
    except (KeyError, TypeError, ValueError):
        return None


@dataclass
class Resumed:
    """The journal read back: where to go on from, and what was decided so far."""

    position: StreamPosition | None = None
    accepted: set[int] = field(default_factory=set)
    waiting: OrderedDict[int, RecentChangeEvent] = field(default_factory=OrderedDict)
    """Accepted edits nothing has been decided about yet, oldest first: the queue."""
    decided: set[int] = field(default_factory=set)
    """Dropped, prefiltered, unusable or judged."""
    judged: set[int] = field(default_factory=set)
    events: OrderedDict[int, RecentChangeEvent] = field(default_factory=OrderedDict)
    """The newest accepted edits not seen reverted yet, at most RECENT_EDITS, oldest first: what the revert
    watch goes on watching (what a revert is recognised by). It keeps no more, so no older one is built."""
    first_made: int | None = None
    """When the run's first accepted edit was made (epoch seconds)."""
    counts: Counter[str] = field(default_factory=Counter)
    """accepted, backfilled, dropped: WHY, prefiltered, unusable, judged, gaps."""
    skipped_lines: int = 0


@dataclass
class _Kept:
    """The accepted edits a replay keeps, as fields: built into events once the whole journal is read."""

    waiting: OrderedDict[int, Fields] = field(default_factory=OrderedDict)
    recent: OrderedDict[int, Fields] = field(default_factory=OrderedDict)


def resume(run_dir: Path, *, settled: Container[int] = frozenset()) -> Resumed:
    """The journal as the last session left it (a damaged line is skipped and counted).

    A restart's memory is bounded by what it needs, not by how long the watch
    has run: an edit's event is kept while nothing is decided about it, or
    while it is among the RECENT_EDITS newest not `settled` (seen reverted,
    in outcomes.jsonl); only those are built, their comments taken apart.
    """
    found = ReadLines(run_dir / WATCH_JOURNAL_NAME)
    state, kept = Resumed(), _Kept()
    for entry in each_record(found.path, run_file(WATCH_JOURNAL_NAME), found):
        try:
            _replay(state, kept, entry, settled)
        except (TypeError, ValueError):
            found.skipped += 1
    for rcid in state.decided:
        kept.waiting.pop(rcid, None)
    built: dict[int, RecentChangeEvent] = {}  # an edit both waiting and recent is one event
    state.waiting, state.events = _built(kept.waiting, built), _built(kept.recent, built)
    state.skipped_lines = found.skipped
    return state


def _built(kept: OrderedDict[int, Fields], built: dict[int, RecentChangeEvent]) -> OrderedDict[int, RecentChangeEvent]:
    """The events of `kept`, in its order; each one's fields let go of as it is built (memory holds one or the
    other, not both)."""
    events: OrderedDict[int, RecentChangeEvent] = OrderedDict()
    while kept:
        rcid, fields = kept.popitem(last=False)
        events[rcid] = built[rcid] if rcid in built else built.setdefault(rcid, _event(fields))
    return events


def _replay(state: Resumed, kept: _Kept, entry: dict[str, Any], settled: Container[int]) -> None:
    if "accepted" in entry and "event" in entry:
        _replay_accepted(state, kept, entry, settled)
    elif "position" in entry:
        state.position = position_of(entry["position"]) or state.position
    elif "judged" in entry:
        state.decided.add(int(entry["judged"]))
        state.judged.add(int(entry["judged"]))
        kept.waiting.pop(int(entry["judged"]), None)
        state.counts["judged"] += 1
    elif "gap" in entry:
        state.counts["gaps"] += 1
        state.counts["backfilled"] += int(entry.get("kept") or 0)
    else:
        for kind in ("dropped", "prefiltered", "unusable"):
            if kind in entry:
                state.decided.add(int(entry[kind]))
                kept.waiting.pop(int(entry[kind]), None)
                state.counts[f"dropped: {entry.get('why')}" if kind == "dropped" else kind] += 1


def _replay_accepted(state: Resumed, kept: _Kept, entry: dict[str, Any], settled: Container[int]) -> None:
    fields = _fields_of(entry.get("event") or {})  # damaged: ValueError, the line skipped and counted
    state.position = position_of(entry.get("position")) or state.position
    rcid, made = fields["rcid"], fields["timestamp"]
    if rcid in state.accepted:
        return
    state.accepted.add(rcid)
    kept.waiting[rcid] = fields
    state.first_made = made if state.first_made is None else min(state.first_made, made)
    if rcid not in settled:
        kept.recent[rcid] = fields
        if len(kept.recent) > RECENT_EDITS:
            kept.recent.popitem(last=False)
    state.counts["accepted"] += 1


class Journal:
    """The journal open for appending: one writer, whole lines; an accepted edit is fsynced before it counts."""

    def __init__(self, run_dir: Path) -> None:
        self._file = AppendLines(run_dir / WATCH_JOURNAL_NAME)

    @property
    def torn(self) -> Path | None:
        return self._file.torn

    async def accepted(self, events: list[RecentChangeEvent], position: StreamPosition) -> None:
        """Edits the filters kept, durable (fsynced, in a worker thread) with the position after the last."""
        entries: list[dict[str, Any]] = [{"accepted": e.rcid, "event": event_entry(e), "position":
                                          position_entry(position)} for e in events]
        await anyio.to_thread.run_sync(lambda: self._file.write(entries, sync=True))

    async def position(self, position: StreamPosition) -> None:
        await anyio.to_thread.run_sync(lambda: self._file.write([{"position": position_entry(position)}], sync=True))

    def decided(self, rcid: int, kind: str, **detail: Any) -> None:
        """dropped, prefiltered, unusable or judged: not fsynced (what a crash loses is decided again)."""
        if kind not in ("dropped", "prefiltered", "unusable", "judged"):
            raise ConfigError(f"not a journal decision: {kind}")
        self._file.write([{kind: rcid, **detail}], sync=False)

    def gap(self, gap: StreamGap, listed: int, kept: int) -> None:
        entry = {"gap": {"topic": gap.topic, "start": gap.start, "end": gap.end, "missing": gap.missing},
                 "listed": listed, "kept": kept}
        self._file.write([entry], sync=True)

    def close(self) -> None:
        self._file.close()
