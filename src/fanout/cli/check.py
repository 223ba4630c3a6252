"""`fanout check`: SearXNG, the key and each model, one line per check, before money is spent."""

from __future__ import annotations

import argparse
import os

import anyio
import httpx

from fanout.catalog import Check, check_key, check_models, check_searxng
from fanout.config import API_KEY_ENV, DEFAULT_MODELS, DEFAULT_SEARXNG_URL, OPENROUTER_BASE_URL, ToolSettings
from fanout.http import make_http_client

CHECK_TIMEOUT_S = 15.0


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--models", nargs="+", metavar="MODEL",
        help="models to check (default: the four default models)",
    )
    parser.add_argument("--base-url", default=OPENROUTER_BASE_URL,
                        help=f"OpenAI-compatible endpoint (default: {OPENROUTER_BASE_URL})")
    parser.add_argument("--searxng-url", default=DEFAULT_SEARXNG_URL,
                        help=f"SearXNG base URL (default: {DEFAULT_SEARXNG_URL})")


def run(args: argparse.Namespace) -> int:
    names = args.models or [m.name for m in DEFAULT_MODELS]
    api_key = os.environ.get(API_KEY_ENV) or None
    checks = anyio.run(run_checks, args.base_url, args.searxng_url, api_key, names)
    for check in checks:
        print(check.line())
    return 1 if any(c.level == "FAIL" for c in checks) else 0


async def run_checks(base_url: str, searxng_url: str, api_key: str | None, names: list[str]) -> list[Check]:
    """All checks with one short-lived client; the key is sent, never printed."""
    async with make_client() as http:
        searxng = await check_searxng(http, searxng_url)
        key = await check_key(http, base_url, api_key)
        models = await check_models(http, base_url, api_key, names)
    return [searxng, key, *models]


def make_client() -> httpx.AsyncClient:
    return make_http_client(1, user_agent=ToolSettings().user_agent, timeout_s=CHECK_TIMEOUT_S)
