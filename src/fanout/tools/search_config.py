"""Choosing search providers and cache settings: a YAML file and/or flags.

    fanout run SNAPSHOT --search-providers searxng,wikipedia --search-mode aggregate
    fanout run SNAPSHOT --search-config search.yaml

    # search.yaml (every key optional)
    providers: [searxng, wikipedia, arxiv]   # priority order (there is no `priority` key: the order is it)
    mode: aggregate                          # fallback (default): in turn; aggregate: all at once, fused
    min_results: 5                           # fallback: ask on until 5 distinct pages are found (default 1)
    provider_settings:                       # each provider's own: enabled, max_results, cache_ttl (s)
      arxiv: {max_results: 3, cache_ttl: 604800}
      pubmed: {enabled: false, article_url: "https://mirror.example/pubmed/{pmid}/"}
    endpoints:                               # another address for a provider's API (mirror, proxy, test)
      wikipedia: https://wiki-mirror.example/w/api.php
      brave: https://brave-proxy.example/res/v1/web/search
    wikipedia_language: de
    searxng_language: nb                     # SearXNG's language (also Accept-Language); default: the instance's
    searxng_safesearch: 0                    # 0 off, 1 moderate, 2 strict
    searxng_pageno: 1
    cache_ttl_s: 86400                       # null = answers hold for the whole run
    global_cache_dir: ~/.cache/fanout        # a search cache shared by all runs
    global_cache_ttl_s: 604800

Flags win over the file (a provider the flag names is asked even if the file
disables it). API keys are never read from either: only from the
environment (TAVILY_API_KEY, BRAVE_API_KEY, SERPAPI_API_KEY; NCBI_API_KEY
is optional).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fanout.base.validate import read_yaml_mapping, require_count
from fanout.tools.settings import SEARCH_MODES, ProviderSettings, ToolSettings
from fanout.base.errors import ConfigError
from fanout.tools.providers.registry import NO_ENDPOINT, available_providers, parse_provider_names

FILE_KEYS = {
    "providers": "search_providers",
    "wikipedia_language": "wikipedia_language",
    "searxng_language": "searxng_language",
    "searxng_safesearch": "searxng_safesearch",
    "searxng_pageno": "searxng_pageno",
    "cache_ttl_s": "search_cache_ttl_s",
    "global_cache_dir": "global_cache_dir",
    "global_cache_ttl_s": "global_cache_ttl_s",
    "mode": "search_mode",
    "endpoints": "search_endpoints",
    "min_results": "search_min_results",
    "provider_settings": "provider_settings",
}
PROVIDER_KEYS = {"enabled": "enabled", "max_results": "max_results", "cache_ttl": "cache_ttl_s",
                 "article_url": "article_url", "request_gap": "request_gap_s"}
"""A provider's own settings in the file -> ProviderSettings fields."""
ONLY_FOR = {"article_url": ("pubmed",), "request_gap": ("pubmed", "arxiv")}
"""Settings that mean something for one provider only."""
SECRET_LOOKING = ("key", "token", "secret", "password")
KEY_VARIABLES = "TAVILY_API_KEY, BRAVE_API_KEY, SERPAPI_API_KEY, NCBI_API_KEY"


def apply_search_options(
    settings: ToolSettings, *, providers: str | None, config: Path | None, mode: str | None = None
) -> ToolSettings:
    """`settings` with the config file's choices, then the --search-providers and --search-mode flags, applied."""
    changes: dict[str, Any] = load_search_config(config) if config is not None else {}
    if providers is not None:
        changes["search_providers"] = parse_provider_names(providers)
    elif "provider_settings" in changes:
        _leave_out_disabled(changes, settings, config)
    if mode is not None:
        changes["search_mode"] = mode
    endpoints = dict(changes.get("search_endpoints", ()))
    if "searxng" in endpoints:  # SearXNG's address has its own setting; the file may give it here too
        changes["searxng_url"] = endpoints.pop("searxng")
        changes["search_endpoints"] = tuple(endpoints.items())
    if not changes:
        return settings
    try:
        return dataclasses.replace(settings, **changes)
    except ConfigError as exc:  # a setting the file gave that does not fit the others: name the file
        if config is None or str(exc).startswith("--search-config"):
            raise
        raise ConfigError(f"--search-config {config}: {exc}") from None


def _leave_out_disabled(changes: dict[str, Any], settings: ToolSettings, config: Path | None) -> None:
    """The file's provider list (or the default) without the providers its provider_settings disable."""
    own = dict(changes["provider_settings"])
    names: tuple[str, ...] = changes.get("search_providers", settings.search_providers)
    kept = tuple(name for name in names if own.get(name, ProviderSettings()).enabled)
    if not kept:
        raise ConfigError(f"--search-config {config}: provider_settings disables every provider web_search would "
                          f"ask ({', '.join(names)}); enable one or list another under providers")
    changes["search_providers"] = kept


def load_search_config(path: Path) -> dict[str, Any]:
    """ToolSettings field -> value from the file; unknown keys and keys that look like secrets are refused."""
    data = read_yaml_mapping(path, "--search-config", expected="a mapping such as `providers: [searxng, wikipedia]`")
    secrets = [k for k in data if any(word in str(k).lower() for word in SECRET_LOOKING)]
    if secrets:
        raise ConfigError(f"--search-config {path}: {', '.join(map(str, secrets))}: API keys come from the "
                          f"environment only ({KEY_VARIABLES}), never from a file")
    unknown = sorted(set(map(str, data)) - set(FILE_KEYS))
    if unknown:
        raise ConfigError(f"--search-config {path}: unknown key {', '.join(unknown)}; allowed: {', '.join(FILE_KEYS)}")
    return {FILE_KEYS[key]: _value(key, value, path) for key, value in data.items()}


def _value(key: str, value: Any, path: Path) -> Any:
    try:
        if key in _READERS:
            return _READERS[key](value, path)
        if value is None and key == "cache_ttl_s":
            return None
        seconds = float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"--search-config {path}: {key}: {exc}") from None
    if seconds <= 0:
        raise ConfigError(f"--search-config {path}: {key} must be positive (got {value})")
    return seconds


def _providers(value: Any, path: Path) -> tuple[str, ...]:
    return parse_provider_names(value if isinstance(value, (list, str)) else str(value))


def _mode(value: Any, path: Path) -> Any:
    if value not in SEARCH_MODES:
        raise ValueError(f"must be one of {', '.join(SEARCH_MODES)} (got {value!r})")
    return value


def _min_results(value: Any, path: Path) -> Any:
    require_count(value, f"--search-config {path}: min_results")
    return value


def _text(value: Any, path: Path) -> str:
    return str(value)


def _as_given(value: Any, path: Path) -> Any:
    return value  # ToolSettings checks type and range


def _cache_dir(value: Any, path: Path) -> Path | None:
    return None if value is None else Path(str(value)).expanduser()


def _endpoints(value: Any, path: Path) -> tuple[tuple[str, str], ...]:
    """`{wikipedia: URL, ...}` as (name, URL) pairs; ToolSettings checks each URL (scheme, private address)."""
    if not isinstance(value, dict):
        raise ConfigError(f"--search-config {path}: endpoints must be a mapping such as "
                          "`endpoints: {wikipedia: https://mirror.example/w/api.php}`")
    pairs = []
    for name, url in value.items():
        name = str(name).strip().lower()
        if name not in available_providers():
            raise ConfigError(f"--search-config {path}: endpoints: unknown search provider {name!r}; "
                              f"available: {', '.join(available_providers())}")
        if name in NO_ENDPOINT:
            raise ConfigError(f"--search-config {path}: endpoints: {name} {NO_ENDPOINT[name]}")
        if not isinstance(url, str):
            raise ConfigError(f"--search-config {path}: endpoints: {name} needs a URL (got {url!r})")
        pairs.append((name, url.strip()))
    return tuple(pairs)


def _provider_settings(value: Any, path: Path) -> tuple[tuple[str, ProviderSettings], ...]:
    """`{pubmed: {max_results: 5}, ...}` as (name, ProviderSettings) pairs, each value checked once, here."""
    if not isinstance(value, dict):
        raise ConfigError(f"--search-config {path}: provider_settings must be a mapping such as "
                          "`provider_settings: {pubmed: {max_results: 5, cache_ttl: 86400}}`")
    return tuple((name, _one_provider(name, own, f"--search-config {path}: provider_settings: {name}"))
                 for name, own in ((str(raw).strip().lower(), own) for raw, own in value.items()))


def _one_provider(name: str, own: Any, where: str) -> ProviderSettings:
    if name not in available_providers():
        raise ConfigError(f"{where}: unknown search provider; available: {', '.join(available_providers())}")
    if not isinstance(own, dict):
        raise ConfigError(f"{where}: must be a mapping of {', '.join(PROVIDER_KEYS)} (got {own!r})")
    _check_provider_keys(name, [str(key) for key in own], where)
    try:
        return ProviderSettings(**{PROVIDER_KEYS[str(key)]: setting for key, setting in own.items()})
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def _check_provider_keys(name: str, keys: list[str], where: str) -> None:
    """No key that looks like a secret, none unknown, none meant for another provider."""
    if any(word in key.lower() for key in keys for word in SECRET_LOOKING):
        raise ConfigError(f"{where}: API keys come from the environment only ({KEY_VARIABLES}), never from a file")
    unknown = sorted(set(keys) - set(PROVIDER_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown key {', '.join(unknown)}; allowed: {', '.join(PROVIDER_KEYS)}")
    misplaced = [key for key in keys if name not in ONLY_FOR.get(key, (name,))]
    if misplaced:
        raise ConfigError(f"{where}: {misplaced[0]} applies to {' or '.join(ONLY_FOR[misplaced[0]])} only")


_READERS: dict[str, Callable[[Any, Path], Any]] = {
    "providers": _providers,
    "wikipedia_language": _text,
    "searxng_language": _text,
    "mode": _mode,
    "endpoints": _endpoints,
    "provider_settings": _provider_settings,
    "min_results": _min_results,
    "searxng_safesearch": _as_given,
    "searxng_pageno": _as_given,
    "global_cache_dir": _cache_dir,
}
"""How each file key's value is read (and checked where ToolSettings does not); the rest are seconds."""
