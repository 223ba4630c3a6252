"""Every HTTP body fanout receives is bounded: in bytes after decoding, in time as a whole, and in JSON depth.

The run's one client (fanout.http.client) sends every request through
BoundedTransport, so the bounds hold for chat replies, /models, /generation, SearXNG and every search
provider, and the Wikidata API alike, with no caller having to remember them:

- a byte cap on the decoded body (MAX_BODY_BYTES, or the client's own,
  fanout.http.client.make_http_client's max_body_bytes). The transport undoes gzip and deflate itself with a
  bounded output (fanout.http.decode), so a small gzip that inflates to a
  gigabyte is stopped at the cap, counted after inflating; httpx then sees
  an unencoded body. A body over the cap raises BodyTooLarge, which keeps
  the body's first bytes (a chat reply's id is there).
- a total deadline per request: connection, headers and every byte of the
  body within the request's read timeout.
  httpx's timeouts bound each wait between bytes, so an endless body that
  trickles forever would otherwise never time out. DeadlinePassed is an
  httpx.ReadTimeout, handled wherever a timeout already is.
- a depth cap for JSON (response_json, through fanout.base.reading.parse_json):
  Python's parser recurses, and a reply nested a hundred thousand deep ends
  in RecursionError, not in an error anyone handles.

web_fetch asks for the body as sent (RAW_BODY) and caps it itself
(fanout.tools.body): a page over its cap is cut, not refused. Its requests
still get the total deadline.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx

from fanout.base.reading import MAX_JSON_DEPTH as MAX_JSON_DEPTH  # re-exported: the HTTP parts import these from here
from fanout.base.reading import JsonTooDeep as JsonTooDeep
from fanout.base.reading import json_depth_over as json_depth_over
from fanout.base.reading import parse_json as parse_json
from fanout.http.decode import ACCEPT_ENCODING, Decoder, Identity, UnreadableEncoding, decoder_for

MAX_BODY_BYTES = 16 * 1024 * 1024
"""A body longer than this, decoded, is refused. The largest fanout meets in use: OpenRouter's /models listing
(about 1 MB in 2026), a Wikidata entity batch (a few MB); a chat reply of a 128k-token answer is under 1 MB."""
HEAD_BYTES = 4096
"""How much of a refused body is kept for its caller: a chat reply's id and model come first."""

RAW_BODY = "fanout.raw_body"
"""Request extension: hand the body on as sent, encoded and uncapped (web_fetch decodes and caps it itself)."""


class BodyTooLarge(httpx.RemoteProtocolError):
    """The decoded body went past its cap; `head` is its first HEAD_BYTES bytes, `cap` the cap in bytes."""

    def __init__(self, message: str, *, request: httpx.Request, cap: int, head: bytes) -> None:
        super().__init__(message, request=request)
        self.cap = cap
        self.head = head


class EncodingRefused(httpx.RemoteProtocolError):
    """The body came in a Content-Encoding fanout cannot inflate with a bound (br, zstd), or corrupt."""


class DeadlinePassed(httpx.ReadTimeout):
    """The request as a whole, body included, took longer than its deadline."""


class BoundedTransport(httpx.AsyncBaseTransport):
    """Any httpx transport, with each response's body capped and each request's time bounded as a whole."""

    def __init__(self, inner: httpx.AsyncBaseTransport, *, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self._inner = inner
        self._max_body_bytes = max_body_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        raw = bool(request.extensions.get(RAW_BODY))
        if not raw:
            request.headers["Accept-Encoding"] = ACCEPT_ENCODING  # httpx would offer br and zstd when installed
        deadline_s = deadline_of(request)
        ends_at = None if deadline_s is None else anyio.current_time() + deadline_s
        with _deadline_scope(ends_at) as scope:
            response = await self._inner.handle_async_request(request)
        if scope.cancelled_caught:
            raise DeadlinePassed(_late(request, deadline_s), request=request)
        if raw:
            return _rebuilt(response, request, _DeadlineStream(response, request, deadline_s, ends_at))
        try:
            # A transport that read the body itself (httpx.MockTransport) hands it on decoded already.
            decoder = Identity() if response.is_stream_consumed else decoder_for(
                response.headers.get("content-encoding", ""))
        except UnreadableEncoding as exc:
            await response.aclose()
            raise EncodingRefused(f"{request.url.host} answered with a body fanout cannot read: {exc}",
                                  request=request) from exc
        stream = _BoundedStream(response, request, deadline_s, ends_at, decoder, self._max_body_bytes)
        headers = httpx.Headers(response.headers)  # the bytes as received (a header in UTF-8 stays as it came)
        for name in ("content-encoding", "content-length"):  # this stream decodes, so neither says true any more
            if name in headers:
                del headers[name]
        return _rebuilt(response, request, stream, headers)

    async def aclose(self) -> None:
        await self._inner.aclose()


def deadline_of(request: httpx.Request) -> float | None:
    """The request's read timeout: the time the caller gave it to be answered, here for the whole answer."""
    read = (request.extensions.get("timeout") or {}).get("read")
    return None if read is None else float(read)


def _deadline_scope(ends_at: float | None) -> anyio.CancelScope:
    """A cancel scope that ends at `ends_at` (on the event loop's clock), or never when None.

    What anyio.fail_at does, without its two generator-based context managers
    around the scope: they cost more than the scope itself, and the transport
    opens one per request and one per body chunk (several per verdict). The
    caller raises its own timeout error when `cancelled_caught` is set: only
    the deadline cancels this scope, as nothing else holds it.
    """
    return anyio.CancelScope(deadline=math.inf if ends_at is None else ends_at)


def _rebuilt(response: httpx.Response, request: httpx.Request, stream: httpx.AsyncByteStream,
             headers: httpx.Headers | None = None) -> httpx.Response:
    """The response on another stream. Its headers go over as bytes: as text (multi_items) they would be encoded
    again as ASCII, and a header a server sent in UTF-8 (a file name) raised UnicodeEncodeError."""
    return httpx.Response(
        status_code=response.status_code,
        headers=response.headers.raw if headers is None else headers.raw,
        stream=stream,
        extensions=response.extensions,
        request=request,
    )


def _late(request: httpx.Request, deadline_s: float | None) -> str:
    return f"{request.url.host} did not finish answering within the request's {deadline_s:g} s deadline"


class _DeadlineStream(httpx.AsyncByteStream):
    """The inner response's body as sent, each read bounded by what is left of the request's deadline."""

    def __init__(self, inner: httpx.Response, request: httpx.Request, deadline_s: float | None,
                 ends_at: float | None) -> None:
        self._inner: httpx.Response | None = inner
        self._request = request
        self._deadline_s = deadline_s
        self._ends_at = ends_at

    async def _chunks(self) -> AsyncIterator[bytes]:
        if self._inner is None:
            raise httpx.StreamClosed()
        chunks = _raw_chunks(self._inner)
        while True:
            with _deadline_scope(self._ends_at) as scope:
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return
            if scope.cancelled_caught:
                raise DeadlinePassed(_late(self._request, self._deadline_s), request=self._request)
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._chunks():
            yield chunk

    async def aclose(self) -> None:
        """Close the inner response and let go of it: httpx keeps the outer one in a reference cycle (see
        fanout.http.transport._ResponseStream.aclose), which should not keep the inner one alive too."""
        if self._inner is not None:
            try:
                await self._inner.aclose()
            finally:
                self._inner = None


async def _raw_chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    """The body as the inner transport delivers it: streamed, or whole when that transport already read it."""
    if response.is_stream_consumed:
        yield response.content
        return
    async for chunk in response.aiter_raw():
        yield chunk


class _BoundedStream(_DeadlineStream):
    """The inner body decoded, at most `cap` bytes of it, within the request's deadline."""

    def __init__(self, inner: httpx.Response, request: httpx.Request, deadline_s: float | None,
                 ends_at: float | None, decoder: Decoder, cap: int) -> None:
        super().__init__(inner, request, deadline_s, ends_at)
        self._decoder = decoder
        self._cap = cap

    async def __aiter__(self) -> AsyncIterator[bytes]:
        kept = 0
        head = b""
        async for chunk in self._chunks():
            try:
                # One byte more than fits: getting it proves the body is longer than the cap.
                piece = self._decoder.decode(chunk, self._cap - kept + 1)
            except UnreadableEncoding as exc:
                raise EncodingRefused(f"{self._request.url.host} sent a body fanout cannot read: {exc}",
                                      request=self._request) from exc
            kept += len(piece)
            if len(head) < HEAD_BYTES:
                # Leading whitespace is OpenRouter's keep-alive while the model works, not the body's head.
                head += (piece if head else piece.lstrip())[: HEAD_BYTES - len(head)]
            if kept > self._cap or self._decoder.has_pending():
                raise BodyTooLarge(
                    f"{self._request.url.host} sent a body over the {describe_bytes(self._cap)} cap on a response "
                    "body; it was not read further",
                    request=self._request, cap=self._cap, head=head,
                )
            if piece:
                yield piece


def describe_bytes(count: int) -> str:
    """A byte count as people say it: 16 MiB, 512 KiB, 300 bytes."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size and count % size == 0:
            return f"{count // size} {unit}"
    return f"{count:,} bytes"


def response_json(response: httpx.Response, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A read response's body as JSON, depth-capped: what `response.json()` is, bounded."""
    return parse_json(response.content, max_depth)


def failure_text(exc: httpx.HTTPError) -> str:
    """What to tell the user of a failed request: a bound's own sentence, else the failure's kind."""
    if isinstance(exc, (BodyTooLarge, EncodingRefused, DeadlinePassed)):
        return str(exc)
    return type(exc).__name__
