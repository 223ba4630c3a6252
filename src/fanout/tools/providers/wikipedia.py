"""Wikipedia, any language: the MediaWiki full-text search API, no key needed.

    GET https://{lang}.wikipedia.org/w/api.php?action=query&list=search&srsearch=...&format=json

answers {"query": {"search": [{"title", "pageid", "snippet", ...}]}}. The
snippet marks matches with <span class="searchmatch">; we strip the markup.
The API has no result URLs, so they are built from the titles. API errors
arrive with HTTP 200 as {"error": {"code", "info"}}. Wikimedia asks for a
descriptive User-Agent, which the run's HTTP client already sends.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx

from fanout.tools.settings import ToolSettings
from fanout.errors import ConfigError
from fanout.tools.providers.base import SearchFailure, SearchHit, WebApiProvider, search_options, strip_html

LANGUAGE_CODE = re.compile(r"^[a-z][a-z0-9-]{1,19}$")
"""Wikipedia subdomains: `en`, `de`, `zh-yue`, `simple`, `be-tarask`, ..."""
TITLE_SAFE = "/:(),!*@$;'"
"""Characters MediaWiki leaves unescaped in page URLs; everything else is percent-encoded."""


class WikipediaProvider(WebApiProvider):
    name = "wikipedia"

    def __init__(self, language: str = "en", *, max_results: int = 10, timeout_s: float = 15.0) -> None:
        language = language.strip().lower()
        if not LANGUAGE_CODE.match(language):
            raise ConfigError(f"wikipedia: {language!r} is not a Wikipedia language code (e.g. en, de, zh-yue)")
        super().__init__(max_results=max_results, timeout_s=timeout_s)
        self.language = language
        self.origin = f"https://{language}.wikipedia.org"
        self.label = f"Wikipedia ({language})"

    @classmethod
    def from_settings(cls, settings: ToolSettings) -> WikipediaProvider:
        return cls(settings.wikipedia_language, **search_options(settings))

    def request(self, query: str, http: httpx.AsyncClient) -> httpx.Request:
        params = {
            "action": "query", "list": "search", "srsearch": query, "format": "json",
            "srlimit": str(self.max_results), "srprop": "snippet",
        }
        return http.build_request("GET", f"{self.origin}/w/api.php", params=params, timeout=self.timeout_s)

    def hits(self, data: Any) -> list[SearchHit]:
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            error = data["error"]
            code, info = error.get("code", "error"), error.get("info", "")
            # maxlag / ratelimited are transient; anything else is a request we should not repeat.
            transient = code in ("maxlag", "ratelimited", "readonly")
            raise SearchFailure(f"{self.label} answered an API error: {code}: {info}".rstrip(": "), retryable=transient,
                                rate_limited=code == "ratelimited")
        found = data.get("query", {}).get("search") if isinstance(data, dict) else None
        if not isinstance(found, list):
            raise SearchFailure(f"{self.label} returned JSON without query.search", retryable=True)
        return [
            SearchHit(item["title"], self.page_url(item["title"]), strip_html(str(item.get("snippet") or "")))
            for item in found
            if isinstance(item, dict) and isinstance(item.get("title"), str) and item["title"]
        ]

    def page_url(self, title: str) -> str:
        """`Douglas Adams` -> https://en.wikipedia.org/wiki/Douglas_Adams (MediaWiki's own URL form)."""
        return f"{self.origin}/wiki/{quote(title.replace(' ', '_'), safe=TITLE_SAFE)}"
