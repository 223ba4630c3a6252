"""Downloading one page for web_fetch: guarded hops, politeness, status and type checks.

Redirects are followed here, one hop at a time, so that each hop passes the
URL guard (a public page may redirect to http://10.0.0.1/). The whole fetch,
all hops and the body, runs under one deadline.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import NamedTuple

import anyio
import httpx

from fanout.config import ToolSettings
from fanout.errors import ToolFailure
from fanout.http.addresses import AddressRefused
from fanout.tools.body import ACCEPT_ENCODING, read_capped
from fanout.tools.pacing import HostPacer
from fanout.tools.urlguard import Target, UrlGuard

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain"})
REQUEST_HEADERS = {
    "Accept": "text/html,application/xhtml+xml;q=0.9,text/plain;q=0.8,*/*;q=0.1",
    "Accept-Encoding": ACCEPT_ENCODING,
}


class Page(NamedTuple):
    url: str
    """The final URL, after redirects."""
    media_type: str
    """`text/html`, `text/plain`, or "" when the server did not say."""
    body: bytes
    encoding: str | None
    """The charset the server declared, if any."""
    truncated: bool
    """The body was longer than fetch_max_bytes and was cut."""


class PageFetcher:
    def __init__(self, http: httpx.AsyncClient, guard: UrlGuard, pacer: HostPacer, settings: ToolSettings) -> None:
        self._http = http
        self._guard = guard
        self._pacer = pacer
        self._settings = settings

    async def fetch(self, url: str) -> Page:
        """The page at `url`; raises ToolFailure with a message for the model."""
        limit = self._settings.fetch_timeout_s
        try:
            with anyio.move_on_after(limit):
                return await self._follow_redirects(url)
        except httpx.TimeoutException as exc:
            raise ToolFailure(f"timeout: {url} did not answer within {limit:g} s") from exc
        except AddressRefused as exc:
            raise ToolFailure(str(exc)) from exc
        except httpx.HTTPError as exc:
            raise ToolFailure(f"connection_error: could not fetch {url} ({type(exc).__name__}: {exc})") from exc
        raise ToolFailure(f"timeout: {url} did not finish within {limit:g} s")

    async def _follow_redirects(self, url: str) -> Page:
        target = self._guard.parse(url)
        for _hop in range(self._settings.max_redirects + 1):
            async with self._open(target) as response:
                if not response.has_redirect_location:
                    return await self._read(target, response)
                location = response.headers["location"]
            target = self._guard.parse(_join(target, location))
        raise ToolFailure(f"too_many_redirects: {url} redirected more than {self._settings.max_redirects} times")

    @asynccontextmanager
    async def _open(self, target: Target) -> AsyncIterator[httpx.Response]:
        pinned = await self._guard.pin(target)
        await self._pacer.wait(target.host)
        request = self._http.build_request(
            "GET",
            pinned.url,
            headers={**REQUEST_HEADERS, **pinned.headers},
            extensions=pinned.extensions,
            timeout=self._settings.fetch_timeout_s,
        )
        response = await self._http.send(request, stream=True)
        try:
            yield response
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()

    async def _read(self, target: Target, response: httpx.Response) -> Page:
        url = str(target.url)
        if not response.is_success:
            phrase = httpx.codes.get_reason_phrase(response.status_code) or response.reason_phrase
            raise ToolFailure(f"HTTP {response.status_code} {phrase}".rstrip())
        media_type = _media_type(response)
        if media_type and media_type not in HTML_TYPES | TEXT_TYPES:
            raise ToolFailure(
                f"unsupported_content_type: {url} is {media_type}, not a web page; "
                "web_fetch reads HTML and plain text only (look for an HTML version of this document)"
            )
        body = await read_capped(response, self._settings.fetch_max_bytes)
        if not media_type and not _looks_like_html(body.data):
            raise ToolFailure(f"unsupported_content_type: {url} did not say what it is and does not look like HTML")
        return Page(url, media_type, body.data, response.charset_encoding, body.truncated)


def _join(target: Target, location: str) -> httpx.URL:
    """Resolve a Location header against the URL as named (never the pinned address)."""
    try:
        return target.url.join(location)
    except httpx.InvalidURL as exc:
        raise ToolFailure(f"invalid_url: {target.url} redirected to an invalid URL {location[:200]!r}") from exc


def _media_type(response: httpx.Response) -> str:
    content_type: str = response.headers.get("content-type", "")
    return content_type.split(";", 1)[0].strip().lower()


def _looks_like_html(data: bytes) -> bool:
    return data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"<"
