"""The watch's clients: one HTTP client for Wikimedia's side (the stream, the API, Lift Wing), made and closed here.

The run's own clients (chat, search, fetch) are the engine's; this pool is
apart because it carries the stream's long-lived connection and names the
operator in its User-Agent as Wikimedia asks. Reference pages are fetched
with the run's tool settings (its URL guard, `--allow-private-urls`), as
`fetch-edits --enrich` fetches them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TextIO

import httpx

from fanout.http.client import make_http_client
from fanout.tools.extract_pool import ExtractionPool
from fanout.tools.settings import ToolSettings
from fanout.wikidata.api import require_contact, user_agent
from fanout.workloads.patrol.live.settings import WatchSettings
from fanout.workloads.patrol.live.source import PatrolWatch, open_watch

SPARE_CONNECTIONS = 4
"""Beyond the API's and the enrichers': the stream's, Lift Wing's, and room for a reconnect."""


def watch_contact(settings: WatchSettings) -> str | None:
    """The contact for the User-Agent, checked before anything starts (Wikimedia's hosts require one)."""
    contact = require_contact(settings.api_url, settings.contact)
    return require_contact(settings.stream_url, contact)


@asynccontextmanager
async def open_patrol_source(run_dir: Path, settings: WatchSettings, tools: ToolSettings, *,
                             logged: Callable[[int], bool], out: TextIO, holding: Callable[[], str | None],
                             transport: httpx.AsyncBaseTransport | None = None) -> AsyncIterator[PatrolWatch]:
    """The watch with its clients, for the engine's live run (fanout.engine.live.run_live)."""
    contact = watch_contact(settings)
    limit = settings.api_concurrency + settings.enrich_workers + SPARE_CONNECTIONS
    async with (
        make_http_client(limit, user_agent=user_agent(contact), transport=transport) as http,
        ExtractionPool() as extractor,  # no worker starts unless a reference page is read
    ):
        web_fetch = None
        if settings.max_references > 0:
            from fanout.tools import ToolBox  # heavy (providers, cache); only enrichment with references needs it

            web_fetch = ToolBox(http, tools, extractor=extractor).web_fetch
        async with open_watch(run_dir, settings, http=http, logged=logged, out=out, holding=holding,
                              web_fetch=web_fetch, contact=contact) as watch:
            yield watch
