"""An httpx transport that does its wire work with aiohttp: the run's hot path at a quarter of the CPU.

Every layer above stays httpx: requests are built, sent, streamed and closed
through httpx.AsyncClient, headers and timeouts come from it, and every error
arrives as the httpx exception the callers already handle. Only the socket
work underneath changes: httpx's own stack (httpcore, h11, anyio streams) costs
about 2 ms of CPU per request in `make bench` against 0.5 ms for aiohttp's
C-accelerated parser and connector, and a verdict makes six or seven requests.

Kept as httpx does it: no redirects followed (web_fetch follows them itself),
no decompression (httpx decodes, and web_fetch reads raw bytes with its own
cap), no cookies, a pool of `max_connections` with keep-alive expiry, the
request's `sni_hostname` extension (the URL guard's pinned address) used as
the TLS server name, and httpx's default certificate store. A proxy from the
environment is still httpx's business: it mounts its own proxy transport for
the URLs the proxy covers, and only the others reach this one.

One addition: the names aiohttp resolves itself pass through a resolver that
refuses cloud metadata addresses (fanout.http.addresses), so no request of
any command, in any mode, connects to one.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import AsyncIterator
from typing import Any, NoReturn

import aiohttp
import httpx
from aiohttp.abc import AbstractResolver, ResolveResult

from fanout.http.addresses import AddressRefused, ResolvedToMetadata, is_metadata

READ_CHUNK = 64 * 1024


class AiohttpTransport(httpx.AsyncBaseTransport):
    """One aiohttp connector, made on first use inside the running event loop and closed with the client."""

    def __init__(self, limits: httpx.Limits, *, verify: ssl.SSLContext | bool = True) -> None:
        self._limits = limits
        self._verify = verify
        self._ssl: ssl.SSLContext | None = verify if isinstance(verify, ssl.SSLContext) else None
        self._session: aiohttp.ClientSession | None = None

    def _open_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(
                limit=self._limits.max_connections or 0,
                limit_per_host=0,
                keepalive_timeout=self._limits.keepalive_expiry or 15.0,
                enable_cleanup_closed=False,
                resolver=MetadataRefusingResolver(aiohttp.DefaultResolver()),
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                auto_decompress=False,
                cookie_jar=aiohttp.DummyCookieJar(),
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
                trust_env=False,  # httpx itself routes proxied URLs to its own proxy transports
                timeout=aiohttp.ClientTimeout(total=None),
            )
        return self._session

    def _ssl_context(self) -> ssl.SSLContext:
        """httpx's certificate store, loaded on the first https request: loading it costs a tenth of a
        second of start-up, and a run against the simulator or a local SearXNG never needs it."""
        if self._ssl is None:
            self._ssl = httpx.create_ssl_context(verify=self._verify)
        return self._ssl

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        session = self._open_session()
        body = await request.aread()
        options: dict[str, Any] = {"ssl": self._ssl_context()} if request.url.scheme == "https" else {}
        sni = request.extensions.get("sni_hostname")
        if sni:
            options["server_hostname"] = sni.decode() if isinstance(sni, bytes) else str(sni)
        try:
            response = await session.request(
                request.method,
                _without_userinfo(request.url),
                headers=[(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw],
                data=body or None,
                allow_redirects=False,
                timeout=_timeout(request),
                **options,
            )
        except BaseException as exc:
            _reraise_translated(exc, request)
        return httpx.Response(
            status_code=response.status,
            headers=[(k, v) for k, v in response.raw_headers],
            stream=_ResponseStream(response, request),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode("latin-1")},
            request=request,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


class MetadataRefusingResolver(AbstractResolver):
    """aiohttp's own resolver, whose answers are refused when any of them is a cloud metadata address.

    This is where a name becomes the address aiohttp connects to, so the check
    holds for names the URL guard leaves unresolved (--allow-private-urls) and
    for every other command's requests.
    """

    def __init__(self, inner: AbstractResolver) -> None:
        self._inner = inner

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        answers = await self._inner.resolve(host, port, family)
        for answer in answers:
            if is_metadata(ipaddress.ip_address(answer["host"].split("%", 1)[0])):
                raise ResolvedToMetadata(host, answer["host"])
        return answers

    async def close(self) -> None:
        await self._inner.close()


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, response: aiohttp.ClientResponse, request: httpx.Request) -> None:
        self._response: aiohttp.ClientResponse | None = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        response = self._response
        if response is None:
            raise httpx.StreamClosed()
        try:
            while chunk := await response.content.read(READ_CHUNK):
                yield chunk
        except BaseException as exc:
            _reraise_translated(exc, self._request)

    async def aclose(self) -> None:
        """The connection goes back to the pool, and aiohttp's response is let go of at once.

        httpx keeps every response in a reference cycle (the response and
        its stream refer to each other), so whatever the stream still holds
        is freed only by the cycle collector: about 140 objects per verdict,
        aiohttp's with their finalizers, in collector passes of up to a
        quarter of a second of CPU that stall every verdict in flight.
        """
        response, self._response = self._response, None
        if response is not None:
            response.release()


def _without_userinfo(url: httpx.URL) -> str:
    """The URL without `user:password@`: httpx has already sent them as the Authorization header, and aiohttp
    refuses a request that carries both (ValueError "Cannot combine AUTHORIZATION header...")."""
    return str(url.copy_with(userinfo=b"")) if url.userinfo else str(url)


def _timeout(request: httpx.Request) -> aiohttp.ClientTimeout:
    """httpx's per-phase timeouts: connect for the handshake, read between reads, pool for a free connection."""
    phases = request.extensions.get("timeout") or {}
    connect, read, pool = phases.get("connect"), phases.get("read"), phases.get("pool")
    return aiohttp.ClientTimeout(
        total=None,
        connect=None if pool is None or connect is None else pool + connect,
        sock_connect=connect,
        sock_read=read,
    )


def _reraise_translated(exc: BaseException, request: httpx.Request) -> NoReturn:
    """Raise httpx's form of an aiohttp failure; what needs no translation (cancellation) goes on as itself."""
    translated = _translated(exc, request)
    if translated is exc:
        raise exc
    raise translated from exc


_TRANSLATIONS: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], type[httpx.TransportError]], ...] = (
    (aiohttp.ConnectionTimeoutError, httpx.ConnectTimeout),
    ((aiohttp.ServerTimeoutError, asyncio.TimeoutError, TimeoutError), httpx.ReadTimeout),
    (aiohttp.ClientConnectorError, httpx.ConnectError),
    ((aiohttp.ServerDisconnectedError, aiohttp.ClientPayloadError, aiohttp.ClientResponseError),
     httpx.RemoteProtocolError),
    (aiohttp.InvalidURL, httpx.UnsupportedProtocol),
    ((aiohttp.ClientError, OSError), httpx.ReadError),
)
"""aiohttp's failures and the httpx error each becomes, the first that fits winning: a connect timeout is a
server timeout too, and every aiohttp failure a ClientError, so the narrower ones come first."""


def _translated(exc: BaseException, request: httpx.Request) -> BaseException:
    """aiohttp's exceptions as the httpx ones the callers catch; cancellation and our own pass through."""
    if isinstance(exc, (asyncio.CancelledError, httpx.HTTPError)) or not isinstance(exc, Exception):
        return exc
    message = str(exc) or type(exc).__name__
    if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(exc.os_error, ResolvedToMetadata):
        return AddressRefused(exc.os_error.strerror or message, request=request)
    for kinds, translated in _TRANSLATIONS:
        if isinstance(exc, kinds):
            return translated(message, request=request)
    return exc
