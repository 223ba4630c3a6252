"""How web_search and web_fetch behave: one ToolSettings per run, each field checked when it is built.

The fields a run's command line sets are declared with their flags here
(fanout.base.declare); `SEARCH_CONFIG` is the file that may set the search
fields too (fanout.tools.search_config reads it).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fanout.base.declare import Option, Pin, check_declared, flag, options_of, setting
from fanout.base.validate import (require_count, require_http_url, require_not_negative, require_one_of,
                                  require_positive)
from fanout.base.errors import ConfigError
from fanout.tools.provider_names import command_line_providers

DEFAULT_SEARXNG_URL = "http://127.0.0.1:8080"
FETCH_TIMEOUT_S = 15.0
"""Seed 002's FETCH_TIMEOUT: one web_fetch, every redirect hop and the body included, within this."""
SEARCH_TIMEOUT_S = 10.0
"""Seed 002's SEARCH_TIMEOUT: one provider's answer to one search within this. The shipped SearXNG gives its
upstream engines 4 s (outgoing.request_timeout in searxng/settings.yml), so it answers well inside it."""
EXTRACT_MEMORY_MIN_MB = 256
"""The least memory an extraction worker may be given: its address space is about 165 MB once its libraries are
loaded, before any page, so under this every page would read as too large."""
SEARCH_MODES = ("fallback", "aggregate")
"""fallback: providers in turn, the first with results answers; aggregate: all at once, their hits fused."""


WEB_TOOLS = "endpoints and web_fetch"
WEB_SEARCH = "web_search"
"""The sections of --help the tools' options are listed in; `fanout check` and `fanout tool` take WEB_SEARCH's."""

SEARCH_CONFIG = flag(
    "--search-config", name="search_config", type=Path, metavar="FILE", reads_file=True, group=WEB_SEARCH,
    help="YAML file: providers, mode, min_results, provider_settings (enabled, max_results, cache_ttl), "
         "endpoints, wikipedia_language, searxng_language, searxng_safesearch, "
         "searxng_pageno, cache_ttl_s, global_cache_dir, global_cache_ttl_s")
"""The search config file: it sets the search fields below the flags (fanout.tools.search_config)."""


def _providers_help() -> str:
    """--search-providers names every provider installed, plug-ins included (asked only when help is shown)."""
    return ("web_search backends in priority order, comma-separated (default: {default}; "
            f"available: {', '.join(command_line_providers())})")


_LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z]{2,4})?|all|auto")
PMID_FIELD = "{pmid}"
"""Where a PubMed article URL template (`article_url`) puts the article's PMID."""


def require_searxng_language(value: str | None) -> None:
    """A language SearXNG knows the shape of: `nb`, `en-US`, `zh-Hant`, `all` or `auto`."""
    if value is not None and not (isinstance(value, str) and _LANGUAGE.fullmatch(value)):
        raise ConfigError(f"searxng_language must be a language code such as nb, en-US, all or auto (got {value!r}).")



@dataclass(frozen=True)
class ProviderSettings:
    """One provider's own settings (`provider_settings:` in the search config); each value is checked here, once.

    The priority of a provider is its place in `search_providers` (the config's
    `providers:` list), so there is no `priority` field.
    """

    enabled: bool = True
    """False leaves the provider out of the list the config file gives (a flag naming it still asks it)."""
    max_results: int | None = None
    """The most hits this provider asks for and contributes; None = the run's max_results."""
    cache_ttl_s: float | None = None
    """How old this provider's stored answer (run cache, global cache) may be and still be used instead of
    asking it again; None = the caches' own limits. A run's answer to a query is kept apart (cache_ttl_s)."""
    article_url: str | None = None
    """pubmed only: the page an article's hit links to, with {pmid} where its PMID goes (a mirror, the simulator)."""
    request_gap_s: float | None = None
    """pubmed and arxiv: the least seconds between two requests to the provider; None = the limit its service
    publishes (PubMed 0.35 s without a key, arXiv 3 s). For a mirror of one's own, or the simulator."""

    def __post_init__(self) -> None:
        if not isinstance(self.enabled, bool):
            raise ConfigError(f"enabled must be true or false (got {self.enabled!r}).")
        require_count(self.max_results, "max_results")
        require_positive(self.cache_ttl_s, "cache_ttl")
        require_not_negative(self.request_gap_s, "request_gap")
        if self.article_url is not None:
            if not isinstance(self.article_url, str) or PMID_FIELD not in self.article_url:
                raise ConfigError(f"article_url must be a URL with {PMID_FIELD} where the PMID goes "
                                  f"(got {self.article_url!r}).")
            require_http_url(self.article_url.replace(PMID_FIELD, "1"), "article_url")


@dataclass(frozen=True)
class ToolSettings:
    """How web_search and web_fetch behave; one instance per run."""

    searxng_url: str = setting(DEFAULT_SEARXNG_URL, flag(
        "--searxng-url", metavar="URL", check=require_http_url, group=WEB_TOOLS,
        help="SearXNG base URL (default: {default})"), results=True, recorded=True)
    allow_private_urls: bool = setting(False, flag(
        "--allow-private-urls", action="store_true", group=WEB_TOOLS,
        help="let web_fetch reach private and loopback addresses (only for the local simulator)"))
    """Only for local testing: the simulator lives on 127.0.0.1."""
    blocked_domains_file: Path | None = None
    """None = the list shipped in the package."""
    max_results: int = 10
    fetch_max_bytes: int = 2_000_000
    fetch_max_chars: int = 15_000
    fetch_timeout_s: float = FETCH_TIMEOUT_S
    search_timeout_s: float = SEARCH_TIMEOUT_S
    per_host_delay_s: float = setting(0.5, flag(
        "--fetch-delay", type=float, metavar="SECONDS", check=require_not_negative, group=WEB_TOOLS,
        help="politeness delay between web_fetch requests to the same host (default {default}; 0 for the "
             "simulator, whose sites all live on 127.0.0.1)"))
    user_agent: str = "fanout/0.1 (+https://github.com/fanout; verification research)"
    allowed_networks: tuple[str, ...] = ()
    """CIDRs web_fetch may reach although they are private (e.g. a test server
    on 127.0.0.1/32); narrower than allow_private_urls, which turns the guard off."""
    max_redirects: int = 5
    """Redirect hops web_fetch follows, each checked like the first URL."""
    search_providers: tuple[str, ...] = setting(("searxng",), flag(
        "--search-providers", metavar="NAMES", group=WEB_SEARCH, help=_providers_help), results=True, recorded=True)
    """web_search backends in priority order; the next is asked when one fails or finds nothing. The flag's
    text becomes names in fanout.tools.search_config, after the search config file."""
    search_mode: str = setting("fallback", flag(
        "--search-mode", choices=SEARCH_MODES, group=WEB_SEARCH,
        check=functools.partial(require_one_of, choices=SEARCH_MODES),
        help="fallback: ask the providers in turn, the first with results answers (default); aggregate: ask them "
             "all at once and merge their hits by reciprocal rank fusion, each hit naming every provider that "
             "found it"), pin=Pin.ASK, results=True, recorded=True)
    """One of SEARCH_MODES: ask the providers in turn, or all at once and fuse their hits."""
    search_endpoints: tuple[tuple[str, str], ...] = ()
    """(provider, URL) pairs replacing a provider's built-in API address (a mirror, a proxy, a loopback
    test server); checked like any URL fanout is told to open (no private address without permission)."""
    wikipedia_language: str = "en"
    """Which Wikipedia the `wikipedia` provider searches (`de` = de.wikipedia.org)."""
    searxng_language: str | None = None
    """SearXNG's `language` (`nb`, `en-US`, `all`, `auto`), also sent as Accept-Language; None = the instance's default."""
    searxng_safesearch: int | None = None
    """SearXNG's `safesearch`: 0 off, 1 moderate, 2 strict; None = the instance's default."""
    searxng_pageno: int = 1
    """Which page of SearXNG's results web_search reads."""
    search_min_results: int = setting(1, pin=Pin.ASK, results=True, recorded=True, only_when_set=True,
                                      label="min_results (--search-config)")
    """fallback mode: keep asking the next provider until this many distinct pages (by canonical URL) are found;
    1 = the first provider with any result answers."""
    provider_settings: tuple[tuple[str, ProviderSettings], ...] = setting(
        (), pin=Pin.ASK, results=True, recorded="search_provider_settings", only_when_set=True,
        label="provider_settings (--search-config)", shown=lambda tools: tools.provider_pins())
    """(provider, its own settings) pairs: enabled, max_results, cache_ttl, article_url."""
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
        check_declared(self)
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
        for name, url in self.search_endpoints:
            require_endpoint(name, url, allow_private=self.allow_private_urls, allowed_networks=self.allowed_networks)
        self._check_min_results()
        self._check_provider_caps()
        require_count(self.extract_workers, "extract_workers")
        require_positive(self.extract_timeout_s, "extract_timeout_s")
        require_count(self.extract_memory_mb, "extract_memory_mb", minimum=EXTRACT_MEMORY_MIN_MB)
        require_count(self.pdf_max_pages, "pdf_max_pages")
        require_count(self.pdf_max_bytes, "pdf_max_bytes")

    def _check_min_results(self) -> None:
        require_count(self.search_min_results, "min_results")
        if self.search_min_results > 1 and self.search_mode != "fallback":
            raise ConfigError(f"min_results ({self.search_min_results}) applies to --search-mode fallback; "
                              "aggregate mode asks every provider anyway.")
        if self.search_min_results > self.max_results:
            raise ConfigError(f"min_results ({self.search_min_results}) is more than the {self.max_results} "
                              "results web_search hands a model.")

    def endpoint(self, provider: str) -> str | None:
        """The address configured for `provider` in place of its built-in one, if any."""
        return next((url for name, url in self.search_endpoints if name == provider), None)

    def _check_provider_caps(self) -> None:
        for name, own in self.provider_settings:
            if own.max_results is not None and own.max_results > self.max_results:
                raise ConfigError(f"provider_settings: {name}: max_results ({own.max_results}) is more than the "
                                  f"{self.max_results} results web_search hands a model.")

    def provider_pins(self) -> dict[str, Any]:
        """What the manifest pins of the providers' own settings: those that change what a model reads (how many
        hits a provider gives, where its hits link), for the providers the run asks; the rest (enabled, cache_ttl)
        shape the run, not a verdict."""
        own = {name: {key: value for key, value in (("max_results", s.max_results), ("article_url", s.article_url))
                      if value is not None}
               for name, s in self.provider_settings if name in self.search_providers}
        return {name: values for name, values in own.items() if values}

    def provider(self, name: str) -> ProviderSettings:
        """`name`'s own settings (the defaults when the config gives none)."""
        return next((own for provider, own in self.provider_settings if provider == name), ProviderSettings())

    def max_results_for(self, name: str) -> int:
        """How many hits `name` is asked for and may contribute: its own max_results, or the run's."""
        own = self.provider(name).max_results
        return self.max_results if own is None else own


def search_options() -> tuple[Option, ...]:
    """The web_search options `fanout check` and `fanout tool` take as `fanout run` does: the providers, the
    mode and the search config file."""
    return (*[o for o in options_of(ToolSettings).values() if o.group == WEB_SEARCH], SEARCH_CONFIG)


def require_endpoint(name: str, url: str, *, allow_private: bool, allowed_networks: tuple[str, ...]) -> None:
    """An http(s) URL that is not a cloud metadata endpoint and, unless allowed, not a private address.

    The same rules as web_fetch's guard, judged on the URL as written: an IP
    address (in any form) or `localhost`. A name is not resolved here (that
    would mean DNS when a command starts).
    """
    require_http_url(url, f"search endpoint {name}")
    from fanout.tools.urlguard import UrlGuard  # only when endpoints are set: the guard pulls in httpx

    guard = UrlGuard(frozenset(), allow_private=allow_private, allowed_networks=allowed_networks)
    refusal = guard.endpoint_refusal(url)
    if refusal is not None:
        raise ConfigError(f"search endpoint {name} {url}: {refusal}.")

