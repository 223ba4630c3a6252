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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from fanout.base.errors import ConfigError
from fanout.store.layout import WATCH_JOURNAL_NAME, run_file
from fanout.wikidata.autocomment import parse_summary
from fanout.wikidata.eventstream import StreamGap
from fanout.wikidata.stream_events import RECENTCHANGE, EventMeta, RecentChangeEvent, StreamPosition
from fanout.store.append_lines import AppendLines
from fanout.store.lines import ReadLines, each_record

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
    try:
        comment = str(entry.get("comment") or "")
        return RecentChangeEvent(
            meta=EventMeta(id=f"journal-{entry['rcid']}", dt=str(entry.get("dt") or ""), stream=RECENTCHANGE),
            rcid=int(entry["rcid"]), type=str(entry.get("type") or "edit"), wiki=str(entry.get("wiki") or ""),
            namespace=int(entry.get("ns") or 0), title=str(entry["title"]), user=entry.get("user"),
            timestamp=int(entry.get("timestamp") or 0), comment=comment, bot=entry.get("bot") is True,
            patrolled=entry.get("patrolled") if isinstance(entry.get("patrolled"), bool) else None,
            revision_old=_number(entry.get("old")), revision_new=_number(entry.get("new")),
            tags=tuple(str(t) for t in entry.get("tags") or ()),
            source="backfill" if entry.get("source") == "backfill" else "stream", summary=parse_summary(comment),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"a damaged accepted edit: {exc}") from None


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
    events: dict[int, RecentChangeEvent] = field(default_factory=dict)
    """Every accepted edit's event, by rcid: what a revert is recognised by."""
    counts: Counter[str] = field(default_factory=Counter)
    """accepted, backfilled, dropped: WHY, prefiltered, unusable, judged, gaps."""
    skipped_lines: int = 0


def resume(run_dir: Path) -> Resumed:
    """The journal as the last session left it (a damaged line is skipped and counted)."""
    found = ReadLines(run_dir / WATCH_JOURNAL_NAME)
    state = Resumed()
    for entry in each_record(found.path, run_file(WATCH_JOURNAL_NAME), found):
        try:
            _replay(state, entry)
        except (TypeError, ValueError):
            found.skipped += 1
    for rcid in state.decided:
        state.waiting.pop(rcid, None)
    state.skipped_lines = found.skipped
    return state


def _replay(state: Resumed, entry: dict[str, Any]) -> None:
    if "accepted" in entry and "event" in entry:
        _replay_accepted(state, entry)
    elif "position" in entry:
        state.position = position_of(entry["position"]) or state.position
    elif "judged" in entry:
        state.decided.add(int(entry["judged"]))
        state.judged.add(int(entry["judged"]))
        state.counts["judged"] += 1
    elif "gap" in entry:
        state.counts["gaps"] += 1
        state.counts["backfilled"] += int(entry.get("kept") or 0)
    else:
        for kind in ("dropped", "prefiltered", "unusable"):
            if kind in entry:
                state.decided.add(int(entry[kind]))
                state.counts[f"dropped: {entry.get('why')}" if kind == "dropped" else kind] += 1


def _replay_accepted(state: Resumed, entry: dict[str, Any]) -> None:
    try:
        event = event_of(entry.get("event") or {})
    except ValueError:
        return
    state.position = position_of(entry.get("position")) or state.position
    if event.rcid in state.accepted:
        return
    state.accepted.add(event.rcid)
    state.waiting[event.rcid] = event
    state.events[event.rcid] = event
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
