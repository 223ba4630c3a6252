"""Models, prices, limits and run settings: the one table users edit.

Prices are USD per million tokens and are only a fallback: the cost a
provider reports in `usage.cost` always wins. An unknown price or context
window is `None`, never a guess.

Each default is written once, on the dataclasses below (the command line
reads it from there), and each setting is checked once, when its dataclass
is built: a bad value is a ConfigError naming the flag (or field) and what
it must be, however the settings were made.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from fanout.bounded import load_yaml
from fanout.errors import ConfigError
from fanout.judging.policy import AUTOPASS_VERDICTS, Router, Thresholds, check_autopass
from fanout.records import STATUSES

T = TypeVar("T")

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_SEARXNG_URL = "http://127.0.0.1:8080"
API_KEY_ENV = "OPENROUTER_API_KEY"
"""The OpenRouter key: sent to OpenRouter (https://openrouter.ai) and to no other endpoint."""
ENDPOINT_KEY_ENV = "FANOUT_API_KEY"
"""The key for any other --base-url (vLLM, llama.cpp server, LiteLLM, ...); optional."""
KEY_HELP = (f"the key comes from the environment: {API_KEY_ENV} for OpenRouter only, "
            f"{ENDPOINT_KEY_ENV} (optional) for any other endpoint")
RETRY_CHOICES = STATUSES[1:]
"""Record statuses a resume may run again (`ok` never does)."""
MAX_SAMPLES = 20
"""The most samples of the verdict phase --samples may ask for (each one is paid for)."""
LEAD_PER_SLOT = 4
STRATEGIES: tuple[str, ...] = ("all", "cascade", "router")
"""--strategy: every model on every edit; the cheapest first, escalating; one model per edit."""
"""Edits of lead per verdict slot and model when --max-lead is not given (see RunSettings.from_options)."""


def require_count(value: int | None, name: str, *, minimum: int = 1) -> None:
    """A whole number of at least `minimum`; None is "not set" and passes."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be a whole number (got {value!r}).")
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum} (got {value}).")


def require_positive(value: float | None, name: str) -> None:
    """A finite number above 0 (a timeout, a rate); None passes."""
    if value is not None and _finite(value, name) <= 0:
        raise ConfigError(f"{name} must be more than 0 (got {value:g}).")


def require_not_negative(value: float | None, name: str) -> None:
    """A finite number of 0 or more (a delay, a price, a budget); None passes."""
    if value is not None and _finite(value, name) < 0:
        raise ConfigError(f"{name} must not be negative (got {value:g}).")


def _finite(value: float, name: str) -> float:
    # NaN passes every comparison and inf every upper bound, so both are refused by name.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{name} must be a number (got {value!r}).")
    if not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number (got {value:g}).")
    return value


_LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z]{2,4})?|all|auto")


def require_searxng_language(value: str | None) -> None:
    """A language SearXNG knows the shape of: `nb`, `en-US`, `zh-Hant`, `all` or `auto`."""
    if value is not None and not (isinstance(value, str) and _LANGUAGE.fullmatch(value)):
        raise ConfigError(f"searxng_language must be a language code such as nb, en-US, all or auto (got {value!r}).")


def require_http_url(value: str, name: str) -> None:
    """An http(s) URL with a host, so a typo stops the command instead of the first request."""
    try:
        parts = urlsplit(value)
        # .port raises ValueError for a port that is not a number in range
        usable = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except (TypeError, ValueError, AttributeError):
        usable = False
    if not usable:
        raise ConfigError(f"{name} must be an http:// or https:// URL with a host (got {value!r}).")


TOOL_PROTOCOLS: tuple[str, ...] = ("native", "prompted")
CACHE_MODES: tuple[str, ...] = ("explicit", "implicit", "off")
"""How a model's prompt is cached (fanout.llm.caching): breakpoints sent, the provider's own, or none asked for."""


@dataclass(frozen=True)
class ModelSpec:
    """One model as fanout knows it before asking the endpoint."""

    name: str
    """The name the user asked for; the checkpoint keys pairs on it."""
    context_window: int | None = None
    """Tokens; used to warn at 80 % and to trim old tool output."""
    input_price: float | None = None
    """USD per million prompt tokens (fallback when usage.cost is absent)."""
    output_price: float | None = None
    """USD per million completion tokens."""
    max_concurrency: int | None = None
    """Verdicts of this model in flight at once; None = only the global bound."""
    requests_per_minute: float | None = None
    """Chat requests per minute for this model; None = no client-side limit."""
    cached_input_price: float | None = None
    """USD per million prompt tokens read from the provider's cache; None = priced as input_price."""
    tool_protocol: str | None = None
    """How the model gets its tools: `native` (the request's `tools`), `prompted` (described in the
    prompt, one JSON action per reply); None = native unless the listing lacks tools or a request
    with tools is refused (see fanout.sift.prompted)."""
    cache_write_price: float | None = None
    """USD per million prompt tokens written to the provider's cache; None = priced as input_price."""
    cache: str | None = None
    """Prompt caching: `explicit` (cache_control breakpoints in the request), `implicit` (the provider
    caches on its own; nothing is sent), `off` (no breakpoints); None = explicit for `anthropic/`
    models, implicit for the others (see fanout.llm.caching)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"a model name must be a non-empty string (got {self.name!r}).")
        label = f"model {self.name}:"
        require_count(self.context_window, f"{label} context_window")
        require_not_negative(self.input_price, f"{label} input_price")
        require_not_negative(self.output_price, f"{label} output_price")
        require_not_negative(self.cached_input_price, f"{label} cached_input_price")
        require_not_negative(self.cache_write_price, f"{label} cache_write_price")
        require_count(self.max_concurrency, f"{label} max_concurrency")
        require_positive(self.requests_per_minute, f"{label} requests_per_minute")
        if self.tool_protocol not in (None, *TOOL_PROTOCOLS):
            raise ConfigError(f"{label} tool_protocol must be native or prompted (got {self.tool_protocol!r}).")
        if self.cache not in (None, *CACHE_MODES):
            raise ConfigError(f"{label} cache must be explicit, implicit or off (got {self.cache!r}).")


DEFAULT_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("nvidia/nemotron-3-nano-30b-a3b", 262_144, 0.05, 0.20),
    ModelSpec("allenai/olmo-3.1-32b-instruct", 65_536, 0.20, 0.60),
    ModelSpec("deepseek/deepseek-v3.2", 163_840, 0.26, 0.38),
    # Anthropic's published prices: a cache read costs 0.1x input, a (5-minute) cache write 1.25x.
    ModelSpec("anthropic/claude-4.5-haiku-20251001", 200_000, 1.00, 5.00, cached_input_price=0.10,
              cache_write_price=1.25),
)
KNOWN_MODELS = {m.name: m for m in DEFAULT_MODELS}


def model_spec(name: str, **overrides: Any) -> ModelSpec:
    """The table's entry for `name` (or a bare spec), with overrides applied (ModelSpec checks them)."""
    base = KNOWN_MODELS.get(name, ModelSpec(name))
    clean = {k: v for k, v in overrides.items() if v is not None}
    return dataclasses.replace(base, **clean) if clean else base


LIMIT_FIELDS = ("max_concurrency", "requests_per_minute", "context_window", "input_price", "output_price",
                "cached_input_price", "tool_protocol", "cache_write_price", "cache")


def read_yaml_mapping(path: Path, option: str, *, expected: str) -> dict[Any, Any]:
    """The mapping in a file an option names; a file that cannot be read, or holds anything else, is one ConfigError."""
    data = load_yaml(path, f"{option} {path}", fix=f"pass the path of an existing file to {option}") or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{option} {path}: expected {expected}.")
    return data


def load_limits(path: Path) -> dict[str, dict[str, object]]:
    """The per-model table of --limits FILE, each entry checked as the ModelSpec it will become."""
    data = read_yaml_mapping(path, "--limits", expected="a mapping of model name to settings")
    table: dict[str, dict[str, object]] = {}
    for model, fields in data.items():
        if not isinstance(fields, dict) or set(fields) - set(LIMIT_FIELDS):
            raise ConfigError(f"--limits {path}: {model}: allowed keys are {', '.join(LIMIT_FIELDS)}.")
        if fields.get("cache") is False:  # YAML 1.1 reads a bare `cache: off` as false
            fields = {**fields, "cache": "off"}
        try:
            model_spec(str(model), **fields)
        except ConfigError as exc:
            raise ConfigError(f"--limits {path}: {exc}") from None
        table[str(model)] = dict(fields)
    return table


def package_data(name: str) -> Path:
    """Path of a file shipped inside the package (prompt, sample snapshot, ...)."""
    return Path(__file__).parent / "data" / name


def is_openrouter(base_url: str) -> bool:
    """OpenRouter's own endpoint: https on openrouter.ai or one of its subdomains.

    Read from the URL's host, not its text: `http://127.0.0.1/openrouter.ai/v1`
    is not OpenRouter, and the OpenRouter key must never be sent there.
    """
    try:
        parts = urlsplit(base_url)
        host = (parts.hostname or "").rstrip(".")
    except ValueError:
        return False
    return parts.scheme == "https" and (host == "openrouter.ai" or host.endswith(".openrouter.ai"))


def key_env(base_url: str) -> str:
    """The environment variable whose key goes to this endpoint."""
    return API_KEY_ENV if is_openrouter(base_url) else ENDPOINT_KEY_ENV


def api_key_for(base_url: str) -> str | None:
    """The key this endpoint gets, if one is set: OPENROUTER_API_KEY for OpenRouter, FANOUT_API_KEY otherwise."""
    return os.environ.get(key_env(base_url)) or None


def api_key_from_env(base_url: str) -> str | None:
    """The key for a run: required for OpenRouter; other servers get FANOUT_API_KEY when it is set."""
    key = api_key_for(base_url)
    if key is None and is_openrouter(base_url):
        raise ConfigError(
            f"{API_KEY_ENV} is not set. Export your OpenRouter key "
            f"(export {API_KEY_ENV}=sk-or-...) or point --base-url at another "
            f"OpenAI-compatible server (its key, if it needs one, goes in {ENDPOINT_KEY_ENV})."
        )
    return key


@dataclass(frozen=True)
class ToolSettings:
    """How web_search and web_fetch behave; one instance per run."""

    searxng_url: str = DEFAULT_SEARXNG_URL
    allow_private_urls: bool = False
    """Only for local testing: the simulator lives on 127.0.0.1."""
    blocked_domains_file: Path | None = None
    """None = the list shipped in the package."""
    max_results: int = 10
    fetch_max_bytes: int = 2_000_000
    fetch_max_chars: int = 15_000
    fetch_timeout_s: float = 20.0
    search_timeout_s: float = 15.0
    per_host_delay_s: float = 0.5
    user_agent: str = "fanout/0.1 (+https://github.com/fanout; verification research)"
    allowed_networks: tuple[str, ...] = ()
    """CIDRs web_fetch may reach although they are private (e.g. a test server
    on 127.0.0.1/32); narrower than allow_private_urls, which turns the guard off."""
    max_redirects: int = 5
    """Redirect hops web_fetch follows, each checked like the first URL."""
    search_providers: tuple[str, ...] = ("searxng",)
    """web_search backends in priority order; the next is asked when one fails or finds nothing."""
    wikipedia_language: str = "en"
    """Which Wikipedia the `wikipedia` provider searches (`de` = de.wikipedia.org)."""
    searxng_language: str | None = None
    """SearXNG's `language` (`nb`, `en-US`, `all`, `auto`), also sent as Accept-Language; None = the instance's default."""
    searxng_safesearch: int | None = None
    """SearXNG's `safesearch`: 0 off, 1 moderate, 2 strict; None = the instance's default."""
    searxng_pageno: int = 1
    """Which page of SearXNG's results web_search reads."""
    search_cache_ttl_s: float | None = None
    """How long a run's cached search answer stays valid; None = for the whole run, so every
    model that asks the same query sees the same results however long the run takes."""
    global_cache_dir: Path | None = None
    """A search cache shared by all runs (optional); answers older than global_cache_ttl_s are asked again."""
    global_cache_ttl_s: float = 7 * 86_400.0
    extract_workers: int = 2
    """Processes that turn fetched pages into text (at most; started when needed)."""
    extract_timeout_s: float = 10.0
    """Seconds one page's text may take; its worker is then killed (`extraction_timeout` for the model)."""
    extract_memory_mb: int = 512
    """Address space of one extraction worker; a page needing more gets `extraction_too_large`."""
    pdf_max_pages: int = 50
    """Pages of a PDF that web_fetch reads; the text says when it stopped early."""
    pdf_max_bytes: int = 10_000_000
    """Byte cap for a PDF (reports are larger than web pages); HTML and text keep fetch_max_bytes."""

    def __post_init__(self) -> None:
        require_http_url(self.searxng_url, "--searxng-url")
        require_not_negative(self.per_host_delay_s, "--fetch-delay")
        require_count(self.fetch_max_chars, "--max-chars")
        require_count(self.max_results, "max_results")
        require_count(self.fetch_max_bytes, "fetch_max_bytes")
        require_count(self.max_redirects, "max_redirects", minimum=0)
        require_positive(self.fetch_timeout_s, "fetch_timeout_s")
        require_positive(self.search_timeout_s, "search_timeout_s")
        require_positive(self.search_cache_ttl_s, "search_cache_ttl_s")
        require_positive(self.global_cache_ttl_s, "global_cache_ttl_s")
        require_searxng_language(self.searxng_language)
        if self.searxng_safesearch not in (None, 0, 1, 2):
            raise ConfigError(f"searxng_safesearch must be 0, 1 or 2 (got {self.searxng_safesearch!r}).")
        require_count(self.searxng_pageno, "searxng_pageno")
        require_count(self.extract_workers, "extract_workers")
        require_positive(self.extract_timeout_s, "extract_timeout_s")
        require_count(self.extract_memory_mb, "extract_memory_mb", minimum=128)
        require_count(self.pdf_max_pages, "pdf_max_pages")
        require_count(self.pdf_max_bytes, "pdf_max_bytes")


@dataclass(frozen=True)
class RunSettings:
    """Everything that shapes a run; pinned in the run's manifest."""

    models: tuple[ModelSpec, ...] = DEFAULT_MODELS
    base_url: str = OPENROUTER_BASE_URL
    tools: ToolSettings = field(default_factory=ToolSettings)
    concurrency: int = 8
    """Verdicts in flight at once, across models."""
    max_turns: int = 15
    """Tool-calling turns in the investigation phase."""
    verdict_timeout_s: float = 180.0
    """Seconds per verdict, both phases together."""
    chat_timeout_s: float = 120.0
    """Seconds one chat request may take before it counts as failed (and is retried)."""
    max_lead: int = 10
    """Edits any model may run ahead of the slowest; from_options raises it to what `concurrency` needs."""
    grace_s: float = 30.0
    """Seconds verdicts in flight get to finish after the first Ctrl-C."""
    max_cost_usd: float | None = None
    retry_statuses: frozenset[str] = frozenset({"error"})
    """Record statuses that run again on resume; `error` always does by default."""
    strategy: str = "all"
    """Which models judge an edit (STRATEGIES); see fanout.engine.strategy."""
    autopass: float = Thresholds.autopass
    """Cascade: a verdict in autopass_verdicts whose confidence reaches this is accepted from one model."""
    autopass_verdicts: frozenset[str] = AUTOPASS_VERDICTS
    """Cascade: the verdicts one model's word may settle."""
    gates: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Router: aspect key -> the models allowed for it (--gates FILE)."""
    router_accuracy: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """Router: (aspect key, model) -> accuracy measured on a labelled earlier run (--router-accuracy)."""
    router_accuracy_source: str | None = None
    """Where router_accuracy was measured (`RUN_DIR scored against LABELS`), for the manifest."""
    samples: int = 1
    """Times the verdict phase is asked over each investigation (fanout.sift.samples); 1 = once, as always."""
    swap_labels: bool = True
    """Under samples > 1, list the verdict labels in another order in each sample (fanout.sift.swap);
    False only for the benchmark that measures what the swap fixes (the hidden --no-label-swap)."""

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
        self._check_strategy()

    def _check_strategy(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"--strategy must be one of {', '.join(STRATEGIES)} (got {self.strategy!r}).")
        check_autopass(self.autopass, self.autopass_verdicts)
        if (self.gates or self.router_accuracy) and self.strategy != "router":
            raise ConfigError("--gates and --router-accuracy choose a router's model: add --strategy router.")
        Router(tuple(m.name for m in self.models), {}, self.gates)  # every gate names models of the run

    @classmethod
    def from_options(cls, options: RunOptions) -> RunSettings:
        """The settings a user asked for: each option left as None takes the default above."""
        require_count(options.per_model_concurrency, "--per-model-concurrency")
        require_positive(options.requests_per_minute, "--rpm")
        settings = cls(
            models=_models(options),
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
            **_strategy_settings(options),
            samples=_whole_number(options.samples, "--samples", cls.samples),
            swap_labels=options.swap_labels,
        )
        if options.max_lead is None:
            settings = dataclasses.replace(settings, max_lead=settings.lead_for_concurrency())
        return settings

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
    router_accuracy: Path | None = None
    """A labelled earlier run directory whose accuracy per aspect and model the router follows."""
    labels_file: Path | None = None
    """The labels --router-accuracy scores that run against."""
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


def _strategy_settings(options: RunOptions) -> dict[str, Any]:
    """The strategy's settings, its files read and checked; a flag of another strategy is a mistake, not ignored."""
    strategy = _or(options.strategy, RunSettings.strategy)
    if strategy != "cascade" and (options.autopass is not None or options.autopass_verdicts is not None):
        raise ConfigError("--autopass and --autopass-verdicts set when a cascade accepts one model's verdict: "
                          "add --strategy cascade.")
    if (options.router_accuracy is None) != (options.labels_file is None):
        raise ConfigError("--router-accuracy RUN_DIR and --labels FILE go together: the run is scored against the labels.")
    found: dict[str, Any] = {"strategy": strategy}
    if options.autopass is not None:
        found["autopass"] = options.autopass
    if options.autopass_verdicts is not None:
        found["autopass_verdicts"] = frozenset(v.strip() for v in options.autopass_verdicts.split(",") if v.strip())
    if options.gates_file is not None:
        from fanout.judging.policy_file import load_gates

        found["gates"] = load_gates(options.gates_file)
    if options.router_accuracy is not None and options.labels_file is not None:
        from fanout.judging.measured import measure_accuracy

        found["router_accuracy"] = measure_accuracy(options.router_accuracy, options.labels_file)
        found["router_accuracy_source"] = f"{options.router_accuracy} scored against {options.labels_file}"
    return found


def _tool_settings(options: RunOptions) -> ToolSettings:
    # The search providers' names and file format belong to the tools, which import this module.
    from fanout.tools.search_config import apply_search_options

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
