"""The run's clients: made once, checked, handed down, and closed by the run's exit stack.

One HTTP client for everything (chat, search, fetch, the pre-flight), one
chat client over it, and the run's toolbox, whose cache lives in the run
directory so every model (and a resume) sees the same search results and
page texts. From them come the verdict function the orchestrator runs
(fanout.research.verdict over one item), and under --evidence shared the
investigation and judging (fanout.research.shared). Each writes its chat
calls down as they happen (fanout.store.attempts), so a kill cannot hide
what they cost. A test of the engine alone gives a scripted verdict instead
(scripted_hooks), and nothing is contacted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import NamedTuple

from fanout.base.errors import ModelRefused
from fanout.base.item import Item, Prompt
from fanout.base.records import EvidenceRecord, TeamStep, VerdictRecord
from fanout.engine.evidence import EvidenceFns, SharedEvidence
from fanout.engine.orchestrator import VerdictFn, failure_record
from fanout.engine.preflight import preflight
from fanout.engine.settings import RunSettings
from fanout.http.client import make_http_client
from fanout.llm.chat import ChatClient
from fanout.llm.cost import Pricing
from fanout.llm.keys import is_openrouter
from fanout.llm.models import ModelSpec
from fanout.research.shared import investigate_item, judge_evidence
from fanout.research.team_steps import aggregate_step, plan_step, work_step
from fanout.research.verdict import run_verdict
from fanout.store.attempts import AttemptFile, discard_attempt
from fanout.store.checkpoint import log_path
from fanout.store.team_log import step_attempt_name
from fanout.tools import ToolBox, open_run_toolbox


class RunHooks(NamedTuple):
    """What a run's clients give the engine: the verdict, and what the progress display and cost settling read."""

    verdict: VerdictFn
    search_health: Callable[[], str | None] | None = None
    pricing: Pricing | None = None
    held_back: Callable[[], dict[str, float]] | None = None
    evidence_fns: EvidenceFns | None = None
    """Under --evidence shared or team, the real investigation (or team steps) and judging (open_clients)."""
    evidence: SharedEvidence | None = None
    """Under --evidence shared, the run's evidence (fanout.engine.evidence.share_evidence)."""
    chat: ChatClient | None = None
    """The run's chat client, for a workload's preparation step (fanout.research.prepare); None when scripted."""
    models: tuple[ModelSpec, ...] = ()
    """The run's models as the pre-flight checked them (prices, tool support), in the order given."""


def scripted_hooks(verdict_fn: VerdictFn | None, settings: RunSettings) -> RunHooks:
    """The engine alone, as tests drive it: their verdict, priced by the models' own specs; no client is made."""
    return RunHooks(verdict_fn or _no_verdict, pricing=Pricing({m.name: m for m in settings.models}))


async def _no_verdict(item: Item, model: ModelSpec) -> VerdictRecord:
    raise AssertionError("a run with --evidence shared judges through its evidence functions")


async def open_clients(stack: AsyncExitStack, settings: RunSettings, api_key: str | None, prompt: Prompt,
                       run_dir: Path) -> RunHooks:
    """Clients made once for the run, checked by the pre-flight, and closed by the exit stack.

    Besides the verdict: the search alarm and the models held back by learned
    limits, for the progress display, and how to price calls of attempts cut
    off before they were logged.
    """
    http = await stack.enter_async_context(make_http_client(settings.concurrency, user_agent=settings.tools.user_agent))
    checked = await preflight(http, settings, api_key)
    chat = ChatClient(base_url=settings.base_url, api_key=api_key, http=http, request_timeout_s=settings.chat_timeout_s)
    tools = await stack.enter_async_context(open_run_toolbox(http, settings.tools, run_dir))
    lookup = chat.generation_cost if is_openrouter(settings.base_url) else None
    pricing = Pricing({**{m.name: m for m in settings.models}, **checked}, lookup)
    specs = {m.name: checked.get(m.name, m) for m in settings.models}
    verdict = _verdict_fn(settings, specs, chat, tools, prompt, run_dir, pricing)
    evidence_fns = _evidence_fns(settings, specs, chat, tools, prompt, run_dir) if settings.shares_evidence else None
    return RunHooks(verdict, tools.health.warning, pricing, chat.held_back, evidence_fns, chat=chat,
                    models=tuple(specs[m.name] for m in settings.models))


def _attempt(run_dir: Path, key: int, name: str) -> AttemptFile:
    """The file a verdict's chat calls are written down in as they happen, placed after the log's last line."""
    log = log_path(run_dir)
    return AttemptFile(run_dir, key, name, log.stat().st_size if log.exists() else 0)


def _verdict_fn(settings: RunSettings, specs: dict[str, ModelSpec], chat: ChatClient, tools: ToolBox, prompt: Prompt,
                run_dir: Path, pricing: Pricing) -> VerdictFn:
    """One item's verdict by one model, its calls written down; a bug becomes an `error` record with their cost."""

    async def verdict(item: Item, model: ModelSpec) -> VerdictRecord:
        attempt = _attempt(run_dir, item.key, model.name)
        started = time.monotonic()
        try:
            return await run_verdict(
                item, specs.get(model.name, model), chat=chat, tools=tools, prompt=prompt,
                max_turns=settings.max_turns, timeout_s=settings.verdict_timeout_s, watcher=attempt,
                samples=settings.samples, swap_labels=settings.swap_labels,
            )
        except ModelRefused:
            if not attempt.answered_calls:  # refused before anything was generated: nothing to settle
                discard_attempt(run_dir, item.key, model.name)
            raise
        except Exception as exc:  # a bug: logging its record discards the in-flight file, so the record keeps its cost
            cost = await pricing.attempt_cost(model.name, attempt.answered_records, attempt.cut_off)
            return failure_record(item, model, exc, time.monotonic() - started, cost)
        finally:
            attempt.close()

    return verdict


def _evidence_fns(settings: RunSettings, specs: dict[str, ModelSpec], chat: ChatClient, tools: ToolBox,
                  prompt: Prompt, run_dir: Path) -> EvidenceFns:
    """The investigation and the judging of a shared run, each writing its chat calls down as a verdict does (the
    investigation under the investigator's name and " (investigation)", so a kill cannot hide what it cost)."""

    async def investigate(item: Item, investigator: str) -> EvidenceRecord:
        model = specs[investigator]
        attempt = _attempt(run_dir, item.key, investigation_key(model.name))
        try:
            return await investigate_item(item, model, chat=chat, tools=tools, prompt=prompt,
                                          max_turns=settings.max_turns, timeout_s=settings.verdict_timeout_s,
                                          watcher=attempt)
        finally:
            attempt.close()

    async def judge(item: Item, model: ModelSpec, evidence: EvidenceRecord) -> VerdictRecord:
        attempt = _attempt(run_dir, item.key, model.name)
        try:
            return await judge_evidence(item, specs.get(model.name, model), evidence, chat=chat, prompt=prompt,
                                        timeout_s=settings.verdict_timeout_s, watcher=attempt,
                                        samples=settings.samples, swap_labels=settings.swap_labels)
        except ModelRefused:
            if not attempt.answered_calls:
                discard_attempt(run_dir, item.key, model.name)
            raise
        finally:
            attempt.close()

    def logged(record: EvidenceRecord) -> None:  # its calls' cost is in the evidence log now
        if record.team is None:
            discard_attempt(run_dir, record.edit_rcid, investigation_key(record.investigator))

    def step_logged(step: TeamStep) -> None:  # its calls' cost is in team.jsonl now
        discard_attempt(run_dir, step.edit_rcid, step_attempt_name(step.model, step.step))

    team = ClientTeamSteps(settings, specs, chat, tools, prompt, run_dir) if settings.researches_as_team else None
    return EvidenceFns(investigate, judge, logged, team, step_logged)


class ClientTeamSteps:
    """A research team's paid steps through the run's clients (fanout.research.team_steps), each writing its chat
    calls down as it makes them, under `<model> (team <step>)`, so a kill cannot hide what a step cost."""

    def __init__(self, settings: RunSettings, specs: dict[str, ModelSpec], chat: ChatClient, tools: ToolBox,
                 prompt: Prompt, run_dir: Path) -> None:
        self.settings, self.specs, self.chat, self.tools, self.prompt, self.run_dir = (
            settings, specs, chat, tools, prompt, run_dir)

    async def plan(self, item: Item, model: str, step: str, request: str, round_: int) -> TeamStep:
        with self._attempt(item, model, step) as attempt:
            return await plan_step(item, self.specs[model], step, request, round_=round_, chat=self.chat,
                                   prompt=self.prompt, timeout_s=self.settings.verdict_timeout_s, watcher=attempt)

    async def work(self, item: Item, model: str, step: str, brief: str, round_: int) -> TeamStep:
        with self._attempt(item, model, step) as attempt:
            return await work_step(item, self.specs[model], step, brief, round_=round_, chat=self.chat,
                                   tools=self.tools, prompt=self.prompt, max_turns=self.settings.max_turns,
                                   timeout_s=self.settings.verdict_timeout_s, watcher=attempt)

    async def aggregate(self, item: Item, model: str, request: str) -> TeamStep:
        with self._attempt(item, model, "aggregate") as attempt:
            return await aggregate_step(item, self.specs[model], request, chat=self.chat, prompt=self.prompt,
                                        timeout_s=self.settings.verdict_timeout_s, watcher=attempt)

    @contextmanager
    def _attempt(self, item: Item, model: str, step: str) -> Iterator[AttemptFile]:
        attempt = _attempt(self.run_dir, item.key, step_attempt_name(model, step))
        try:
            yield attempt
        finally:
            attempt.close()


def investigation_key(model: str) -> str:
    """The name an investigation's in-flight calls are written down under (fanout.store.attempts)."""
    return f"{model} (investigation)"
