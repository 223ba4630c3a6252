"""arXiv: scientific preprints, through the export API's Atom feed (no key).

    GET https://export.arxiv.org/api/query?search_query=all:w1 AND all:w2&max_results=N
 -> <feed><entry><id>http://arxiv.org/abs/...</id><title/><summary/><published/>
          <author><name/></author><link rel="alternate" href=.../></entry></feed>

Errors come back as a feed with one entry whose <id> is under
http://arxiv.org/api/errors and whose <summary> says what was wrong. arXiv's
terms ask for no more than one request every three seconds, so requests are
spaced by a pacer. The XML is parsed with the standard library: ElementTree
resolves no external entities, and expat refuses entity-expansion bombs.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import httpx

from fanout.tools.settings import SEARCH_TIMEOUT_S, ToolSettings
from fanout.tools.pacing import HostPacer
from fanout.tools.providers.base import ProviderResult, SearchFailure, SearchHit, check_status, send

ENDPOINT = "https://export.arxiv.org/api/query"
ATOM = "{http://www.w3.org/2005/Atom}"
ERROR_ID_PREFIX = "http://arxiv.org/api/errors"
REQUEST_GAP_S = 3.0
SNIPPET_CHARS = 400
"""Abstracts run to 2,000 characters; ten of them would flood a model's context."""
_TERM = re.compile(r"\w[\w.+-]*")
_SPACE = re.compile(r"\s+")


class ArxivProvider:
    name = "arxiv"
    label = "arXiv"

    def __init__(self, *, max_results: int = 10, timeout_s: float = SEARCH_TIMEOUT_S, pacer: HostPacer | None = None,
                 endpoint: str | None = None) -> None:
        self.endpoint = endpoint or ENDPOINT
        self.max_results = max_results
        self.timeout_s = timeout_s
        self._pacer = pacer or HostPacer(REQUEST_GAP_S)

    @classmethod
    def from_settings(cls, settings: ToolSettings) -> ArxivProvider:
        gap = settings.provider(cls.name).request_gap_s
        return cls(max_results=settings.max_results_for(cls.name), timeout_s=settings.search_timeout_s,
                   endpoint=settings.endpoint(cls.name), pacer=HostPacer(REQUEST_GAP_S if gap is None else gap))

    async def search(self, query: str, http: httpx.AsyncClient) -> ProviderResult:
        search_query = arxiv_query(query)
        if not search_query:
            return ProviderResult([])
        params = {"search_query": search_query, "start": "0", "max_results": str(self.max_results),
                  "sortBy": "relevance"}
        request = http.build_request("GET", self.endpoint, params=params, timeout=self.timeout_s)
        try:
            await self._pacer.wait(request.url.host)
            response = await send(http, request, label=self.label, timeout_s=self.timeout_s)
            if response.status_code != 400:  # a 400 carries an error feed that says more than the status
                check_status(response, label=self.label)
            return ProviderResult(parse_feed(response.content))
        except SearchFailure as exc:
            return exc.result()


def arxiv_query(query: str) -> str:
    """Free text as arXiv's field syntax: every word must appear somewhere (`all:`)."""
    return " AND ".join(f"all:{term}" for term in _TERM.findall(query))


def parse_feed(content: bytes) -> list[SearchHit]:
    try:
        feed = ET.fromstring(content)
    except ET.ParseError as exc:
        raise SearchFailure(f"arXiv returned XML that could not be parsed ({exc})", retryable=True) from exc
    if feed.tag != f"{ATOM}feed":
        raise SearchFailure(f"arXiv returned XML that is not an Atom feed (root {feed.tag!r})", retryable=True)
    hits = []
    for entry in feed.iter(f"{ATOM}entry"):
        entry_id = _text(entry, "id")
        if entry_id.startswith(ERROR_ID_PREFIX):
            raise SearchFailure(f"arXiv refused the query: {_text(entry, 'summary') or entry_id}")
        hit = _hit(entry, entry_id)
        if hit is not None:
            hits.append(hit)
    return hits


def _hit(entry: ET.Element, entry_id: str) -> SearchHit | None:
    url = _alternate(entry) or entry_id
    if not url.startswith(("http://", "https://")):
        return None
    byline = _byline(entry).removesuffix(".")  # `et al.` then the joining `. `: one full stop, not two
    parts = [p for p in (byline, _text(entry, "published")[:10], _short(_text(entry, "summary"))) if p]
    return SearchHit(_text(entry, "title"), url, ". ".join(parts))


def _alternate(entry: ET.Element) -> str | None:
    """The abstract page's link (rel=alternate), the page a reader opens."""
    return next((link.get("href") for link in entry.iter(f"{ATOM}link")
                 if link.get("rel") == "alternate" and link.get("href")), None)


def _byline(entry: ET.Element) -> str:
    """The first three authors, then `et al.`."""
    authors = [name.text.strip() for name in entry.iter(f"{ATOM}name") if name.text and name.text.strip()]
    return ", ".join(authors[:3]) + (" et al." if len(authors) > 3 else "")


def _short(summary: str) -> str:
    """The abstract's start, cut at a word within SNIPPET_CHARS."""
    if len(summary) > SNIPPET_CHARS:
        return summary[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " ..."
    return summary


def _text(element: ET.Element, tag: str) -> str:
    found = element.find(f"{ATOM}{tag}")
    return _SPACE.sub(" ", found.text or "").strip() if found is not None else ""
