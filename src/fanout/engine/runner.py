"""`fanout run` as a library call: check everything, then hand the pairs to the orchestrator.

Everything that can be wrong with the input (snapshot, key, models, SearXNG,
a run directory started with other inputs) is found before the run directory
is touched, so a mistake never harms a run in progress. Clients are made
once per run, owned by an AsyncExitStack, and passed down.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio

from fanout.store.checkpoint import CheckpointWriter, log_path, read_index, repair_torn_tail, restore_missing_views
from fanout.config import ModelSpec, RunSettings, api_key_from_env, require_count
from fanout.records import VerdictRecord, utc_now
from fanout.sift.edit import Edit
from fanout.store.edit_spool import SpooledSnapshot, spool_snapshot
from fanout.engine.loop_lag import lag_log_path, watch_loop_lag
from fanout.store.manifest import Manifest, load_manifest, reconcile, settings_summary, write_manifest
from fanout.engine.orchestrator import RunOutcome, StopControl, VerdictFn, orchestrate
from fanout.engine.progress import Progress, Tally, show_progress

SIGNALS = (signal.SIGINT, signal.SIGTERM)


@dataclass
class RunRequest:
    snapshot_path: Path
    run_dir: Path
    settings: RunSettings
    limit: int | None = None
    force: bool = False
    dry_run: bool = False
    handle_signals: bool = True
    out: TextIO = field(default_factory=lambda: sys.stdout)
    progress_interval_s: float | None = None

    def __post_init__(self) -> None:
        require_count(self.limit, "--limit")


@dataclass
class RunReport:
    outcome: RunOutcome
    tally: Tally
    interrupted: bool
    manifest: Manifest


async def run(request: RunRequest, *, verdict_fn: VerdictFn | None = None) -> RunReport | None:
    """Run (or resume) a snapshot into a run directory. Returns None for a dry run.

    `verdict_fn` replaces the real two-phase verdict (tests of the engine alone);
    when it is given, no endpoint is contacted.
    """
    settings = request.settings
    with spool_snapshot(request.snapshot_path, cache_dir=request.run_dir) as snapshot:
        return await _checked_run(request, snapshot, verdict_fn)


async def _checked_run(request: RunRequest, snapshot: SpooledSnapshot, verdict_fn: VerdictFn | None) -> RunReport | None:
    from fanout.sift.prompt import load_prompt

    settings = request.settings
    edits = snapshot.edits[: request.limit] if request.limit else snapshot.edits
    prompt = load_prompt()
    api_key = api_key_from_env(settings.base_url) if verdict_fn is None else None
    manifest = reconcile(
        load_manifest(request.run_dir),
        Manifest(
            snapshot_path=str(request.snapshot_path),
            snapshot_sha256=snapshot.sha256,
            edits=len(edits),
            models=[m.name for m in settings.models],
            prompt_sha256=prompt.sha256,
            settings=settings_summary(settings),
            starts=[utc_now()],
        ),
        force=request.force,
    )
    if request.dry_run:
        describe_plan(request, edits, manifest)
        return None

    async with AsyncExitStack() as stack:
        search_health = held_back = None
        if verdict_fn is None:
            verdict_fn, search_health, held_back = await _real_verdict_fn(stack, settings, api_key, prompt, request.run_dir)
        return await _run_in(request, edits, manifest, verdict_fn, search_health, snapshot, held_back)


async def _run_in(
    request: RunRequest, edits: Sequence[Edit], manifest: Manifest, verdict_fn: VerdictFn,
    search_health: Callable[[], str | None] | None = None, snapshot: SpooledSnapshot | None = None,
    held_back: Callable[[], dict[str, float]] | None = None,
) -> RunReport:
    run_dir, out, settings = request.run_dir, request.out, request.settings
    write_manifest(run_dir, manifest)
    if snapshot is not None:
        snapshot.keep_in(run_dir)  # a resume of a big snapshot then skips the YAML parse
    torn = repair_torn_tail(log_path(run_dir))
    if torn is not None:
        print(f"The log's last line was torn by a crash; set aside in {torn.name} and repaired.", file=out)
    index = read_index(log_path(run_dir))
    rebuilt = restore_missing_views(run_dir, index)
    if rebuilt:
        print(f"Re-created {rebuilt} missing verdict YAML file(s) from the log.", file=out)
    tally = Tally.from_index(index, total=len(edits) * len(settings.models), models=[m.name for m in settings.models])
    progress = Progress(tally, health=search_health, held_back=held_back)
    control = StopControl(on_message=lambda msg: print(msg, file=out, flush=True))
    writer = CheckpointWriter(run_dir, index)
    print(f"{tally.done}/{tally.total} pairs already done; running the rest at concurrency {settings.concurrency}.", file=out, flush=True)
    try:
        async with anyio.create_task_group() as tg:
            if request.handle_signals:
                tg.start_soon(_watch_signals, control, settings.grace_s)
            lag_log = lag_log_path()
            if lag_log is not None:
                tg.start_soon(watch_loop_lag, lag_log)
            tg.start_soon(lambda: show_progress(progress, stream=out, interval_s=request.progress_interval_s))
            outcome = await orchestrate(edits, settings, writer, verdict_fn, control=control, progress=progress)
            tg.cancel_scope.cancel()
    finally:
        writer.close()
    interrupted = control.stopping and (control.reason or "").startswith("Interrupted")
    return RunReport(outcome, tally, interrupted, manifest)


async def _watch_signals(control: StopControl, grace_s: float) -> None:
    with anyio.open_signal_receiver(*SIGNALS) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            control.request(f"Interrupted ({name})", grace_s=grace_s)


async def _real_verdict_fn(
    stack: AsyncExitStack, settings: RunSettings, api_key: str | None, prompt: Any, run_dir: Path
) -> tuple[VerdictFn, Callable[[], str | None], Callable[[], dict[str, float]]]:
    """Clients made once for the run, checked, and closed by the exit stack.

    Also returns, for the progress display, the search alarm and the models held back by learned limits. The tools' cache
    lives in the run directory, so every model (and a resume) sees the same
    search results and page texts.
    """
    from fanout.http.client import make_http_client
    from fanout.llm.chat import ChatClient
    from fanout.tools import open_run_toolbox
    from fanout.sift.verdict import run_verdict

    http = await stack.enter_async_context(make_http_client(settings.concurrency, user_agent=settings.tools.user_agent))
    checked = await preflight(http, settings, api_key)
    chat = ChatClient(base_url=settings.base_url, api_key=api_key, http=http, request_timeout_s=settings.chat_timeout_s)
    tools = await stack.enter_async_context(open_run_toolbox(http, settings.tools, run_dir))

    async def verdict(edit: Edit, model: ModelSpec) -> VerdictRecord:
        return await run_verdict(
            edit, checked.get(model.name, model), chat=chat, tools=tools, prompt=prompt,
            max_turns=settings.max_turns, timeout_s=settings.verdict_timeout_s,
        )

    return verdict, tools.health.warning, chat.held_back


async def preflight(http: Any, settings: RunSettings, api_key: str | None) -> dict[str, ModelSpec]:
    """Refuse to start when the key, a model or every search provider is unusable; warnings are printed.

    Returns each model's spec with gaps (context window, prices) filled from the
    endpoint's listing, so the verdicts warn and trim at the right sizes.
    """
    from fanout.llm.catalog import check_key, check_models, require_models
    from fanout.config import is_openrouter
    from fanout.errors import ConfigError
    from fanout.tools.providers.status import require_search

    if is_openrouter(settings.base_url):
        key = await check_key(http, settings.base_url, api_key)
        if key.level == "FAIL":
            raise ConfigError(key.message)
    checks = await check_models(http, settings.base_url, api_key, list(settings.models))
    for check in checks:
        if check.level == "WARN":
            print(f"warning: {check.name}: {check.message}", file=sys.stderr)
    specs = {spec.name: spec for spec in require_models(checks)}
    await require_search(http, settings.tools)
    return specs


def describe_plan(request: RunRequest, edits: Sequence[Edit], manifest: Manifest) -> None:
    """What --dry-run prints: the work, and what a resume would skip. Writes nothing."""
    out = request.out
    path = log_path(request.run_dir)
    index = read_index(path) if path.exists() else None
    done = index.done_count(request.settings.retry_statuses) if index else 0
    models = request.settings.models
    print(f"Snapshot: {request.snapshot_path} ({len(edits)} edits, sha256 {manifest.snapshot_sha256[:12]})", file=out)
    print(f"Models ({len(models)}): " + ", ".join(m.name for m in models), file=out)
    print(f"Pairs: {len(edits) * len(models)}; already done in {request.run_dir}: {done}", file=out)
    print(f"Concurrency {request.settings.concurrency}, timeout {request.settings.verdict_timeout_s:g}s per verdict, "
          f"max lead {request.settings.max_lead} edits; base URL {request.settings.base_url}", file=out)
    print("Dry run: nothing was contacted or written.", file=out)


def run_sync(request: RunRequest, verdict_fn: VerdictFn | None = None) -> RunReport | None:
    return anyio.run(lambda: run(request, verdict_fn=verdict_fn))

