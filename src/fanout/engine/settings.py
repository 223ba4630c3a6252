"""Everything that shapes a run, pinned in its manifest: the models, the tools' settings, the strategy, the bounds.

Each default is written once, on the dataclasses below (the command line
reads it from there), and each setting is checked once, when its dataclass
is built. RunOptions is what a user typed, None meaning "the default";
RunSettings.from_options turns it into checked settings.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from fanout.config import require_count, require_http_url, require_not_negative, require_positive
from fanout.errors import ConfigError
from fanout.judging.all_models import AllModels
from fanout.judging.policy_file import load_gates
from fanout.judging.registry import build_strategy
from fanout.judging.strategy import Strategy, StrategyOptions
from fanout.llm.keys import OPENROUTER_BASE_URL
from fanout.llm.models import CHAT_TIMEOUT_S, DEFAULT_MODELS, ModelSpec, load_limits, model_spec
from fanout.records import STATUSES
from fanout.sift.budget import MAX_TURNS, VERDICT_TIMEOUT_S
from fanout.tools.search_config import apply_search_options
from fanout.tools.settings import ToolSettings

T = TypeVar("T")

RETRY_CHOICES = STATUSES[1:]
"""Record statuses a resume may run again (`ok` never does)."""
MAX_SAMPLES = 20
"""The most samples of the verdict phase --samples may ask for (each one is paid for)."""
LEAD_PER_SLOT = 4
"""Edits of lead per verdict slot and model when --max-lead is not given (see RunSettings.from_options)."""




@dataclass(frozen=True)
class RunSettings:
    """Everything that shapes a run; pinned in the run's manifest."""

    models: tuple[ModelSpec, ...] = DEFAULT_MODELS
    base_url: str = OPENROUTER_BASE_URL
    tools: ToolSettings = field(default_factory=ToolSettings)
    concurrency: int = 8
    """Verdicts in flight at once, across models."""
    max_turns: int = MAX_TURNS
    """Tool-calling turns in the investigation phase."""
    verdict_timeout_s: float = VERDICT_TIMEOUT_S
    """Seconds per verdict, both phases together."""
    chat_timeout_s: float = CHAT_TIMEOUT_S
    """Seconds one chat request may take before it counts as failed (and is retried)."""
    max_lead: int = 10
    """Edits any model may run ahead of the slowest; from_options raises it to what `concurrency` needs."""
    grace_s: float = 30.0
    """Seconds verdicts in flight get to finish after the first Ctrl-C."""
    max_cost_usd: float | None = None
    retry_statuses: frozenset[str] = frozenset({"error"})
    """Record statuses that run again on resume; `error` always does by default."""
    strategy: Strategy = field(default_factory=AllModels)
    """Which models judge an edit (fanout.judging.registry.STRATEGIES)."""
    samples: int = 1
    """Times the verdict phase is asked over each investigation (fanout.sift.samples); 1 = once, as always."""
    swap_labels: bool = True
    """Under samples > 1, list the verdict labels in another order in each sample (fanout.sift.swap);
    False only for the benchmark that measures what the swap fixes (the hidden --no-label-swap)."""

    PINNED: ClassVar[Mapping[str, str]] = {"samples": "--samples", "swap_labels": "--no-label-swap"}
    """Settings (keys of `summary`) a resume may not change without --allow-settings-change: each changes what a
    verdict is. The strategy is pinned apart, not even with that flag (fanout.judging.strategy.check_resume)."""

    def __post_init__(self) -> None:
        if not self.models:
            raise ConfigError("--models: name at least one model.")
        require_http_url(self.base_url, "--base-url")
        require_count(self.concurrency, "--concurrency")
        require_count(self.max_turns, "--max-turns")
        require_positive(self.verdict_timeout_s, "--timeout")
        require_positive(self.chat_timeout_s, "--request-timeout")
        require_count(self.max_lead, "--max-lead")
        require_count(self.samples, "--samples")
        if self.samples > MAX_SAMPLES:
            raise ConfigError(f"--samples must be at most {MAX_SAMPLES} (got {self.samples}).")
        require_not_negative(self.grace_s, "--grace")
        require_not_negative(self.max_cost_usd, "--max-cost")
        unknown = self.retry_statuses - set(RETRY_CHOICES)
        if unknown:
            raise ConfigError(
                f"--retry: unknown status {', '.join(sorted(unknown))}; choose from {', '.join(RETRY_CHOICES)}."
            )

    @classmethod
    def from_options(cls, options: RunOptions) -> RunSettings:
        """The settings a user asked for: each option left as None takes the default above."""
        require_count(options.per_model_concurrency, "--per-model-concurrency")
        require_positive(options.requests_per_minute, "--rpm")
        models = _models(options)
        settings = cls(
            models=models,
            base_url=_or(options.base_url, cls.base_url),
            tools=_tool_settings(options),
            concurrency=_or(options.concurrency, cls.concurrency),
            max_turns=_or(options.max_turns, cls.max_turns),
            verdict_timeout_s=_or(options.verdict_timeout_s, cls.verdict_timeout_s),
            chat_timeout_s=_or(options.chat_timeout_s, cls.chat_timeout_s),
            max_lead=_or(options.max_lead, cls.max_lead),
            grace_s=_or(options.grace_s, cls.grace_s),
            max_cost_usd=options.max_cost_usd,
            retry_statuses=_statuses(options.retry),
            strategy=_strategy(options, models),
            samples=_whole_number(options.samples, "--samples", cls.samples),
            swap_labels=options.swap_labels,
        )
        if options.max_lead is None:
            settings = dataclasses.replace(settings, max_lead=settings.lead_for_concurrency())
        return settings

    def summary(self) -> dict[str, Any]:
        """The settings worth pinning in the manifest, as plain data (no secrets live in RunSettings)."""
        return {
            "base_url": self.base_url,
            "searxng_url": self.tools.searxng_url,
            "search_providers": list(self.tools.search_providers),
            "concurrency": self.concurrency,
            "max_turns": self.max_turns,
            "verdict_timeout_s": self.verdict_timeout_s,
            "max_lead": self.max_lead,
            "max_cost_usd": self.max_cost_usd,
            "strategy": self.strategy.settings(),
            "samples": self.samples,
            "swap_labels": self.swap_labels,
            "models": {
                m.name: {k: v for k, v in dataclasses.asdict(m).items() if k != "name" and v is not None}
                for m in self.models
            },
        }

    def lead_for_concurrency(self) -> int:
        """The default lead, or more when `concurrency` needs it.

        The lead bound lets at most about lead x models verdicts be in flight when
        the models keep pace, so a fixed 10 would hold --concurrency 256 with four
        models to about 40. Four times the edits the concurrency spans lets one
        verdict take twice the usual time without idling slots: at twice, `make
        bench` saw --concurrency 256 drop to 216 in flight while a slow verdict
        held the window.
        """
        return max(RunSettings.max_lead, math.ceil(LEAD_PER_SLOT * self.concurrency / len(self.models)))

    def lead_warning(self) -> str | None:
        """Why fewer verdicts than `concurrency` can run at once, when max_lead is what holds them."""
        room = self.max_lead * len(self.models)
        if room >= self.concurrency:
            return None
        return (f"--max-lead {self.max_lead} with {len(self.models)} model(s) lets about {room} verdicts run at once, "
                f"fewer than --concurrency {self.concurrency}")


@dataclass(frozen=True)
class RunOptions:
    """What a user asked for, as given: None everywhere means "the default", which lives on the settings."""

    models: tuple[str, ...] = ()
    """Model names in the order given (duplicates dropped); () = the default models."""
    limits_file: Path | None = None
    """A YAML table {model: {max_concurrency, requests_per_minute, ...}}; the flags below win over it."""
    per_model_concurrency: int | None = None
    requests_per_minute: float | None = None
    base_url: str | None = None
    searxng_url: str | None = None
    allow_private_urls: bool = False
    fetch_delay_s: float | None = None
    search_providers: str | None = None
    """Comma-separated provider names, as --search-providers takes them."""
    search_config: Path | None = None
    concurrency: int | None = None
    verdict_timeout_s: float | None = None
    chat_timeout_s: float | None = None
    max_turns: int | None = None
    max_lead: int | None = None
    """None = enough lead for `concurrency` (RunSettings.lead_for_concurrency)."""
    grace_s: float | None = None
    max_cost_usd: float | None = None
    retry: str | None = None
    """Comma-separated statuses, as --retry takes them."""
    strategy: str | None = None
    gates_file: Path | None = None
    autopass: float | None = None
    autopass_verdicts: str | None = None
    """Comma-separated verdicts, as --autopass-verdicts takes them."""
    router_accuracy: Mapping[tuple[str, str], float] | None = None
    """Accuracy per (aspect key, model) measured on a labelled earlier run (the command that reads it, `fanout run
    --router-accuracy RUN_DIR --labels FILE`, measures it before the settings are built)."""
    router_accuracy_source: str | None = None
    """Where router_accuracy was measured, for the manifest."""
    samples: str | None = None
    """A whole number, as --samples takes it."""
    swap_labels: bool = True


def _models(options: RunOptions) -> tuple[ModelSpec, ...]:
    if not options.models:
        names: tuple[str, ...] = tuple(m.name for m in DEFAULT_MODELS)
    else:
        names = tuple(dict.fromkeys(options.models))
    table = load_limits(options.limits_file) if options.limits_file else {}
    flags = {"max_concurrency": options.per_model_concurrency, "requests_per_minute": options.requests_per_minute}
    flags = {k: v for k, v in flags.items() if v is not None}
    return tuple(model_spec(name, **{**table.get(name, {}), **flags}) for name in names)


def _strategy(options: RunOptions, models: tuple[ModelSpec, ...]) -> Strategy:
    """The strategy asked for, its files read and checked; a flag of another strategy is a mistake, not ignored."""
    verdicts = options.autopass_verdicts
    given = StrategyOptions(
        autopass=options.autopass,
        autopass_verdicts=None if verdicts is None else frozenset(v.strip() for v in verdicts.split(",") if v.strip()),
        gates=None if options.gates_file is None else load_gates(options.gates_file),
        router_accuracy=options.router_accuracy,
        router_accuracy_source=options.router_accuracy_source,
    )
    return build_strategy(_or(options.strategy, AllModels.name), given, [m.name for m in models])


def _tool_settings(options: RunOptions) -> ToolSettings:
    tools = ToolSettings(
        searxng_url=_or(options.searxng_url, ToolSettings.searxng_url),
        allow_private_urls=options.allow_private_urls,
        per_host_delay_s=_or(options.fetch_delay_s, ToolSettings.per_host_delay_s),
    )
    return apply_search_options(tools, providers=options.search_providers, config=options.search_config)


def _or(value: T | None, default: T) -> T:
    """The value given, or the dataclass default (read from the class, so it is written only there)."""
    return default if value is None else value


def _statuses(text: str | None) -> frozenset[str]:
    if text is None:
        return RunSettings.retry_statuses
    return frozenset(s.strip() for s in text.split(",") if s.strip())


def _whole_number(text: str | None, name: str, default: int) -> int:
    """A count given as text (so that `--samples x` is one line naming the flag, like every other bad value)."""
    if text is None:
        return default
    try:
        return int(text.strip())
    except ValueError:
        raise ConfigError(f"{name} must be a whole number (got {text!r}).") from None
