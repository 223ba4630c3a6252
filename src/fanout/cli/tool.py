"""`fanout tool web_search QUERY` / `fanout tool web_fetch URL`: one tool call by hand.

Prints exactly the text a model would receive for that call (through the
same dispatcher), so a user can see why a verdict went the way it did; a
failure's detail, which the model is not shown (`error: timeout` is all it
reads), follows on stderr. Exit status 0 when the tool succeeded, 1 when the
model would see an error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from fanout.cli.terminal import say
from fanout.cli.declared import add_options
from fanout.cli.epilog import BAD_INPUT, SEARCH_KEYS, epilog
from fanout.http.client import make_http_client
from fanout.tools.settings import DEFAULT_SEARXNG_URL, ToolSettings, search_options
from fanout.tools.schemas import REQUIRED_ARGUMENT, TOOL_NAMES
from fanout.tools.search_config import apply_search_options

if TYPE_CHECKING:
    import httpx

    from fanout.tools.executor import ToolResult


EPILOG = epilog(
    environment=[SEARCH_KEYS],
    exit_codes=["0 the tool succeeded", "1 the model would receive an error", BAD_INPUT],
    examples=['fanout tool web_search "ada whitlock physicist"',
              'fanout tool web_search --search-providers searxng,wikipedia --search-mode aggregate "ada whitlock"',
              "fanout tool web_fetch https://example.org/page"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool", choices=TOOL_NAMES, help="the tool to run")
    parser.add_argument("argument", nargs="+", metavar="QUERY_OR_URL", help="the search query, or the URL to fetch")
    parser.add_argument("--searxng-url", default=DEFAULT_SEARXNG_URL, metavar="URL", help="SearXNG base URL (default: %(default)s)")
    parser.add_argument(
        "--allow-private-urls",
        action="store_true",
        help="let web_fetch open loopback and private addresses (only for the local simulator)",
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        metavar="N",
        default=ToolSettings.fetch_max_chars,
        help="cut fetched text after this many characters (default: %(default)s)",
    )
    parser.add_argument("--blocked-domains", type=Path, metavar="FILE", help="YAML file of blocked domains (default: the bundled list)")
    add_options(parser, search_options())


def run(args: argparse.Namespace, transport: httpx.AsyncBaseTransport | None = None) -> int:
    """`transport` replaces the wire under the command's HTTP client: tests pass an httpx.MockTransport."""
    settings = ToolSettings(
        searxng_url=args.searxng_url,
        allow_private_urls=args.allow_private_urls,
        fetch_max_chars=args.max_chars,
        blocked_domains_file=args.blocked_domains,
    )
    settings = apply_search_options(settings, providers=args.search_providers, config=args.search_config,
                                    mode=args.search_mode)
    raw_arguments = json.dumps({REQUIRED_ARGUMENT[args.tool]: " ".join(args.argument)})
    result = anyio.run(_call_tool, settings, args.tool, raw_arguments, transport)
    say(result.text)
    if result.detail is not None:  # words from a server or a URL: escaped like every untrusted text on a terminal
        say(f"(not shown to the model: {result.detail})", file=sys.stderr)
    return 0 if result.ok else 1


async def _call_tool(
    settings: ToolSettings, name: str, raw_arguments: str, transport: httpx.AsyncBaseTransport | None
) -> ToolResult:
    from fanout.tools import ToolBox  # the toolbox (cache, providers, download) when a call is made, not for --help

    async with make_http_client(1, user_agent=settings.user_agent, transport=transport) as http:
        return await ToolBox(http, settings).dispatch(name, raw_arguments)
