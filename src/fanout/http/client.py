"""The one HTTP client a run shares (chat calls, SearXNG, web_fetch), and the connection pool under it.

httpx's default pool holds at most 100 connections and queues the rest: with
a high --concurrency that cap would silently become the run's real
concurrency. So the pool is sized from the concurrency the user asked for.
"""

from __future__ import annotations

from http.cookiejar import CookieJar
from typing import TYPE_CHECKING

import httpx

from fanout.http.bounded import MAX_BODY_BYTES, BoundedTransport

if TYPE_CHECKING:
    from http.client import HTTPResponse
    from http.cookiejar import Cookie
    from urllib.request import Request

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
    transport: httpx.AsyncBaseTransport | None = None,
    max_body_bytes: int = MAX_BODY_BYTES,
) -> httpx.AsyncClient:
    """A pool sized to `concurrency`; the caller owns it and closes it (`async with`).

    Every command moves its bytes through fanout.http.transport (aiohttp
    under httpx; that module says why); tests pass their own `transport`
    (httpx.MockTransport, as httpx's own tests do) and get everything else as
    a run has it. Either way every response is bounded (fanout.http.bounded:
    a byte cap on the decoded body, a total deadline, gzip and deflate only).
    Redirects are not followed here: web_fetch follows them
    itself so that every hop passes the URL guard. Cookies are never kept: a
    page fetched for one model must not change what the next model sees
    (consent walls, sessions), and a jar shared by thousands of fetches would
    only grow.
    """
    if transport is None:
        from fanout.http.transport import AiohttpTransport  # aiohttp's import is a quarter second of start-up

        transport = AiohttpTransport(pool_limits(concurrency))
    return CookielessClient(
        transport=BoundedTransport(transport, max_body_bytes=max_body_bytes),
        timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
        headers={"User-Agent": user_agent},
        follow_redirects=False,
        cookies=ForgetfulCookieJar(),
    )


def pool_limits(concurrency: int) -> httpx.Limits:
    connections = CONNECTIONS_PER_VERDICT * concurrency + SPARE_CONNECTIONS
    return httpx.Limits(max_connections=connections, max_keepalive_connections=connections, keepalive_expiry=30.0)


class ForgetfulCookieJar(CookieJar):
    """A jar that never holds a cookie: neither a server's Set-Cookie nor one set by code.

    httpx's `cookies=` takes any http.cookiejar.CookieJar, and this one is what
    guarantees that the shared client never sends a cookie.
    """

    def extract_cookies(self, response: HTTPResponse, request: Request) -> None:
        return None

    def set_cookie(self, cookie: Cookie) -> None:
        return None


class _ForgetfulCookies(httpx.Cookies):
    """httpx's cookie store, which never hands a response on to its jar (see CookielessClient)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


_NO_COOKIES = _ForgetfulCookies(ForgetfulCookieJar())  # one for all clients: its jar never holds anything to share


class CookielessClient(httpx.AsyncClient):
    """httpx's client whose public `cookies` never hands a response on to the jar.

    httpx hands every response to `client.cookies.extract_cookies`, which first
    copies the request into a urllib Request so that the jar may read it:
    about a hundred Python calls, a tenth of the client's CPU per request over
    the aiohttp wire, for a jar that would ignore it. Should httpx stop
    reading its cookies through this public property, the jar passed as
    `cookies=` still keeps nothing; only the copy's cost would come back.
    """

    @property
    def cookies(self) -> httpx.Cookies:
        return _NO_COOKIES

    @cookies.setter
    def cookies(self, cookies: object) -> None:
        raise AttributeError("the shared client never keeps cookies")
