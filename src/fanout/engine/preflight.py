"""The pre-flight: before a run writes anything, refuse a key, a model or a search that cannot work.

It asks the endpoint (the key, when it is OpenRouter's; each model, in its
listing) and the search providers once, before the run directory is touched,
so a mistake never harms a run in progress (DESIGN invariant 7). What the
listing tells about a model (context window, prices, tool support) fills
the gaps of its spec, so the verdicts warn and trim at the right sizes.
"""

from __future__ import annotations

import sys

import httpx

from fanout.base.safe_text import for_terminal
from fanout.base.errors import ConfigError
from fanout.engine.settings import RunSettings
from fanout.llm.catalog import check_key, check_models, require_known_cost, require_models
from fanout.llm.keys import is_openrouter
from fanout.llm.models import ModelSpec
from fanout.tools.providers.reachability import require_search


async def preflight(http: httpx.AsyncClient, settings: RunSettings, api_key: str | None) -> dict[str, ModelSpec]:
    """Refuse to start when the key, a model or every search provider is unusable; warnings are printed.

    Returns each model's spec with gaps (context window, prices) filled from the
    endpoint's listing, so the verdicts warn and trim at the right sizes.
    """
    if is_openrouter(settings.base_url):
        key = await check_key(http, settings.base_url, api_key)
        if key.level == "FAIL":
            raise ConfigError(key.message)
    checks = await check_models(http, settings.base_url, api_key, list(settings.models))
    for check in checks:
        if check.level == "WARN":
            print(for_terminal(f"warning: {check.name}: {check.message}"), file=sys.stderr)
    specs = {spec.name: spec for spec in require_models(checks)}
    if settings.max_cost_usd is not None:
        require_known_cost(list(specs.values()), settings.base_url)
    await require_search(http, settings.tools)
    return specs
