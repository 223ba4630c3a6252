"""Search providers: the SearchProvider protocol, the built-ins, and the registry.

    SearchProvider      name + async search(query, http) -> ProviderResult
    ProviderResult      hits, or an error classified as retryable / rate limited
    build_providers     the run's providers, in priority order, from ToolSettings
    ENTRY_POINT_GROUP   where third-party packages register theirs
    register_provider   where a program using fanout from Python registers its own

One module per provider: searxng (default), wikipedia, tavily, brave,
duckduckgo (ddgs), arxiv, pubmed (NCBI E-utilities), serpapi.
"""

from __future__ import annotations

from fanout.tools.providers.base import ProviderResult, SearchHit, SearchProvider
from fanout.tools.provider_names import ENTRY_POINT_GROUP
from fanout.tools.providers.registry import (
    BUILTIN_PROVIDERS,
    available_providers,
    build_providers,
    parse_provider_names,
    register_provider,
    unregister_provider,
)

__all__ = [
    "BUILTIN_PROVIDERS",
    "ENTRY_POINT_GROUP",
    "ProviderResult",
    "SearchHit",
    "SearchProvider",
    "available_providers",
    "build_providers",
    "parse_provider_names",
    "register_provider",
    "unregister_provider",
]
