"""web_search: one query to the self-hosted SearXNG's JSON API.

SearXNG fails in a few well-known ways, each with a known fix: it is not
running, JSON output is not enabled (403), its bot limiter blocks scripts
(429), or every upstream engine is blocking us (no results, engines listed
as unresponsive). Each becomes an error note the model can read (so it
carries on with what it has) and a person reading the transcript can act on.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import anyio
import httpx

from fanout.config import ToolSettings
from fanout.tools.blocklist import blocked_by

UNAVAILABLE = "web search is unavailable"
NO_RESULTS = "web search found nothing"


class SearchOutcome(NamedTuple):
    results: list[dict[str, str]]
    """Up to max_results {title, url, snippet}; blocked domains already removed."""
    error: str | None


async def search_searxng(
    http: httpx.AsyncClient, query: str, *, settings: ToolSettings, blocked: frozenset[str]
) -> SearchOutcome:
    base = settings.searxng_url.rstrip("/")
    response = None
    try:
        with anyio.move_on_after(settings.search_timeout_s):
            response = await http.get(
                f"{base}/search", params={"q": query, "format": "json"}, timeout=settings.search_timeout_s
            )
    except httpx.TimeoutException:
        pass
    except httpx.ConnectError:
        return _failed(
            f"SearXNG is unreachable at {base} (for the operator: start it with `make searxng-up`, "
            "or pass --searxng-url)"
        )
    except httpx.HTTPError as exc:
        return _failed(f"could not reach SearXNG at {base} ({type(exc).__name__}: {exc})")
    if response is None:
        return _failed(
            f"SearXNG at {base} did not answer within {settings.search_timeout_s:g} s "
            "(for the operator: check `compose logs searxng`; slow upstream engines can be disabled in settings.yml)"
        )
    return _parse(response, base, settings.max_results, blocked)


def _parse(response: httpx.Response, base: str, max_results: int, blocked: frozenset[str]) -> SearchOutcome:
    status_problem = _status_problem(response, base)
    if status_problem is not None:
        return _failed(status_problem)
    try:
        data = response.json()
    except ValueError:
        content_type = response.headers.get("content-type", "no content type")
        return _failed(
            f"SearXNG at {base} did not return JSON (got {content_type}) (for the operator: enable json in "
            "search.formats of settings.yml, and check that --searxng-url points at SearXNG)"
        )
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        return _failed(f"SearXNG at {base} returned JSON without a `results` list")
    results = _results(data["results"], max_results, blocked)
    unresponsive = _unresponsive(data.get("unresponsive_engines"))
    if not results and unresponsive:
        return _failed(
            f"{NO_RESULTS}: these search engines did not answer: {unresponsive}. Try again later or rephrase "
            "(for the operator: if this persists, the engines are probably blocking this machine's IP)"
        )
    return SearchOutcome(results, None)


def _status_problem(response: httpx.Response, base: str) -> str | None:
    status = response.status_code
    if status == 403:
        return (
            f"SearXNG at {base} refused format=json (HTTP 403) (for the operator: enable json in "
            "search.formats of settings.yml, i.e. `formats: [html, json]`, and restart SearXNG)"
        )
    if status == 429:
        return (
            f"SearXNG at {base} rate-limited the request (HTTP 429) (for the operator: set "
            "`server.limiter: false` in settings.yml, safe for an instance bound to 127.0.0.1, and restart SearXNG)"
        )
    if not response.is_success:
        phrase = httpx.codes.get_reason_phrase(status) or response.reason_phrase
        return f"SearXNG at {base} answered HTTP {status} {phrase} (for the operator: check `compose logs searxng`)"
    return None


def _results(items: list[Any], max_results: int, blocked: frozenset[str]) -> list[dict[str, str]]:
    results: list[dict[str, str]] = []
    for item in items:
        if len(results) >= max_results:
            break
        url = item.get("url") if isinstance(item, dict) else None
        host = _host_if_web(url) if isinstance(url, str) else None
        if host is None or blocked_by(host, blocked):
            continue
        results.append(
            {"title": str(item.get("title") or ""), "url": url, "snippet": str(item.get("content") or "")}
        )
    return results


def _host_if_web(url: str) -> str | None:
    """The host of an http(s) URL, or None for anything a model could not fetch."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        return None
    return parsed.raw_host.decode("ascii")


def _unresponsive(value: object) -> str:
    """SearXNG's [[engine, reason], ...] as `google (timeout), brave (CAPTCHA)`."""
    if not isinstance(value, list):
        return ""
    names = []
    for entry in value:
        if isinstance(entry, (list, tuple)) and entry:
            reason = f" ({entry[1]})" if len(entry) > 1 and entry[1] else ""
            names.append(f"{entry[0]}{reason}")
    return ", ".join(names)


def _failed(problem: str) -> SearchOutcome:
    return SearchOutcome([], problem if problem.startswith(NO_RESULTS) else f"{UNAVAILABLE}: {problem}")
