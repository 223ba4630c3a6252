"""Content-Encoding undone with a bounded output: no chunk ever inflates past what the reader still takes.

httpx's own decoders inflate a whole chunk at once, so a 64 KB chunk of a
gzip bomb becomes up to 64 MB before anyone can count it. Here zlib's
`max_length` keeps each step within the caller's limit. Only gzip and
deflate are read (what fanout asks for); br and zstd are refused, since
their bounded decoders are not in the dependencies.
"""

from __future__ import annotations

import zlib
from typing import Protocol

ACCEPT_ENCODING = "gzip, deflate"
"""Only what we can inflate with a bounded output; never br or zstd."""


class UnreadableEncoding(ValueError):
    """The body's Content-Encoding is one fanout does not read, or the compressed bytes are corrupt."""


class Decoder(Protocol):
    def decode(self, chunk: bytes, limit: int) -> bytes:
        """At most `limit` decoded bytes of what was given so far; the rest waits (see has_pending)."""
        ...

    def has_pending(self) -> bool:
        """Whether decoded bytes are held back because the last limit was reached."""
        ...


def decoder_for(content_encoding: str) -> Decoder:
    """The decoder of a Content-Encoding header's value; UnreadableEncoding for anything but gzip and deflate."""
    encodings = [e.strip().lower() for e in content_encoding.split(",") if e.strip()]
    encodings = [e for e in encodings if e != "identity"]
    if not encodings:
        return Identity()
    if encodings == ["gzip"] or encodings == ["x-gzip"]:
        return Inflate(zlib.MAX_WBITS | 16)
    if encodings == ["deflate"]:
        return Inflate(zlib.MAX_WBITS, raw_fallback=True)
    raise UnreadableEncoding(f"the server sent Content-Encoding {content_encoding!r}")


class Identity:
    def __init__(self) -> None:
        self._pending = b""

    def decode(self, chunk: bytes, limit: int) -> bytes:
        data = self._pending + chunk
        self._pending = data[limit:]
        return data[:limit]

    def has_pending(self) -> bool:
        return bool(self._pending)


class Inflate:
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
            raise UnreadableEncoding(f"the compressed body is corrupt ({exc})") from exc
        self._started = True
        return out

    def has_pending(self) -> bool:
        return bool(self._inflater.unconsumed_tail)
