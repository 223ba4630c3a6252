"""The one HTTP connection pool a run shares (chat calls, SearXNG, web_fetch).

httpx's default pool holds at most 100 connections and queues the rest: with
a high --concurrency that cap would silently become the run's real
concurrency. So the pool is sized from the concurrency the user asked for.
"""

from __future__ import annotations

from http.cookiejar import CookieJar, DefaultCookiePolicy
from typing import Any

import httpx


# Each verdict has at most one request in flight (a chat call, a tool call or a
# cost lookup), so `concurrency` connections would do; the slack covers
# `fanout check`, the generation-endpoint retries and connections still closing.
CONNECTIONS_PER_VERDICT = 2
SPARE_CONNECTIONS = 8


def make_http_client(
    concurrency: int,
    *,
    user_agent: str,
    timeout_s: float = 30.0,
    wire: str = "httpcore",
    transport: httpx.AsyncBaseTransport | None = None,
) -> httpx.AsyncClient:
    """A pool sized to `concurrency`; the caller owns it and closes it (`async with`).

    Redirects are not followed here: web_fetch follows them itself so that
    every hop passes the URL guard. `wire` picks what moves the bytes under
    httpx: its own pool with leaner bookkeeping (fanout.http.pool, so the cost
    per request does not grow with the pool), or aiohttp (fanout.http.transport,
    a quarter of the CPU per request; what `fanout run` uses, while commands
    that tests drive through respx keep httpcore); a given `transport` (tests pass an
    httpx.MockTransport) replaces either. Cookies are never kept: a page fetched
    for one model must not change what the next model sees (consent walls,
    sessions), and a jar shared by thousands of fetches would only grow.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    connections = CONNECTIONS_PER_VERDICT * concurrency + SPARE_CONNECTIONS
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=30.0)
    if transport is not None:
        pass
    elif wire == "aiohttp":
        from fanout.http.transport import AiohttpTransport

        transport = AiohttpTransport(limits)
    elif wire == "httpcore":
        from fanout.http.pool import lean_transport  # imported per wire: each costs start-up time

        transport = lean_transport(limits)
    else:
        raise ValueError(f"wire must be httpcore or aiohttp, got {wire!r}")
    return _CookielessClient(
        transport=transport,
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
        headers={"User-Agent": user_agent},
        follow_redirects=False,
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
    )


class _NoCookies(httpx.Cookies):
    """Cookies that are never read from responses: the jar's policy refuses every domain anyway, and httpx
    builds urllib copies of each request and response to offer them to it (a few percent of a run's CPU)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


class _CookielessClient(httpx.AsyncClient):
    """httpx's client, with the refusing jar above in place of its cookie store."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cookies = _NoCookies(self._cookies.jar)
