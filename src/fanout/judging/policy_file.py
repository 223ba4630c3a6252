"""The files that describe strategies: `fanout run --gates FILE` and `fanout report --policy FILE`.

Each is read and checked once, here, before anything is spent or written; a
mistake is one ConfigError naming the file, the entry and the fix. What the
file leaves out comes from the run: the models, and their cost per verdict
for the cascade's order and the router's weights.

A policy file holds one policy or a list of them:

    - name: cheapest-first          # optional; default: the strategy and its position
      strategy: cascade
      order: [model-a, model-b]     # optional; default: the run's models, cheapest first
      autopass: 0.9                 # optional; default: Thresholds.autopass
      autopass_verdicts: [verified-high, verified-low]   # optional
    - strategy: router
      gates: {time: [model-a], "*": [model-a, model-b]}  # optional; see fanout.judging.policy.Aspect
      weights: {model-a: 1, model-b: 4}                   # optional; default: cost per verdict

A gates file is the `gates` mapping alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fanout.bounded import load_yaml
from fanout.errors import ConfigError
from fanout.judging.policy import AUTOPASS_VERDICTS, Cascade, Router, Thresholds, check_autopass, cheapest_first

STRATEGIES = ("cascade", "router")
_KEYS = {"cascade": {"name", "strategy", "order", "autopass", "autopass_verdicts"},
         "router": {"name", "strategy", "gates", "weights"}}


@dataclass(frozen=True)
class PolicySpec:
    """One policy as the file gives it; `build` fills in what it leaves to the run."""

    name: str
    strategy: str
    order: tuple[str, ...] | None = None
    autopass: float = Thresholds.autopass
    autopass_verdicts: frozenset[str] = AUTOPASS_VERDICTS
    gates: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)

    def build(self, models: Sequence[str], cost: Mapping[str, float | None],
              accuracy: Mapping[tuple[str, str], float] | None = None) -> Cascade | Router:
        """The policy over the run's models; a model the file names that the run lacks is a ConfigError."""
        named = set(self.order or ()) | set(self.weights) | {m for allowed in self.gates.values() for m in allowed}
        missing = sorted(named - set(models))
        if missing:
            raise ConfigError(f"policy {self.name!r} names {', '.join(missing)}, which the run does not have "
                              f"(its models: {', '.join(models)}).")
        if self.strategy == "cascade":
            return Cascade(self.order or cheapest_first(models, cost), self.autopass, self.autopass_verdicts)
        weights: Mapping[str, float | None] = {**cost, **self.weights}
        return Router(tuple(models), weights, self.gates, accuracy or {})


def load_policies(path: Path) -> list[PolicySpec]:
    """Every policy in a --policy file, checked."""
    data = _read(path, "--policy")
    entries = data if isinstance(data, list) else [data]
    if not entries or not all(isinstance(e, dict) for e in entries):
        raise ConfigError(f"--policy {path}: expected a policy (a mapping with `strategy`) or a list of them.")
    specs = [_spec(entry, index, path) for index, entry in enumerate(entries, 1)]
    names = [s.name for s in specs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ConfigError(f"--policy {path}: the name {twice[0]!r} is used twice; give each policy its own name.")
    return specs


def load_gates(path: Path) -> dict[str, tuple[str, ...]]:
    """The aspect -> models mapping of a --gates file, checked."""
    data = _read(path, "--gates")
    if not isinstance(data, dict):
        raise ConfigError(f"--gates {path}: expected a mapping of aspect (like time, time/value_changed or *) "
                          "to a list of models.")
    return _gates(data, f"--gates {path}")


def _read(path: Path, option: str) -> Any:
    return load_yaml(path, f"{option} {path}", fix=f"pass the path of an existing file to {option}")


def _spec(entry: dict[str, Any], index: int, path: Path) -> PolicySpec:
    strategy = entry.get("strategy")
    where = f"--policy {path}: policy {index}"
    if strategy not in STRATEGIES:
        raise ConfigError(f"{where}: strategy must be one of {', '.join(STRATEGIES)} (got {strategy!r}).")
    unknown = sorted(set(entry) - _KEYS[strategy])
    if unknown:
        raise ConfigError(f"{where}: {', '.join(unknown)} is not a {strategy} setting; "
                          f"allowed: {', '.join(sorted(_KEYS[strategy]))}.")
    name = str(entry.get("name") or f"{strategy} {index}")
    try:
        spec = PolicySpec(
            name=name,
            strategy=strategy,
            order=_models(entry["order"], f"{where}: order") if "order" in entry else None,
            autopass=entry.get("autopass", Thresholds.autopass),
            autopass_verdicts=frozenset(_models(entry["autopass_verdicts"], f"{where}: autopass_verdicts"))
            if "autopass_verdicts" in entry else AUTOPASS_VERDICTS,
            gates=_gates(entry.get("gates") or {}, f"{where}: gates"),
            weights=_weights(entry.get("weights") or {}, f"{where}: weights"),
        )
        check_autopass(spec.autopass, spec.autopass_verdicts)  # before any run is read
        if spec.order is not None:
            Cascade(spec.order, spec.autopass, spec.autopass_verdicts)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    return spec


def _models(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(m, str) and m.strip() for m in value):
        raise ConfigError(f"{where} must be a non-empty list of names.")
    return tuple(m.strip() for m in value)


def _gates(data: Any, where: str) -> dict[str, tuple[str, ...]]:
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must map an aspect to a list of models.")
    return {str(key): _models(models, f"{where}: {key}") for key, models in data.items()}


def _weights(data: Any, where: str) -> dict[str, float]:
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must map a model to a number (lower is cheaper).")
    weights = {}
    for model, weight in data.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < math.inf:
            raise ConfigError(f"{where}: {model} must be a finite number of 0 or more (got {weight!r}).")
        weights[str(model)] = float(weight)
    return weights
