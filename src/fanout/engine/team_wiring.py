"""A research team at run time (--evidence team): who is on it, and each step durable as it finishes.

The team is fixed for the whole run: --planner, --workers and --aggregator,
or chosen when the run starts from the endpoint's prices and tool support
(`choose_team`): the workers are the cheapest tool-calling models of
different families, in the order the cascade uses (so their blind spots
differ), and the planner the run's priciest model (seed 003's strong
planner; planning is two short calls). The manifest pins the team; a resume
can change none of it (fanout.engine.evidence.check_evidence_resume).

`TeamProducer` makes an item's pooled evidence (fanout.research.team): it
reads the steps an earlier start logged for the item, and appends each new
step to team.jsonl (fanout.store.team_log) and fsyncs it as it finishes,
shielded from a stop, before the next step that reads it starts. So a kill
at any moment repeats no paid step, and each step's cost is counted once:
to the run's spend as it is logged, and never again with the pooled evidence.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

import anyio

from fanout.base.item import Item, Prompt
from fanout.base.records import EvidenceRecord, TeamStep
from fanout.engine.settings import RunSettings
from fanout.engine.stepping import price_per_verdict
from fanout.llm.models import ModelSpec
from fanout.research.roster import Team
from fanout.research.team import TeamSteps, run_team
from fanout.store.team_log import TeamLog

DEFAULT_WORKERS = 2


def family(model: str) -> str:
    """A model's family: its maker, the part of its id before the slash (`deepseek` of `deepseek/deepseek-v3.2`)."""
    return model.split("/", 1)[0] if "/" in model else model


def by_price(models: Sequence[ModelSpec]) -> list[ModelSpec]:
    """Cheapest first by the cascade's cost per verdict from prices; unknown prices last, then the order given."""
    ranked = sorted(enumerate(models), key=lambda p: (price_per_verdict(p[1]) is None, price_per_verdict(p[1]) or 0.0,
                                                      p[0]))
    return [m for _, m in ranked]


def choose_workers(models: Sequence[ModelSpec], count: int = DEFAULT_WORKERS) -> tuple[str, ...]:
    """The cheapest tool-calling models of different families; models of a family already on the team fill the
    places left when the run has too few families."""
    native = [m for m in models if m.tool_protocol != "prompted"] or list(models)
    ranked = by_price(native)
    chosen: list[str] = []
    for model in ranked:
        if len(chosen) < count and family(model.name) not in {family(c) for c in chosen}:
            chosen.append(model.name)
    chosen += [m.name for m in ranked if m.name not in chosen][: count - len(chosen)]
    return tuple(chosen)


def choose_planner(models: Sequence[ModelSpec]) -> str:
    """The priciest model by the cascade's cost per verdict (a model without prices only when none has them)."""
    priced = [m for m in models if price_per_verdict(m) is not None]
    return by_price(priced)[-1].name if priced else models[0].name


def with_team(settings: RunSettings, models: Sequence[ModelSpec]) -> RunSettings:
    """Team settings with every member named (the defaults chosen now from `models`' prices, to be pinned)."""
    if not settings.researches_as_team:
        return settings
    planner = settings.planner or choose_planner(models)
    workers = settings.workers or choose_workers(models)
    return dataclasses.replace(settings, planner=planner, workers=workers)


def team_of(settings: RunSettings) -> Team:
    assert settings.planner is not None and settings.workers, "the team is named before the run (with_team)"
    return Team(settings.planner, settings.workers, settings.aggregator, settings.team_rounds)


def describe_team(team: Team) -> str:
    aggregator = f"; {team.aggregator} summarises the workers' notes" if team.aggregator else ""
    rounds = "one round" if team.rounds == 1 else "a second round when the planner names something missing"
    return (f"{team.planner} plans, {', '.join(team.workers)} research at the same time ({rounds}){aggregator}")


class TeamProducer:
    """Each item's pooled evidence, from its logged steps and new ones, each logged durably as it finishes."""

    def __init__(self, log: TeamLog, team: Team, steps: TeamSteps, prompt: Prompt,
                 step_logged: Callable[[TeamStep], None] | None = None) -> None:
        self.log = log
        self.team = team
        self._steps = steps
        self._prompt = prompt
        self._step_logged = step_logged
        """Told of each step once it is in the log (the run discards its in-flight calls file then)."""
        self.paid: Callable[[float], None] = lambda cost: None
        """Told what each new step cost, as it is logged (the run's spend, --max-cost, progress)."""
        self.steps_run = 0

    async def produce(self, item: Item) -> EvidenceRecord:
        done = await anyio.to_thread.run_sync(self.log.steps_of, item.key)
        return await run_team(item, self.team, self._steps, prompt=self._prompt, log=self._log_step, done=done)

    async def _log_step(self, step: TeamStep) -> None:
        step = dataclasses.replace(step, finished_ns=time.time_ns())
        with anyio.CancelScope(shield=True):  # paid for: it reaches the log even if a stop cancels the item
            await anyio.to_thread.run_sync(self.log.append, step)
            if self._step_logged is not None:
                self._step_logged(step)
        self.steps_run += 1
        self.paid(step.cost_usd or 0.0)
