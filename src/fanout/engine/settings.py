"""Everything that shapes a run, pinned in its manifest: the models, the tools' settings, the strategy, the bounds.

Each setting is declared once, as a field below (fanout.base.declare): its
default, flag, help, check, whether a resume may change it, whether it
changes results, and the environment variables read as its default. The
command line's arguments, what a user gave (fanout.engine.options.RunOptions),
the checks, the manifest's record and pins (`summary`, `PINNED`) and the
manual's table of options are derived from those fields; so a new setting is
one field here and the code that uses it. The models, the tools and the
strategy are made of several flags each: their inputs are declared on their
fields, and fanout.engine.options builds them. This module stays light, so a
command that only reads a run does not load the search providers.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from fanout.base.declare import (Alias, DerivedPins, Env, Pin, check_declared, composite, flag, from_environment,
                                 names, nested, recorded, result_keys, setting, switch)
from fanout.base.validate import require_count, require_http_url, require_not_negative, require_one_of, require_positive
from fanout.base.errors import ConfigError
from fanout.judging.all_models import AllModels
from fanout.judging.cascade import CascadeStrategy
from fanout.judging.registry import STRATEGIES
from fanout.judging.router import RouterStrategy
from fanout.judging.strategy import Strategy
from fanout.llm.keys import KEY_HELP, OPENROUTER_BASE_URL
from fanout.llm.models import CHAT_TIMEOUT_S, DEFAULT_MODELS, ModelSpec
from fanout.base.records import STATUSES, VERDICTS
from fanout.research.budget import MAX_TURNS, VERDICT_TIMEOUT_S
from fanout.tools.settings import SEARCH_CONFIG, WEB_SEARCH, WEB_TOOLS, ToolSettings


RETRY_CHOICES = STATUSES[1:]
"""Record statuses a resume may run again (`ok` never does)."""
MAX_SAMPLES = 20
"""The most samples of the verdict phase --samples may ask for (each one is paid for)."""
EVIDENCE_MODES = ("own", "shared", "team")
"""--evidence: every model investigates each edit itself (`own`), one investigation per edit is judged by all
(`shared`), or a research team's pooled evidence per edit is (`team`)."""
TEAM_ROUNDS = ("1", "2")
"""--team-rounds: the workers research once, or once more when the planner's review names something missing."""
LEAD_PER_SLOT = 4
"""Edits of lead per verdict slot and model when --max-lead is not given (see fanout.engine.options.settings_from)."""

MODELS, LIMITS, STRATEGY, EVIDENCE = "models", "limits", "judging strategy", "evidence and samples"
"""Sections of `fanout run --help` (with the tools' WEB_TOOLS and WEB_SEARCH)."""
DEFAULT_NAMES = ", ".join(m.name for m in DEFAULT_MODELS)


def _statuses(text: str, name: str) -> frozenset[str]:
    return frozenset(s.strip() for s in text.split(",") if s.strip())


def _known_statuses(statuses: frozenset[str], name: str) -> None:
    unknown = statuses - set(RETRY_CHOICES)
    if unknown:
        raise ConfigError(f"{name}: unknown status {', '.join(sorted(unknown))}; choose from {', '.join(RETRY_CHOICES)}.")


def _whole_number(text: Any, name: str) -> int:
    """A count given as text (so that `--samples x` is one line naming the flag, like every other bad value)."""
    if isinstance(text, int):
        return text
    try:
        return int(str(text).strip())
    except ValueError:
        raise ConfigError(f"{name} must be a whole number (got {text!r}).") from None


def _samples(value: int, name: str) -> None:
    require_count(value, name)
    if value > MAX_SAMPLES:
        raise ConfigError(f"{name} must be at most {MAX_SAMPLES} (got {value}).")


def _team_rounds(value: int, name: str) -> None:
    require_one_of(str(value), name, TEAM_ROUNDS)


def _switched(name: str, environ: Mapping[str, str]) -> bool | None:
    """An on/off variable of seed 003's pipeline: None when it is not set."""
    text = environ.get(name, "").strip()
    return switch(text, name) if text else None


def _committee_models(text: str, environ: Mapping[str, str]) -> list[str] | None:
    return None if _switched("JUDGE_ENABLE_COMMITTEE", environ) is False else names(text, "JUDGE_COMMITTEE_MODELS")


def _single_judge(text: str, environ: Mapping[str, str]) -> list[str] | None:
    either = _switched("JUDGE_ENABLE_COMMITTEE", environ) or _switched("JUDGE_ENABLE_ROUTER", environ)
    return None if either else [text]


def _router(text: str, environ: Mapping[str, str]) -> str | None:
    if not switch(text, "JUDGE_ENABLE_ROUTER"):
        return None
    if _switched("JUDGE_ENABLE_COMMITTEE", environ):
        raise ConfigError("JUDGE_ENABLE_ROUTER and JUDGE_ENABLE_COMMITTEE are both on; a run has one strategy: "
                          "switch one off, or give --strategy")
    return RouterStrategy.name


def _committee(text: str, environ: Mapping[str, str]) -> str | None:
    return AllModels.name if switch(text, "JUDGE_ENABLE_COMMITTEE") else None


def _inline_mapping(text: str, environ: Mapping[str, str]) -> dict[str, Any]:
    """JUDGE_SMOA_GATES: the gates as inline JSON (the flag takes a file), checked by the strategy's builder."""
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise ConfigError(f"JUDGE_SMOA_GATES must be a JSON object of aspect to a list of models, got {text[:60]!r}")
    return found


def _runs(text: str, environ: Mapping[str, str]) -> str | None:
    return None if _switched("JUDGE_ENABLE_SELF_CONSISTENCY", environ) is False else text



MODEL_INPUTS = (
    flag("-m", "--model", name="models", action="names", metavar="MODEL", group=MODELS, label="--models",
         help=f"a model to fan out to; repeat it (-m a -m b) or give a comma-separated list (-m a,b). "
              f"Default: the four default models, {DEFAULT_NAMES}",
         also=(Alias("--models", nargs="+", help="several models at once, as earlier versions took them; reads "
                                                  "every word up to the next option"),),
         env=(Env("JUDGE_COMMITTEE_MODELS", _committee_models,
                  "a JSON list or comma-separated; not when JUDGE_ENABLE_COMMITTEE=0"),
              Env("JUDGE_MODEL", _single_judge, "one model, when neither the committee nor the router is on"))),
    flag("--limits", name="limits_file", type=Path, metavar="FILE", reads_file=True, group=MODELS,
         help="YAML table {model: {max_concurrency, requests_per_minute, context_window, input_price, output_price, "
              "cached_input_price, cache_write_price, tool_protocol, cache}}; prices in USD per million tokens; "
              "cache: explicit|implicit|off (default: explicit breakpoints for anthropic/ models)"),
    flag("--per-model-concurrency", name="per_model_concurrency", type=int, metavar="N", check=require_count,
         group=MODELS, results=False, help="verdicts in flight per model"),
    flag("--rpm", name="requests_per_minute", type=float, metavar="N", check=require_positive, group=MODELS,
         results=False, help="chat requests per minute per model"),
)
"""What the run's models are made of (fanout.engine.options builds them): the names, the limits table, and
two limits every model gets, which win over the table."""

STRATEGY_INPUTS = (
    flag("--strategy", name="strategy", metavar="|".join(STRATEGIES), group=STRATEGY,
         help="all: every model judges every edit (default); cascade: the cheapest model first, the next only when "
              "its verdict is not accepted, until two agree or the last has answered; router: one model per edit, "
              "chosen by the edit's aspect (property datatype and change type)",
         env=(Env("JUDGE_ENABLE_ROUTER", _router, "1: router"), Env("JUDGE_ENABLE_COMMITTEE", _committee, "1: all"))),
    flag("--autopass", name="autopass", type=float, metavar="X", group=STRATEGY,
         help="cascade: accept one model's verdict in --autopass-verdicts when its confidence reaches X, 0 to 1: the "
              "confidence it stated, or with --samples 2 or more its stability (the share of samples agreeing) "
              f"(default {CascadeStrategy.autopass:g})"),
    flag("--autopass-verdicts", name="autopass_verdicts", metavar="V[,V...]", group=STRATEGY,
         help=f"cascade: verdicts one model may settle, from {','.join(VERDICTS)} "
              f"(default {','.join(sorted(CascadeStrategy.autopass_verdicts))}); others need two models to agree"),
    flag("--gates", name="gates_file", type=Path, metavar="FILE", reads_file=True, group=STRATEGY,
         help="router: YAML mapping of aspect (time, time/value_changed, value_changed or *) to the models allowed "
              "for it; the cheapest allowed is chosen (default: every model allowed)",
         env=(Env("JUDGE_SMOA_GATES", _inline_mapping,
                  "the same mapping as inline JSON; read by the router only (another strategy ignores it)"),)),
    flag("--cost-weights", name="cost_weights", metavar="JSON", group=STRATEGY,
         help="router: a JSON object of model to cost weight, lower is cheaper, used in place of the run's cost per "
              "verdict of the models it names (seed 003's JUDGE_MODEL_COST); name every model of the run, as the "
              "others keep their cost per verdict in USD",
         env=(Env("JUDGE_MODEL_COST", note="read by the router only (another strategy ignores it)"),)),
    flag("--router-accuracy", name="router_accuracy", type=Path, metavar="RUN_DIR", group=STRATEGY,
         help="router: choose by each model's accuracy per aspect in this labelled earlier run (needs --labels); "
              "accuracies within 0.02 count as equal and the cheaper model wins"),
    flag("--labels", name="labels", type=Path, metavar="FILE", reads_file=True, group=STRATEGY,
         help="the truth labels --router-accuracy scores RUN_DIR against (as `fanout report --labels`)"),
)
"""What the strategy is made of (fanout.engine.options builds it; --router-accuracy is measured by the command)."""


@dataclass(frozen=True)
class RunSettings:
    """Everything that shapes a run; pinned in the run's manifest. The fields' order is the manifest's."""

    base_url: str = setting(OPENROUTER_BASE_URL, flag(
        "--base-url", metavar="URL", check=require_http_url, group=WEB_TOOLS,
        help=f"OpenAI-compatible endpoint (default: {{default}}); {KEY_HELP}"), results=True, recorded=True)
    tools: ToolSettings = nested(ToolSettings, inputs=(SEARCH_CONFIG,), results=True)
    concurrency: int = setting(8, flag(
        "--concurrency", type=int, metavar="N", check=require_count, group=LIMITS,
        help="verdicts in flight at once, across models (default {default})"), recorded=True)
    """Verdicts in flight at once, across models."""
    max_turns: int = setting(MAX_TURNS, flag(
        "--max-turns", type=int, metavar="N", check=require_count, group=LIMITS,
        help="tool-calling turns in the investigation (default {default})"), results=True, recorded=True)
    """Tool-calling turns in the investigation phase."""
    verdict_timeout_s: float = setting(VERDICT_TIMEOUT_S, flag(
        "--timeout", type=float, metavar="SECONDS", check=require_positive, group=LIMITS,
        help="seconds per verdict, both phases (default {default})"), results=True, recorded=True)
    """Seconds per verdict, both phases together."""
    chat_timeout_s: float = setting(CHAT_TIMEOUT_S, flag(
        "--request-timeout", type=float, metavar="SECONDS", check=require_positive, group=LIMITS,
        help="seconds one chat request may take before it is retried (default {default})"))
    """Seconds one chat request may take before it counts as failed (and is retried)."""
    max_lead: int = setting(10, flag(
        "--max-lead", type=int, metavar="N", check=require_count, group=LIMITS,
        help=f"edits any model may run ahead of the slowest (default {{default}}, or {LEAD_PER_SLOT} x --concurrency "
             "/ models when that is more, so the concurrency asked for can be used)"), recorded=True)
    """Edits any model may run ahead of the slowest; settings_from raises it to what `concurrency` needs."""
    grace_s: float = setting(30.0, flag(
        "--grace", type=float, metavar="SECONDS", check=require_not_negative, group=LIMITS,
        help="seconds verdicts in flight get after Ctrl-C (default {default})"))
    """Seconds verdicts in flight get to finish after the first Ctrl-C."""
    max_cost_usd: float | None = setting(None, flag(
        "--max-cost", type=float, metavar="USD", check=require_not_negative, group=LIMITS,
        help="stop scheduling once spend reaches this: every attempt's cost, retried and cut-off ones included; a "
             "model whose cost the endpoint may not report needs prices in --limits"), recorded=True)
    retry_statuses: frozenset[str] = setting(frozenset({"error"}), flag(
        "--retry", metavar="STATUSES", check=_known_statuses, group=LIMITS,
        help=f"statuses that run again on resume, comma-separated from {','.join(RETRY_CHOICES)} "
             "(default: {default})"), convert=_statuses)
    """Record statuses that run again on resume; `error` always does by default."""
    strategy: Strategy = composite(factory=AllModels, inputs=STRATEGY_INPUTS, pin=Pin.NEVER, results=True,
                                   recorded=True, shown=lambda s: s.strategy.settings())
    """Which models judge an edit (fanout.judging.registry.STRATEGIES); a resume checks it first
    (fanout.judging.strategy.check_resume), as the records were chosen by it."""
    samples: int = setting(1, flag(
        "--samples", metavar="N", check=_samples, group=EVIDENCE,
        help=f"ask the verdict phase N times (1-{MAX_SAMPLES}) over each investigation, each time with the evidence "
             "and the six labels in another order; the record keeps the majority verdict and its stability (share "
             "of samples agreeing). Each sample is paid for (default {default})",
        env=(Env("JUDGE_SELF_CONSISTENCY_RUNS", _runs, "not when JUDGE_ENABLE_SELF_CONSISTENCY=0"),)),
        convert=_whole_number, pin=Pin.ASK, results=True, recorded=True)
    """Times the verdict phase is asked over each investigation (fanout.research.samples); 1 = once, as always."""
    swap_labels: bool = setting(True, flag(
        "--no-label-swap", action="store_false", hidden=True, group=EVIDENCE, env=(Env("JUDGE_ENABLE_SWAP", note="1: the swap (the default), 0: none"),),
        help="every sample lists the labels in their natural order (bench/judging_samples.py measures what the "
             "swap fixes)"), pin=Pin.ASK, results=True, recorded=True)
    """Under samples > 1, list the verdict labels in another order in each sample (fanout.research.swap);
    False only for the benchmark that measures what the swap fixes (the hidden --no-label-swap)."""
    evidence: str = setting("own", flag(
        "--evidence", metavar="|".join(EVIDENCE_MODES), group=EVIDENCE,
        check=functools.partial(require_one_of, choices=EVIDENCE_MODES),
        help="own: every model investigates each edit itself (default); shared: one investigation per edit, by "
             "--investigator, logged once, and every model gives its verdict over that same evidence (verdict "
             "phase only): research skill apart from judging skill, at a fraction of the cost; team: a research "
             "team per edit (--planner, --workers at the same time, optional --aggregator), its evidence pooled "
             "and logged once, judged by every model"),
        pin=Pin.NEVER, results=True, recorded=True, shown=lambda s: s.evidence_settings())
    """`own`: each model investigates each edit itself; `shared`: one investigation per edit, by `investigator`,
    and every model of the run gives its verdict over that same evidence (fanout.engine.evidence). A resume
    checks it first (fanout.engine.evidence.check_evidence_resume): the evidence logged was gathered so."""
    investigator: str | None = setting(None, flag(
        "--investigator", metavar="MODEL", group=EVIDENCE,
        help="--evidence shared: the model that investigates each edit, one of --models (default: the cheapest "
             "tool-capable model of the run, in the cascade's cost order)"),
        pin=Pin.NEVER, results=True, recorded="evidence", shown=lambda s: s.evidence_settings())
    """The model whose investigation a `shared` run judges; None = the run's cheapest tool-capable model, chosen
    when the run starts (fanout.engine.evidence.choose_investigator) and pinned in the manifest."""
    planner: str | None = setting(None, flag(
        "--planner", metavar="MODEL", group=EVIDENCE,
        help="--evidence team: the model that writes each edit's research brief and, after the workers report, "
             "names what is still missing; one of --models (default: the run's priciest model, the strong one seed "
             "003 asks for: planning is two short calls)"),
        pin=Pin.NEVER, results=True, recorded="evidence", shown=lambda s: s.evidence_settings())
    """A team's planner; None = the run's priciest model by the cascade's order (fanout.engine.team_wiring.choose_team)."""
    workers: tuple[str, ...] = setting((), flag(
        "--workers", action="names", metavar="MODEL[,MODEL...]", group=EVIDENCE,
        help="--evidence team: the models that research each edit at the same time, each its own tool loop on the "
             "brief; repeat it or give a comma-separated list, each one of --models (default: two tool-calling "
             "models of different families, the cheapest by the cascade's cost order)"),
        convert=lambda value, name: tuple(value), pin=Pin.NEVER, results=True, recorded="evidence",
        shown=lambda s: s.evidence_settings())
    """A team's workers, in order; empty = chosen when the run starts (fanout.engine.team_wiring.choose_team)."""
    aggregator: str | None = setting(None, flag(
        "--aggregator", metavar="MODEL", group=EVIDENCE,
        help="--evidence team: a model that summarises the workers' notes for the judges, shown after the evidence "
             "and marked as a model's summary (default: none; a summary anchors the judges, see docs/strategies.md)"),
        pin=Pin.NEVER, results=True, recorded="evidence", shown=lambda s: s.evidence_settings())
    """A team's aggregator; None = none (the default: off unless asked)."""
    team_rounds: int = setting(2, flag(
        "--team-rounds", metavar="|".join(TEAM_ROUNDS), group=EVIDENCE, check=_team_rounds,
        help="--evidence team: 2 (default): the planner reviews the workers' reports and, when it names something "
             "still missing, the workers research once more; 1: one round"),
        convert=_whole_number, pin=Pin.NEVER, results=True, recorded="evidence", shown=lambda s: s.evidence_settings())
    """Rounds of research a team may do (TEAM_ROUNDS)."""
    models: tuple[ModelSpec, ...] = composite(DEFAULT_MODELS, inputs=MODEL_INPUTS, results=True, recorded=True,
                                              shown=lambda s: s.model_table())
    """The models, in the order given; a strategy that orders them pins them (fanout.store.manifest.reconcile)."""
    sources: Mapping[str, str] = field(default_factory=dict, compare=False, repr=False)
    """Where each option given came from (its flag, or an environment variable), by option name; recorded in the
    manifest only when a value came from the environment (`summary`), so runs made by flags keep their bytes."""

    GROUPS: ClassVar[tuple[str, ...]] = (MODELS, WEB_TOOLS, WEB_SEARCH, LIMITS, STRATEGY, EVIDENCE)
    """The order of the sections of `fanout run --help`."""
    PINNED = DerivedPins()
    """Settings (keys of `summary`) a resume may not change without --allow-settings-change, each with its flag:
    derived from the fields' pins (`Pins.never`: not even with it). --search-mode is one: it changes what evidence
    a model reads (fused hits or one provider's)."""

    def __post_init__(self) -> None:
        if not self.models:
            raise ConfigError("--models: name at least one model.")
        check_declared(self, self.sources)
        if self.investigator is not None and self.evidence != "shared":
            raise ConfigError("--investigator needs --evidence shared (an `own` run has no shared investigation).")
        self._check_team()
        named = [("--investigator", self.investigator), ("--planner", self.planner), ("--aggregator", self.aggregator),
                 *(("--workers", w) for w in self.workers)]
        for flag_name, model in named:
            if model is not None and model not in {m.name for m in self.models}:
                raise ConfigError(f"{flag_name} {model} is not one of the run's models "
                                  f"({', '.join(m.name for m in self.models)}); add it to --models or choose one of them.")

    def _check_team(self) -> None:
        """The team's flags only with --evidence team; each worker once."""
        given = [flag_name for flag_name, value, default in (
            ("--planner", self.planner, None), ("--workers", self.workers, ()), ("--aggregator", self.aggregator, None),
            ("--team-rounds", self.team_rounds, 2)) if value != default]
        if given and self.evidence != "team":
            raise ConfigError(f"{', '.join(given)} need(s) --evidence team (only a research team has a planner, "
                              "workers, an aggregator and rounds).")
        twice = sorted({w for w in self.workers if self.workers.count(w) > 1})
        if twice:
            raise ConfigError(f"--workers names {', '.join(twice)} more than once; each worker is one model.")

    def summary(self) -> dict[str, Any]:
        """The settings worth pinning in the manifest, as plain data (no secrets live in RunSettings); where the
        values came from only when one came from the environment (so a run made by flags keeps its bytes)."""
        found = recorded(self)
        if from_environment(self.sources):
            found["sources"] = dict(self.sources)
        return found

    @classmethod
    def results_keys(cls) -> tuple[str, ...]:
        """The manifest's keys whose settings change results; the others (concurrency, lead, spend cap) record
        how the run went. What `fanout compare` should hold two runs apart by."""
        return result_keys(cls)

    def model_table(self) -> dict[str, dict[str, Any]]:
        """Each model's spec as the manifest records it: what was set, by name."""
        return {m.name: {k: v for k, v in dataclasses.asdict(m).items() if k != "name" and v is not None}
                for m in self.models}

    def evidence_settings(self) -> dict[str, Any]:
        """The evidence mode as the manifest pins it: `{mode: own}`, `{mode: shared, investigator: M}` or
        `{mode: team, planner: P, workers: [A, B], aggregator: C or None, rounds: 2}`."""
        if self.evidence == "own":
            return {"mode": "own"}
        if self.evidence == "team":
            return {"mode": "team", "planner": self.planner, "workers": list(self.workers),
                    "aggregator": self.aggregator, "rounds": self.team_rounds}
        return {"mode": "shared", "investigator": self.investigator}

    @property
    def shares_evidence(self) -> bool:
        """Whether each edit's evidence is made once and read by every judge (`shared` and `team`)."""
        return self.evidence in ("shared", "team")

    @property
    def researches_as_team(self) -> bool:
        return self.evidence == "team"

    def pair_deadline_s(self) -> float:
        """The orchestrator's fail-safe for one pair: its verdict's timeout with room to spare, and under shared
        evidence room for the edit's investigation too (a judge may wait for it before its own verdict phase);
        under a team, for each of its steps that run one after another (plan, work, review, work, aggregate)."""
        phases = 1
        if self.shares_evidence:
            phases += 1
        if self.researches_as_team:
            phases += 1 + 2 * (self.team_rounds - 1) + (self.aggregator is not None)
        return self.verdict_timeout_s * (phases + 0.5) + 30

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

