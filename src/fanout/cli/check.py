"""`fanout check`: each search provider, the key and each model, one line per check, before money is spent."""

from __future__ import annotations

import argparse

import anyio
import httpx

from fanout.cli.terminal import say
from fanout.base.checks import Check
from fanout.cli.declared import add_options
from fanout.cli.epilog import BAD_INPUT, ENDPOINT_KEYS, SEARCH_KEYS, epilog
from fanout.cli.model_options import add_model_options
from fanout.llm.catalog import check_key, check_models
from fanout.llm.keys import KEY_HELP, OPENROUTER_BASE_URL, api_key_for
from fanout.llm.models import DEFAULT_MODELS
from fanout.tools.settings import DEFAULT_SEARXNG_URL, ToolSettings, search_options
from fanout.http.client import make_http_client
from fanout.tools.providers.reachability import provider_checks
from fanout.tools.search_config import apply_search_options

CHECK_TIMEOUT_S = 15.0


EPILOG = epilog(
    default_models=True,
    environment=[ENDPOINT_KEYS, SEARCH_KEYS],
    exit_codes=["0 every check OK or WARN", "1 some check FAILed (a model neither the endpoint lists nor fanout's "
                "model table knows fails)", BAD_INPUT],
    examples=["fanout check", "fanout check -m deepseek/deepseek-v3.2 --search-providers searxng,wikipedia"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    add_model_options(parser, "to check")
    parser.add_argument("--base-url", default=OPENROUTER_BASE_URL, metavar="URL",
                        help=f"OpenAI-compatible endpoint (default: {OPENROUTER_BASE_URL}); {KEY_HELP}")
    parser.add_argument("--searxng-url", default=DEFAULT_SEARXNG_URL, metavar="URL",
                        help=f"SearXNG base URL (default: {DEFAULT_SEARXNG_URL})")
    add_options(parser, search_options())


def run(args: argparse.Namespace, transport: httpx.AsyncBaseTransport | None = None) -> int:
    """`transport` replaces the wire under the command's HTTP client: tests pass an httpx.MockTransport."""
    names = args.models or [m.name for m in DEFAULT_MODELS]
    api_key = api_key_for(args.base_url)
    search = apply_search_options(ToolSettings(searxng_url=args.searxng_url),
                                  providers=args.search_providers, config=args.search_config,
                                  mode=args.search_mode)
    checks = anyio.run(run_checks, args.base_url, search, api_key, names, transport)
    for check in checks:
        say(check.line())
    return 1 if any(c.level == "FAIL" for c in checks) else 0


async def run_checks(
    base_url: str,
    search: ToolSettings,
    api_key: str | None,
    names: list[str],
    transport: httpx.AsyncBaseTransport | None = None,
) -> list[Check]:
    """All checks with one short-lived client; keys are sent, never printed.

    One line per enabled search provider (SearXNG alone by default); a keyed
    provider's probe spends one request of its quota.
    """
    async with make_client(transport) as http:
        providers = await provider_checks(http, search)
        key = await check_key(http, base_url, api_key)
        models = await check_models(http, base_url, api_key, names, unknown_fails=True)
    return [*providers, key, *models]


def make_client(transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    return make_http_client(1, user_agent=ToolSettings().user_agent, timeout_s=CHECK_TIMEOUT_S, transport=transport)
