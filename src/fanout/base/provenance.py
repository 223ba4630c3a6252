"""Provenance: a source is `verified` only if this verdict's investigation really read it.

Models sometimes cite a page as read (`provenance: verified`) when they saw
only its search snippet, or never saw it at all. The evidence is the
verdict's own fetch log: the successful web_fetch calls in its tool calls,
counted by the URL the model asked for and by the URL the page finally came
from (redirects), plus the references whose text the prompt handed over
(the engine fetched those on the verdict's behalf, and the prompt says they
count as `verified`). A `verified` source read neither way is changed to
`reported`, flagged `claimed_verified`, and named in the record's warnings.

The prompt's own rule then applies to what is left: a `verified-high` or
`verified-low` verdict needs at least one `verified` source. A verdict that
breaks it keeps its word, and the record names the violation.

URLs are compared loosely, as a reader would: scheme (http/https), host
case, default ports, a trailing slash, the fragment and percent-encoding
spelled differently do not make two URLs different pages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache
from urllib.parse import quote, unquote, urlsplit

from fanout.base.records import VERIFIED_WITHOUT_SOURCE, Source, ToolCallLog

DEFAULT_PORTS = {"http": 80, "https": 443}
PATH_SAFE = "/:@!$&'()*+,;=-._~"


_URL_IN_TEXT = re.compile(r"https?://[^\s\"'<>]+")


@lru_cache(maxsize=8192)
def normalise_url(url: str) -> str:
    """`HTTPS://Example.org:443/a%7Eb/#top` and `http://example.org/a~b` -> `example.org/a~b`.

    Remembered: a report normalises each record's URLs again for its health table and for each edit page
    (120,000 calls for 3,000 URLs on a 500-edit, four-model run), and the answer depends on the URL alone."""
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


def check_provenance(
    sources: Iterable[Source], tool_calls: Iterable[ToolCallLog], prefetched: Iterable[str] = ()
) -> tuple[list[Source], list[str]]:
    """Sources marked `fetched` and `prefetched`, false `verified` claims corrected; one warning per correction.

    `prefetched` are the URLs of the references the prompt showed with their text.
    """
    pages = fetched_pages(tool_calls)
    given = {normalise_url(url) for url in prefetched}
    checked: list[Source] = []
    warnings: list[str] = []
    for source in sources:
        url = normalise_url(source.url)
        fetched, handed = url in pages, url in given
        if source.provenance == "verified" and not (fetched or handed):
            source = replace(source, provenance="reported", claimed_verified=True)
            warnings.append(
                f"source {source.url} was cited as verified, but this investigation never fetched it; "
                "its provenance was changed to reported"
            )
        checked.append(replace(source, fetched=fetched, prefetched=handed))
    return checked, warnings


def rule_violations(verdict: str | None, sources: Iterable[Source]) -> list[str]:
    """The prompt's rules this verdict breaks, judged on its checked sources."""
    if verdict in ("verified-high", "verified-low") and not any(s.provenance == "verified" for s in sources):
        return [VERIFIED_WITHOUT_SOURCE]
    return []


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
