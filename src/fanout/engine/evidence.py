"""Shared evidence at run time: each edit investigated once, the investigation durable before any judge reads it.

Every judge of an edit (each (edit, model) pair the orchestrator runs, under
any strategy) asks `SharedEvidence.evidence_for(edit)` first. One lock per
edit makes the first asker investigate while the others wait; the record is
appended to `evidence.jsonl` and fsynced (fanout.store.evidence_log) before
the lock is released, so no judge reads evidence a crash could lose, and
the next asker, in this session or after a resume, finds it there. A cascade's
or router's later step is just another judge of the edit: it reuses the
evidence instead of investigating again.

An investigation that ended in an error (or a refusal) is logged too (it was
paid for), but no judge reads it: the judges' records are errors, and the next
start investigates again. Within one session it is not redone for the other
judges of the edit: they share the error, as they share a success.

The investigator is fixed for the whole run: --investigator, or the run's
cheapest tool-capable model in the order the cascade uses (prices, as no
record exists yet), chosen when the run starts and pinned in the manifest.
A resume can change neither the mode nor the investigator, not even with
--allow-settings-change: the evidence already logged was gathered by it.

A shared run's verdict (share_evidence) is the item's evidence, found or
investigated now, then the judge: the orchestrator runs it like any other
verdict function.

Under --evidence team the same machinery holds an item's pooled evidence:
what makes it is the mode's producer (an investigation by the investigator,
or a research team's work, fanout.engine.team_wiring.TeamProducer), and the rest
(one lock per item, the log, the fsync before any judge reads it, a resume
that never makes it again) is one path for both.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, NamedTuple

import anyio

from fanout.base.errors import ConfigError
from fanout.base.item import Item, Prompt
from fanout.base.records import EvidenceRecord, TeamStep, VerdictRecord
from fanout.engine.orchestrator import VerdictFn
from fanout.engine.settings import RunSettings
from fanout.engine.stepping import price_per_verdict
from fanout.engine.team_wiring import TeamProducer, describe_team, team_of, with_team
from fanout.llm.cost import Pricing
from fanout.llm.models import ModelSpec
from fanout.store.checkpoint import read_records
from fanout.research.team import TeamSteps
from fanout.research.team_pool import TEAM_INVESTIGATOR
from fanout.store.attempts import LoggedElsewhere
from fanout.store.evidence_log import EvidenceLog
from fanout.store.manifest import Manifest
from fanout.store.team_log import TeamLog

Investigate = Callable[[Item, str], Awaitable[EvidenceRecord]]
"""An item's investigation by the model named."""
Judge = Callable[[Item, ModelSpec, EvidenceRecord], Awaitable[VerdictRecord]]
"""One model's verdict over an item's evidence."""


Produce = Callable[[Item], Awaitable[EvidenceRecord]]
"""What makes an item's evidence under the run's mode (an investigation, or a team's work)."""


class EvidenceFns(NamedTuple):
    """Under --evidence shared or team: the investigation of an item (or its team's steps) and one model's verdict
    over its evidence."""

    investigate: Investigate
    judge: Judge
    logged: Callable[[EvidenceRecord], None] | None = None
    """Told of each investigation once it is in the evidence log."""
    team: TeamSteps | None = None
    """Under --evidence team: the team's paid steps (fanout.research.team_steps behind the run's clients)."""
    step_logged: Callable[[TeamStep], None] | None = None
    """Told of each team step once it is in team.jsonl."""


def describe(evidence: Mapping[str, Any]) -> str:
    """`--evidence shared --investigator M`, `--evidence team --planner P --workers A,B ...` (or `--evidence
    own`), from the manifest's entry."""
    mode = evidence.get("mode")
    if mode == "team":
        flags = [f"--planner {evidence.get('planner')}", f"--workers {','.join(evidence.get('workers') or [])}"]
        if evidence.get("aggregator"):
            flags.append(f"--aggregator {evidence.get('aggregator')}")
        return " ".join(["--evidence team", *flags, f"--team-rounds {evidence.get('rounds')}"])
    if mode != "shared":
        return "--evidence own"
    investigator = evidence.get("investigator")
    return "--evidence shared" + (f" --investigator {investigator}" if investigator else "")


def check_evidence_resume(settings: RunSettings, recorded: Mapping[str, Any] | None) -> RunSettings:
    """The settings a resume runs with: the manifest's investigator (or team) where none was named; a switch is
    refused.

    Refused even with --allow-settings-change: a run's verdicts then would rest on two kinds of evidence (or two
    investigators' or teams' evidence), which no comparison of the run could tell apart.
    """
    before = dict(recorded) if recorded else {"mode": "own"}
    if settings.evidence == "shared" and settings.investigator is None and before.get("mode") == "shared":
        settings = dataclasses.replace(settings, investigator=before.get("investigator"))
    if settings.researches_as_team and before.get("mode") == "team":
        settings = _team_as_before(settings, before)
    now = settings.evidence_settings()
    if before != now:
        raise ConfigError(f"cannot resume this run directory with {describe(now)}: it was started with "
                          f"{describe(before)}. Resume with that, or use a new --run-dir.")
    return settings


def _team_as_before(settings: RunSettings, before: Mapping[str, Any]) -> RunSettings:
    """A resumed team's settings: each member or setting the resume did not name, as the run started with it."""
    def given(name: str, default: Any) -> bool:
        return name in settings.sources or getattr(settings, name) != default

    kept: dict[str, Any] = {}
    for name, key, default in (("planner", "planner", None), ("aggregator", "aggregator", None),
                               ("team_rounds", "rounds", 2)):
        if not given(name, default):
            kept[name] = before.get(key)
    if not given("workers", ()):
        kept["workers"] = tuple(before.get("workers") or ())
    return dataclasses.replace(settings, **kept)


def choose_investigator(models: Sequence[ModelSpec]) -> str:
    """The cheapest model that can call tools natively, by the cascade's cost per verdict (from prices; unknown
    prices last, then the order given); a model forced to the prompted protocol investigates only when all are."""
    native = [m for m in models if m.tool_protocol != "prompted"] or list(models)
    priced = [(price_per_verdict(m), i, m.name) for i, m in enumerate(native)]
    return min(priced, key=lambda p: (p[0] is None, p[0] or 0.0, p[1]))[2]


def with_investigator(settings: RunSettings) -> RunSettings:
    """Shared settings with their investigator named (the default chosen now, to be pinned in the manifest)."""
    if settings.evidence != "shared" or settings.investigator is not None:
        return settings
    return dataclasses.replace(settings, investigator=choose_investigator(settings.models))


class SharedEvidence:
    """The run's evidence: found in the log, or made once per edit (by the mode's producer) and logged before it is
    handed out."""

    def __init__(self, log: EvidenceLog, investigator: str, produce: Produce,
                 logged: Callable[[EvidenceRecord], None] | None = None, team: TeamProducer | None = None) -> None:
        self.log = log
        self.investigator = investigator
        """Who makes the evidence, in words (a model; or `team`)."""
        self._produce = produce
        self._logged = logged
        """Told of each investigation once it is in the log (the run discards its in-flight calls file then)."""
        self.team = team
        """Under --evidence team: the producer, its step log and its team."""
        self._locks: dict[int, anyio.Lock] = {}
        self._askers: dict[int, int] = {}
        self._tried: set[int] = set()
        """Edits investigated in this session: their evidence stands for this session even when it failed."""
        self.spent_usd = 0.0
        """What the investigations (or team steps) of this session cost (earlier ones are in `logged_usd`)."""
        self.logged_usd = log.spent_usd + (team.log.spent_usd if team is not None else 0.0)
        """What the evidence logged before this session cost: investigations, and team steps (each once)."""
        self.investigated = 0
        self.on_spent: Callable[[float], None] | None = None
        """Told what each new investigation (or team step) cost (the progress display's spend)."""
        if team is not None:
            team.paid = self.paid

    def paid(self, cost: float) -> None:
        """Spend outside any verdict's record, as it is logged: an investigation, or one team step."""
        self.spent_usd += cost
        if self.on_spent is not None:
            self.on_spent(cost)

    async def evidence_for(self, item: Item) -> EvidenceRecord:
        rcid = item.key
        lock = self._locks.setdefault(rcid, anyio.Lock())
        self._askers[rcid] = self._askers.get(rcid, 0) + 1
        try:
            async with lock:
                found = await anyio.to_thread.run_sync(self.log.get, rcid)
                if found is not None and (found.judgeable or rcid in self._tried):
                    return found
                record = await self._produce(item)
                with anyio.CancelScope(shield=True):  # paid for: it reaches the log even if a stop cancels the judge
                    await anyio.to_thread.run_sync(self.log.append, record)
                    if self._logged is not None:
                        self._logged(record)
                self._tried.add(rcid)
                self.investigated += 1
                if record.team is None:  # a team's steps were counted as each was logged
                    self.paid(record.cost_usd or 0.0)
                return record
        finally:
            self._askers[rcid] -= 1
            if not self._askers[rcid]:
                del self._askers[rcid], self._locks[rcid]


def name_investigator(settings: RunSettings, manifest: Manifest, pricing: Pricing) -> RunSettings:
    """A shared run's investigator (or a team run's members): the ones named, or now (the endpoint's prices and
    tool support known) the defaults; pinned in the manifest, so a resume uses the same ones."""
    priced = [pricing.models.get(m.name, m) for m in settings.models]
    if settings.evidence == "shared" and settings.investigator is None:
        settings = dataclasses.replace(settings, investigator=choose_investigator(priced))
    settings = with_team(settings, priced)
    manifest.settings["evidence"] = settings.evidence_settings()
    return settings


def share_evidence(stack: AsyncExitStack, run_dir: Path, investigator: str, fns: EvidenceFns,
                   settings: RunSettings | None = None, prompt: Prompt | None = None) -> tuple[VerdictFn, SharedEvidence]:
    """The verdict of a shared (or team) run: the item's evidence (logged, or made now and logged), then the judge;
    the evidence log (and a team's step log) stays open as long as `stack`."""
    log = stack.enter_context(EvidenceLog(run_dir))
    if settings is not None and settings.researches_as_team:
        assert fns.team is not None and prompt is not None, "a team run has its steps and its prompt"
        team_log = stack.enter_context(TeamLog(run_dir))
        producer = TeamProducer(team_log, team_of(settings), fns.team, prompt, fns.step_logged)
        shared = SharedEvidence(log, TEAM_INVESTIGATOR, producer.produce, fns.logged, producer)
    else:
        investigate = fns.investigate
        shared = SharedEvidence(log, investigator, lambda item: investigate(item, investigator), fns.logged)
    judge = fns.judge

    async def verdict(item: Item, model: ModelSpec) -> VerdictRecord:
        return await judge(item, model, await shared.evidence_for(item))

    return verdict, shared


def lost_evidence(run_dir: Path, log: EvidenceLog) -> dict[int, list[str]]:
    """Edit -> the models whose latest verdict cites an investigation evidence.jsonl no longer holds (the file was
    deleted, cut short or replaced): those verdicts rest on evidence nobody can read back, and a resume that
    investigated the edit again would leave its judges on two different investigations."""
    held = log.ids()
    lost: dict[int, list[str]] = {}
    for record in read_records(run_dir):
        if record.evidence_id is not None and record.evidence_id not in held:
            lost.setdefault(record.edit_rcid, []).append(record.model)
    return lost


def refuse_lost_evidence(lost: Mapping[int, list[str]], reinvestigate: bool) -> None:
    """ConfigError naming the edits whose cited evidence is lost, unless the resume was told to reinvestigate."""
    if not lost or reinvestigate:
        return
    rcids = sorted(lost)
    shown = ", ".join(map(str, rcids[:5])) + (f" and {len(rcids) - 5} more" if len(rcids) > 5 else "")
    raise ConfigError(
        f"cannot resume: evidence.jsonl no longer holds the investigations that {sum(map(len, lost.values()))} "
        f"verdict(s) of {len(rcids)} edit(s) cite (edits {shown}); restore evidence.jsonl, or pass "
        "--reinvestigate-missing to investigate those edits again and have every model judge them anew")


def logged_elsewhere(shared: SharedEvidence | None) -> LoggedElsewhere | None:
    """For settling in-flight files: a team step's that was logged (its cost is in team.jsonl already)."""
    return shared.team.log.logged_after if shared is not None and shared.team is not None else None


def describe_shared(shared: SharedEvidence, settings: RunSettings) -> str:
    """The start line of a shared (or team) run: who investigates, and what the logs already hold."""
    log = shared.log
    torn = f"; a torn last line was set aside in {log.torn.name}" if log.torn is not None else ""
    if shared.team is not None:
        steps = shared.team.log
        torn += f"; a torn last line was set aside in {steps.torn.name}" if steps.torn is not None else ""
        return (f"Research team: {describe_team(shared.team.team)}, once per edit; every model judges the pooled "
                f"evidence; {log.investigations} pooled evidence record(s) and {steps.steps} team step(s) already "
                f"logged (${shared.logged_usd:.4f}){torn}.")
    return (f"Shared evidence: {settings.investigator} investigates each edit once and every model judges that "
            f"evidence; {log.investigations} investigation(s) already logged (${log.spent_usd:.4f}){torn}.")
