"""SearXNG: the default provider, a self-hosted metasearch engine's JSON API.

SearXNG fails in a few well-known ways, each with a known fix: it is not
running, JSON output is not enabled (403), its bot limiter blocks scripts
(429), or every upstream engine is blocking us (no results, engines listed
as `unresponsive_engines`). Each becomes an error the model can read (so it
carries on with what it has) and a person reading the transcript can act on.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx

from fanout.checks import Check
from fanout.config import ToolSettings
from fanout.retry import is_retryable_status, parse_retry_after
from fanout.tools.providers.base import ProviderResult, SearchFailure, SearchHit, text_of

NO_RESULTS = "web search found nothing"


class SearxngProvider:
    name = "searxng"

    def __init__(self, base_url: str, *, timeout_s: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s

    @classmethod
    def from_settings(cls, settings: ToolSettings) -> SearxngProvider:
        return cls(settings.searxng_url, timeout_s=settings.search_timeout_s)

    async def search(self, query: str, http: httpx.AsyncClient) -> ProviderResult:
        try:
            response = await self._get(query, http)
            return self._parse(response)
        except SearchFailure as exc:
            return exc.result()

    async def _get(self, query: str, http: httpx.AsyncClient) -> httpx.Response:
        base, limit = self.base_url, self.timeout_s
        response = None
        try:
            with anyio.move_on_after(limit):
                response = await http.get(f"{base}/search", params={"q": query, "format": "json"}, timeout=limit)
        except httpx.TimeoutException:
            pass
        except httpx.ConnectError as exc:
            raise SearchFailure(
                f"SearXNG is unreachable at {base} (for the operator: start it with `make searxng-up`, "
                "or pass --searxng-url)",
                retryable=True,
            ) from exc
        except httpx.HTTPError as exc:
            raise SearchFailure(f"could not reach SearXNG at {base} ({type(exc).__name__}: {exc})", retryable=True) from exc
        if response is None:
            raise SearchFailure(
                f"SearXNG at {base} did not answer within {limit:g} s (for the operator: check "
                "`compose logs searxng`; slow upstream engines can be disabled in settings.yml)",
                retryable=True,
            )
        return response

    def _parse(self, response: httpx.Response) -> ProviderResult:
        base = self.base_url
        _check_status(response, base)
        try:
            data = response.json()
        except ValueError as exc:
            content_type = response.headers.get("content-type", "no content type")
            raise SearchFailure(
                f"SearXNG at {base} did not return JSON (got {content_type}) (for the operator: enable json in "
                "search.formats of settings.yml, and check that --searxng-url points at SearXNG)"
            ) from exc
        if not isinstance(data, dict) or not isinstance(data.get("results"), list):
            raise SearchFailure(f"SearXNG at {base} returned JSON without a `results` list")
        hits = [hit for hit in map(_hit, data["results"]) if hit is not None]
        unresponsive = unresponsive_engines(data.get("unresponsive_engines"))
        if not hits and unresponsive:
            # Nothing found *because* the engines failed: an error, so the chain tries the next provider.
            return SearchFailure(
                f"{NO_RESULTS}: these search engines did not answer: {', '.join(unresponsive)}. Try again later "
                "or rephrase (for the operator: if this persists, the engines are probably blocking this machine's IP)",
                retryable=True,
            ).result(unresponsive)
        return ProviderResult(hits, unresponsive=unresponsive)


def _check_status(response: httpx.Response, base: str) -> None:
    status = response.status_code
    if status == 403:
        raise SearchFailure(
            f"SearXNG at {base} refused format=json (HTTP 403) (for the operator: enable json in "
            "search.formats of settings.yml, i.e. `formats: [html, json]`, and restart SearXNG)"
        )
    if status == 429:
        raise SearchFailure(
            f"SearXNG at {base} rate-limited the request (HTTP 429) (for the operator: set "
            "`server.limiter: false` in settings.yml, safe for an instance bound to 127.0.0.1, and restart SearXNG)",
            retryable=True,
            rate_limited=True,
            retry_after=parse_retry_after(response.headers.get("retry-after")),
        )
    if not response.is_success:
        phrase = httpx.codes.get_reason_phrase(status) or response.reason_phrase
        raise SearchFailure(
            f"SearXNG at {base} answered HTTP {status} {phrase} (for the operator: check `compose logs searxng`)",
            retryable=is_retryable_status(status),
        )


def _hit(item: Any) -> SearchHit | None:
    if not isinstance(item, dict) or not isinstance(item.get("url"), str):
        return None
    return SearchHit(text_of(item.get("title")), item["url"], text_of(item.get("content")))


def unresponsive_engines(value: object) -> tuple[str, ...]:
    """SearXNG's [[engine, reason], ...] as ("google (timeout)", "brave (CAPTCHA)")."""
    if not isinstance(value, list):
        return ()
    names = []
    for entry in value:
        if isinstance(entry, (list, tuple)) and entry:
            reason = f" ({entry[1]})" if len(entry) > 1 and entry[1] else ""
            names.append(f"{entry[0]}{reason}")
    return tuple(names)


async def check_searxng(http: httpx.AsyncClient, searxng_url: str) -> Check:
    """SearXNG must answer `format=json`; each failure names its fix."""
    url = f"{searxng_url.rstrip('/')}/search"
    try:
        response = await http.get(url, params={"q": "test", "format": "json"})
    except httpx.HTTPError as exc:
        return Check("searxng", "FAIL", f"unreachable at {searxng_url} ({type(exc).__name__}); "
                                        "start it with `make searxng-up`")
    if response.status_code == 403:
        return Check("searxng", "FAIL", "HTTP 403: JSON output is off; add `json` to search.formats "
                                        "in searxng/settings.yml and restart it")
    if response.status_code == 429:
        return Check("searxng", "FAIL", "HTTP 429: its limiter blocks scripts; set server.limiter: false "
                                        "in searxng/settings.yml")
    if response.status_code != 200:
        return Check("searxng", "FAIL", f"{url} answered HTTP {response.status_code}")
    try:
        body = response.json()
        results = body.get("results")
    except (ValueError, AttributeError):
        return Check("searxng", "FAIL", f"{url} did not answer JSON")
    if not isinstance(results, list):
        return Check("searxng", "FAIL", f"{url} answered JSON without a `results` list")
    if not results:
        down = [str(e[0]) for e in body.get("unresponsive_engines") or [] if isinstance(e, list) and e]
        detail = f" (unresponsive engines: {', '.join(down)})" if down else ""
        return Check("searxng", "WARN", f"answers JSON but found nothing for 'test'{detail}")
    return Check("searxng", "OK", f"answers JSON at {searxng_url} ({len(results)} results for 'test')")
