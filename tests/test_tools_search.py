"""web_search against SearXNG's JSON API, HTTP mocked exactly with respx (AC1.1, AC1.5)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
import respx

from fanout.tools.settings import ToolSettings
from fanout.http.client import make_http_client
from fanout.tools import ToolBox, ToolResult
from fanout.tools.search import _host_by_httpx, host_if_web

SEARX = "http://127.0.0.1:8888"


def searx_result(n: int, url: str | None = None) -> dict[str, object]:
    return {
        "url": url or f"https://news{n}.example/story",
        "title": f"Story {n}",
        "content": f"Snippet {n} about Ada Whitlock.",
        "engine": "duckduckgo",
        "engines": ["duckduckgo", "brave"],
        "score": 1.0 / (n + 1),
        "publishedDate": None,
    }


def searx_page(results: list[dict[str, object]], unresponsive: list[list[str]] | None = None) -> dict[str, object]:
    return {
        "query": "ada whitlock",
        "number_of_results": 0,
        "results": results,
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": unresponsive or [],
    }


@pytest.fixture
async def box(mocked_transport: httpx.MockTransport) -> AsyncIterator[ToolBox]:
    settings = ToolSettings(searxng_url=SEARX + "/")  # a trailing slash must not matter
    async with make_http_client(1, user_agent=settings.user_agent, transport=mocked_transport) as http:
        yield ToolBox(http, settings)


async def test_ac1_1_web_search_returns_titles_urls_and_snippets_from_searxng(box: ToolBox, respx_mock: respx.MockRouter):
    route = respx_mock.get(f"{SEARX}/search", params={"q": "ada whitlock physicist", "format": "json"}).respond(
        json=searx_page([searx_result(1), searx_result(2)])
    )

    result = await box.web_search("ada whitlock physicist")

    assert route.call_count == 1
    assert result.ok is True
    assert json.loads(result.text) == {
        "results": [
            {"title": "Story 1", "url": "https://news1.example/story", "snippet": "Snippet 1 about Ada Whitlock.",
             "provider": "searxng", "engines": ["duckduckgo", "brave"]},
            {"title": "Story 2", "url": "https://news2.example/story", "snippet": "Snippet 2 about Ada Whitlock.",
             "provider": "searxng", "engines": ["duckduckgo", "brave"]},
        ],
        "provider": "searxng",
    }


async def test_ac1_5_web_search_returns_an_empty_list_with_an_error_note_when_searxng_is_unreachable(
    box: ToolBox, respx_mock: respx.MockRouter
):
    respx_mock.get(f"{SEARX}/search").mock(side_effect=httpx.ConnectError("Connection refused"))

    result = await box.web_search("ada whitlock")

    assert result.ok is False
    assert json.loads(result.text) == {
        "results": [],
        "error": f"web search is unavailable: SearXNG is unreachable at {SEARX} "
        "(for the operator: start it with `make searxng-up`, or pass --searxng-url)",
    }


async def test_ac1_5_web_search_reports_unreachable_for_a_real_closed_port(refused_port: int):
    """No mock: nothing listens on the port, so the connection really is refused."""
    port = refused_port
    async with httpx.AsyncClient() as http:
        result = await ToolBox(http, ToolSettings(searxng_url=f"http://127.0.0.1:{port}")).web_search("x")

    assert result.ok is False
    assert json.loads(result.text)["error"].startswith(f"web search is unavailable: SearXNG is unreachable at http://127.0.0.1:{port}")


async def test_a_403_from_searxng_names_the_json_format_fix(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(403, text="Forbidden")

    result = await box.web_search("ada whitlock")

    assert result.ok is False
    assert json.loads(result.text) == {
        "results": [],
        "error": f"web search is unavailable: SearXNG error: HTTP 403 Forbidden: {SEARX} refused format=json (for the operator: "
        "enable json in search.formats of settings.yml, i.e. `formats: [html, json]`, and restart SearXNG)",
    }


async def test_a_429_from_searxng_names_the_limiter_fix(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(429, text="Too Many Requests")

    result = await box.web_search("ada whitlock")

    assert result.ok is False
    assert json.loads(result.text)["error"] == (
        f"web search is unavailable: SearXNG error: HTTP 429 Too Many Requests: {SEARX} rate-limited the request "
        "(for the operator: set "
        "`server.limiter: false` in settings.yml, safe for an instance bound to 127.0.0.1, and restart SearXNG)"
    )


async def test_a_server_error_from_searxng_is_an_error_note(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(502)

    result = await box.web_search("ada whitlock")

    assert json.loads(result.text) == {
        "results": [],
        "error": f"web search is unavailable: SearXNG error: HTTP 502 Bad Gateway from {SEARX} "
        "(for the operator: check `compose logs searxng`)",
    }


async def test_html_instead_of_json_is_an_error_note_naming_the_format_setting(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(200, text="<html>results</html>", headers={"Content-Type": "text/html"})

    result = await box.web_search("ada whitlock")

    assert result.ok is False
    assert json.loads(result.text)["error"] == (
        f"web search is unavailable: SearXNG returned invalid JSON: {SEARX} sent text/html (for the operator: "
        "enable json in search.formats of settings.yml, and check that --searxng-url points at SearXNG)"
    )


async def test_json_without_a_results_list_is_an_error_note(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(json={"error": "something else"})

    result = await box.web_search("ada whitlock")

    assert json.loads(result.text) == {
        "results": [],
        "error": f"web search is unavailable: SearXNG returned invalid JSON: {SEARX} sent JSON without a `results` list",
    }


async def test_a_searxng_timeout_is_an_error_note(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").mock(side_effect=httpx.ReadTimeout("timed out"))

    result = await box.web_search("ada whitlock")

    assert result.ok is False
    assert json.loads(result.text)["error"].startswith(
        f"web search is unavailable: SearXNG request timed out: {SEARX} did not answer within 10 s")


async def test_no_results_with_unresponsive_engines_says_which_engines_failed(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(
        json=searx_page([], unresponsive=[["google", "timeout"], ["brave", "Suspended: too many requests"]])
    )

    result = await box.web_search("ada whitlock")

    assert result.ok is False
    assert json.loads(result.text) == {
        "results": [],
        "error": "web search found nothing: these search engines did not answer: google (timeout), "
        "brave (Suspended: too many requests). Try again later or rephrase (for the operator: the engines are "
        "probably blocking this machine's IP; wait, or enable other engines in settings.yml; they did not answer "
        "in time; raise outgoing.request_timeout in settings.yml if this persists)",
    }


async def test_unresponsive_engines_are_not_an_error_when_others_returned_results(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page([searx_result(1)], unresponsive=[["google", "timeout"]]))

    result = await box.web_search("ada whitlock")

    assert result.ok is True
    assert [r["url"] for r in json.loads(result.text)["results"]] == ["https://news1.example/story"]


async def test_no_results_from_healthy_engines_is_an_empty_list_without_error(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page([]))

    result = await box.web_search("qzxv nonsense")

    assert result == ToolResult('{"results": [], "provider": "searxng"}', True)


async def test_blocked_domains_are_filtered_out_of_search_results(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(
        json=searx_page(
            [
                searx_result(1, "https://www.wikidata.org/wiki/Q42"),
                searx_result(2, "https://news2.example/story"),
                searx_result(3, "https://m.wikidata.org/wiki/Q42"),
                searx_result(4, "https://scholia.toolforge.org/Q42"),
                searx_result(5, "ftp://files.example/x"),
                searx_result(6, "https://news6.example/story"),
            ]
        )
    )

    result = await box.web_search("ada whitlock")

    assert [r["url"] for r in json.loads(result.text)["results"]] == [
        "https://news2.example/story",
        "https://news6.example/story",
    ]


async def test_search_results_are_capped_at_ten(box: ToolBox, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page([searx_result(n) for n in range(25)]))

    result = await box.web_search("ada whitlock")

    assert [r["title"] for r in json.loads(result.text)["results"]] == [f"Story {n}" for n in range(10)]


async def test_missing_titles_and_snippets_become_empty_strings_and_non_ascii_stays_readable(
    box: ToolBox, respx_mock: respx.MockRouter
):
    respx_mock.get(f"{SEARX}/search").respond(
        json=searx_page([{"url": "https://tromsø.example/a", "title": None}, {"url": "https://b.example/", "content": "Tromsø"}])
    )

    result = await box.web_search("ada whitlock")

    assert result.text == (
        '{"results": [{"title": "", "url": "https://tromsø.example/a", "snippet": "", "provider": "searxng"}, '
        '{"title": "", "url": "https://b.example/", "snippet": "Tromsø", "provider": "searxng"}], "provider": "searxng"}'
    )


def test_host_if_web_reads_every_url_as_httpx_does():
    """The regex fast path and httpx.URL agree, including on the URLs the fast path hands over."""
    urls = [
        "http://Example.COM/a b?x=1#f", "https://a.b.c:8080", "https://a.b.c:", "HTTPS://WWW.X.ORG?q",
        "http://x.org#", "http://a.com:80/", "http://a.com./x", "http://a.com/../..", "http://a.com/%zz",
        "http://999.1.1.1/", "http://1.2.3.4/", "http://127.0.0.1:8080/x", "http://01.2.3.4/", "http://1.2.3/", "http://[::1]/", "http://user@host/",
        "http://a.com\\@evil.com/", "http://x.org/\t", "http://x.org/\x7f", "ftp://x.org/", "http:///x",
        "http://exämple.com/", "http://example.com/ä", "http://a.com:8a/", "http://a_b.com/", "http:a.com",
        " http://a.com", "http://a%41.com/", "http://a.com/" + "x" * 70_000, None, 42,
    ]
    for url in urls:
        assert host_if_web(url) == (_host_by_httpx(url) if isinstance(url, str) else None), url
    assert host_if_web("https://EN.Wikipedia.org/wiki/X") == "en.wikipedia.org"
    assert host_if_web("ftp://x.org/") is None
