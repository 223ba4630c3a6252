"""`fanout run` as a library call: a run's lifecycle, from the checks to the last record.

A run goes through these parts, each in its own module:

1. its input: the workload (fanout.base.item.Workload, chosen by the caller)
   opens it, validated, and gives its prompt;
2. the manifest: what the run directory holds verdicts about, reconciled
   with what an earlier start recorded (a resume with other inputs is refused);
   `--dry-run` prints the plan here and stops (fanout.engine.dry_run);
3. the lock: one process owns a run directory at a time;
4. the clients, checked by the pre-flight (fanout.engine.clients,
   fanout.engine.preflight), or a test's scripted verdict;
5. the log recovered from the last stop (a torn line, damaged lines, missing
   views, attempts cut off), then the session: the orchestrator under a
   signal task, the live progress, and the shutdown.

Everything that can be wrong with the input is found before the run
directory is touched, so a mistake never harms a run in progress. Clients
are made once per run, owned by an AsyncExitStack, and passed down.
"""

from __future__ import annotations

import dataclasses
import signal
import sys
from collections.abc import Awaitable, Mapping, Sequence
from contextlib import AsyncExitStack, closing
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
from anyio.abc import TaskStatus

from fanout.base.safe_text import for_terminal
from fanout.base.errors import ConfigError
from fanout.base.item import Item, ItemSource, Prompt, Workload, item_keys
from fanout.base.records import slug_clash, utc_now
from fanout.base.validate import require_count
from fanout.engine.clients import RunHooks, open_clients, scripted_hooks
from fanout.engine.collector import collector_for_a_run
from fanout.engine.dry_run import describe_plan
from fanout.engine.evidence import (
    EvidenceFns, SharedEvidence, check_evidence_resume, choose_investigator, describe_shared, logged_elsewhere,
    lost_evidence, name_investigator, refuse_lost_evidence, share_evidence,
)
from fanout.engine.loop_lag import lag_log_path, watch_loop_lag
from fanout.engine.orchestrator import RunOutcome, StopControl, VerdictFn, orchestrate
from fanout.engine.progress import Progress, ProgressDisplay, Tally, print_progress
from fanout.engine.settings import RunSettings
from fanout.engine.stepping import Tracker, open_tracker
from fanout.judging.strategy import check_resume
from fanout.llm.cost import Pricing
from fanout.llm.keys import api_key_from_env
from fanout.store.attempts import LoggedElsewhere, abandoned_totals, read_abandoned, settle_abandoned
from fanout.store.checkpoint import (
    CheckpointWriter, LogIndex, log_path, read_index, repair_torn_tail, restore_missing_views, set_aside_damaged,
)
from fanout.store.layout import LOG_NAME, VERDICT_DIR, refuse_linked_files
from fanout.store.lines import damage_note
from fanout.research.prepare import Prepared, Preparation, PreparationSpend, Prepares
from fanout.store.manifest import Manifest, check_preparation, load_manifest, reconcile, write_manifest
from fanout.store.prepared import prepared_spend
from fanout.store.run_lock import hold_run_lock

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Each stops the run the same way: a closed terminal (SIGHUP) gives verdicts in flight their grace too."""
T = TypeVar("T")


@dataclass
class RunRequest:
    snapshot_path: Path
    """The workload's input (SIFT-Patrol's: an enriched snapshot)."""
    run_dir: Path
    settings: RunSettings
    limit: int | None = None
    allow_settings_change: bool = False
    """Resume although the snapshot, the prompt or a setting that changes results differs (the manifest records it)."""
    reinvestigate_missing: bool = False
    """Under --evidence shared, investigate again the edits whose cited evidence evidence.jsonl lost, and ask every
    model of them again (without it such a resume is refused)."""
    dry_run: bool = False
    handle_signals: bool = True
    out: TextIO = field(default_factory=lambda: sys.stdout)
    progress_interval_s: float | None = None
    display: ProgressDisplay | None = None
    """What shows the progress while the run runs (default: a plain line every 15 s on `out`, print_progress; the
    command line passes its live display)."""
    inputs: tuple[Path, ...] = ()
    """The side files the settings were read from (--limits, --gates...), pinned in the manifest beside the snapshot."""
    workload: Workload[Any] = field(kw_only=True)
    """What the run verifies: the caller picks it (fanout.workloads, the registry), the engine knows none."""

    def __post_init__(self) -> None:
        require_count(self.limit, "--limit")


@dataclass
class RunReport:
    outcome: RunOutcome
    tally: Tally
    interrupted: bool
    manifest: Manifest
    tracker: Tracker | None = None
    """The strategy's state when the run used --strategy cascade|router: how far its edits went."""
    evidence: SharedEvidence | None = None
    """Under --evidence shared: the investigations this session made and what they cost."""


async def run(request: RunRequest, *, verdict_fn: VerdictFn | None = None,
              evidence_fns: EvidenceFns | None = None) -> RunReport | None:
    """Run (or resume) a workload's input into a run directory. Returns None for a dry run.

    `verdict_fn` replaces the real two-phase verdict, and under --evidence shared `evidence_fns` the real
    investigation and judging (tests of the engine alone); when one is given, no endpoint is contacted.
    """
    with request.workload.open(request.snapshot_path, cache_dir=request.run_dir) as source:
        return await _checked_run(request, source, verdict_fn, evidence_fns)


async def _checked_run(request: RunRequest, source: ItemSource[Any], verdict_fn: VerdictFn | None,
                       evidence_fns: EvidenceFns | None = None) -> RunReport | None:
    items = _in_scope(source, request.limit)
    prompt = request.workload.prompt()
    request, manifest = reconciled_manifest(request, source.sha256, len(items), prompt)
    if request.dry_run:  # contacts nothing, so it needs no key
        describe_plan(request.out, request.snapshot_path, request.run_dir, request.settings, items, manifest)
        pending = source.pending() if isinstance(source, Prepares) else None
        if pending:
            print(pending, file=request.out)
        return None
    async with AsyncExitStack() as stack:
        request, hooks = await open_hooks(stack, request, manifest, prompt, verdict_fn, evidence_fns)
        return await _run_in(request, source, manifest, hooks)


async def open_hooks(stack: AsyncExitStack, request: RunRequest, manifest: Manifest, prompt: Prompt,
                     verdict_fn: VerdictFn | None, evidence_fns: EvidenceFns | None) -> tuple[RunRequest, RunHooks]:
    """The run directory locked, then the run's clients (or a test's scripted verdict) and, under --evidence
    shared, the run's evidence; the request with the settings they settle (the investigator)."""
    settings = request.settings
    scripted = verdict_fn is not None or evidence_fns is not None
    api_key = api_key_from_env(settings.base_url) if not scripted else None
    stack.enter_context(hold_run_lock(request.run_dir))
    if not scripted:
        hooks = await _stoppable(open_clients(stack, settings, api_key, prompt, request.run_dir),
                                 request.handle_signals)
    else:  # the engine alone, as tests drive it
        hooks = scripted_hooks(verdict_fn, settings)
    if settings.shares_evidence:
        settings = name_investigator(settings, manifest, hooks.pricing or Pricing())
        request = dataclasses.replace(request, settings=settings)
        fns = evidence_fns or hooks.evidence_fns
        assert fns is not None, "the real clients make the evidence functions of a shared run"
        refuse_linked_files(request.run_dir)  # before the evidence logs are opened (and a torn tail cut)
        verdict, shared = share_evidence(stack, request.run_dir, str(settings.investigator), fns, settings, prompt)
        hooks = hooks._replace(verdict=verdict, evidence=shared)
    return request, hooks


def reconciled_manifest(request: RunRequest, sha256: str, edits: int, prompt: Prompt,
                        extra: dict[str, Any] | None = None) -> tuple[RunRequest, Manifest]:
    """The manifest this start writes, reconciled with the one an earlier start wrote (ConfigError when a resume
    would mix inputs or strategies); the request with the settings a resume runs with. `sha256` pins the input
    (a live source pins what it reads instead), `extra` settings are recorded beside the run's (a live source's)."""
    settings = request.settings
    previous = load_manifest(request.run_dir)
    if previous is not None:
        check_resume(settings.strategy, previous.settings.get("strategy"))
        settings = check_evidence_resume(settings, previous.settings.get("evidence"))
        request = dataclasses.replace(request, settings=settings)
    manifest = reconcile(
        previous,
        Manifest(
            snapshot_path=str(request.snapshot_path),
            snapshot_sha256=sha256,
            edits=edits,
            models=[m.name for m in settings.models],
            prompt_sha256=prompt.sha256,
            settings={**settings.summary(), **(extra or {})},
            starts=[utc_now()],
            inputs=[str(p.resolve()) for p in (request.snapshot_path, *request.inputs)],
            workload=request.workload.name,
        ),
        pinned=settings.PINNED, pin_models=not settings.strategy.asks_every_model,
        allow_change=request.allow_settings_change,
    )
    _refuse_shared_view_names(manifest.models)
    return request, manifest


def _refuse_shared_view_names(models: list[str]) -> None:
    """Two model ids whose verdict views would share file names (a clash of 32 hash bits) cannot share a run."""
    clash = slug_clash(models)
    if clash is not None:
        raise ConfigError(f"models {clash[0]} and {clash[1]} would share verdict file names; run them in separate run directories")


async def _run_in(request: RunRequest, source: ItemSource[Any], manifest: Manifest, hooks: RunHooks) -> RunReport:
    """The session, once the run directory is this process's: the manifest written, the log recovered, the
    input's preparation (a workload that makes its items first), the orchestrator run under the signal task and
    the progress display, and everything shut down."""
    run_dir, out, settings = request.run_dir, request.out, request.settings
    refuse_linked_files(run_dir)
    lost = lost_evidence(run_dir, hooks.evidence.log) if hooks.evidence is not None else {}
    refuse_lost_evidence(lost, request.reinvestigate_missing)  # before anything is written
    write_manifest(run_dir, manifest)
    source.keep_in(run_dir)  # a resume of a big snapshot then skips the YAML parse
    shared = hooks.evidence
    index = await recover_log(run_dir, hooks.pricing or Pricing(), out, logged_elsewhere(shared))
    _reinvestigate(run_dir, index, lost, out)
    abandoned = abandoned_totals(read_abandoned(run_dir))
    elsewhere = shared.logged_usd if shared is not None else 0.0  # investigations and team steps, each once
    await _prepare(request, source, manifest, hooks, index.spent_usd + abandoned.spent_usd + elsewhere)
    items = _in_scope(source, request.limit)
    prepared = prepared_spend(run_dir).spent_usd  # paid before any verdict: counted as an investigation is
    if shared is not None:
        print(describe_shared(shared, settings), file=out, flush=True)
    tracker = await open_tracker(log_path(run_dir), index, items, settings, hooks.pricing)
    # A router asks one model per edit; a cascade at most every model, which is the total its ETA assumes.
    pairs = len(items) * settings.strategy.most_pairs(len(settings.models))
    tally = Tally.from_index(index, total=pairs, models=[m.name for m in settings.models], abandoned=abandoned,
                             only_models=True)
    if shared is not None:  # the investigations are spend too, attributed to their edits rather than to a model
        tally.spent_usd += shared.logged_usd
        shared.on_spent = tally.add_spend
    tally.add_spend(prepared)
    progress = Progress(tally, health=hooks.search_health, held_back=hooks.held_back,
                        strategy=tracker.summary if tracker is not None else None)
    control = StopControl(on_message=lambda msg: print(msg, file=out, flush=True))
    writer = CheckpointWriter(run_dir, index)
    print(start_line(index, items, settings), file=out, flush=True)
    if tracker is not None:
        print(tracker.plan.describe(), file=out, flush=True)
    # What exists now (modules, the schedule) lives as long as the run: frozen, the cycle
    # collector stops walking it; and it collects rarely while verdicts are in flight (fanout.engine.collector).
    with collector_for_a_run(), closing(writer):
        async with anyio.create_task_group() as tg:
            if request.handle_signals:
                tg.start_soon(watch_signals, control, settings.grace_s)
            lag_log = lag_log_path()
            if lag_log is not None:
                tg.start_soon(partial(watch_loop_lag, lag_log, gc_pauses=True))
            tg.start_soon(request.display or print_progress, progress, out, request.progress_interval_s)
            outcome = await orchestrate(
                items, settings, writer, hooks.verdict, control=control, progress=progress, tracker=tracker,
                abandoned_usd=abandoned.spent_usd + elsewhere + prepared,
                spent_elsewhere=(lambda: shared.spent_usd) if shared else None,
            )
            tg.cancel_scope.cancel()
    interrupted = control.stopping and (control.reason or "").startswith("Interrupted")
    return RunReport(outcome, tally, interrupted, manifest, tracker, shared)


def _in_scope(source: ItemSource[Any], limit: int | None) -> Sequence[Item]:
    """The input's items the run judges: the first --limit of them, or all."""
    return source.items[:limit] if limit else source.items


async def _prepare(request: RunRequest, source: ItemSource[Any], manifest: Manifest, hooks: RunHooks,
                   spent_usd: float) -> Prepared | None:
    """Run the input's preparation step (fanout.research.prepare), if it has one, with the run's clients; then
    pin what made the items and how many there are in the manifest. A signal stops it as it stops the
    pre-flight: what it logged stays, the rest is prepared on the next start."""
    if not isinstance(source, Prepares) or hooks.chat is None:
        return None
    run_dir, settings = request.run_dir, request.settings

    def pin(pins: Mapping[str, Any]) -> None:
        check_preparation(manifest, pins, allow_change=request.allow_settings_change)
        write_manifest(run_dir, manifest)

    preparation = Preparation(
        chat=hooks.chat, models=hooks.models, default_model=choose_investigator(hooks.models or settings.models),
        run_dir=run_dir, spend=PreparationSpend(settings.max_cost_usd, spent_usd), timeout_s=settings.verdict_timeout_s,
        concurrency=settings.concurrency, limit=request.limit, say=lambda line: print(line, file=request.out, flush=True),
        check_pins=pin, pinned=dict(manifest.preparation),
    )
    done = await _stoppable(source.prepare(preparation), request.handle_signals)
    manifest.edits = len(_in_scope(source, request.limit))
    write_manifest(run_dir, manifest)
    return done


async def recover_log(run_dir: Path, pricing: Pricing, out: TextIO,
                       logged_elsewhere: LoggedElsewhere | None = None) -> LogIndex:
    """The log as the last stop left it, made whole: a torn last line and damaged lines set aside, missing
    views re-created, and what attempts cut off by that stop cost counted, before spending more."""
    torn = repair_torn_tail(log_path(run_dir))
    if torn is not None:
        print(f"The log's last line was torn by a crash; set aside in {torn.name} and repaired.", file=out)
    index = read_index(log_path(run_dir))
    aside = set_aside_damaged(log_path(run_dir), index.damaged)
    if aside is not None:
        numbers = ", ".join(str(d.number) for d in index.damaged)
        print(f"Line(s) {numbers} of the log were not verdict records; set aside in {aside.name}.", file=out)
        print(damage_note(LOG_NAME, index.damaged), file=out)  # which, and what was wrong with each
    rebuilt = restore_missing_views(run_dir, index)
    if rebuilt:
        print(f"Re-created {rebuilt} missing verdict YAML file(s) from the log.", file=out)
    await _settle_cut_off_attempts(run_dir, index, pricing, out, logged_elsewhere)
    return index


def _reinvestigate(run_dir: Path, index: LogIndex, lost: Mapping[int, list[str]], out: TextIO) -> None:
    """--reinvestigate-missing: every verdict that cites lost evidence is asked again, over a new investigation."""
    if not lost:
        return
    for rcid, models in lost.items():
        for model in models:
            entry = index.forget((rcid, model))
            if entry is not None:
                (run_dir / VERDICT_DIR / entry.file_name).unlink(missing_ok=True)
    pairs = sum(map(len, lost.values()))
    print(f"evidence.jsonl lost the investigations of {len(lost)} edit(s) ({', '.join(map(str, sorted(lost)[:5]))}"
          f"{' ...' if len(lost) > 5 else ''}): --reinvestigate-missing investigates them again and asks their "
          f"{pairs} verdict(s) anew.", file=out, flush=True)


async def _settle_cut_off_attempts(run_dir: Path, index: LogIndex, pricing: Pricing, out: TextIO,
                                   logged_elsewhere: LoggedElsewhere | None = None) -> None:
    """Count what attempts cut off by the last stop (kill, crash, cancel) cost, before spending more."""
    settled = await settle_abandoned(run_dir, index, pricing, warn=lambda line: print(for_terminal(f"warning: {line}"), file=sys.stderr),
                                     logged_elsewhere=logged_elsewhere)
    if not settled:
        return
    known = sum(entry.cost_usd or 0.0 for entry in settled)
    unknown = sum(entry.cost_source == "unknown" for entry in settled)
    note = f"; {unknown} of them cost an unknown amount more (a call was cut off)" if unknown else ""
    print(f"{len(settled)} attempt(s) cut off when the run last stopped cost ${known:.4f}{note}; counted in spend.",
          file=out, flush=True)


def start_line(index: LogIndex, items: Sequence[Item], settings: RunSettings) -> str:
    """What this session will run: pairs already done, and those it runs, counting the logged ones --retry runs again."""
    keys = set(item_keys(items))
    logged = again = 0
    for model in settings.models:  # set operations over views, no copy of a million keys: this runs on every resume
        logged += len(keys.intersection(index.logged_rcids(model.name)))
        again += len(keys.intersection(index.rcids_with_status(model.name, settings.retry_statuses)))
    total = len(keys) * len(settings.models)
    skipped = logged - again
    retried = f", {again} of them logged as {','.join(sorted(settings.retry_statuses))} before" if again else ""
    if not settings.strategy.asks_every_model:
        return (f"{logged} of at most {total} pairs already logged; the {settings.strategy.name} asks each unsettled "
                f"edit's next step{retried}, at concurrency {settings.concurrency}.")
    return f"{skipped}/{total} pairs already done; running {total - skipped}{retried}, at concurrency {settings.concurrency}."


async def watch_signals(control: StopControl, grace_s: float) -> None:
    """The run's signal task: each signal is a stop request (the first gives verdicts in flight their grace)."""
    with anyio.open_signal_receiver(*SIGNALS) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            control.request(f"Interrupted ({name})", grace_s=grace_s)


async def _stoppable(setup: Awaitable[T], handle_signals: bool) -> T:
    """The pre-flight, stopped by SIGTERM or SIGHUP as by Ctrl-C (KeyboardInterrupt: `fanout run: interrupted`).

    The run's own watcher starts after it, with the log; before, nothing is
    logged, so there is nothing to wind down. Without this, SIGTERM during a
    slow pre-flight (an endless /models or SearXNG body) killed the process
    without a word (exit 143), found by `make chaos`.
    """
    if not handle_signals:
        return await setup
    stopped: list[int] = []
    done: list[T] = []

    async def watch(scope: anyio.CancelScope, *, task_status: TaskStatus[None]) -> None:
        with anyio.open_signal_receiver(*SIGNALS) as signals:
            task_status.started()  # listening before the pre-flight's first request goes out
            async for signum in signals:
                stopped.append(signum)
                scope.cancel()
                return

    try:
        async with anyio.create_task_group() as tg:
            await tg.start(watch, tg.cancel_scope)
            done.append(await setup)
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    if stopped:
        raise KeyboardInterrupt
    return done[0]


def run_sync(request: RunRequest, verdict_fn: VerdictFn | None = None) -> RunReport | None:
    return anyio.run(lambda: run(request, verdict_fn=verdict_fn))
