"""The names search providers go by, apart from the providers themselves.

`--search-providers` lists them in its help, and the settings declare that
option, so the names must be readable without loading a provider (each
provider is built from the settings: the names cannot live with them).
fanout.tools.providers.registry maps each name to its factory.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

BUILTIN_PROVIDER_NAMES = ("searxng", "wikipedia", "tavily", "brave", "duckduckgo", "arxiv", "pubmed", "serpapi")
"""The providers fanout ships, in the order help and error messages list them."""
ENTRY_POINT_GROUP = "fanout.search_providers"
"""Where an installed package declares a provider of its own (a plug-in)."""


def installed_plugins() -> dict[str, EntryPoint]:
    """Installed plug-ins by name; a plug-in cannot take a built-in's name (a typo'd package must not silently
    replace SearXNG). Reading every package's metadata costs start-up time: ask only when a name needs it."""
    found = entry_points(group=ENTRY_POINT_GROUP)
    return {ep.name: ep for ep in found if ep.name not in BUILTIN_PROVIDER_NAMES}


def command_line_providers() -> list[str]:
    """The names a command line can give: the built-ins, then installed plug-ins. (A name a program registers
    from Python joins them in fanout.tools.providers.registry; no command line runs such a program.)"""
    return [*BUILTIN_PROVIDER_NAMES, *sorted(installed_plugins())]
