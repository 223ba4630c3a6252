"""Wikidata's edits as they happen, as a live source of the engine (fanout.base.item.LiveItems).

    async with open_watch(run_dir, settings, http=http, logged=..., out=...) as watch:
        ...                                   # the engine takes watch.next_item() as it can

Three kinds of task share the watch, each owned by its task group:

- the reader follows the stream (fanout.wikidata.eventstream: resumed from
  the saved position, reconnecting after a drop or a stall, reporting gaps),
  learns outcomes from every event (fanout.workloads.patrol.live.stream_outcomes),
  keeps what the patrol filter keeps, and accepts each such edit once: into
  the journal with the stream position after it (fsynced before the next
  event is read), then into the bounded queue. A gap the stream cannot
  replay is listed through the recentchanges API and accepted the same way;
- enrichers take edits from the queue, ask the prefilter when there is one,
  enrich each as `fetch-edits --enrich` does, write it to the edits file and
  hand it over; they wait while the engine takes nothing (its budget or pace),
  which is what fills the queue;
- one keeps the state `fanout status` reads.

A restart reads the journal back: it goes on from the saved position, queues
again what waited, and hands over again first the edits handed over but not
judged. Nothing accepted is lost, nothing is accepted twice (the journal's
rcids and the log's keys), so an edit is judged once.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, aclosing, asynccontextmanager
from pathlib import Path
from typing import Any, NamedTuple, TextIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
import httpx
from anyio.abc import ObjectSendStream, TaskGroup

from fanout.base.errors import ConfigError, FanoutError
from fanout.wikidata.api import ApiSettings, WikidataClient
from fanout.wikidata.backfill import backfill_gap
from fanout.wikidata.enrich import Enricher, EnrichSettings, SkipEdit, WebFetch
from fanout.wikidata.errors import RevisionUnavailable, WikidataError
from fanout.wikidata.eventstream import Delivery, EventStreamReader, StreamGap, StreamSettings
from fanout.wikidata.labels import LabelCache
from fanout.wikidata.patrol_filter import skip_reason
from fanout.wikidata.revertrisk import RevertRiskClient, RevertRiskSettings
from fanout.wikidata.stream_events import RecentChangeEvent, StreamPosition, epoch_seconds
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.live.edits_file import EditsFile, edit_rcids, read_edits
from fanout.workloads.patrol.live.journal import DROPPED_FULL, DROPPED_SAMPLE, Journal, Resumed, resume
from fanout.workloads.patrol.live.stream_outcomes import StreamOutcomes, read_outcomes, settled_rcids
from fanout.workloads.patrol.live.prefilter import Prefilter
from fanout.workloads.patrol.live.queue import EditQueue
from fanout.workloads.patrol.live.settings import WatchSettings
from fanout.workloads.patrol.live.state import WatchState, latency_figures, read_state, state_text, write_state
from fanout.workloads.patrol.snapshot import validate_edit

STATE_EVERY_S = 2.0
POSITION_EVERY_S = 10.0
"""How often the position is saved while the filters keep nothing (with each accepted edit otherwise)."""
RETRY_ENRICH_S = 30.0
"""How long an edit waits before its enrichment is tried again after the wiki could not be reached."""
LATENCIES_KEPT = 500


class Ready(NamedTuple):
    """An enriched edit, offered to the engine: the snapshot entry and the item made of it."""

    data: dict[str, Any]
    edit: Edit


class PatrolWatch:
    """The live source: see the module's docstring. Made by `open_watch`."""

    def __init__(self, run_dir: Path, settings: WatchSettings, resumed: Resumed, *, logged: Callable[[int], bool],
                 holding: Callable[[], str | None], clock: Callable[[], float] = time.time) -> None:
        self.run_dir = run_dir
        self.settings = settings
        self._logged = logged
        self._holding = holding
        self._clock = clock
        self.accepted = resumed.accepted
        self._first_made = resumed.first_made or 0
        """When the run's first accepted edit was made: a backfill reaches back no further."""
        self.state = _state_from(run_dir, resumed)
        self.queue = EditQueue(settings.queue_size, settings.overflow, waiting=resumed.waiting.values())
        self.journal = Journal(run_dir)
        self.edits = EditsFile(run_dir)
        self.outcomes = StreamOutcomes(run_dir, resumed.events.values())
        self.refeed: deque[Edit] = deque()
        self.handed_total = 0
        self.failure: FanoutError | None = None
        self.position: StreamPosition | None = resumed.position
        """After the last event handled whole: what a restart resumes from."""
        self._saved_at = clock()
        self._made: dict[int, int] = {}
        """Per edit handed over and not judged yet, when it was made (epoch seconds): for the latency."""
        self._latencies: deque[float] = deque(maxlen=LATENCIES_KEPT)
        self._stream: EventStreamReader | None = None
        self._enricher: Enricher | None = None
        self._prefilter: Prefilter | None = None
        self._api: WikidataClient | None = None
        self._ready: MemoryObjectReceiveStream[Ready] | None = None

    # --- the engine's side (fanout.base.item.LiveItems) -------------------------------------------

    @property
    def items_total(self) -> int:
        return self.handed_total

    async def next_item(self) -> Edit | None:
        """An edit handed over again after a restart, else the next one enriched: written to the edits file
        (fsynced) before it is handed over, so no verdict is ever about an edit the run cannot describe."""
        if self.refeed:
            return self.refeed.popleft()
        assert self._ready is not None, "open the watch with open_watch"
        try:
            data, edit = await self._ready.receive()
        except anyio.EndOfStream:
            if self.failure is not None:
                raise self.failure from None
            return None
        await self.edits.add(data)
        self.handed_total += 1
        self.state.handed_over = self.handed_total
        self._made[edit.rcid] = epoch_seconds(edit.timestamp)
        return edit

    def finished(self, key: int) -> None:
        self.journal.decided(key, "judged")
        self.state.judged += 1
        made = self._made.pop(key, None)
        if made:
            self._latencies.append(max(self._clock() - made, 0.0))

    # --- the reader --------------------------------------------------------------------------------

    async def read(self, http: httpx.AsyncClient) -> None:
        """Follow the stream until a failure for good (kept in `failure`); then close the queue. Once --max-edits
        are accepted the queue closes and the stream is read on for outcomes alone, until the watch ends."""
        settings = StreamSettings(url=self.settings.stream_url, stall_s=self.settings.stall_s)
        start: StreamPosition | str | None = self.position or self.settings.since
        try:
            self._close_when_enough()
            async with EventStreamReader(http, settings, start=start) as stream:
                self._stream = stream
                async for delivery in stream:
                    await self._deliver(delivery)
                    self._close_when_enough()
        except FanoutError as exc:
            self.failure = exc
        finally:
            self.queue.close()

    def _close_when_enough(self) -> None:
        if self.settings.max_edits is not None and self.state.accepted >= self.settings.max_edits:
            self.queue.close()

    async def _deliver(self, delivery: Delivery) -> None:
        if self.queue.closed:  # past --max-edits: outcomes only, and the position stays where a restart goes on
            if not isinstance(delivery.event, StreamGap):
                self.state.outcomes += self.outcomes.observe(delivery.event)
            return
        event = delivery.event
        if isinstance(event, StreamGap):
            await self._backfill(event, delivery.position)
        else:
            self.state.read_up_to = event.meta.dt or self.state.read_up_to
            self.state.outcomes += self.outcomes.observe(event)
            reason = skip_reason(self.settings.filter, event) if isinstance(event, RecentChangeEvent) else "tags"
            if reason is None and isinstance(event, RecentChangeEvent):
                reason = "accepted before" if self._seen(event.rcid) else None
            if reason is None and isinstance(event, RecentChangeEvent):
                await self._accept(event, delivery.position)
            elif reason != "tags":
                self.state.count_skip(str(reason))
        self.position = delivery.position
        if self._clock() - self._saved_at >= POSITION_EVERY_S:
            await self.journal.position(delivery.position)
            self._saved_at = self._clock()

    def _seen(self, rcid: int) -> bool:
        return rcid in self.accepted or self._logged(rcid)

    async def _accept(self, event: RecentChangeEvent, position: StreamPosition) -> None:
        """Durable first (the journal, fsynced, with the position after it), then queued and watched for reverts."""
        await self.journal.accepted([event], position)
        self._saved_at = self._clock()
        self.accepted.add(event.rcid)
        self._first_made = self._first_made or event.timestamp
        self.state.accepted += 1
        self.state.backfilled += event.source == "backfill"
        self.outcomes.watch(event)
        dropped = self.queue.push(event)
        if dropped is not None:
            self._drop(dropped, DROPPED_SAMPLE if self.settings.overflow == "sample" else DROPPED_FULL)

    def _drop(self, event: RecentChangeEvent, why: str) -> None:
        self.journal.decided(event.rcid, "dropped", why=why)
        self.state.count_drop(why)

    async def _backfill(self, gap: StreamGap, position: StreamPosition) -> None:
        """The gap's edits from the recentchanges API, through the same filters, none made before the run's first
        accepted edit (the window opens early); a failure stops the watch (the saved position is still before the
        gap, so a restart finds it and tries again)."""
        assert self._api is not None
        listed = accepted = 0
        events = backfill_gap(self._api, gap, wiki=self.settings.filter.wiki, namespaces=self.settings.filter.namespaces)
        async with aclosing(events) as rows:
            async for event in rows:
                listed += 1
                if skip_reason(self.settings.filter, event) is None and not self._seen(event.rcid) \
                        and event.timestamp >= self._first_made and not self.queue.closed:
                    await self._accept(event, position)
                    accepted += 1
                    self._close_when_enough()
        self.journal.gap(gap, listed, accepted)
        self.state.gaps += 1
        self.state.missing += gap.missing

    # --- the enrichers --------------------------------------------------------------------------

    async def enrich(self, send: ObjectSendStream[Ready]) -> None:
        """Take queued edits until the queue closes: prefilter, enrich, offer to the engine (and wait for it to take
        the edit: so the queue, not memory, is where edits wait while the run is held back)."""
        async with send:
            while (event := await self.queue.take()) is not None:
                self.state.enriching += 1
                try:
                    ready = await self._prepare(event)
                finally:
                    self.state.enriching -= 1
                if ready is not None:
                    self.state.offered += 1
                    try:
                        await send.send(ready)
                    finally:
                        self.state.offered -= 1

    async def _prepare(self, event: RecentChangeEvent) -> Ready | None:
        """The edit as the jury gets it, and as the edits file will keep it; None when it goes no further."""
        if self._prefilter is not None and not await self._passes(event):
            return None
        assert self._enricher is not None
        try:
            data = await self._enricher.enrich(event.as_recent_change())
            edit = validate_edit(self.edits.path, self.handed_total + 1, data)
        except (SkipEdit, RevisionUnavailable, ConfigError) as exc:
            self.journal.decided(event.rcid, "unusable", why=str(exc).splitlines()[0][:300])
            self.state.unusable += 1
            return None
        except WikidataError:  # the wiki could not be reached after the client's retries: later, first in line
            self.queue.put_back(event)
            await anyio.sleep(RETRY_ENRICH_S)
            return None
        return Ready(data, edit)

    async def _passes(self, event: RecentChangeEvent) -> bool:
        assert self._prefilter is not None
        decision = await self._prefilter.decide(event)
        self.state.prefilter_unscored += decision.score is None
        if decision.passed:
            return True
        self.journal.decided(event.rcid, "prefiltered", score=decision.score)
        self.state.prefiltered += 1
        return False

    # --- the state ------------------------------------------------------------------------------

    async def keep_state(self) -> None:
        """Every few seconds, the state written in a worker thread (it is fsynced), made here."""
        while True:
            text = self.state_text(running=True)
            await anyio.to_thread.run_sync(write_state, self.run_dir, text)
            await anyio.sleep(STATE_EVERY_S)

    def state_text(self, *, running: bool) -> str:
        state = self.state
        state.running = running
        state.queued = len(self.queue)
        oldest = self.queue.oldest()
        state.oldest_queued = oldest.iso_timestamp if oldest is not None else None
        state.holding = self._holding()
        state.latency_p50_s, state.latency_p95_s = latency_figures(list(self._latencies))
        if self._stream is not None:
            stats = self._stream.stats
            state.stream = {"connections": stats.connections, "drops": stats.drops, "stalls": stats.stalls,
                            "duplicates": stats.duplicates, "gaps": stats.gaps}
        return state_text(state, now=self._clock())

    def close(self) -> None:
        for part in (self.journal, self.edits, self.outcomes, self._prefilter):
            if part is not None:
                part.close()


def _state_from(run_dir: Path, resumed: Resumed) -> WatchState:
    """The counts so far: the journal's decisions, and what only the last state kept (skips, missed events)."""
    before = read_state(run_dir) or WatchState()
    counts = resumed.counts
    state = WatchState(read_up_to=before.read_up_to, skipped=dict(before.skipped), missing=before.missing,
                       prefilter_unscored=before.prefilter_unscored)
    state.accepted, state.judged, state.unusable = counts["accepted"], counts["judged"], counts["unusable"]
    state.prefiltered, state.gaps, state.backfilled = counts["prefiltered"], counts["gaps"], counts["backfilled"]
    state.dropped = {k.removeprefix("dropped: "): n for k, n in counts.items() if k.startswith("dropped: ")}
    state.outcomes = sum(1 for _ in read_outcomes(run_dir))
    return state


@asynccontextmanager
async def open_watch(run_dir: Path, settings: WatchSettings, *, http: httpx.AsyncClient, logged: Callable[[int], bool],
                     out: TextIO, holding: Callable[[], str | None] = lambda: None, web_fetch: WebFetch | None = None,
                     contact: str | None = None, clock: Callable[[], float] = time.time) -> AsyncIterator[PatrolWatch]:
    """The watch of a run directory the caller holds (its lock), reading and enriching until the block ends."""
    resumed = await anyio.to_thread.run_sync(lambda: resume(run_dir, settled=settled_rcids(run_dir)))
    watch = PatrolWatch(run_dir, settings, resumed, logged=logged, holding=holding, clock=clock)
    async with AsyncExitStack() as stack:
        stack.callback(watch.close)
        _say_resumed(watch, resumed, out)
        await anyio.to_thread.run_sync(lambda: _hand_over_again(watch, resumed))
        del resumed  # the watch has what it needs; the journal's events are not kept for as long as it runs
        for dropped in watch.queue.overfull():
            watch._drop(dropped, DROPPED_FULL)
        watch._api = WikidataClient(http, ApiSettings(api_url=settings.api_url, contact=contact,
                                                      concurrency=settings.api_concurrency))
        watch._enricher = Enricher(watch._api, LabelCache(watch._api), web_fetch=web_fetch,
                                   settings=EnrichSettings(max_references=settings.max_references))
        if settings.prefilter == "revertrisk":
            watch._prefilter = Prefilter(RevertRiskClient(http, RevertRiskSettings(url=settings.revertrisk_url)),
                                         settings.prefilter_threshold, run_dir)
        async with anyio.create_task_group() as tg:
            _start(tg, watch, http)
            try:
                yield watch
            finally:
                tg.cancel_scope.cancel()
                if watch._ready is not None:
                    watch._ready.close()  # the enrichers' stream ends with the watch (the senders closed with them)
        with anyio.CancelScope(shield=True):
            await _wind_down(watch)


def _start(tg: TaskGroup, watch: PatrolWatch, http: httpx.AsyncClient) -> None:
    send, receive = anyio.create_memory_object_stream[Ready](0)
    watch._ready = receive
    tg.start_soon(watch.read, http)
    for _ in range(watch.settings.enrich_workers):
        tg.start_soon(watch.enrich, send.clone())
    send.close()
    tg.start_soon(watch.keep_state)


async def _wind_down(watch: PatrolWatch) -> None:
    """The position after the last event handled whole, and the state, saved as the watch stops."""
    if watch.position is not None:
        await watch.journal.position(watch.position)
    write_state(watch.run_dir, watch.state_text(running=False))


def _hand_over_again(watch: PatrolWatch, resumed: Resumed) -> None:
    """Edits handed over before and not judged go first; they are no longer in the queue."""
    handed = edit_rcids(watch.edits.path)
    watch.handed_total = watch.state.handed_over = len(handed)
    for rcid in handed:
        resumed.waiting.pop(rcid, None)
    again = {rcid for rcid in handed if rcid not in resumed.decided}
    for edit in read_edits(watch.edits.path, again):
        watch.refeed.append(edit)
        watch._made[edit.rcid] = epoch_seconds(edit.timestamp)
    watch.queue = EditQueue(watch.settings.queue_size, watch.settings.overflow, waiting=resumed.waiting.values())


def _say_resumed(watch: PatrolWatch, resumed: Resumed, out: TextIO) -> None:
    if watch.journal.torn is not None:
        print(f"The watch's journal had a torn last line (a crash mid-write); set aside in {watch.journal.torn.name}.",
              file=out)
    if resumed.skipped_lines:
        print(f"{resumed.skipped_lines} line(s) of the watch's journal could not be read; they were skipped.", file=out)
    if resumed.position is not None:
        print(f"Resuming the stream after {resumed.position.event_time or 'the saved position'}; "
              f"{len(resumed.waiting)} accepted edit(s) waiting.", file=out, flush=True)
