"""Models, prices, limits and run settings: the one table users edit.

Prices are USD per million tokens and are only a fallback: the cost a
provider reports in `usage.cost` always wins. An unknown price or context
window is `None`, never a guess.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"
DEFAULT_SEARXNG_URL = "http://127.0.0.1:8080"
API_KEY_ENV = "OPENROUTER_API_KEY"


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


DEFAULT_MODELS: tuple[ModelSpec, ...] = (
    ModelSpec("nvidia/nemotron-3-nano-30b-a3b", 262_144, 0.05, 0.20),
    ModelSpec("allenai/olmo-3.1-32b-instruct", 65_536, 0.20, 0.60),
    ModelSpec("deepseek/deepseek-v3.2", 163_840, 0.26, 0.38),
    ModelSpec("anthropic/claude-4.5-haiku-20251001", 200_000, 1.00, 5.00),
)
KNOWN_MODELS = {m.name: m for m in DEFAULT_MODELS}


def model_spec(name: str, **overrides: object) -> ModelSpec:
    """The table's entry for `name` (or a bare spec), with overrides applied."""
    base = KNOWN_MODELS.get(name, ModelSpec(name))
    clean = {k: v for k, v in overrides.items() if v is not None}
    return dataclasses.replace(base, **clean) if clean else base


def package_data(name: str) -> Path:
    """Path of a file shipped inside the package (prompt, sample snapshot, ...)."""
    return Path(__file__).parent / "data" / name


def is_openrouter(base_url: str) -> bool:
    return "openrouter.ai" in base_url


def api_key_from_env(base_url: str) -> str | None:
    """The key, required only for OpenRouter; local servers take any string."""
    from fanout.errors import ConfigError

    key = os.environ.get(API_KEY_ENV) or None
    if key is None and is_openrouter(base_url):
        raise ConfigError(
            f"{API_KEY_ENV} is not set. Export your OpenRouter key "
            f"(export {API_KEY_ENV}=sk-or-...) or point --base-url at a local "
            "OpenAI-compatible server."
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
    search_cache_ttl_s: float | None = None
    """How long a run's cached search answer stays valid; None = for the whole run, so every
    model that asks the same query sees the same results however long the run takes."""
    global_cache_dir: Path | None = None
    """A search cache shared by all runs (optional); answers older than global_cache_ttl_s are asked again."""
    global_cache_ttl_s: float = 7 * 86_400.0


@dataclass(frozen=True)
class RunSettings:
    """Everything that shapes a run; pinned in the run's manifest."""

    models: tuple[ModelSpec, ...] = DEFAULT_MODELS
    base_url: str = OPENROUTER_BASE_URL
    tools: ToolSettings = field(default_factory=ToolSettings)
    concurrency: int = 8
    max_turns: int = 15
    verdict_timeout_s: float = 180.0
    max_lead: int = 10
    grace_s: float = 30.0
    max_cost_usd: float | None = None
    retry_statuses: frozenset[str] = frozenset({"error"})
    """Record statuses that run again on resume; `error` always does by default."""
