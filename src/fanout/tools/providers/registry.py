"""Which search providers exist, and building the ones a run asked for.

Built-in providers and third-party ones load the same way: a name and a
factory `(ToolSettings) -> SearchProvider`. A package adds its own through
the entry point group `fanout.search_providers`, e.g. in its pyproject.toml:

    [project.entry-points."fanout.search_providers"]
    kagi = "fanout_kagi:KagiProvider.from_settings"

and a program that drives fanout from Python registers one with
`register_provider("kagi", KagiProvider.from_settings)` before it builds a
ToolBox or starts a run; such a name is found before the entry points.

A built-in name cannot be taken over by a plug-in (a typo'd package must not
silently replace SearXNG); a plug-in that fails to load is a ConfigError
only when a run asks for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from importlib.metadata import EntryPoint
from typing import cast

from fanout.tools.settings import ToolSettings
from fanout.base.errors import ConfigError
from fanout.tools.provider_names import BUILTIN_PROVIDER_NAMES, installed_plugins
from fanout.tools.providers.arxiv import ArxivProvider
from fanout.tools.providers.base import SearchProvider
from fanout.tools.providers.brave import BraveProvider
from fanout.tools.providers.duckduckgo import DuckDuckGoProvider
from fanout.tools.providers.pubmed import PubMedProvider
from fanout.tools.providers.searxng import SearxngProvider
from fanout.tools.providers.serpapi import SerpApiProvider
from fanout.tools.providers.tavily import TavilyProvider
from fanout.tools.providers.wikipedia import WikipediaProvider

NO_ENDPOINT = {"duckduckgo": "is asked through the ddgs library, which has no address to set"}
"""Providers whose address the search config cannot replace, and why."""
ProviderFactory = Callable[[ToolSettings], SearchProvider]

BUILTIN_PROVIDERS: dict[str, ProviderFactory] = {
    "searxng": SearxngProvider.from_settings,
    "wikipedia": WikipediaProvider.from_settings,
    "tavily": TavilyProvider.from_settings,
    "brave": BraveProvider.from_settings,
    "duckduckgo": DuckDuckGoProvider.from_settings,
    "arxiv": ArxivProvider.from_settings,
    "pubmed": PubMedProvider.from_settings,
    "serpapi": SerpApiProvider.from_settings,
}
assert tuple(BUILTIN_PROVIDERS) == BUILTIN_PROVIDER_NAMES
REGISTERED_PROVIDERS: dict[str, ProviderFactory] = {}
"""Providers registered from Python (register_provider), by name."""
PROVIDER_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
"""A name as --search-providers reads it (lower case, no comma, no space)."""


def register_provider(name: str, factory: ProviderFactory, *, replace: bool = False) -> None:
    """Make `name` a search provider that `factory(settings)` builds, as an entry point would.

    For a program that uses fanout as a library: the provider is then named
    like any other (`--search-providers`, the search config, ToolSettings).
    A built-in name is refused, and so is a name registered already unless
    `replace` is true; these are mistakes in the calling program, so they
    raise ValueError (and TypeError for a factory that is not callable).
    """
    if not isinstance(name, str) or not PROVIDER_NAME.fullmatch(name):
        raise ValueError(f"a search provider's name is lower-case letters, digits, - and _ (got {name!r})")
    if name in BUILTIN_PROVIDERS:
        raise ValueError(f"{name!r} is a built-in search provider and cannot be replaced")
    if name in REGISTERED_PROVIDERS and not replace:
        raise ValueError(f"search provider {name!r} is registered already (pass replace=True to replace it)")
    if not callable(factory):
        raise TypeError(f"the factory for search provider {name!r} is not callable: (ToolSettings) -> provider")
    REGISTERED_PROVIDERS[name] = factory


def unregister_provider(name: str) -> None:
    """Forget a provider register_provider added (nothing happens for a name it did not add)."""
    REGISTERED_PROVIDERS.pop(name, None)


def plugin_entry_points() -> dict[str, EntryPoint]:
    """Installed plug-ins by name; built-in and registered names are never shadowed."""
    return {name: ep for name, ep in installed_plugins().items() if name not in REGISTERED_PROVIDERS}


def available_providers() -> list[str]:
    return [*BUILTIN_PROVIDERS, *sorted(REGISTERED_PROVIDERS), *sorted(plugin_entry_points())]


def provider_factory(name: str) -> ProviderFactory:
    if name in BUILTIN_PROVIDERS:
        return BUILTIN_PROVIDERS[name]
    if name in REGISTERED_PROVIDERS:
        return REGISTERED_PROVIDERS[name]
    plugin = plugin_entry_points().get(name)
    if plugin is None:
        raise ConfigError(f"unknown search provider {name!r}; available: {', '.join(available_providers())}")
    try:
        factory: object = plugin.load()
    except Exception as exc:  # noqa: BLE001 -- any import failure of a plug-in is a set-up problem
        raise ConfigError(f"search provider {name!r} ({plugin.value}) failed to load: {exc}") from exc
    if not callable(factory):
        raise ConfigError(f"search provider {name!r} ({plugin.value}) is not a factory")
    # Python cannot check a callable's signature: build_providers checks what the factory builds.
    return cast(ProviderFactory, factory)


def parse_provider_names(text: str | Iterable[str]) -> tuple[str, ...]:
    """`"searxng, Wikipedia"` -> ("searxng", "wikipedia"); unknown names and repeats are refused."""
    items = text.split(",") if isinstance(text, str) else list(text)
    names = tuple(str(item).strip().lower() for item in items if str(item).strip())
    if not names:
        raise ConfigError("--search-providers needs at least one provider, e.g. searxng,wikipedia")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ConfigError(f"search provider listed twice: {', '.join(repeated)}")
    unknown = _unknown(names)
    if unknown:
        raise ConfigError(f"unknown search provider {', '.join(map(repr, unknown))}; "
                          f"available: {', '.join(available_providers())}")
    return names


def _unknown(names: tuple[str, ...]) -> list[str]:
    """The names no built-in, registered or installed provider has."""
    unknown = [n for n in names if n not in BUILTIN_PROVIDERS and n not in REGISTERED_PROVIDERS]
    if unknown:  # only now scan the installed plug-ins: reading every package's metadata costs start-up time
        unknown = [n for n in unknown if n not in plugin_entry_points()]
    return unknown


def build_providers(settings: ToolSettings) -> list[SearchProvider]:
    """The run's providers in priority order; ConfigError (missing key, bad option) before any work."""
    return [make_provider(name, settings) for name in parse_provider_names(settings.search_providers)]


def make_provider(name: str, settings: ToolSettings) -> SearchProvider:
    """One provider, or ConfigError: a plug-in's factory that raises or builds something else is named, not a traceback."""
    factory = provider_factory(name)
    try:
        provider: object = factory(settings)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 -- a plug-in's factory is third-party code
        raise ConfigError(f"search provider {name!r} failed to start ({type(exc).__name__}: {exc})") from exc
    if not isinstance(provider, SearchProvider):
        raise ConfigError(f"search provider {name!r} does not have `name` and an async `search(query, http)`")
    return provider
