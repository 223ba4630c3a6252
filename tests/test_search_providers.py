"""Search providers against their documented response shapes (respx), the registry, and the fallback chain."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import AsyncIterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import respx

from fanout.tools.settings import ToolSettings
from fanout.base.errors import ConfigError
from fanout.cli import main
from fanout.engine.progress import Progress, Tally, print_progress
from fanout.base.secret import Secret
from fanout.tools import ToolBox
from fanout.tools.health import SearchHealth
from fanout.tools.pacing import HostPacer
from fanout.tools.providers import ENTRY_POINT_GROUP, ProviderResult, SearchHit, build_providers, parse_provider_names
from fanout.tools import provider_names
from fanout.tools.providers.arxiv import SNIPPET_CHARS, ArxivProvider
from fanout.tools.providers.base import strip_html
from fanout.tools.providers.brave import BraveProvider
from fanout.tools.providers.duckduckgo import DuckDuckGoProvider
from fanout.tools.providers.searxng import SearxngProvider
from fanout.tools.providers.tavily import TavilyProvider
from fanout.tools.providers.wikipedia import WikipediaProvider

SEARX = "http://127.0.0.1:8888"
WIKI_EN = "https://en.wikipedia.org/w/api.php"
TAVILY = "https://api.tavily.com/search"
BRAVE = "https://api.search.brave.com/res/v1/web/search"
ARXIV = "https://export.arxiv.org/api/query"
SECRET = "tvly-TESTSECRET0123456789"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


# --- documented response shapes -------------------------------------------------------------------

def wikipedia_page(*titles_and_snippets: tuple[str, str]) -> dict[str, Any]:
    """MediaWiki list=search, as the API documents it (srprop=snippet)."""
    return {
        "batchcomplete": "",
        "continue": {"sroffset": 10, "continue": "-||"},
        "query": {
            "searchinfo": {"totalhits": 5060},
            "search": [
                {"ns": 0, "title": title, "pageid": 8091 + n, "snippet": snippet}
                for n, (title, snippet) in enumerate(titles_and_snippets)
            ],
        },
    }


def tavily_page(*urls: str) -> dict[str, Any]:
    return {
        "query": "who is Douglas Adams?",
        "answer": None,
        "images": [],
        "results": [
            {"title": f"Result {n}", "url": url, "content": f"Content {n} about Douglas Adams.", "score": 0.81 - n / 10,
             "raw_content": None}
            for n, url in enumerate(urls)
        ],
        "response_time": "1.67",
    }


def brave_page(*urls: str) -> dict[str, Any]:
    return {
        "type": "search",
        "query": {"original": "douglas adams", "more_results_available": True},
        "mixed": {"type": "mixed", "main": [{"type": "web", "index": 0, "all": False}]},
        "web": {
            "type": "search",
            "results": [
                {"type": "search_result", "title": f"<strong>Douglas</strong> Adams {n}", "url": url,
                 "description": f"The <strong>Hitchhiker</strong>&#x27;s author, page {n}.", "is_source_local": False,
                 "language": "en", "profile": {"name": "Example"}}
                for n, url in enumerate(urls)
            ],
            "family_friendly": True,
        },
    }


ARXIV_FEED = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
      xmlns:arxiv="http://arxiv.org/schemas/atom">
  <link href="http://arxiv.org/api/query?search_query=all:electron&amp;id_list=&amp;start=0&amp;max_results=1"
        rel="self" type="application/atom+xml"/>
  <title>ArXiv Query: search_query=all:electron&amp;id_list=&amp;start=0&amp;max_results=1</title>
  <id>http://arxiv.org/api/cHxbiOdZaP56ODnBPIenZhzg5f8</id>
  <updated>2007-10-08T00:00:00-04:00</updated>
  <opensearch:totalResults>1000</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
  <opensearch:itemsPerPage>1</opensearch:itemsPerPage>
  <entry>
    <id>http://arxiv.org/abs/hep-ex/0307015</id>
    <published>2003-07-07T13:46:39-04:00</published>
    <updated>2003-07-07T13:46:39-04:00</updated>
    <title>Multi-Electron Production at High Transverse Momenta in ep Collisions at
      HERA</title>
    <summary>  Multi-electron production is studied at high electron transverse momentum in
    positron- and electron-proton collisions using the H1 detector at HERA.
    </summary>
    <author><name>H1 Collaboration</name></author>
    <arxiv:comment>23 pages, 8 figures and 4 tables</arxiv:comment>
    <link href="http://arxiv.org/abs/hep-ex/0307015v1" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/hep-ex/0307015v1" rel="related" type="application/pdf"/>
    <arxiv:primary_category term="hep-ex" scheme="http://arxiv.org/schemas/atom"/>
  </entry>
</feed>"""

ARXIV_ERROR_FEED = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">
  <title>ArXiv Query: search_query=&amp;id_list=1234.12345</title>
  <id>http://arxiv.org/api/kvuntZ8c9a4Eq5CF7KY03nMug+Q</id>
  <entry>
    <id>http://arxiv.org/api/errors#incorrect_id_format_for_1234.12345</id>
    <title>Error</title>
    <summary>incorrect id format for 1234.12345</summary>
    <link href="http://arxiv.org/api/errors#incorrect_id_format_for_1234.12345" rel="alternate" type="text/html"/>
    <author><name>arXiv api core</name></author>
  </entry>
</feed>"""


def searx_page(results: list[dict[str, Any]], unresponsive: list[list[str]] | None = None) -> dict[str, Any]:
    return {"query": "q", "number_of_results": 0, "results": results, "answers": [], "infoboxes": [],
            "suggestions": [], "unresponsive_engines": unresponsive or []}


def searx_result(url: str) -> dict[str, Any]:
    return {"url": url, "title": f"Title of {url}", "content": "Snippet.", "engine": "brave", "score": 1.0}


# --- Wikipedia -------------------------------------------------------------------------------------

async def test_wikipedia_searches_the_chosen_language_builds_urls_from_titles_and_strips_match_spans(http, respx_mock):
    route = respx_mock.get("https://de.wikipedia.org/w/api.php").respond(json=wikipedia_page(
        ("Douglas Adams", 'Douglas Noël <span class="searchmatch">Adams</span> (* 11. März 1952 in &quot;Cambridge&quot;)'),
        ("Per Anhalter durch die Galaxis", "Roman von <span class=\"searchmatch\">Adams</span>"),
    ))

    result = await WikipediaProvider("de", max_results=5).search("Douglas Adams geboren", http)

    assert result == ProviderResult([
        SearchHit("Douglas Adams", "https://de.wikipedia.org/wiki/Douglas_Adams",
                  'Douglas Noël Adams (* 11. März 1952 in "Cambridge")'),
        SearchHit("Per Anhalter durch die Galaxis", "https://de.wikipedia.org/wiki/Per_Anhalter_durch_die_Galaxis",
                  "Roman von Adams"),
    ])
    params = dict(route.calls[0].request.url.params)
    assert params == {"action": "query", "list": "search", "srsearch": "Douglas Adams geboren", "format": "json",
                      "srlimit": "5", "srprop": "snippet"}


async def test_wikipedia_titles_with_reserved_characters_become_working_urls(http, respx_mock):
    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Zürich (canton)", ""), ("What?", ""), ("AC/DC", "")))

    result = await WikipediaProvider("en").search("x", http)

    assert [hit.url for hit in result.hits] == [
        "https://en.wikipedia.org/wiki/Z%C3%BCrich_(canton)",
        "https://en.wikipedia.org/wiki/What%3F",
        "https://en.wikipedia.org/wiki/AC/DC",
    ]


async def test_a_wikipedia_api_error_in_a_200_body_is_an_error_and_maxlag_is_retryable(http, respx_mock):
    respx_mock.get(WIKI_EN).respond(json={"error": {"code": "maxlag", "info": "Waiting for a database server: 7 seconds lagged."}})

    result = await WikipediaProvider("en").search("x", http)

    assert result == ProviderResult(
        [], "Wikipedia (en) answered an API error: maxlag: Waiting for a database server: 7 seconds lagged.", True)


async def test_a_wikipedia_429_is_rate_limited_with_its_retry_after(http, respx_mock):
    respx_mock.get(WIKI_EN).respond(429, headers={"Retry-After": "12"}, text="Too many requests")

    result = await WikipediaProvider("en").search("x", http)

    assert result == ProviderResult([], "Wikipedia (en) rate-limited the request (HTTP 429); it asked to wait 12 s",
                                    retryable=True, rate_limited=True, retry_after=12.0)


async def test_wikipedia_json_that_is_not_json_is_a_retryable_error(http, respx_mock):
    respx_mock.get(WIKI_EN).respond(200, text="<html>maintenance</html>", headers={"Content-Type": "text/html"})

    result = await WikipediaProvider("en").search("x", http)

    assert result == ProviderResult([], "Wikipedia (en) did not return JSON (got text/html)", True)


def test_a_wikipedia_language_that_is_not_a_subdomain_is_refused_before_the_run():
    with pytest.raises(ConfigError, match=r"'en\.evil\.example/' is not a Wikipedia language code"):
        WikipediaProvider("en.evil.example/")


# --- Tavily ----------------------------------------------------------------------------------------

def tavily() -> TavilyProvider:
    return TavilyProvider(Secret(SECRET), max_results=3, timeout_s=5)


async def test_tavily_posts_the_query_with_a_bearer_key_and_reads_title_url_and_content(http, respx_mock):
    route = respx_mock.post(TAVILY).respond(json=tavily_page("https://www.britannica.com/a", "https://b.example/b"))

    result = await tavily().search("who is Douglas Adams?", http)

    assert result == ProviderResult([
        SearchHit("Result 0", "https://www.britannica.com/a", "Content 0 about Douglas Adams."),
        SearchHit("Result 1", "https://b.example/b", "Content 1 about Douglas Adams."),
    ])
    request = route.calls[0].request
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert json.loads(request.content) == {"query": "who is Douglas Adams?", "max_results": 3, "search_depth": "basic",
                                           "include_answer": False, "include_raw_content": False}


async def test_a_refused_tavily_key_names_the_variable_but_never_the_key(http, respx_mock):
    respx_mock.post(TAVILY).respond(401, json={"detail": {"error": f"Unauthorized: invalid API key {SECRET}"}})

    result = await tavily().search("x", http)

    assert result == ProviderResult(
        [], "Tavily refused the API key (HTTP 401 Unauthorized) (for the operator: check TAVILY_API_KEY)")
    assert "TESTSECRET" not in repr(result) + repr(tavily())


async def test_tavily_out_of_credits_is_a_non_retryable_error_naming_the_plan_limit(http, respx_mock):
    respx_mock.post(TAVILY).respond(432, json={"detail": {"error": "This request exceeds your plan's set usage limit."}})

    result = await tavily().search("x", http)

    assert result == ProviderResult([], "Tavily refused the request: the plan's usage limit is used up (HTTP 432) "
                                        "(for the operator: see the Tavily dashboard)")


async def test_a_tavily_429_with_an_http_date_retry_after_becomes_seconds(http, respx_mock):
    respx_mock.post(TAVILY).respond(429, headers={"Retry-After": "7"})

    result = await tavily().search("x", http)

    assert (result.rate_limited, result.retryable, result.retry_after) == (True, True, 7.0)


async def test_a_tavily_server_error_is_retryable(http, respx_mock):
    respx_mock.post(TAVILY).respond(502, text="bad gateway")

    result = await tavily().search("x", http)

    assert result == ProviderResult([], "Tavily answered HTTP 502 Bad Gateway", True)


async def test_tavily_json_without_results_is_an_error(http, respx_mock):
    respx_mock.post(TAVILY).respond(json={"detail": "something else"})

    result = await tavily().search("x", http)

    assert result == ProviderResult([], "Tavily returned JSON without a `results` list", True)


def test_tavily_without_its_key_in_the_environment_is_a_config_error(monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)

    with pytest.raises(ConfigError) as caught:
        build_providers(ToolSettings(search_providers=("searxng", "tavily")))

    assert str(caught.value) == ("search provider tavily needs an API key: export TAVILY_API_KEY=... "
                                 "or leave tavily out of --search-providers")


# --- what the web API providers share ----------------------------------------------------------------

@pytest.mark.parametrize(("provider", "max_results"), [(BraveProvider, 20), (TavilyProvider, 20), (WikipediaProvider, 50)])
def test_a_web_api_provider_asks_for_the_results_set_up_to_its_api_s_most_within_the_search_timeout(
    monkeypatch, provider, max_results
):
    monkeypatch.setenv("BRAVE_API_KEY", "BSA-TESTSECRET")
    monkeypatch.setenv("TAVILY_API_KEY", SECRET)

    made = provider.from_settings(ToolSettings(max_results=50, search_timeout_s=7.5))

    assert (made.max_results, made.timeout_s) == (max_results, 7.5)


def test_brave_without_its_key_in_the_environment_is_a_config_error(monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)

    with pytest.raises(ConfigError) as caught:
        build_providers(ToolSettings(search_providers=("brave",)))

    assert str(caught.value) == ("search provider brave needs an API key: export BRAVE_API_KEY=... "
                                 "or leave brave out of --search-providers")


# --- Brave -----------------------------------------------------------------------------------------

def brave() -> BraveProvider:
    return BraveProvider(Secret("BSA-TESTSECRET"), max_results=4, timeout_s=5)


async def test_brave_sends_the_subscription_token_and_strips_strong_marks(http, respx_mock):
    route = respx_mock.get(BRAVE).respond(json=brave_page("https://a.example/1"))

    result = await brave().search("douglas adams", http)

    assert result == ProviderResult(
        [SearchHit("Douglas Adams 0", "https://a.example/1", "The Hitchhiker's author, page 0.")])
    request = route.calls[0].request
    assert request.headers["x-subscription-token"] == "BSA-TESTSECRET"
    assert dict(request.url.params) == {"q": "douglas adams", "count": "4"}


async def test_a_brave_answer_without_web_results_means_nothing_found(http, respx_mock):
    respx_mock.get(BRAVE).respond(json={"type": "search", "query": {"original": "qzxv"}})

    assert await brave().search("qzxv", http) == ProviderResult([])


async def test_a_brave_429_waits_for_the_first_rate_limit_reset_figure(http, respx_mock):
    respx_mock.get(BRAVE).respond(429, headers={"X-RateLimit-Limit": "1, 2000", "X-RateLimit-Reset": "1, 1419704"},
                                  json={"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "status": 429}})

    result = await brave().search("x", http)

    assert (result.error, result.rate_limited, result.retry_after) == (
        "Brave Search rate-limited the request (HTTP 429)", True, 1.0)


async def test_a_refused_brave_token_is_not_retryable(http, respx_mock):
    respx_mock.get(BRAVE).respond(403, json={"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}})

    result = await brave().search("x", http)

    assert result == ProviderResult(
        [], "Brave Search refused the API key (HTTP 403 Forbidden) (for the operator: check BRAVE_API_KEY)")


async def test_brave_html_instead_of_json_is_an_error(http, respx_mock):
    respx_mock.get(BRAVE).respond(200, text="<html/>", headers={"Content-Type": "text/html"})

    assert (await brave().search("x", http)).error == "Brave Search did not return JSON (got text/html)"


# --- arXiv -----------------------------------------------------------------------------------------

def arxiv() -> ArxivProvider:
    return ArxivProvider(max_results=2, timeout_s=5, pacer=HostPacer(0))


async def test_arxiv_reads_the_atom_feed_with_authors_date_and_abstract(http, respx_mock):
    route = respx_mock.get(ARXIV).respond(text=ARXIV_FEED, headers={"Content-Type": "application/atom+xml"})

    result = await arxiv().search("electron proton (HERA)", http)

    assert result == ProviderResult([SearchHit(
        "Multi-Electron Production at High Transverse Momenta in ep Collisions at HERA",
        "http://arxiv.org/abs/hep-ex/0307015v1",
        "H1 Collaboration. 2003-07-07. Multi-electron production is studied at high electron transverse momentum "
        "in positron- and electron-proton collisions using the H1 detector at HERA.",
    )])
    assert dict(route.calls[0].request.url.params) == {
        "search_query": "all:electron AND all:proton AND all:HERA", "start": "0", "max_results": "2",
        "sortBy": "relevance"}


async def test_arxiv_cuts_a_long_abstract_at_a_word_names_three_authors_and_skips_an_entry_without_a_web_link(
    http, respx_mock
):
    authors = "".join(f"<author><name>Author {n}</name></author>" for n in range(1, 5))
    entries = (f"<entry><id>http://arxiv.org/abs/2401.00001v1</id><title>Long</title>{authors}"
               f"<published>2024-01-02T00:00:00Z</published><summary>{'word ' * 100}</summary></entry>"
               "<entry><id>urn:x</id><title>No page</title><summary>s</summary></entry>")
    respx_mock.get(ARXIV).respond(text=f'<feed xmlns="http://www.w3.org/2005/Atom">{entries}</feed>',
                                  headers={"Content-Type": "application/atom+xml"})

    result = await arxiv().search("long", http)

    [hit] = result.hits
    assert (hit.title, hit.url) == ("Long", "http://arxiv.org/abs/2401.00001v1")
    assert hit.snippet.startswith("Author 1, Author 2, Author 3 et al. 2024-01-02. word word")
    assert hit.snippet.endswith("word ...")
    assert len(hit.snippet.split(". ", 2)[2]) <= SNIPPET_CHARS + len(" ...")


async def test_an_arxiv_error_feed_says_what_arxiv_refused(http, respx_mock):
    respx_mock.get(ARXIV).respond(400, text=ARXIV_ERROR_FEED)

    result = await arxiv().search("x", http)

    assert result == ProviderResult([], "arXiv refused the query: incorrect id format for 1234.12345")


async def test_malformed_arxiv_xml_is_a_retryable_error(http, respx_mock):
    respx_mock.get(ARXIV).respond(200, text="<feed><entry>")

    result = await arxiv().search("x", http)

    assert result.retryable is True
    assert result.error is not None and result.error.startswith("arXiv returned XML that could not be parsed")


async def test_an_arxiv_503_is_retryable(http, respx_mock):
    respx_mock.get(ARXIV).respond(503)

    assert await arxiv().search("x", http) == ProviderResult([], "arXiv answered HTTP 503 Service Unavailable", True)


async def test_an_arxiv_408_is_retryable_as_every_remote_408_is(http, respx_mock):
    respx_mock.get(ARXIV).respond(408)

    assert await arxiv().search("x", http) == ProviderResult([], "arXiv answered HTTP 408 Request Timeout", True)


async def test_a_query_without_words_asks_arxiv_nothing(http, respx_mock):
    assert await arxiv().search("?! --", http) == ProviderResult([])


# --- DuckDuckGo (ddgs) -----------------------------------------------------------------------------

class DDGSException(Exception):
    """Named like ddgs's own classes: the adapter classifies by name, without importing ddgs."""


class RatelimitException(DDGSException):
    pass


class FakeDDGS:
    def __init__(self, rows: list[dict[str, str]] | None = None, error: Exception | None = None) -> None:
        self.rows, self.error = rows, error
        self.calls: list[tuple[str, dict[str, Any], str]] = []

    def __call__(self, timeout_s: float) -> FakeDDGS:
        return self

    def text(self, query: str, **options: Any) -> list[dict[str, str]]:
        self.calls.append((query, options, threading.current_thread().name))
        if self.error is not None:
            raise self.error
        return self.rows or []


async def test_duckduckgo_runs_ddgs_in_a_worker_thread_and_reads_title_href_and_body(http):
    fake = FakeDDGS([{"title": "Douglas Adams", "href": "https://a.example/", "body": "Author."}])

    result = await DuckDuckGoProvider(max_results=3, client_factory=fake).search("douglas adams", http)

    assert result == ProviderResult([SearchHit("Douglas Adams", "https://a.example/", "Author.")])
    query, options, thread = fake.calls[0]
    assert (query, options) == ("douglas adams", {"backend": "duckduckgo", "max_results": 3})
    assert thread != threading.main_thread().name


async def test_ddgs_no_results_found_is_an_empty_answer_not_an_error(http):
    fake = FakeDDGS(error=DDGSException("No results found."))

    assert await DuckDuckGoProvider(client_factory=fake).search("qzxv", http) == ProviderResult([])


async def test_a_ddgs_rate_limit_is_a_rate_limited_error(http):
    fake = FakeDDGS(error=RatelimitException("https://html.duckduckgo.com/html 202 Ratelimit"))

    result = await DuckDuckGoProvider(client_factory=fake).search("x", http)

    assert result == ProviderResult(
        [], "DuckDuckGo rate-limited the request (https://html.duckduckgo.com/html 202 Ratelimit)", True, True)


def test_duckduckgo_without_the_ddgs_package_is_a_config_error_naming_the_extra(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "ddgs", None)  # makes `import ddgs` fail

    with pytest.raises(ConfigError, match=r"pip install 'fanout\[ddgs\]'"):
        build_providers(ToolSettings(search_providers=("duckduckgo",)))


# --- SearXNG ---------------------------------------------------------------------------------------

async def test_searxng_reports_its_unresponsive_engines_even_when_others_answered(http, respx_mock):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page(
        [searx_result("https://a.example/")], unresponsive=[["google", "timeout"], ["qwant", ""]]))

    result = await SearxngProvider(SEARX, timeout_s=5).search("x", http)

    assert result.unresponsive == ("google (timeout)", "qwant")
    assert [hit.url for hit in result.hits] == ["https://a.example/"]


# --- helpers ---------------------------------------------------------------------------------------

def test_strip_html_removes_marks_and_decodes_entities():
    assert strip_html('a <span class="searchmatch">b</span>  &amp;\n<b>c</b>') == "a b & c"


# --- registry and plug-ins -------------------------------------------------------------------------

class EchoProvider:
    """A third-party provider, as a plug-in package would ship it."""

    name = "echo"

    async def search(self, query: str, http: httpx.AsyncClient) -> ProviderResult:
        return ProviderResult([SearchHit(f"Echo: {query}", "https://echo.example/", "")])


def make_echo(settings: ToolSettings) -> EchoProvider:
    return EchoProvider()


@pytest.fixture
def echo_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins = [
        EntryPoint(name="echo", value=f"{__name__}:make_echo", group=ENTRY_POINT_GROUP),
        EntryPoint(name="searxng", value=f"{__name__}:make_echo", group=ENTRY_POINT_GROUP),
    ]
    monkeypatch.setattr(provider_names, "entry_points", lambda group: [ep for ep in plugins if ep.group == group])


def test_search_providers_help_lists_the_built_ins_then_installed_plugins(echo_plugin, capsys):
    """A plug-in may not take a built-in's name: the one named searxng is left out."""
    with pytest.raises(SystemExit) as exit_:
        main(["check", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert exit_.value.code == 0
    assert ("(default: searxng; available: searxng, wikipedia, tavily, brave, duckduckgo, arxiv, pubmed, serpapi, "
            "echo)") in shown


def test_provider_names_are_normalised_and_unknown_or_repeated_names_are_refused():
    assert parse_provider_names(" SearXNG, wikipedia ,arxiv") == ("searxng", "wikipedia", "arxiv")
    with pytest.raises(ConfigError, match=r"^unknown search provider 'bing'; available: searxng, wikipedia, "
                                          r"tavily, brave, duckduckgo, arxiv, pubmed, serpapi$"):
        parse_provider_names("searxng,bing")
    with pytest.raises(ConfigError, match="search provider listed twice: wikipedia"):
        parse_provider_names("wikipedia,searxng,wikipedia")


async def test_a_plugin_registered_through_the_entry_point_group_answers_web_search(echo_plugin, http):
    box = ToolBox(http, ToolSettings(search_providers=("echo",)))

    result = await box.web_search("hello")

    assert json.loads(result.text) == {
        "results": [{"title": "Echo: hello", "url": "https://echo.example/", "snippet": "", "provider": "echo"}],
        "provider": "echo",
    }


def test_a_plugin_cannot_take_over_a_built_in_name(echo_plugin):
    (provider,) = build_providers(ToolSettings(search_providers=("searxng",)))

    assert isinstance(provider, SearxngProvider)


NOT_A_FACTORY = "echo"


def make_a_dict(settings: ToolSettings) -> dict[str, str]:
    return {"name": "dict"}


@pytest.mark.parametrize(("value", "message"), [
    ("no_such_module_for_fanout:make", r"search provider 'bad' \(no_such_module_for_fanout:make\) failed to load: "
                                       r"No module named 'no_such_module_for_fanout'"),
    (f"{__name__}:NOT_A_FACTORY", rf"search provider 'bad' \({__name__}:NOT_A_FACTORY\) is not a factory"),
    (f"{__name__}:make_a_dict", r"search provider 'bad' does not have `name` and an async `search\(query, http\)`"),
])
def test_a_plugin_that_does_not_load_or_build_a_provider_is_a_config_error(monkeypatch, value: str, message: str):
    plugin = EntryPoint(name="bad", value=value, group=ENTRY_POINT_GROUP)
    monkeypatch.setattr(provider_names, "entry_points", lambda group: [plugin])

    with pytest.raises(ConfigError, match=f"^{message}$"):
        build_providers(ToolSettings(search_providers=("bad",)))


# --- fallback --------------------------------------------------------------------------------------

def two_provider_box(http: httpx.AsyncClient, health: SearchHealth | None = None) -> ToolBox:
    settings = ToolSettings(searxng_url=SEARX, search_providers=("searxng", "wikipedia"))
    return ToolBox(http, settings, health=health)


async def test_when_the_first_provider_errors_the_second_answers_and_the_result_names_it(http, respx_mock):
    searx = respx_mock.get(f"{SEARX}/search").respond(502)
    wiki = respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Douglas Adams", "English author")))

    result = await two_provider_box(http).web_search("douglas adams")

    assert (searx.call_count, wiki.call_count) == (1, 1)
    assert result.ok is True
    assert json.loads(result.text) == {
        "results": [{"title": "Douglas Adams", "url": "https://en.wikipedia.org/wiki/Douglas_Adams",
                     "snippet": "English author", "provider": "wikipedia"}],
        "provider": "wikipedia",
        "failed_providers": {"searxng": f"SearXNG error: HTTP 502 Bad Gateway from {SEARX} (for the operator: "
                                        "check `compose logs searxng`)"},
    }


async def test_when_the_first_provider_finds_nothing_the_second_is_asked(http, respx_mock):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page([]))
    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Douglas Adams", "")))

    result = await two_provider_box(http).web_search("douglas adams")

    assert json.loads(result.text)["provider"] == "wikipedia"


async def test_results_that_are_all_blocked_domains_count_as_nothing_found(http, respx_mock):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page([searx_result("https://www.wikidata.org/wiki/Q42")]))
    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Douglas Adams", "")))

    result = await two_provider_box(http).web_search("Q42")

    assert [r["url"] for r in json.loads(result.text)["results"]] == ["https://en.wikipedia.org/wiki/Douglas_Adams"]


async def test_searxng_with_every_engine_unresponsive_falls_back_to_the_next_provider(http, respx_mock):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page([], unresponsive=[["google", "CAPTCHA"]]))
    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Douglas Adams", "")))

    result = await two_provider_box(http).web_search("douglas adams")

    assert json.loads(result.text)["provider"] == "wikipedia"


async def test_when_every_provider_finds_nothing_the_answer_is_empty_without_error(http, respx_mock):
    respx_mock.get(f"{SEARX}/search").respond(json=searx_page([]))
    respx_mock.get(WIKI_EN).respond(json=wikipedia_page())

    result = await two_provider_box(http).web_search("qzxv")

    assert (result.ok, json.loads(result.text)) == (True, {"results": [], "provider": "searxng"})


async def test_when_every_provider_fails_the_model_reads_each_failure(http, respx_mock):
    respx_mock.get(f"{SEARX}/search").mock(side_effect=httpx.ConnectError("refused"))
    respx_mock.get(WIKI_EN).respond(503)

    result = await two_provider_box(http).web_search("douglas adams")

    assert result.ok is False
    assert json.loads(result.text) == {
        "results": [],
        "error": "web search is unavailable: no search provider could answer (searxng: SearXNG is unreachable at "
                 f"{SEARX} (for the operator: start it with `make searxng-up`, or pass --searxng-url); "
                 "wikipedia: Wikipedia (en) answered HTTP 503 Service Unavailable)",
    }


async def test_a_run_whose_search_backends_all_fail_says_so_loudly_in_the_progress_display(http, respx_mock):
    respx_mock.get(f"{SEARX}/search").respond(502)
    respx_mock.get(WIKI_EN).respond(503)
    box = two_provider_box(http)
    progress = Progress(Tally(total=4, models=["m"]), health=box.health.warning)

    for query in ("one", "two"):
        await box.web_search(query)
    assert progress.search_warning() is None  # two failures may be a blip
    await box.web_search("three")
    out = io.StringIO()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await print_progress(progress, out, 60)  # cancelled at once: prints its final lines

    lines = out.getvalue().splitlines()
    assert lines[1] == (
        "!!! WEB SEARCH IS FAILING: the last 3 searches got no answer from any provider, so models are getting "
        "error notes instead of results (searxng: SearXNG error: HTTP 502 Bad Gateway from http://127.0.0.1:8888 "
        "(for the operator: check `compose logs searxng`); wikipedia: Wikipedia (en) answered HTTP 503 Service "
        "Unavailable)"
    )


async def test_the_search_alarm_clears_as_soon_as_a_search_succeeds(http, respx_mock):
    searx = respx_mock.get(f"{SEARX}/search")
    searx.respond(502)
    respx_mock.get(WIKI_EN).respond(503)
    box = two_provider_box(http)
    for query in ("one", "two", "three"):
        await box.web_search(query)
    assert box.health.warning() is not None

    searx.respond(json=searx_page([searx_result("https://a.example/")]))
    await box.web_search("four")

    assert box.health.warning() is None


async def test_a_rate_limited_provider_is_skipped_until_its_retry_after_has_passed(http, respx_mock):
    now = [1000.0]
    health = SearchHealth(clock=lambda: now[0])
    searx = respx_mock.get(f"{SEARX}/search").respond(429, headers={"Retry-After": "20"})
    wiki = respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Douglas Adams", "")))
    box = two_provider_box(http, health)

    await box.web_search("one")
    second = await box.web_search("two")
    now[0] += 21
    await box.web_search("three")

    assert json.loads(second.text)["provider"] == "wikipedia"
    assert (searx.call_count, wiki.call_count) == (2, 3)


async def test_a_plugin_that_raises_is_an_error_and_the_next_provider_answers(http, respx_mock):
    class Broken:
        name = "broken"

        async def search(self, query: str, http: httpx.AsyncClient) -> ProviderResult:
            raise RuntimeError("boom")

    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Douglas Adams", "")))
    box = ToolBox(http, ToolSettings(), providers=[Broken(), WikipediaProvider("en")])

    result = await box.web_search("x")

    assert json.loads(result.text)["provider"] == "wikipedia"


async def test_a_plugin_that_returns_something_else_than_a_provider_result_is_an_error_naming_what_it_returned(http):
    class Sloppy:
        name = "sloppy"

        async def search(self, query: str, http: httpx.AsyncClient) -> Any:
            return {"hits": []}

    box = ToolBox(http, ToolSettings(), providers=[Sloppy()])

    result = await box.web_search("x")

    assert json.loads(result.text) == {"results": [],
                                       "error": "web search is unavailable: sloppy returned dict, not a ProviderResult"}


# --- configuration, `fanout check` and the run's preflight -----------------------------------------

def test_a_search_config_file_sets_providers_and_cache_and_the_flag_wins(tmp_path):
    from fanout.tools.search_config import apply_search_options

    config = tmp_path / "search.yaml"
    config.write_text("providers: [wikipedia, arxiv]\nwikipedia_language: fr\ncache_ttl_s: 3600\n"
                      "global_cache_dir: /tmp/fanout-global\n", encoding="utf-8")

    from_file = apply_search_options(ToolSettings(), providers=None, config=config)
    flag_wins = apply_search_options(ToolSettings(), providers="searxng,wikipedia", config=config)

    assert (from_file.search_providers, from_file.wikipedia_language, from_file.search_cache_ttl_s,
            str(from_file.global_cache_dir)) == (("wikipedia", "arxiv"), "fr", 3600.0, "/tmp/fanout-global")
    assert flag_wins.search_providers == ("searxng", "wikipedia")


@pytest.mark.parametrize(("text", "message"), [
    ("tavily_api_key: tvly-abc\n", "tavily_api_key: API keys come from the environment only"),
    ("provider: [searxng]\n", "unknown key provider; allowed: providers, wikipedia_language"),
    ("cache_ttl_s: -5\n", "cache_ttl_s must be positive"),
    ("providers: [bing]\n", "unknown search provider 'bing'"),
])
def test_a_bad_search_config_file_is_one_clear_error(tmp_path, text: str, message: str):
    from fanout.tools.search_config import load_search_config

    config = tmp_path / "search.yaml"
    config.write_text(text, encoding="utf-8")

    with pytest.raises(ConfigError, match=message):
        load_search_config(config)


def test_a_search_config_file_sets_searxng_s_language_safesearch_and_page(tmp_path):
    from fanout.tools.search_config import apply_search_options

    config = tmp_path / "search.yaml"
    config.write_text("searxng_language: nb\nsearxng_safesearch: 1\nsearxng_pageno: 2\n", encoding="utf-8")

    settings = apply_search_options(ToolSettings(), providers=None, config=config)

    assert (settings.searxng_language, settings.searxng_safesearch, settings.searxng_pageno) == ("nb", 1, 2)


@pytest.mark.parametrize(("text", "message"), [
    ("searxng_language: Norwegian\n", "searxng_language must be a language code such as nb, en-US, all or auto "
                                       "(got 'Norwegian')."),
    ("searxng_safesearch: 3\n", "searxng_safesearch must be 0, 1 or 2 (got 3)."),
    ("searxng_pageno: 0\n", "searxng_pageno must be at least 1 (got 0)."),
])
def test_a_bad_searxng_option_is_one_clear_error_naming_the_file(tmp_path, text: str, message: str):
    from fanout.tools.search_config import apply_search_options

    config = tmp_path / "search.yaml"
    config.write_text(text, encoding="utf-8")

    with pytest.raises(ConfigError) as refused:
        apply_search_options(ToolSettings(), providers=None, config=config)

    assert str(refused.value) == f"--search-config {config}: {message}"


def test_fanout_check_prints_one_status_line_per_enabled_provider(capsys, monkeypatch, transport_for):
    from fanout.cli import main

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.setenv("BRAVE_API_KEY", "BSA-TESTSECRET")
    models = {"data": [{"id": "local/m", "supported_parameters": ["tools"]}]}
    with respx.mock:
        respx.get("http://searxng.test/search").respond(json=searx_page([searx_result("https://a.example/")]))
        respx.get(WIKI_EN).respond(json=wikipedia_page(("Test", ""), ("Test cricket", "")))
        respx.get(BRAVE).respond(401, json={"type": "ErrorResponse"})
        respx.get("http://chat.test/v1/models").respond(json=models)
        code = main(["check", "--base-url", "http://chat.test/v1", "--models", "local/m",
                     "--searxng-url", "http://searxng.test", "--search-providers", "searxng,wikipedia,tavily,brave"],
                    transport=transport_for(respx.mock))

    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.splitlines()[:4] == [
        "OK   searxng: answers JSON at http://searxng.test (1 results for 'test')",
        "OK   search wikipedia: answers (2 results for 'test')",
        "FAIL search tavily: search provider tavily needs an API key: export TAVILY_API_KEY=... "
        "or leave tavily out of --search-providers",
        "FAIL search brave: Brave Search refused the API key (HTTP 401 Unauthorized) (for the operator: check "
        "BRAVE_API_KEY)",
    ]
    assert "TESTSECRET" not in captured.out + captured.err


async def test_a_run_starts_with_one_working_provider_and_warns_about_the_other(http, respx_mock):
    from fanout.tools.providers.reachability import require_search

    respx_mock.get(f"{SEARX}/search").respond(403)
    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Test", "")))
    err = io.StringIO()

    checks = await require_search(http, ToolSettings(searxng_url=SEARX, search_providers=("searxng", "wikipedia")),
                                  err=err)

    assert [c.level for c in checks] == ["FAIL", "OK"]
    assert err.getvalue().startswith("warning: searxng: HTTP 403: JSON output is off")


async def test_a_run_refuses_to_start_when_no_search_provider_works(http, respx_mock):
    from fanout.tools.providers.reachability import require_search

    respx_mock.get(f"{SEARX}/search").respond(403)
    respx_mock.get(WIKI_EN).respond(500)

    with pytest.raises(ConfigError) as caught:
        await require_search(http, ToolSettings(searxng_url=SEARX, search_providers=("searxng", "wikipedia")))

    assert str(caught.value) == (
        "no search provider works: searxng: HTTP 403: JSON output is off; add `json` to search.formats in "
        "searxng/settings.yml and restart it; search wikipedia: Wikipedia (en) answered HTTP 500 Internal Server Error"
    )


def test_fanout_run_accepts_search_providers_as_a_flag():
    import argparse

    from fanout.cli import run as run_command

    parser = argparse.ArgumentParser()
    run_command.configure(parser)
    args = parser.parse_args(["snap.yaml", "--search-providers", "searxng,Wikipedia"])

    assert run_command.settings_from_args(args).tools.search_providers == ("searxng", "wikipedia")


class KaputProvider:
    """A third-party provider whose search raises, as a plug-in with a bug does."""

    name = "kaput"

    async def search(self, query: str, http: httpx.AsyncClient) -> ProviderResult:
        raise RuntimeError("boom")


def make_kaput(settings: ToolSettings) -> KaputProvider:
    return KaputProvider()


def make_nothing(settings: ToolSettings) -> KaputProvider:
    raise KeyError("KAPUT_HOME")


@pytest.fixture
def kaput_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    plugins = [EntryPoint(name="kaput", value=f"{__name__}:make_kaput", group=ENTRY_POINT_GROUP),
               EntryPoint(name="unbuilt", value=f"{__name__}:make_nothing", group=ENTRY_POINT_GROUP)]
    monkeypatch.setattr(provider_names, "entry_points", lambda group: [ep for ep in plugins if ep.group == group])


def test_fanout_check_names_a_plugin_whose_search_raises_or_whose_factory_raises_in_a_fail_line(
    capsys, kaput_plugins, transport_for
):
    from fanout.cli import main

    models = {"data": [{"id": "local/m", "supported_parameters": ["tools"]}]}
    with respx.mock:
        respx.get("http://searxng.test/search").respond(json=searx_page([searx_result("https://a.example/")]))
        respx.get("http://chat.test/v1/models").respond(json=models)
        code = main(["check", "--base-url", "http://chat.test/v1", "--models", "local/m",
                     "--searxng-url", "http://searxng.test", "--search-providers", "searxng,kaput,unbuilt"],
                    transport=transport_for(respx.mock))

    captured = capsys.readouterr()
    assert code == 1
    assert captured.out.splitlines()[1:3] == [
        "FAIL search kaput: kaput failed unexpectedly (RuntimeError: boom)",
        "FAIL search unbuilt: search provider 'unbuilt' failed to start (KeyError: 'KAPUT_HOME')",
    ]
    assert "Traceback" not in captured.err


async def test_the_run_s_preflight_refuses_to_start_naming_the_plugin_whose_search_raises(http, kaput_plugins):
    from fanout.tools.providers.reachability import require_search

    with pytest.raises(ConfigError) as caught:
        await require_search(http, ToolSettings(search_providers=("kaput",)))

    assert str(caught.value) == "kaput failed unexpectedly (RuntimeError: boom)"


async def test_the_run_s_preflight_warns_about_a_raising_plugin_when_another_provider_works(
    http, respx_mock, kaput_plugins
):
    from fanout.tools.providers.reachability import require_search

    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Test", "")))
    err = io.StringIO()

    checks = await require_search(http, ToolSettings(search_providers=("kaput", "wikipedia")), err=err)

    assert [c.level for c in checks] == ["FAIL", "OK"]
    assert err.getvalue() == ("warning: search kaput: kaput failed unexpectedly (RuntimeError: boom) "
                              "(web_search falls back to the next provider)\n")


async def test_the_preflight_warning_in_aggregate_mode_says_the_failing_providers_hits_are_left_out(
    http, respx_mock, kaput_plugins
):
    from fanout.tools.providers.reachability import require_search

    respx_mock.get(WIKI_EN).respond(json=wikipedia_page(("Test", "")))
    err = io.StringIO()

    await require_search(http, ToolSettings(search_providers=("kaput", "wikipedia"), search_mode="aggregate"), err=err)

    assert err.getvalue() == ("warning: search kaput: kaput failed unexpectedly (RuntimeError: boom) "
                              "(web_search fuses the other providers' hits without it)\n")


def test_every_key_of_the_search_config_is_read_into_the_setting_it_names(tmp_path: Path):
    from fanout.tools.search_config import load_search_config
    from fanout.tools.settings import ProviderSettings

    config = tmp_path / "search.yaml"
    config.write_text(
        "providers: searxng, Wikipedia\nwikipedia_language: 7\nsearxng_language: nb\nsearxng_safesearch: 1\n"
        "searxng_pageno: 2\ncache_ttl_s: null\nglobal_cache_dir: ~/cache\nglobal_cache_ttl_s: 60\n"
        "mode: fallback\nendpoints: {Wikipedia: ' https://mirror.example/w/api.php '}\nmin_results: 2\n"
        "provider_settings: {searxng: {max_results: 5, cache_ttl: 3600}}\n")
    assert load_search_config(config) == {
        "search_providers": ("searxng", "wikipedia"), "wikipedia_language": "7", "searxng_language": "nb",
        "searxng_safesearch": 1, "searxng_pageno": 2, "search_cache_ttl_s": None,
        "global_cache_dir": Path("~/cache").expanduser(), "global_cache_ttl_s": 60.0, "search_mode": "fallback",
        "search_endpoints": (("wikipedia", "https://mirror.example/w/api.php"),), "search_min_results": 2,
        "provider_settings": (("searxng", ProviderSettings(max_results=5, cache_ttl_s=3600)),),
    }


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("mode: loud", "mode: must be one of fallback, aggregate (got 'loud')"),
        ("cache_ttl_s: -1", "cache_ttl_s must be positive (got -1)"),
        ("global_cache_ttl_s: soon", "global_cache_ttl_s: could not convert string to float: 'soon'"),
        ("endpoints: {wikipedia: 7}", "endpoints: wikipedia needs a URL (got 7)"),
    ],
)
def test_a_bad_value_in_the_search_config_names_the_file_and_the_key(tmp_path: Path, line: str, message: str):
    from fanout.tools.search_config import load_search_config

    config = tmp_path / "search.yaml"
    config.write_text(line + "\n")
    with pytest.raises(ConfigError) as refused:
        load_search_config(config)
    assert str(refused.value) == f"--search-config {config}: {message}"
