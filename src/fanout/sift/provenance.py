"""Provenance: a source is `verified` only if this verdict's investigation really fetched it.

Models sometimes cite a page as read (`provenance: verified`) when they saw
only its search snippet, or never saw it at all. The evidence is the
verdict's own fetch log: the successful web_fetch calls in its tool calls,
counted by the URL the model asked for and by the URL the page finally came
from (redirects). A `verified` source missing from that log is changed to
`reported`, flagged `claimed_verified`, and named in the record's warnings.

URLs are compared loosely, as a reader would: scheme (http/https), host
case, default ports, a trailing slash, the fragment and percent-encoding
spelled differently do not make two URLs different pages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from urllib.parse import quote, unquote, urlsplit

from fanout.records import Source, ToolCallLog

DEFAULT_PORTS = {"http": 80, "https": 443}
PATH_SAFE = "/:@!$&'()*+,;=-._~"


_URL_IN_TEXT = re.compile(r"https?://[^\s\"'<>]+")


def normalise_url(url: str) -> str:
    """`HTTPS://Example.org:443/a%7Eb/#top` and `http://example.org/a~b` -> `example.org/a~b`."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    path = quote(unquote(parts.path), safe=PATH_SAFE).rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{netloc}{path}{query}"


def fetched_pages(tool_calls: Iterable[ToolCallLog]) -> set[str]:
    """Every page this investigation read: requested and final URLs of successful web_fetch calls."""
    pages: set[str] = set()
    for call in tool_calls:
        if call.tool != "web_fetch" or not call.ok:
            continue
        for url in (_url_argument(call.arguments), call.final_url):
            if url:
                pages.add(normalise_url(url))
    return pages


def check_provenance(sources: Iterable[Source], tool_calls: Iterable[ToolCallLog]) -> tuple[list[Source], list[str]]:
    """Sources marked `fetched`, with false `verified` claims corrected; plus one warning per correction."""
    pages = fetched_pages(tool_calls)
    checked: list[Source] = []
    warnings: list[str] = []
    for source in sources:
        fetched = normalise_url(source.url) in pages
        if source.provenance == "verified" and not fetched:
            source = replace(source, provenance="reported", claimed_verified=True)
            warnings.append(
                f"source {source.url} was cited as verified, but this investigation never fetched it; "
                "its provenance was changed to reported"
            )
        checked.append(replace(source, fetched=fetched))
    return checked, warnings


def _url_argument(arguments: str) -> str | None:
    """The url a web_fetch call asked for; models sometimes send broken JSON, so fall back to a regex."""
    try:
        value = json.loads(arguments)
    except (TypeError, ValueError):
        value = None
    url = value.get("url") if isinstance(value, dict) else None
    if isinstance(url, str):
        return url
    match = _URL_IN_TEXT.search(arguments or "")
    return match.group(0) if match else None
