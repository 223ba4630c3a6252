"""Reading a response body with a hard cap on what we keep in memory.

A page can be 20 MB, endless, or a small gzip that inflates to gigabytes.
So the raw stream is read chunk by chunk and decompressed here with a
bounded output size (httpx's own decoders inflate a whole chunk at once),
and reading stops as soon as the cap is reached.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple, Protocol

import httpx

from fanout.errors import ToolFailure

ACCEPT_ENCODING = "gzip, deflate"
"""Only what we can inflate with a bounded output; never br or zstd."""


class CappedBody(NamedTuple):
    data: bytes
    """At most the cap, decoded from any Content-Encoding."""
    truncated: bool
    """True when the page was longer than the cap and we stopped reading."""
    raw_bytes: int
    """Bytes taken off the wire (for tests and diagnostics)."""


class _Decoder(Protocol):
    def decode(self, chunk: bytes, limit: int) -> bytes: ...

    def has_pending(self) -> bool: ...


async def read_capped(response: httpx.Response, max_bytes: int) -> CappedBody:
    """Read at most `max_bytes` decoded bytes of a streamed response, then stop."""
    decoder = _decoder_for(response.headers.get("content-encoding", ""))
    parts: list[bytes] = []
    kept = raw = 0
    async for chunk in response.aiter_raw():
        raw += len(chunk)
        # Ask for one byte more than fits: getting it proves the page is longer.
        piece = decoder.decode(chunk, max_bytes - kept + 1)
        parts.append(piece)
        kept += len(piece)
        if kept > max_bytes or decoder.has_pending():
            return CappedBody(b"".join(parts)[:max_bytes], True, raw)
    return CappedBody(b"".join(parts), False, raw)


def _decoder_for(content_encoding: str) -> _Decoder:
    encodings = [e.strip().lower() for e in content_encoding.split(",") if e.strip()]
    encodings = [e for e in encodings if e != "identity"]
    if not encodings:
        return _Identity()
    if encodings == ["gzip"] or encodings == ["x-gzip"]:
        return _Inflate(zlib.MAX_WBITS | 16)
    if encodings == ["deflate"]:
        return _Inflate(zlib.MAX_WBITS, raw_fallback=True)
    raise ToolFailure(f"unsupported_encoding: the server sent Content-Encoding {content_encoding!r}")


class _Identity:
    def __init__(self) -> None:
        self._pending = b""

    def decode(self, chunk: bytes, limit: int) -> bytes:
        data = self._pending + chunk
        self._pending = data[limit:]
        return data[:limit]

    def has_pending(self) -> bool:
        return bool(self._pending)


class _Inflate:
    """zlib with `max_length`, so one chunk can never inflate past the cap."""

    def __init__(self, wbits: int, *, raw_fallback: bool = False) -> None:
        self._inflater = zlib.decompressobj(wbits)
        self._raw_fallback = raw_fallback
        self._started = False

    def decode(self, chunk: bytes, limit: int) -> bytes:
        try:
            out = self._inflater.decompress(self._inflater.unconsumed_tail + chunk, limit)
        except zlib.error as exc:
            if self._raw_fallback and not self._started:
                # Some servers send raw deflate without the zlib header.
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                self._raw_fallback = False
                return self.decode(chunk, limit)
            raise ToolFailure(f"bad_encoding: the compressed body is corrupt ({exc})") from exc
        self._started = True
        return out

    def has_pending(self) -> bool:
        return bool(self._inflater.unconsumed_tail)
