"""Run (edit, model) pairs concurrently: fair, bounded, stoppable, and logged by one writer.

The orchestrator knows nothing about HTTP or models: it is handed a verdict
function and decides *which* pair runs *when*. Three rules shape that:

* A global bound on verdicts in flight, and an optional bound per model.
* Fair share: the next free slot goes to the eligible model with the fewest
  verdicts in flight (ties: lowest edit, then model order). With equal speeds
  this is plain edit-major order (edit 1 x every model, then edit 2 ...); with
  one slow model it keeps that model to its share of the slots while the others
  use the rest.
* A lead bound: no model starts an edit `max_lead` or more past the earliest
  edit some model has not finished, so a stalled model cannot leave the others
  arbitrarily far ahead and a partial run stays comparable across models.

Under `--strategy cascade|router` a pair is pending only once the strategy
asks for it (fanout.engine.stepping): an edit's next step joins its model's
queue when the writer has logged the previous step's record. The lead bound
cannot deadlock it: the model with the earliest unfinished edit is always
below the horizon, and an escalated edit joins a queue at its own place, so the
model it escalates to catches up there while the cheap model waits at most
`max_lead` edits ahead.

Records travel through a memory stream to a single writer task, which appends
each to the checkpoint log (fsynced) before writing its YAML view. Stopping:
the first request stops scheduling and gives verdicts in flight a grace period,
then cancels them; a second request cancels at once. Cancelled verdicts are not
recorded, so they run again on resume.

A live source (fanout.base.item.LiveItems, `fanout watch`) grows the same
schedule while the run goes on: an intake task takes its items one at a time,
when the admission limits allow (fanout.engine.intake), and each joins every
model's queue (or its strategy's first step) at the end, as the next edit of a
snapshot would. An item is finished once every pair asked of it is logged; the
source hears so, and the item is forgotten. The first stop request closes the
intake too.
"""

from __future__ import annotations

import heapq
import math
import operator
import time
import traceback
from collections.abc import Awaitable, Callable, Sequence, Set
from dataclasses import dataclass, field
from itertools import compress
from typing import NamedTuple

import anyio
from anyio.abc import ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream

from fanout.judging.strategy import Answer
from fanout.store.checkpoint import CheckpointWriter, LogEntry, log_path
from fanout.engine.settings import RunSettings
from fanout.llm.cost import CostSource
from fanout.llm.models import ModelSpec
from fanout.base.errors import DiskFull, ModelRefused
from fanout.base.errors import FanoutError
from fanout.base.item import Item, LiveItems, item_keys
from fanout.base.records import VerdictRecord
from fanout.engine.intake import Admission, AdmissionLimits, GrowingItems
from fanout.engine.stepping import Tracker, answers_of
from fanout.research.record import new_record

VerdictFn = Callable[[Item, ModelSpec], Awaitable[VerdictRecord]]
"""One (item, model) pair's verdict: the research's, or a test's script."""
WRITE_BATCH = 32


class Pair(NamedTuple):
    edit: int
    """Index of the edit in the snapshot (edit-major order)."""
    model: int
    """Index of the model in the run's model list."""


class Schedule:
    """Which pair runs next. Plain bookkeeping, no I/O, so it is easy to test exhaustively."""

    def __init__(
        self,
        n_edits: int,
        caps: Sequence[int],
        done: set[Pair],
        *,
        concurrency: int,
        max_lead: int,
    ) -> None:
        self.caps = list(caps)
        self.concurrency = concurrency
        self.max_lead = max_lead
        self.pending = [  # heaps of edit indices (a sorted list is one): a strategy's next step joins at its place
            [e for e in range(n_edits) if Pair(e, m) not in done] for m in range(len(caps))
        ]
        self.running: list[set[int]] = [set() for _ in caps]
        self._running_order: list[list[int]] = [[] for _ in caps]
        """Per model, a heap of the edits it runs (finished ones leave it lazily): its earliest in O(1), so
        scheduling does not slow down with 1,000 verdicts in flight."""
        self._in_flight = 0
        self.waiting = 0
        """Records handed to the writer whose edit's next step the strategy decides once they are logged."""
        self.refused: dict[int, str] = {}
        """Models the endpoint refused, with its reason: nothing more of theirs starts."""

    @classmethod
    def resuming(
        cls,
        rcids: Sequence[int],
        caps: Sequence[int],
        done_rcids: Sequence[Set[int]],
        *,
        concurrency: int,
        max_lead: int,
    ) -> Schedule:
        """The same schedule, built from the rcids each model has done: one pass per model, no Pair per
        done pair, so resuming a million-pair log costs a fraction of a second."""
        schedule = cls(0, caps, set(), concurrency=concurrency, max_lead=max_lead)
        schedule.pending = [
            list(compress(range(len(rcids)), map(operator.not_, map(done.__contains__, rcids)))) for done in done_rcids
        ]
        return schedule

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def has_unfinished(self) -> bool:
        return any(self.pending) or self.in_flight > 0 or self.waiting > 0

    def offer(self, edit: int, model: int) -> bool:
        """A strategy's next step, or a new item's pair: the pair becomes pending (unless its model was refused)."""
        if model in self.refused:
            return False
        heapq.heappush(self.pending[model], edit)
        return True

    def floor(self, model: int) -> float:
        """The earliest edit this model has not finished (inf when it has finished all)."""
        order, running = self._running_order[model], self.running[model]
        while order and order[0] not in running:
            heapq.heappop(order)
        earliest = order[0] if order else math.inf
        pending = self.pending[model]
        return min(earliest, pending[0]) if pending else earliest

    def next_pair(self) -> Pair | None:
        """Take the next pair to start, or None when no slot or no eligible work."""
        if self.in_flight >= self.concurrency:
            return None
        horizon = min((self.floor(m) for m in range(len(self.caps))), default=math.inf) + self.max_lead
        eligible = [
            (len(self.running[m]), self.pending[m][0], m)
            for m in range(len(self.caps))
            if self.pending[m] and self.pending[m][0] < horizon and len(self.running[m]) < self.caps[m]
        ]
        if not eligible:
            return None
        _, edit, model = min(eligible)
        heapq.heappop(self.pending[model])
        self.running[model].add(edit)
        heapq.heappush(self._running_order[model], edit)
        self._in_flight += 1
        return Pair(edit, model)

    def finish(self, pair: Pair) -> None:
        running = self.running[pair.model]
        if pair.edit in running:
            running.discard(pair.edit)
            self._in_flight -= 1

    def refuse(self, model: int, reason: str) -> int | None:
        """Start no more pairs of `model`; how many it had left (waiting, and running: the refused one among
        them, whose siblings in flight meet the same refusal), or None when it was refused already."""
        if model in self.refused:
            return None
        self.refused[model] = reason
        left = len(self.pending[model]) + len(self.running[model])
        self.pending[model].clear()
        return left


class Wakeup:
    """An event that can fire many times: the scheduler waits on it, completions fire it.

    Safe without locks because waiters re-check state after waking and nothing
    yields between a check and the following wait.
    """

    def __init__(self) -> None:
        self._event = anyio.Event()

    def notify(self) -> None:
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event = anyio.Event()


@dataclass
class StopControl:
    """Ctrl-C semantics: the first request stops scheduling, the second cancels in-flight work."""

    on_message: Callable[[str], None] = print
    requests: int = 0
    reason: str | None = None
    wakeup: Wakeup = field(default_factory=Wakeup)
    verdict_scope: anyio.CancelScope | None = None
    intake_scope: anyio.CancelScope | None = None
    """A live source's intake: the first request closes it, so no new item comes in."""

    @property
    def stopping(self) -> bool:
        return self.requests > 0

    def request(self, reason: str, *, grace_s: float | None = None) -> None:
        self.requests += 1
        if self.requests == 1:
            self.reason = reason
            if self.intake_scope is not None:
                self.intake_scope.cancel()
            if grace_s is not None:
                self.on_message(
                    f"{reason}: no new verdicts; those in flight get {grace_s:g}s to finish. "
                    "Press Ctrl-C again to cancel them now."
                )
            self.wakeup.notify()
        elif self.verdict_scope is not None:
            self.on_message("Cancelling verdicts in flight; they will run again on resume.")
            self.verdict_scope.cancel()


class ProgressSink:
    """What the orchestrator tells the progress display; the default does nothing."""

    def started(self, model: str) -> None: ...

    def finished(self, model: str) -> None:
        """The verdict gave up its slot (recorded, or cancelled): from `started` to here it counts as in flight."""

    def recorded(self, record: VerdictRecord, previous: LogEntry | None = None) -> None: ...

    def grew(self, pairs: int) -> None:
        """A live source's item asks `pairs` more pairs (when it comes in, and for each step a strategy adds)."""


@dataclass
class SpendCap:
    """Money spent so far (the log's total plus every verdict finished since), against a cap.

    Checked when a verdict finishes rather than when it is written, so the
    scheduler stops at once instead of after the writer catches up. A retried
    pair's first attempt cost real money too, so this never subtracts.
    """

    cap_usd: float | None
    spent_usd: float = 0.0
    elsewhere: Callable[[], float] | None = None
    """Spend this session outside the verdicts' records (the shared investigations of --evidence shared)."""
    reached: bool = False

    def add(self, cost_usd: float | None) -> bool:
        """Count a verdict's cost; True the first time the cap is reached."""
        self.spent_usd += cost_usd or 0.0
        if self.cap_usd is None or self.reached or self.total() < self.cap_usd:
            return False
        self.reached = True
        return True

    def total(self) -> float:
        return self.spent_usd + (self.elsewhere() if self.elsewhere is not None else 0.0)


@dataclass
class RunOutcome:
    recorded: int = 0
    cancelled: bool = False
    """Verdicts were cancelled (grace expired or a second Ctrl-C)."""
    stop_reason: str | None = None
    disk_full: DiskFull | None = None
    """A file of the run did not fit: the run stopped there."""
    unsaved: int = 0
    """Finished verdicts whose records did not fit in the log (they run again on resume)."""
    refused: dict[str, str] = field(default_factory=dict)
    """Models the endpoint refused (no such model), with its words: none of their pairs after that was recorded."""
    spend_cap_usd: float | None = None
    """--max-cost when it stopped the run: the last words then count what the log holds, verdicts that were in
    flight at the stop included, not the spend at the moment of the stop."""
    items_in: int = 0
    """Items a live source handed over this session."""
    source_failed: str | None = None
    """Why a live source ended for good (a refused stream): the items it had handed over were still judged."""


async def orchestrate(
    edits: Sequence[Item],
    settings: RunSettings,
    writer: CheckpointWriter,
    verdict_fn: VerdictFn,
    *,
    control: StopControl | None = None,
    progress: ProgressSink | None = None,
    abandoned_usd: float = 0.0,
    tracker: Tracker | None = None,
    spent_elsewhere: Callable[[], float] | None = None,
    live: LiveItems | None = None,
    admission: Admission | AdmissionLimits = AdmissionLimits(),
) -> RunOutcome:
    """Run every pair not already done in the writer's log; return how the run ended.

    The spend cap starts from every logged attempt's cost plus `abandoned_usd`,
    the cost of attempts cut off before they were logged (fanout.store.attempts).
    With a `tracker` (--strategy cascade|router) only the pairs its strategy asks for run. `spent_elsewhere`
    is what this session spent outside the records (shared investigations): the cap counts it too.
    With a `live` source, `edits` is the run's GrowingItems (empty, or what the tracker was made with) and the
    run goes on while the source does, taking its items under the `admission` limits.
    """
    control = control or StopControl()
    progress = progress or ProgressSink()
    models = list(settings.models)
    intake = _Intake.of(live, edits, settings, writer, admission) if live is not None else None
    schedule = _schedule(edits, settings, writer, tracker) if intake is None else _empty_schedule(settings)
    outcome = RunOutcome()
    spend = SpendCap(settings.max_cost_usd, writer.index.spent_usd + abandoned_usd, spent_elsewhere)
    if spend.cap_usd is not None and spend.spent_usd >= spend.cap_usd:
        control.request(f"Spend cap ${spend.cap_usd:g} already reached (${spend.spent_usd:.4f} recorded)")
    # Bounded, and a verdict keeps its slot until its record is queued: when the writer falls behind
    # (fsync, YAML), new verdicts wait instead of finished records piling up in memory.
    send, receive = anyio.create_memory_object_stream[Done](settings.concurrency)
    run = _Run(schedule, edits, models, verdict_fn, settings, control, progress, outcome, spend, tracker, intake)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_write_records, receive, writer, run)
        async with send:
            if intake is not None:
                tg.start_soon(_take_items, run, intake)
            await _run_verdicts(run, send)
    outcome.stop_reason = control.reason
    if spend.cap_usd is not None and spend.spent_usd >= spend.cap_usd:
        outcome.spend_cap_usd = spend.cap_usd
    outcome.refused = {models[m].name: reason for m, reason in schedule.refused.items()}
    return outcome


def _schedule(edits: Sequence[Item], settings: RunSettings, writer: CheckpointWriter, tracker: Tracker | None) -> Schedule:
    """Every pair the log lacks, or under a strategy, each edit's next step."""
    caps = [m.max_concurrency or settings.concurrency for m in settings.models]
    if tracker is None:
        return Schedule.resuming(
            item_keys(edits), caps, [writer.index.done_rcids(m.name, settings.retry_statuses) for m in settings.models],
            concurrency=settings.concurrency, max_lead=settings.max_lead,
        )
    schedule = _empty_schedule(settings)
    numbers = {m.name: i for i, m in enumerate(settings.models)}
    for edit, model in tracker.first_steps():
        if model in numbers:  # a model asked before, since dropped from -m: the edit stops there
            schedule.pending[numbers[model]].append(edit)  # in edit order: a heap
    return schedule


@dataclass
class _Run:
    """What the verdict tasks and the writer share."""

    schedule: Schedule
    edits: Sequence[Item]
    models: list[ModelSpec]
    verdict_fn: VerdictFn
    settings: RunSettings
    control: StopControl
    progress: ProgressSink
    outcome: RunOutcome
    spend: SpendCap
    tracker: Tracker | None
    intake: _Intake | None = None
    model_numbers: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model_numbers = {m.name: i for i, m in enumerate(self.models)}

    def tag(self, pair: Pair, record: VerdictRecord) -> None:
        """The record's aspect, and under a strategy its step: before it is sent, so the log holds them."""
        record.aspect = str(self.edits[pair.edit].aspect)
        if self.tracker is not None:
            self.tracker.tag(pair.edit, record)

    def logged(self, pair: Pair, record: VerdictRecord) -> None:
        """A strategy's next step for the edit, now that this record is in the log; a live item's end."""
        if self.tracker is not None:
            model = self.tracker.logged(pair.edit, record)
            if model is not None and model in self.model_numbers:
                self.ask(pair.edit, self.model_numbers[model])
        if self.intake is not None:
            self.intake.logged(pair.edit, record.status in self.settings.retry_statuses)

    def ask(self, edit: int, model: int) -> None:
        """The pair becomes pending; a live item counts it among the pairs it waits for."""
        if self.schedule.offer(edit, model) and self.intake is not None:
            self.intake.outstanding[edit] += 1
            self.progress.grew(1)

    def dropped(self, pair: Pair) -> None:
        """A pair asked that will not be logged this session (its model was refused)."""
        if self.intake is not None:
            self.intake.logged(pair.edit, retry=True)

    @property
    def taking_items(self) -> bool:
        return self.intake is not None and self.intake.open


@dataclass
class _Intake:
    """A live source's items in this run: which are in progress, and what each still waits for."""

    source: LiveItems
    items: GrowingItems
    admission: Admission
    done: Sequence[Set[int]]
    """Per model, the keys it has a result for in the log already: not asked again."""
    outstanding: dict[int, int] = field(default_factory=dict)
    """Per item in progress, the pairs asked of it and not logged yet."""
    again: set[int] = field(default_factory=set)
    """Items a record of which has a status --retry runs again: not finished, so the source hands them over again."""
    open: bool = True
    taken: int = 0
    writer: CheckpointWriter | None = None

    @classmethod
    def of(cls, source: LiveItems, items: Sequence[Item], settings: RunSettings, writer: CheckpointWriter,
           admission: Admission | AdmissionLimits) -> _Intake:
        if not isinstance(items, GrowingItems):
            raise TypeError("a run with a live source keeps its items in GrowingItems")
        done = [writer.index.done_rcids(m.name, settings.retry_statuses) for m in settings.models]
        admitting = admission if isinstance(admission, Admission) else Admission(admission)
        return cls(source, items, admitting, done, writer=writer)

    def answers(self, key: int, strategy: str) -> list[Answer]:
        """A strategy's answers to an item in the log: only an item handed over again after a restart has any."""
        if self.writer is None:
            return []
        index = self.writer.index
        models = [m for m in index.models if key in index.logged_rcids(m)]
        return answers_of(log_path(self.writer.run_dir), index, key, models, strategy) if models else []

    def logged(self, index: int, retry: bool) -> None:
        """One of the item's pairs is logged (or will not be): when it was the last, the item is finished."""
        if retry:
            self.again.add(index)
        self.outstanding[index] -= 1
        if not self.outstanding[index]:
            self.finish(index)

    def finish(self, index: int) -> None:
        key = self.items[index].key
        del self.outstanding[index]
        if index in self.again:
            self.again.discard(index)
        else:
            self.source.finished(key)
        self.admission.finished(index)
        self.items.forget(index)


def _empty_schedule(settings: RunSettings) -> Schedule:
    caps = [m.max_concurrency or settings.concurrency for m in settings.models]
    schedule = Schedule(0, caps, set(), concurrency=settings.concurrency, max_lead=settings.max_lead)
    schedule.pending = [[] for _ in caps]
    return schedule


async def _take_items(run: _Run, intake: _Intake) -> None:
    """The intake: the live source's items while the run goes on, each once the admission limits let it in.

    Closed by the first stop request (the scope is cancelled), or when the
    source ends; a source that fails for good (a refused stream) ends as one
    that has no more items does, its items already in still judged, and the
    outcome says why.
    """
    control = run.control
    with anyio.CancelScope() as scope:
        control.intake_scope = scope
        if control.stopping:
            scope.cancel()
        try:
            while True:
                await intake.admission.wait()
                item = await intake.source.next_item()
                if item is None:
                    break
                _take(run, intake, item)
        except FanoutError as exc:
            run.outcome.source_failed = str(exc)
            control.on_message(f"The live source stopped: {exc}; the items it handed over are judged, then the run "
                               "ends.")
    intake.open = False
    control.wakeup.notify()


def _take(run: _Run, intake: _Intake, item: Item) -> None:
    """One item in: each model's pair (or the strategy's first step) joins the queues behind the others."""
    index = intake.items.add(item)
    intake.admission.admitted(index)
    intake.outstanding[index] = 0
    intake.taken += 1
    run.outcome.items_in += 1
    if run.tracker is not None:
        model = run.tracker.add(index, item, intake.answers(item.key, run.tracker.name))
        first = [run.model_numbers[model]] if model is not None and model in run.model_numbers else []
    else:
        first = [m for m, done in enumerate(intake.done) if item.key not in done]
    for model_number in first:
        run.ask(index, model_number)
    if not intake.outstanding[index]:
        intake.finish(index)
    run.control.wakeup.notify()


class Done(NamedTuple):
    """A finished verdict on its way to the writer."""

    pair: Pair
    record: VerdictRecord


async def _run_verdicts(run: _Run, send: ObjectSendStream[Done]) -> None:
    schedule, control = run.schedule, run.control
    with anyio.CancelScope() as scope:
        control.verdict_scope = scope
        async with anyio.create_task_group() as tg:
            while not control.stopping and (schedule.has_unfinished() or run.taking_items):
                pair = schedule.next_pair()
                if pair is None:
                    await control.wakeup.wait()
                    continue
                run.progress.started(run.models[pair.model].name)
                tg.start_soon(_run_one, run, pair, send)
                # Let it take its first step before the next starts: a verdict builds its prompt before its
                # first await, and 256 of them in one go held the loop (and every reply waiting on it) for half a second.
                await anyio.lowlevel.checkpoint()
            if control.stopping and schedule.in_flight:
                with anyio.move_on_after(run.settings.grace_s):
                    while schedule.in_flight:
                        await control.wakeup.wait()
                if schedule.in_flight:
                    control.on_message("Grace period over; cancelling verdicts in flight.")
                    scope.cancel()
    run.outcome.cancelled = scope.cancel_called


async def _run_one(run: _Run, pair: Pair, send: ObjectSendStream[Done]) -> None:
    """One verdict. A cancelled verdict sends nothing: it is not a result and runs on resume.

    A finished one is always handed to the writer (the send is shielded: a second
    Ctrl-C must not throw away a verdict that was paid for), and keeps its slot
    until the writer's queue takes it.
    """
    edit, model, schedule, control = run.edits[pair.edit], run.models[pair.model], run.schedule, run.control
    started = time.monotonic()
    try:
        try:
            # Fail-safe for a verdict function that overruns its own timeout.
            with anyio.fail_after(run.settings.pair_deadline_s()):
                record = await run.verdict_fn(edit, model)
        except ModelRefused as exc:  # every pair of the model would meet it: none is recorded, a fixed name runs them
            for dropped in refuse_model(schedule, pair.model, model.name, str(exc), control):
                run.dropped(Pair(dropped, pair.model))
            run.dropped(pair)
            return
        except Exception as exc:  # a bug or an unexpected failure: keep the run going, retry on resume
            record = failure_record(edit, model, exc, time.monotonic() - started)
        run.tag(pair, record)
        with anyio.CancelScope(shield=True):
            schedule.waiting += 1  # the run is not over while the edit's next step is still to be decided
            try:
                await send.send(Done(pair, record))
            except anyio.BrokenResourceError:  # the writer is gone: the whole run is being torn down
                schedule.waiting -= 1
                return
    finally:
        schedule.finish(pair)
        run.progress.finished(model.name)
        control.wakeup.notify()
    if run.intake is not None:
        run.intake.admission.spent(pair.edit, record.cost_usd)
    if run.spend.add(record.cost_usd) and not control.stopping:
        control.request(f"Spend cap ${run.spend.cap_usd:g} reached (${run.spend.total():.4f} spent)",
                        grace_s=run.settings.grace_s)


def refuse_model(schedule: Schedule, index: int, name: str, reason: str, control: StopControl) -> list[int]:
    """Stop scheduling a model the endpoint refuses, and say so once; the edits it had waiting (not run now)."""
    waiting = list(schedule.pending[index])
    left = schedule.refuse(index, reason)
    if left is None:
        return []
    control.on_message(f"{name}: refused by the endpoint ({reason}); none of its {left} pair(s) left is recorded, "
                       "and none starts again. Correct the model name and run again.")
    return waiting


def failure_record(item: Item, model: ModelSpec, exc: BaseException, duration_s: float,
                   cost: tuple[float | None, CostSource] = (None, "unknown")) -> VerdictRecord:
    """An `error` record for a verdict that raised: logged, and run again on resume. `cost` is what its calls
    cost, when the caller knows (fanout.engine.clients prices the calls answered before the exception)."""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return new_record(
        item,
        model.name,
        "error",
        error=f"verdict failed: {detail}" if not isinstance(exc, TimeoutError) else "verdict did not return after its timeout",
        cost_usd=cost[0],
        cost_source=cost[1],
        duration_s=round(duration_s, 3),
    )


async def _write_records(receive: MemoryObjectReceiveStream[Done], writer: CheckpointWriter, run: _Run) -> None:
    """The single writer. A full disk stops the run as a first Ctrl-C does. File work runs in a thread so fsync never stalls the event loop; records
    already waiting go over in one hop (each still appended, fsynced and viewed on its own). Once a record is
    logged, a strategy's next step for its edit may start."""
    outcome, control = run.outcome, run.control
    async with receive:
        async for done in receive:
            batch = [done]
            while len(batch) < WRITE_BATCH:
                try:
                    batch.append(receive.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
            logged = await anyio.to_thread.run_sync(lambda: _append_each(writer, batch))
            for (pair, record), replaced in logged:
                outcome.recorded += 1
                run.progress.recorded(record, replaced)
                run.logged(pair, record)
            run.schedule.waiting -= len(batch)
            control.wakeup.notify()
            outcome.unsaved += len(batch) - len(logged)
            if writer.out_of_space is not None and outcome.disk_full is None:
                outcome.disk_full = writer.out_of_space
                control.request(f"Disk full at {writer.out_of_space.path}", grace_s=run.settings.grace_s)


def _append_each(writer: CheckpointWriter, batch: list[Done]) -> list[tuple[Done, LogEntry | None]]:
    """The records of the batch that made it into the log, each with the entry it replaced.

    On a full disk a record that does not fit is left out and the next one is
    still tried: space freed during the grace period saves the rest.
    """
    logged = []
    for done in batch:
        try:
            logged.append((done, writer.append(done.record)))
        except DiskFull:
            continue
    return logged
