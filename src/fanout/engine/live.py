"""A run whose items arrive while it runs (`fanout watch`): the same lifecycle, engine and log as `fanout run`.

The run directory, its lock, the manifest, the clients, the log's recovery,
the signals and the shutdown are those of a snapshot's run
(fanout.engine.runner); what differs is where the items come from. The
caller hands over a function that opens the live source (a workload's: the
engine imports none) once the log is recovered, so the source can tell what
the log holds already; the orchestrator then takes its items as they come
(fanout.engine.intake) until the source ends or a stop is asked for.

The manifest pins what the source reads (`source_pin`, in place of a
snapshot's sha256) and names the file where the source keeps the items it
handed over (`RunRequest.snapshot_path`), which the report, the queue and the
desk read as a snapshot's run reads its snapshot; the number of items there is
brought up to date as the run goes on, so `fanout status` counts pairs against
what has come in.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import anyio

from fanout.base.item import LiveItems
from fanout.engine.clients import RunHooks
from fanout.engine.collector import collector_for_a_run
from fanout.engine.evidence import EvidenceFns, describe_shared, logged_elsewhere
from fanout.engine.intake import Admission, AdmissionLimits, GrowingItems
from fanout.engine.loop_lag import lag_log_path, watch_loop_lag
from fanout.engine.orchestrator import RunOutcome, StopControl, VerdictFn, orchestrate
from fanout.engine.progress import Progress, Tally, print_progress
from fanout.engine.runner import RunReport, RunRequest, open_hooks, reconciled_manifest, recover_log, watch_signals
from fanout.engine.stepping import Tracker, open_tracker
from fanout.llm.cost import Pricing
from fanout.store.attempts import abandoned_totals, read_abandoned
from fanout.store.checkpoint import CheckpointWriter, LogIndex, log_path
from fanout.store.layout import refuse_linked_files
from fanout.store.manifest import Manifest, load_manifest, write_manifest

REFRESH_S = 5.0
"""How often the manifest's item count and the progress total follow the source."""


@dataclass(frozen=True)
class LiveContext:
    """What the engine tells a live source it opens: where the run is, and what its log holds already."""

    run_dir: Path
    logged: Callable[[int], bool]
    """Whether any model has a record of the item with this key: it was judged (or is being) already."""
    out: TextIO
    """Where the run's own lines go (the source's notices go there too)."""
    holding: Callable[[], str | None]
    """Why the run takes no item now (its admission limits), or None: what the source's status says."""


OpenSource = Callable[[LiveContext], AbstractAsyncContextManager[LiveItems]]


@dataclass
class LiveRequest:
    run: RunRequest
    """The run as `fanout run` would have it; its snapshot_path is the file where the source keeps its items."""
    source_pin: str
    """What the manifest pins in place of a snapshot's sha256: what the source reads (`stream:wikidatawiki`)."""
    admission: AdmissionLimits = AdmissionLimits()
    recorded: dict[str, Any] = field(default_factory=dict)
    """The source's own settings, recorded in the manifest's settings beside the run's (not pinned)."""


async def run_live(request: LiveRequest, open_source: OpenSource, *, verdict_fn: VerdictFn | None = None,
                   evidence_fns: EvidenceFns | None = None) -> RunReport:
    """Judge a live source's items into a run directory until it ends or is stopped; a restart goes on."""
    run = request.run
    prompt = run.workload.prompt()
    previous = load_manifest(run.run_dir)
    run, manifest = reconciled_manifest(run, request.source_pin, previous.edits if previous else 0, prompt,
                                        request.recorded)
    async with AsyncExitStack() as stack:
        run, hooks = await open_hooks(stack, run, manifest, prompt, verdict_fn, evidence_fns)
        return await _session(dataclasses.replace(request, run=run), manifest, hooks, open_source, stack)


async def _session(request: LiveRequest, manifest: Manifest, hooks: RunHooks, open_source: OpenSource,
                   stack: AsyncExitStack) -> RunReport:
    """The run directory is this process's: the log recovered, the source opened, the orchestrator run."""
    run = request.run
    run_dir, out, settings = run.run_dir, run.out, run.settings
    refuse_linked_files(run_dir)
    write_manifest(run_dir, manifest)
    index = await recover_log(run_dir, hooks.pricing or Pricing(), out, logged_elsewhere(hooks.evidence))
    abandoned = abandoned_totals(read_abandoned(run_dir))
    shared = hooks.evidence
    if shared is not None:
        print(describe_shared(shared, settings), file=out, flush=True)
    admission = Admission(request.admission)
    context = LiveContext(run_dir, _logged(index), out, lambda: admission.holding)
    source = await stack.enter_async_context(open_source(context))
    items = GrowingItems()
    tracker = await open_tracker(log_path(run_dir), index, items, settings, hooks.pricing)
    tally = Tally.from_index(index, total=0, models=[m.name for m in settings.models], abandoned=abandoned,
                             only_models=True)
    tally.total = tally.done
    if shared is not None:
        tally.spent_usd += shared.log.spent_usd
        shared.on_spent = tally.add_spend
    progress = Progress(tally, health=hooks.search_health, held_back=hooks.held_back,
                        strategy=tracker.summary if tracker is not None else None)
    control = StopControl(on_message=lambda msg: print(msg, file=out, flush=True))
    print(f"{tally.done} pair(s) logged so far; judging items as they come in, at concurrency "
          f"{settings.concurrency}.", file=out, flush=True)
    if tracker is not None:
        print(tracker.plan.describe(), file=out, flush=True)
    session = _Session(request, manifest, hooks, source, items, tracker, control, progress, admission,
                       abandoned.spent_usd + (shared.log.spent_usd if shared else 0.0))
    try:
        with collector_for_a_run(), closing(CheckpointWriter(run_dir, index)) as writer:  # as a snapshot's run
            outcome = await _judge(session, writer)
    finally:
        _keep_count(run_dir, manifest, source)
    interrupted = control.stopping and (control.reason or "").startswith("Interrupted")
    return RunReport(outcome, tally, interrupted, manifest, tracker, shared)


@dataclass
class _Session:
    request: LiveRequest
    manifest: Manifest
    hooks: RunHooks
    source: LiveItems
    items: GrowingItems
    tracker: Tracker | None
    control: StopControl
    progress: Progress
    admission: Admission
    abandoned_usd: float


async def _judge(session: _Session, writer: CheckpointWriter) -> RunOutcome:
    """The orchestrator over the source, under the signal task, the progress display and the lag probe."""
    run, shared = session.request.run, session.hooks.evidence
    async with anyio.create_task_group() as tg:
        if run.handle_signals:
            tg.start_soon(watch_signals, session.control, run.settings.grace_s)
        lag_log = lag_log_path()
        if lag_log is not None:
            tg.start_soon(partial(watch_loop_lag, lag_log, gc_pauses=True))
        tg.start_soon(run.display or print_progress, session.progress, run.out, run.progress_interval_s)
        tg.start_soon(_follow, run.run_dir, session.manifest, session.source)
        outcome = await orchestrate(
            session.items, run.settings, writer, session.hooks.verdict, control=session.control,
            progress=session.progress, tracker=session.tracker, abandoned_usd=session.abandoned_usd,
            spent_elsewhere=(lambda: shared.spent_usd) if shared else None, live=session.source,
            admission=session.admission,
        )
        tg.cancel_scope.cancel()
    return outcome


def _logged(index: LogIndex) -> Callable[[int], bool]:
    """Whether a key has a record of any model in the log (as the log was when the source opened)."""
    keys = set().union(*(index.logged_rcids(model) for model in index.models))
    return keys.__contains__


async def _follow(run_dir: Path, manifest: Manifest, source: LiveItems) -> None:
    """Keep the manifest's item count with the source's, so `fanout status` counts against what came in."""
    while True:
        await anyio.sleep(REFRESH_S)
        _keep_count(run_dir, manifest, source)


def _keep_count(run_dir: Path, manifest: Manifest, source: LiveItems) -> None:
    if manifest.edits != source.items_total:
        manifest.edits = source.items_total
        write_manifest(run_dir, manifest)
