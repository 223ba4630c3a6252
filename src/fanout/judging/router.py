"""`--strategy router`: one model per edit, within the gate of the edit's aspect, by measured accuracy, then cost."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fanout.base.errors import ConfigError
from fanout.judging.file_values import gate_map, weight_map
from fanout.judging.policy import Aspect, Judged, Router, cheapest_first
from fanout.judging.strategy import Answer, Replayed, Settlement, Step, StrategyOptions, retry_step, usd
from fanout.base.item import Item
from fanout.base.records import Escalation


@dataclass(frozen=True)
class RouterStrategy:
    """A router's settings: the gates, and accuracy measured on a labelled earlier run or weights from a policy."""

    name: ClassVar[str] = "router"
    flags: ClassVar[tuple[str, ...]] = ("gates", "router_accuracy", "weights")
    misplaced: ClassVar[str] = ("--gates, --router-accuracy and --cost-weights choose a router's model: add --strategy "
                                "router.")
    asks_every_model: ClassVar[bool] = False
    policy_keys: ClassVar[tuple[str, ...]] = ("gates", "weights")

    gates: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Aspect key -> the models allowed for it (--gates FILE)."""
    accuracy: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """(aspect key, model) -> accuracy measured on a labelled earlier run (--router-accuracy)."""
    accuracy_source: str | None = None
    """Where `accuracy` was measured (`RUN_DIR scored against LABELS`), for the manifest."""
    weights: Mapping[str, float] = field(default_factory=dict)
    """Cost weights (a policy file's, or --cost-weights), over the run's cost per verdict of the models they name."""

    @classmethod
    def from_options(cls, options: StrategyOptions, models: Sequence[str]) -> RouterStrategy:
        strategy = cls(gates=dict(options.gates or {}), accuracy=dict(options.router_accuracy or {}),
                       accuracy_source=options.router_accuracy_source, weights=dict(options.weights or {}))
        strategy.router(models, {})  # every gate names models of the run
        unknown = sorted(set(strategy.weights) - set(models))
        if unknown and models:
            raise ConfigError(f"--cost-weights names {', '.join(unknown)}, not among the run's models "
                              f"({', '.join(models)}).")
        return strategy

    @classmethod
    def from_policy(cls, settings: Mapping[str, Any]) -> RouterStrategy:
        """A router as a --policy file describes it (fanout.judging.policy_file): gates, and cost weights."""
        return cls(gates=gate_map(settings.get("gates") or {}, "gates"),
                   weights=weight_map(settings.get("weights") or {}, "weights"))

    def named_models(self) -> set[str]:
        return set(self.weights) | {m for allowed in self.gates.values() for m in allowed}

    def settings(self) -> dict[str, Any]:
        """What the manifest pins; the weights only when given, so a run without them records what it always did."""
        found: dict[str, Any] = {"name": self.name,
                                 "gates": {key: list(models) for key, models in sorted(self.gates.items())},
                                 "router_accuracy": self.accuracy_source}
        if self.weights:
            found["weights"] = dict(sorted(self.weights.items()))
        return found

    def most_pairs(self, models: int) -> int:
        return 1

    def router(self, models: Sequence[str], cost: Mapping[str, float | None]) -> Router:
        return Router(tuple(models), {**cost, **self.weights}, self.gates, self.accuracy)

    def plan(self, models: Sequence[str], cost: Mapping[str, float | None],
             retry_statuses: frozenset[str]) -> RouterPlan:
        return RouterPlan(self.router(models, cost), retry_statuses)

    def replayer(self, models: Sequence[str], cost: Mapping[str, float | None]) -> RouterReplay:
        return RouterReplay(self.router(models, cost))

    def settle(self, models: Sequence[str], answered: Sequence[Answer]) -> Settlement:
        """The one model it chose: its verdict, or no settlement while that model has given none."""
        if not answered:
            return Settlement(None, False, False, "the router has asked no model yet", (), ())
        chosen = answered[0]
        if chosen.verdict is None:
            return Settlement(None, False, False, f"the router's model {chosen.model} gave no verdict "
                              f"({chosen.status}); a resume asks it again", (chosen.model,), ())
        why = chosen.reason.removeprefix("router: ")
        return Settlement(chosen.verdict, True, True, f"{chosen.model} said {chosen.verdict}, chosen by the router "
                          f"as the {why}", (chosen.model,), (chosen.model,))

    def replay_notes(self) -> list[str]:
        return ["A replayed router chooses by cost weight within each gate: accuracy measured on this run's "
                "labels would be scored on the labels it was chosen with."]


class RouterPlan:
    """The router over one run: each edit's one model, chosen before it is asked."""

    def __init__(self, router: Router, retry_statuses: frozenset[str]) -> None:
        self.router = router
        self.retry_statuses = retry_statuses

    def describe(self) -> str:
        costs = ", ".join(f"{m} {usd(self.router.cost.get(m))}" for m in cheapest_first(self.router.models, self.router.cost))
        how = "measured accuracy, then " if self.router.accuracy else ""
        return f"Router, one model per edit by {how}cost: {costs}."

    def resume_step(self, item: Item, answered: Sequence[Answer]) -> Step | None:
        return retry_step(answered, self.retry_statuses) or self.next_step(item, answered)

    def next_step(self, item: Item, answered: Sequence[Answer]) -> Step | None:
        if answered:
            return None
        route = self.router.choose(item.aspect)
        return Step(route.model, Escalation(1, f"router: {route.reason}"))


class RouterReplay:
    """The chosen model's record."""

    def __init__(self, router: Router) -> None:
        self.router = router

    def replay(self, records: Mapping[str, Judged], aspect: Aspect) -> Replayed | None:
        record = records.get(self.router.choose(aspect).model)
        if record is None:
            return None
        return Replayed(record.verdict, getattr(record, "cost_usd", None) or 0.0, 1, None)
