"""What a user asked for (RunOptions: each declared option as given, None meaning "the default") and the
settings it makes.

The options are derived from RunSettings' declared fields (fanout.base.declare):
a plain setting takes its value from its option; the models, the tools and
the strategy are built here, each by a small builder from the inputs declared
on its field. The flags' files are read here (--limits, --gates,
--search-config), each once, so a mistake in one is a ConfigError naming the
flag before anything is written. --router-accuracy is measured by the command
that asks for it (fanout run) and arrives here as numbers.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from fanout.base.declare import Options, check_inputs, given_values, options_of
from fanout.engine.settings import RunSettings
from fanout.judging.all_models import AllModels
from fanout.base.errors import ConfigError
from fanout.judging.file_values import gate_map, weight_map
from fanout.judging.policy_file import load_gates
from fanout.judging.router import RouterStrategy
from fanout.judging.registry import build_strategy
from fanout.judging.strategy import Strategy, StrategyOptions
from fanout.llm.models import DEFAULT_MODELS, ModelSpec, load_limits, model_spec
from fanout.tools.search_config import apply_search_options
from fanout.tools.settings import ToolSettings

INPUTS_ORDER = ("limits_file", "gates_file", "search_config", "labels")
"""The order the manifest's `inputs` has always listed these files in; a file option declared later follows them
in declaration order."""


class RunOptions(Options):
    """What a user asked for, as given, by option name (`RunOptions(concurrency=4, samples="3")`); an option not
    given is None, and its default lives on the settings."""

    def __init__(self, **given: Any) -> None:
        super().__init__(RunSettings, given)


class MeasuredAccuracy(NamedTuple):
    """--router-accuracy RUN_DIR scored against --labels FILE, as the command that read them measured it."""

    accuracy: Mapping[tuple[str, str], float]
    """Accuracy per (aspect key, model)."""
    source: str
    """Where it was measured, for the manifest."""


Builder = Callable[[Options, dict[str, Any], MeasuredAccuracy | None], Any]


def settings_from(options: Options, accuracy: MeasuredAccuracy | None = None) -> RunSettings:
    """The settings a user asked for: each option not given takes the default its field declares."""
    check_inputs(options)
    built: dict[str, Any] = {}
    for name, build in BUILDERS.items():
        built[name] = build(options, built, accuracy)
    settings: RunSettings = options.kind(**built, **given_values(options, options.kind), sources=options.sources)
    if options["max_lead"] is None:
        settings = dataclasses.replace(settings, max_lead=settings.lead_for_concurrency())
    return settings


def input_files(options: Options) -> tuple[Path, ...]:
    """The files the options name that the run reads, for the manifest's `inputs` (no output may replace one)."""
    declared = [name for name, option in options_of(options.kind).items() if option.reads_file]
    ordered = [n for n in INPUTS_ORDER if n in declared] + [n for n in declared if n not in INPUTS_ORDER]
    return tuple(Path(options[name]) for name in ordered if isinstance(options[name], (str, Path)))


def _models(options: Options, built: dict[str, Any], accuracy: MeasuredAccuracy | None) -> tuple[ModelSpec, ...]:
    names = tuple(dict.fromkeys(options["models"] or ())) or tuple(m.name for m in DEFAULT_MODELS)
    table = load_limits(options["limits_file"]) if options["limits_file"] else {}
    flags = {"max_concurrency": options["per_model_concurrency"], "requests_per_minute": options["requests_per_minute"]}
    flags = {k: v for k, v in flags.items() if v is not None}
    return tuple(model_spec(name, **{**table.get(name, {}), **flags}) for name in names)


def _tools(options: Options, built: dict[str, Any], accuracy: MeasuredAccuracy | None) -> ToolSettings:
    """The tools' flags, under the search config file for the search fields (--search-providers and
    --search-mode win over the file)."""
    given = given_values(options, ToolSettings)
    providers, mode = given.pop("search_providers", None), given.pop("search_mode", None)
    return apply_search_options(ToolSettings(**given), providers=providers, config=options["search_config"], mode=mode)


def _strategy(options: Options, built: dict[str, Any], accuracy: MeasuredAccuracy | None) -> Strategy:
    """The strategy asked for, its files read and checked; a flag of another strategy is a mistake, not ignored (a
    router's input from seed 003's environment is a default, which another strategy leaves alone)."""
    verdicts = options["autopass_verdicts"]
    name = options["strategy"] or AllModels.name
    given = StrategyOptions(
        autopass=options["autopass"],
        autopass_verdicts=None if verdicts is None else frozenset(v.strip() for v in verdicts.split(",") if v.strip()),
        gates=_router_input(options, name, "gates_file", _gates),
        router_accuracy=None if accuracy is None else accuracy.accuracy,
        router_accuracy_source=None if accuracy is None else accuracy.source,
        weights=_router_input(options, name, "cost_weights", _weights),
    )
    return build_strategy(name, given, [m.name for m in built["models"]])


def _router_input(options: Options, strategy: str, key: str, read: Callable[[Any, str], Any]) -> Any:
    value, label = options[key], options.label(key)
    if value is None or (strategy != RouterStrategy.name and not label.startswith("-")):
        return None
    return read(value, label)


def _gates(value: Any, label: str) -> dict[str, tuple[str, ...]]:
    """--gates FILE, or JUDGE_SMOA_GATES's inline JSON."""
    return gate_map(value, label) if isinstance(value, dict) else load_gates(Path(value))


def _weights(value: Any, label: str) -> dict[str, float]:
    """--cost-weights (or JUDGE_MODEL_COST): a JSON object of model to weight."""
    try:
        found = json.loads(value) if isinstance(value, str) else value
    except ValueError:
        raise ConfigError(f"{label} must be a JSON object of model to cost weight, got {str(value)[:60]!r}") from None
    return weight_map(found, label)


BUILDERS: dict[str, Builder] = {"models": _models, "tools": _tools, "strategy": _strategy}
"""The composite settings' builders, in the order they are built (the strategy checks the models'
names), each reading the inputs declared on its field."""
