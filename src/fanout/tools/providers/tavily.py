"""Tavily: a search API built for LLM agents (key: TAVILY_API_KEY).

    POST https://api.tavily.com/search   Authorization: Bearer tvly-...
    {"query": ..., "max_results": N, "search_depth": "basic"}
 -> {"query", "answer", "results": [{"title", "url", "content", "score", ...}], "response_time"}

Errors (Tavily's help centre): 401 missing or invalid key, 429 too many
requests, 432 plan limit exceeded, 433 pay-as-you-go limit exceeded, 5xx.
A basic search costs one API credit; Tavily's own `answer` is not requested,
so every model reads the same sources and draws its own conclusion.
"""

from __future__ import annotations

from typing import Any

import httpx

from fanout.tools.providers.base import KeyedProvider, SearchFailure, SearchHit, text_of

ENDPOINT = "https://api.tavily.com/search"
KEY_VARIABLE = "TAVILY_API_KEY"
MAX_RESULTS = 20
"""Tavily accepts 0..20."""
QUOTA_STATUSES = {432: "the plan's usage limit is used up", 433: "the pay-as-you-go limit is reached"}


class TavilyProvider(KeyedProvider):
    name = "tavily"
    label = "Tavily"
    key_variable = KEY_VARIABLE
    most_results = MAX_RESULTS
    default_endpoint = ENDPOINT

    def request(self, query: str, http: httpx.AsyncClient) -> httpx.Request:
        body = {"query": query, "max_results": self.max_results, "search_depth": "basic",
                "include_answer": False, "include_raw_content": False}
        return http.build_request(
            "POST", self.endpoint, json=body, timeout=self.timeout_s,
            headers={"Authorization": f"Bearer {self._key.reveal()}"},
        )

    def check(self, response: httpx.Response) -> None:
        """Tavily's own 432 and 433 (a quota used up) before the generic statuses."""
        if response.status_code in QUOTA_STATUSES:
            raise SearchFailure(
                f"Tavily refused the request: {QUOTA_STATUSES[response.status_code]} "
                f"(HTTP {response.status_code}) (for the operator: see the Tavily dashboard)"
            )
        super().check(response)

    def hits(self, data: Any) -> list[SearchHit]:
        results = data.get("results") if isinstance(data, dict) else None
        if not isinstance(results, list):
            raise SearchFailure("Tavily returned JSON without a `results` list", retryable=True)
        return [
            SearchHit(text_of(item.get("title")), item["url"], text_of(item.get("content")))
            for item in results
            if isinstance(item, dict) and isinstance(item.get("url"), str)
        ]
