"""A research team (--evidence team, seed 003): a planner, workers at the same time, an optional aggregator.

For one item, `run_team` does, in order:

1. **plan**: the planner writes a brief (fanout.research.brief);
2. **work**: every worker researches the brief at the same time (an anyio
   task group), each its own tool loop, starting from its share of the
   queries; a brief that stayed invalid leaves each to research as a lone
   investigator would, and the evidence says so;
3. **review** (when the team has two rounds): the planner reads what the
   workers did and names what is still missing; if anything is, the workers
   research once more, told what the team has read already;
4. **aggregate** (when the team has an aggregator): a summary of the workers'
   notes;
5. **pool**: one EvidenceRecord: every worker's tool calls and results, each
   page once (by canonical URL) with every worker that read it, each
   worker's notes, the briefs and the summary.

Each step is handed to `log` as it finishes (the engine appends it to
team.jsonl and fsyncs it before the next step that reads it starts), and a
step found in `done` (logged by an earlier start) is not asked again: a kill
at any moment repeats no paid step. A worker's step that failed (an endpoint
error or refusal) is the exception: a new start, building the item's
evidence again, asks that worker again, as a failed shared investigation is
investigated again. The planner's and the aggregator's failures stand: the
evidence is judgeable without them, and says they failed.

Nothing here reads or writes a file, and nothing knows what an item is about.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from fanout.base.item import Item, Prompt
from fanout.base.records import EvidenceRecord, TeamStep, utc_now
from fanout.research.brief import aggregate_request, plan_request, review_request, worker_brief
from fanout.research.roster import Team
from fanout.research.team_pool import pool_evidence
from fanout.tools.fusion import canonical_url

REDONE_STATUSES = frozenset({"error", "refused"})
"""A worker's logged step with one of these is asked again when an item's evidence is built anew."""
GATHERED = ("ok", "timeout", "incomplete")
"""A worker's statuses whose research reaches the judges."""


class TeamSteps(Protocol):
    """The paid steps, by model name (fanout.research.team_steps behind the run's clients; a test scripts them)."""

    async def plan(self, item: Item, model: str, step: str, request: str, round_: int) -> TeamStep: ...

    async def work(self, item: Item, model: str, step: str, brief: str, round_: int) -> TeamStep: ...

    async def aggregate(self, item: Item, model: str, request: str) -> TeamStep: ...


LogStep = Callable[[TeamStep], Awaitable[None]]


@dataclass
class TeamRun:
    """One item's team work in progress: the steps logged before, and those finished now."""

    item: Item
    team: Team
    steps: TeamSteps
    prompt: Prompt
    log: LogStep
    done: dict[str, TeamStep] = field(default_factory=dict)
    finished: list[TeamStep] = field(default_factory=list)

    async def step(self, step_id: str, run: Callable[[], Awaitable[TeamStep]]) -> TeamStep:
        """The step as logged before, or run now and logged before it is returned."""
        found = self.done.get(step_id)
        if found is None:
            found = await run()
            await self.log(found)
        self.finished.append(found)
        return found


def reusable(step: TeamStep) -> bool:
    """A logged step a new start goes on from (every step but a worker's that failed)."""
    return not (step.role == "worker" and step.status in REDONE_STATUSES)


async def run_team(item: Item, team: Team, steps: TeamSteps, *, prompt: Prompt, log: LogStep,
                   done: Sequence[TeamStep] = ()) -> EvidenceRecord:
    """The item's pooled evidence, from the steps logged before (`done`) and those run now (each passed to `log`)."""
    work = TeamRun(item, team, steps, prompt, log, {s.step: s for s in done if reusable(s)})
    noun = prompt.item_noun
    plan = await work.step("plan-1", lambda: steps.plan(item, team.planner, "plan-1", plan_request(noun), 1))
    brief = plan.brief if plan.status == "ok" else None
    round_one = await _workers(work, 1, brief, ())
    if team.rounds > 1 and any(w.status in GATHERED for w in round_one):
        await _review(work, brief, round_one)
    await _aggregate(work)
    return pool_evidence(item, team, work.finished, evidence_id(item, work.finished))


async def _review(work: TeamRun, brief: Mapping[str, Sequence[str]] | None, round_one: Sequence[TeamStep]) -> None:
    """The planner reads round one's reports; the workers go out again only when it names something missing."""
    request = review_request(work.prompt.item_noun, brief, reports(round_one))
    second = await work.step("plan-2", lambda: work.steps.plan(work.item, work.team.planner, "plan-2", request, 2))
    if second.status == "ok" and second.brief and second.brief.get("missing"):
        await _workers(work, 2, second.brief, read_pages(round_one))


async def _aggregate(work: TeamRun) -> None:
    """The aggregator's summary of the workers' notes, when the team has one and some worker left notes."""
    notes = [(s.model, s.round, s.notes) for s in work.finished if s.role == "worker" and s.notes]
    aggregator = work.team.aggregator
    if aggregator is not None and notes:
        noun, item = work.prompt.item_noun, work.item
        await work.step("aggregate", lambda: work.steps.aggregate(item, aggregator, aggregate_request(noun, notes)))


async def _workers(work: TeamRun, round_: int, brief: Mapping[str, Sequence[str]] | None,
                   read: Sequence[str]) -> list[TeamStep]:
    """Every worker's step of one round, at the same time; each logged as it finishes; in the team's order."""
    team, noun = work.team, work.prompt.item_noun
    found: dict[int, TeamStep] = {}

    async def one(index: int, model: str) -> None:
        step_id = f"work-{round_}-{index + 1}"
        text = worker_brief(noun, brief, index, len(team.workers), read)
        found[index] = await work.step(step_id, lambda: work.steps.work(work.item, model, step_id, text, round_))

    async with anyio.create_task_group() as tg:
        for index, model in enumerate(team.workers):
            tg.start_soon(one, index, model)
    return [found[i] for i in range(len(team.workers))]


def reports(workers: Sequence[TeamStep]) -> str:
    """What each worker did, for the planner's review: its searches, the pages it read, its notes."""
    return "\n\n".join(_report(step) for step in workers)


def _report(step: TeamStep) -> str:
    searches = [_argument(c.arguments, "query") for c in step.tool_calls if c.tool == "web_search"]
    pages = [c.final_url or _argument(c.arguments, "url") for c in step.tool_calls if c.tool == "web_fetch" and c.ok]
    lines = [f"### {step.model} ({step.status})",
             "Searched: " + ("; ".join(searches) if searches else "nothing"),
             "Read: " + ("; ".join(pages) if pages else "nothing"),
             "Notes: " + (step.notes or "(none)")]
    return "\n".join(lines)


def read_pages(workers: Sequence[TeamStep]) -> list[str]:
    """The pages the round's workers read, once each (by canonical URL), in order, as the first reader asked."""
    urls = (_argument(c.arguments, "url") or c.final_url or "" for w in workers for c in w.tool_calls
            if c.tool == "web_fetch" and c.ok)
    seen: dict[str, str] = {}
    for url in urls:
        if url:
            seen.setdefault(canonical_url(url), url)
    return list(seen.values())


def _argument(arguments: str, key: str) -> str:
    try:
        value: Any = json.loads(arguments)
    except ValueError:
        return ""
    return str(value.get(key) or "") if isinstance(value, dict) else ""


def evidence_id(item: Item, steps: Sequence[TeamStep]) -> str:
    """`<key>-<12 hex>`: the evidence's id, from the item, its steps and the time it was pooled."""
    basis = [item.key, utc_now(), [(s.step, s.model, s.status, s.timestamp) for s in steps]]
    return f"{item.key}-{hashlib.sha256(json.dumps(basis).encode()).hexdigest()[:12]}"
