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

Records travel through a memory stream to a single writer task, which appends
each to the checkpoint log (fsynced) before writing its YAML view. Stopping:
the first request stops scheduling and gives verdicts in flight a grace period,
then cancels them; a second request cancels at once. Cancelled verdicts are not
recorded, so they run again on resume.
"""

from __future__ import annotations

import math
import operator
import time
import traceback
from collections import deque
from collections.abc import Awaitable, Callable, Sequence, Set
from dataclasses import dataclass, field
from itertools import compress
from typing import NamedTuple

import anyio
from anyio.abc import ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream

from fanout.store.checkpoint import CheckpointWriter, LogEntry
from fanout.config import ModelSpec, RunSettings
from fanout.errors import DiskFull, ModelRefused
from fanout.store.edit_spool import edit_rcids
from fanout.records import VerdictRecord
from fanout.sift.edit import Edit
from fanout.sift.record import new_record

VerdictFn = Callable[[Edit, ModelSpec], Awaitable[VerdictRecord]]
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
        self.pending = [
            deque(e for e in range(n_edits) if Pair(e, m) not in done) for m in range(len(caps))
        ]
        self.running: list[set[int]] = [set() for _ in caps]
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
            deque(compress(range(len(rcids)), map(operator.not_, map(done.__contains__, rcids)))) for done in done_rcids
        ]
        return schedule

    @property
    def in_flight(self) -> int:
        return sum(len(r) for r in self.running)

    def has_unfinished(self) -> bool:
        return any(self.pending) or self.in_flight > 0

    def floor(self, model: int) -> float:
        """The earliest edit this model has not finished (inf when it has finished all)."""
        candidates = list(self.running[model])
        if self.pending[model]:
            candidates.append(self.pending[model][0])
        return min(candidates, default=math.inf)

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
        self.pending[model].popleft()
        self.running[model].add(edit)
        return Pair(edit, model)

    def finish(self, pair: Pair) -> None:
        self.running[pair.model].discard(pair.edit)

    def refuse(self, model: int, reason: str) -> int | None:
        """Start no more pairs of `model`; how many were waiting, or None when it was refused already."""
        if model in self.refused:
            return None
        self.refused[model] = reason
        waiting = len(self.pending[model])
        self.pending[model].clear()
        return waiting


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

    @property
    def stopping(self) -> bool:
        return self.requests > 0

    def request(self, reason: str, *, grace_s: float | None = None) -> None:
        self.requests += 1
        if self.requests == 1:
            self.reason = reason
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


@dataclass
class SpendCap:
    """Money spent so far (the log's total plus every verdict finished since), against a cap.

    Checked when a verdict finishes rather than when it is written, so the
    scheduler stops at once instead of after the writer catches up. A retried
    pair's first attempt cost real money too, so this never subtracts.
    """

    cap_usd: float | None
    spent_usd: float = 0.0

    def add(self, cost_usd: float | None) -> bool:
        """Count a verdict's cost; True the first time the cap is reached."""
        before = self.spent_usd
        self.spent_usd += cost_usd or 0.0
        return self.cap_usd is not None and before < self.cap_usd <= self.spent_usd


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


async def orchestrate(
    edits: Sequence[Edit],
    settings: RunSettings,
    writer: CheckpointWriter,
    verdict_fn: VerdictFn,
    *,
    control: StopControl | None = None,
    progress: ProgressSink | None = None,
    abandoned_usd: float = 0.0,
) -> RunOutcome:
    """Run every pair not already done in the writer's log; return how the run ended.

    The spend cap starts from every logged attempt's cost plus `abandoned_usd`,
    the cost of attempts cut off before they were logged (fanout.store.attempts).
    """
    control = control or StopControl()
    progress = progress or ProgressSink()
    models = list(settings.models)
    schedule = Schedule.resuming(
        edit_rcids(edits),
        [m.max_concurrency or settings.concurrency for m in models],
        [writer.index.done_rcids(m.name, settings.retry_statuses) for m in models],
        concurrency=settings.concurrency,
        max_lead=settings.max_lead,
    )
    outcome = RunOutcome()
    spend = SpendCap(settings.max_cost_usd, writer.index.spent_usd + abandoned_usd)
    if spend.cap_usd is not None and spend.spent_usd >= spend.cap_usd:
        control.request(f"Spend cap ${spend.cap_usd:g} already reached (${spend.spent_usd:.4f} recorded)")
    # Bounded, and a verdict keeps its slot until its record is queued: when the writer falls behind
    # (fsync, YAML), new verdicts wait instead of finished records piling up in memory.
    send, receive = anyio.create_memory_object_stream[VerdictRecord](settings.concurrency)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_write_records, receive, writer, progress, outcome, control, settings.grace_s)
        async with send:
            await _run_verdicts(schedule, edits, models, verdict_fn, send, settings, control, progress, outcome, spend)
    outcome.stop_reason = control.reason
    outcome.refused = {models[m].name: reason for m, reason in schedule.refused.items()}
    return outcome


async def _run_verdicts(
    schedule: Schedule,
    edits: Sequence[Edit],
    models: list[ModelSpec],
    verdict_fn: VerdictFn,
    send: ObjectSendStream[VerdictRecord],
    settings: RunSettings,
    control: StopControl,
    progress: ProgressSink,
    outcome: RunOutcome,
    spend: SpendCap,
) -> None:
    with anyio.CancelScope() as scope:
        control.verdict_scope = scope
        async with anyio.create_task_group() as tg:
            while not control.stopping and schedule.has_unfinished():
                pair = schedule.next_pair()
                if pair is None:
                    await control.wakeup.wait()
                    continue
                progress.started(models[pair.model].name)
                tg.start_soon(_run_one, pair, edits[pair.edit], models[pair.model], verdict_fn, send, schedule, settings, control, spend,
                              progress)
                # Let it take its first step before the next starts: a verdict builds its prompt before its
                # first await, and 256 of them in one go held the loop (and every reply waiting on it) for half a second.
                await anyio.lowlevel.checkpoint()
            if control.stopping and schedule.in_flight:
                with anyio.move_on_after(settings.grace_s):
                    while schedule.in_flight:
                        await control.wakeup.wait()
                if schedule.in_flight:
                    control.on_message("Grace period over; cancelling verdicts in flight.")
                    scope.cancel()
    outcome.cancelled = scope.cancel_called


async def _run_one(
    pair: Pair,
    edit: Edit,
    model: ModelSpec,
    verdict_fn: VerdictFn,
    send: ObjectSendStream[VerdictRecord],
    schedule: Schedule,
    settings: RunSettings,
    control: StopControl,
    spend: SpendCap,
    progress: ProgressSink,
) -> None:
    """One verdict. A cancelled verdict sends nothing: it is not a result and runs on resume.

    A finished one is always handed to the writer (the send is shielded: a second
    Ctrl-C must not throw away a verdict that was paid for), and keeps its slot
    until the writer's queue takes it.
    """
    started = time.monotonic()
    try:
        try:
            # Fail-safe for a verdict function that overruns its own timeout.
            with anyio.fail_after(settings.verdict_timeout_s * 1.5 + 30):
                record = await verdict_fn(edit, model)
        except ModelRefused as exc:  # every pair of the model would meet it: none is recorded, a fixed name runs them
            refuse_model(schedule, pair.model, model.name, str(exc), control)
            return
        except Exception as exc:  # a bug or an unexpected failure: keep the run going, retry on resume
            record = failure_record(edit, model, exc, time.monotonic() - started)
        with anyio.CancelScope(shield=True):
            try:
                await send.send(record)
            except anyio.BrokenResourceError:  # the writer is gone: the whole run is being torn down
                return
    finally:
        schedule.finish(pair)
        progress.finished(model.name)
        control.wakeup.notify()
    if spend.add(record.cost_usd) and not control.stopping:
        control.request(f"Spend cap ${spend.cap_usd:g} reached (${spend.spent_usd:.4f} spent)", grace_s=settings.grace_s)


def refuse_model(schedule: Schedule, index: int, name: str, reason: str, control: StopControl) -> None:
    """Stop scheduling a model the endpoint refuses, and say so once."""
    waiting = schedule.refuse(index, reason)
    if waiting is not None:
        control.on_message(f"{name}: refused by the endpoint ({reason}); none of its pairs is recorded and its "
                           f"{waiting} waiting pair(s) will not start. Correct the model name and run again.")


def failure_record(edit: Edit, model: ModelSpec, exc: BaseException, duration_s: float) -> VerdictRecord:
    """An `error` record for a verdict that raised: logged, and run again on resume."""
    detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    return new_record(
        edit,
        model.name,
        "error",
        error=f"verdict failed: {detail}" if not isinstance(exc, TimeoutError) else "verdict did not return after its timeout",
        cost_source="unknown",
        duration_s=round(duration_s, 3),
    )


async def _write_records(
    receive: MemoryObjectReceiveStream[VerdictRecord],
    writer: CheckpointWriter,
    progress: ProgressSink,
    outcome: RunOutcome,
    control: StopControl,
    grace_s: float,
) -> None:
    """The single writer. A full disk stops the run as a first Ctrl-C does. File work runs in a thread so fsync never stalls the event loop; records
    already waiting go over in one hop (each still appended, fsynced and viewed on its own)."""
    async with receive:
        async for record in receive:
            batch = [record]
            while len(batch) < WRITE_BATCH:
                try:
                    batch.append(receive.receive_nowait())
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
            logged = await anyio.to_thread.run_sync(lambda: _append_each(writer, batch))
            for done, replaced in logged:
                outcome.recorded += 1
                progress.recorded(done, replaced)
            outcome.unsaved += len(batch) - len(logged)
            if writer.out_of_space is not None and outcome.disk_full is None:
                outcome.disk_full = writer.out_of_space
                control.request(f"Disk full at {writer.out_of_space.path}", grace_s=grace_s)


def _append_each(writer: CheckpointWriter, batch: list[VerdictRecord]) -> list[tuple[VerdictRecord, LogEntry | None]]:
    """The records of the batch that made it into the log, each with the entry it replaced.

    On a full disk a record that does not fit is left out and the next one is
    still tried: space freed during the grace period saves the rest.
    """
    logged = []
    for record in batch:
        try:
            logged.append((record, writer.append(record)))
        except DiskFull:
            continue
    return logged
