"""One type for every judging strategy: which models an edit asks, when it is settled, and how a report replays it.

A strategy is a frozen settings object (`AllModels`, `CascadeStrategy`,
`RouterStrategy`) behind the `Strategy` protocol. The engine, the manifest,
the run's settings and the report's policy replay ask it; none of them
compares a strategy's name. Adding a strategy is one new module here that
defines the class and registers it in `STRATEGIES` (fanout.judging.registry).

At run time a strategy that does not ask every model of every edit makes a
`Plan` over the run's models and their cost per verdict: the step an edit
takes when the run (re)starts, and the next one after each answer. The same
decision functions (fanout.judging.policy) serve the replay, so a replayed
policy scores exactly what a run of it would have done.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Protocol

from fanout.base.errors import ConfigError
from fanout.base.item import Item
from fanout.judging.policy import Aspect, Judged
from fanout.base.records import Escalation, VerdictRecord


class Answer(NamedTuple):
    """What a strategy reads of a logged record (fanout.judging.policy.Judged, plus its place)."""

    model: str
    verdict: str | None
    stability: float | None
    status: str
    step: int
    reason: str
    cost_usd: float | None
    confidence: float | None = None
    """The model's stated confidence (fanout.judging.policy.confidence reads it at one sample)."""

    @classmethod
    def of(cls, record: VerdictRecord) -> Answer:
        escalation = record.escalation or Escalation(1, "")
        return cls(record.model, record.verdict, getattr(record, "stability", None), record.status,
                   escalation.step, escalation.reason, record.cost_usd, getattr(record, "confidence", None))


class Settlement(NamedTuple):
    """What a strategy that chose its models made of an edit, read back from the records it chose.

    The report acts on it instead of a vote of every model: a cascade that
    settled an edit on two agreeing models asked only those, and the models it
    never asked are no missing votes.
    """

    verdict: str | None
    settled: bool
    """False: the strategy has not settled the edit yet (a stopped run, a step that waits for a resume)."""
    agreed: bool
    """Settled with the support its rule asks for; False when it settled for want of a better answer
    (a cascade whose models never agreed): a human should look."""
    reason: str
    """The strategy's own words for what it did."""
    asked: tuple[str, ...]
    """The models it asked, in step order: its quorum counts these."""
    by: tuple[str, ...]
    """The models whose records the verdict rests on."""


class Step(NamedTuple):
    """The next model to ask for an edit, and the step and reason its record will carry."""

    model: str
    escalation: Escalation


class Replayed(NamedTuple):
    """One replayed policy on one edit."""

    verdict: str | None
    cost_usd: float
    """The known costs of the records the policy used (an unknown cost adds nothing)."""
    steps: int
    """Models asked."""
    agreed: bool | None
    """For a cascade, Settled.agreed; None where a strategy has no notion of agreement."""


class Plan(Protocol):
    """A strategy over one run's models: each item's steps, decided from its answers in step order.

    It reads of an item only what the seam gives (fanout.base.item): its aspect, for a router."""

    def describe(self) -> str:
        """One line for the start of a run: the order and what each model is taken to cost."""
        ...

    def next_step(self, item: Item, answered: Sequence[Answer]) -> Step | None:
        """The next model, or None when the edit is settled (or waits for a resume to retry its last step)."""
        ...

    def resume_step(self, item: Item, answered: Sequence[Answer]) -> Step | None:
        """The step an edit takes when the run (re)starts: its last step again when that record is to be retried."""
        ...


class Replayer(Protocol):
    """A strategy replayed over a run that asked every model on every edit (`fanout report --policy`)."""

    def replay(self, records: Mapping[str, Judged], aspect: Aspect) -> Replayed | None:
        """The strategy's result on one edit, or None when it asks a model that has no record there."""
        ...


class Strategy(Protocol):
    """Which models judge an edit, and everything the rest of fanout asks of that choice."""

    name: ClassVar[str]
    """The --strategy value, and what each record it chose carries in `strategy`."""
    asks_every_model: ClassVar[bool]
    """Every model on every edit: a run of it can be replayed as any other strategy."""

    def settings(self) -> dict[str, Any]:
        """The strategy and the settings its decisions read, as plain data for the manifest."""
        ...

    def most_pairs(self, models: int) -> int:
        """The most (edit, model) pairs it asks of one edit."""
        ...

    def plan(self, models: Sequence[str], cost: Mapping[str, float | None],
             retry_statuses: frozenset[str]) -> Plan | None:
        """Its steps over the run's models; None when every pair is asked at once."""
        ...

    def replayer(self, models: Sequence[str], cost: Mapping[str, float | None]) -> Replayer:
        """The strategy as the report replays it over a run of every model."""
        ...

    def replay_notes(self) -> list[str]:
        """What a reader of its replayed row must know."""
        ...

    def settle(self, models: Sequence[str], answered: Sequence[Answer]) -> Settlement | None:
        """What it made of an edit from the answers it chose (in step order) among the run's `models`;
        None when it asks every model, whose votes the committee then counts."""
        ...


def retry_step(answered: Sequence[Answer], retry_statuses: frozenset[str]) -> Step | None:
    """An edit whose last record ended in a status --retry runs again takes that same step again on resume."""
    if answered and answered[-1].status in retry_statuses:
        last = answered[-1]
        return Step(last.model, Escalation(last.step, last.reason))
    return None


def usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.5f}"


def describe_settings(settings: Mapping[str, Any]) -> str:
    """`--strategy cascade (autopass 0.9; autopass_verdicts verified-high,verified-low)`, from the manifest's entry."""
    details = [f"{key} {','.join(map(str, value)) if isinstance(value, list) else value}"
               for key, value in settings.items() if key != "name"]
    return f"--strategy {settings.get('name')}" + (f" ({'; '.join(details)})" if details else "")


def check_resume(strategy: Strategy, recorded: Mapping[str, Any] | None) -> None:
    """A run's records were chosen by its strategy, and a resume rebuilds each edit's steps from them:
    another strategy (or other settings of it) would decide on records it did not choose. Not even --force."""
    before = dict(recorded) if recorded else {"name": "all"}
    now = strategy.settings()
    if before != now:
        raise ConfigError(f"cannot resume this run directory with {describe_settings(now)}: it was started with "
                          f"{describe_settings(before)}. Resume with those settings, or use a new --run-dir.")


@dataclass(frozen=True)
class StrategyOptions:
    """A strategy's settings as the command line gives them: None is "not given"."""

    autopass: float | None = None
    autopass_verdicts: frozenset[str] | None = None
    gates: Mapping[str, tuple[str, ...]] | None = None
    router_accuracy: Mapping[tuple[str, str], float] | None = None
    router_accuracy_source: str | None = None
    weights: Mapping[str, float] | None = None
    """A router's cost weights (--cost-weights, seed 003's JUDGE_MODEL_COST): in place of the run's cost per verdict
    of the models they name; lower is cheaper."""
