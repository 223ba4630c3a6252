"""--search-mode aggregate, provider endpoints and their SSRF check, on real loopback servers.

One aiohttp app plays SearXNG (/search) and a Wikipedia mirror (/w/api.php);
the wikipedia provider is pointed at it through `search_endpoints`, so a
request that reached the real Wikipedia would fail the test (no network).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import respx
from aiohttp import web

from fanout.cli import main
from fanout.base.errors import ConfigError
from fanout.http.client import make_http_client
from fanout.tools import ToolBox
from fanout.tools.cache import ToolCache
from fanout.tools.health import SearchHealth
from fanout.tools.search import chain_cache_key
from fanout.tools.search_config import apply_search_options
from fanout.tools.settings import ToolSettings
from loopback import serving

QUERY = "ada whitlock"


def searx_item(url: str, title: str, engines: list[str]) -> dict[str, Any]:
    return {"url": url, "title": title, "content": f"searx says {title}", "engine": engines[0], "engines": engines}


def wiki_item(title: str, fullurl: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"title": title, "pageid": 1, "snippet": f"wiki says <span class=\"searchmatch\">{title}</span>"}
    if fullurl is not None:
        item["fullurl"] = fullurl
    return item


class Upstream:
    """What the loopback SearXNG and Wikipedia answer, and what they were asked."""

    def __init__(self) -> None:
        self.searx: list[dict[str, Any]] = []
        self.wiki: list[dict[str, Any]] = []
        self.searx_status = 200
        self.wiki_status = 200
        self.asked: list[tuple[str, dict[str, str]]] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/search", self._search)
        app.router.add_get("/w/api.php", self._wiki)
        return app

    async def _search(self, request: web.Request) -> web.Response:
        self.asked.append(("searxng", dict(request.query)))
        if self.searx_status != 200:
            return web.Response(status=self.searx_status, text="upstream trouble", headers={"Retry-After": "120"})
        return web.json_response({"query": request.query["q"], "results": self.searx, "answers": [],
                                  "infoboxes": [], "unresponsive_engines": []})

    async def _wiki(self, request: web.Request) -> web.Response:
        self.asked.append(("wikipedia", dict(request.query)))
        if self.wiki_status != 200:
            return web.Response(status=self.wiki_status, text="upstream trouble")
        return web.json_response({"batchcomplete": "", "query": {"search": self.wiki}})


@pytest.fixture
async def upstream() -> AsyncIterator[tuple[Upstream, str]]:
    served = Upstream()
    async with serving(served.app()) as port:
        yield served, f"http://127.0.0.1:{port}"


def settings_for(base: str, mode: str = "aggregate", **changes: Any) -> ToolSettings:
    return ToolSettings(searxng_url=base, search_providers=("searxng", "wikipedia"), search_mode=mode,
                        search_endpoints=(("wikipedia", f"{base}/w/api.php"),), allow_private_urls=True, **changes)


async def search(settings: ToolSettings, cache: ToolCache | None = None) -> tuple[bool, dict[str, Any]]:
    async with make_http_client(2, user_agent=settings.user_agent) as http:
        result = await ToolBox(http, settings, cache=cache).web_search(QUERY)
    return result.ok, json.loads(result.text)


async def test_aggregate_fuses_both_providers_by_canonical_url_with_each_ones_rank(upstream):
    served, base = upstream
    served.searx = [searx_item("https://www.bbc.co.uk/news/1/", "BBC", ["google", "bing"]),
                    searx_item("https://only-searx.example/a", "Only searx", ["brave"]),
                    searx_item("https://en.m.wikipedia.org/wiki/Ada_Whitlock", "Ada (mobile)", ["wikipedia"])]
    served.wiki = [wiki_item("Ada Whitlock"),  # built as https://en.wikipedia.org/wiki/Ada_Whitlock
                   wiki_item("BBC report", "https://bbc.co.uk/news/1?wprov=srpw1"),
                   wiki_item("Only wiki")]

    ok, payload = await search(settings_for(base))

    assert ok is True
    # RRF, k=60: Ada = 1/63 + 1/61, BBC = 1/61 + 1/62, only searx = 1/62, only wiki = 1/63.
    assert payload == {
        "results": [
            {"title": "BBC", "url": "https://www.bbc.co.uk/news/1/", "snippet": "searx says BBC",
             "found_by": [{"provider": "searxng", "rank": 1, "engines": ["google", "bing"]},
                          {"provider": "wikipedia", "rank": 2}]},
            {"title": "Ada Whitlock", "url": "https://en.wikipedia.org/wiki/Ada_Whitlock",
             "snippet": "wiki says Ada Whitlock",
             "found_by": [{"provider": "searxng", "rank": 3, "engines": ["wikipedia"]},
                          {"provider": "wikipedia", "rank": 1}]},
            {"title": "Only searx", "url": "https://only-searx.example/a", "snippet": "searx says Only searx",
             "found_by": [{"provider": "searxng", "rank": 2, "engines": ["brave"]}]},
            {"title": "Only wiki", "url": "https://en.wikipedia.org/wiki/Only_wiki", "snippet": "wiki says Only wiki",
             "found_by": [{"provider": "wikipedia", "rank": 3}]},
        ],
        "providers": ["searxng", "wikipedia"],
    }
    wiki_query = next(query for name, query in served.asked if name == "wikipedia")
    assert wiki_query == {"action": "query", "list": "search", "srsearch": QUERY, "format": "json",
                          "srlimit": "10", "srprop": "snippet"}


async def test_aggregate_names_the_provider_that_failed_and_keeps_the_others_hits(upstream):
    served, base = upstream
    served.searx_status = 502
    served.wiki = [wiki_item("Ada Whitlock")]

    ok, payload = await search(settings_for(base))

    assert ok is True
    assert payload == {
        "results": [{"title": "Ada Whitlock", "url": "https://en.wikipedia.org/wiki/Ada_Whitlock",
                     "snippet": "wiki says Ada Whitlock", "found_by": [{"provider": "wikipedia", "rank": 1}]}],
        "providers": ["wikipedia"],
        "failed_providers": {"searxng": f"SearXNG error: HTTP 502 Bad Gateway from {base} (for the operator: "
                                        "check `compose logs searxng`)"},
    }


async def test_aggregate_with_every_provider_failing_is_an_error_naming_each(upstream):
    served, base = upstream
    served.searx_status = 502
    served.wiki_status = 503

    ok, payload = await search(settings_for(base))

    assert ok is False
    assert payload == {"results": [], "error": (
        "web search is unavailable: no search provider could answer (searxng: SearXNG error: HTTP 502 Bad Gateway "
        f"from {base} (for the operator: check `compose logs searxng`); "
        f"wikipedia: Wikipedia (en) at {base}/w/api.php answered HTTP 503 Service Unavailable)")}


async def test_fallback_names_the_provider_that_failed_before_the_one_that_answered(upstream):
    served, base = upstream
    served.searx_status = 500
    served.wiki = [wiki_item("Ada Whitlock")]

    ok, payload = await search(settings_for(base, mode="fallback"))

    assert ok is True
    assert payload == {
        "results": [{"title": "Ada Whitlock", "url": "https://en.wikipedia.org/wiki/Ada_Whitlock",
                     "snippet": "wiki says Ada Whitlock", "provider": "wikipedia"}],
        "provider": "wikipedia",
        "failed_providers": {"searxng": f"SearXNG error: HTTP 500 Internal Server Error from {base} (for the "
                                        "operator: check `compose logs searxng`)"},
    }


async def test_fallback_that_answers_first_time_asks_one_provider_and_names_no_failure(upstream):
    served, base = upstream
    served.searx = [searx_item("https://a.example/", "A", ["google"])]

    ok, payload = await search(settings_for(base, mode="fallback"))

    assert (ok, [name for name, _ in served.asked]) == (True, ["searxng"])
    assert "failed_providers" not in payload


async def test_aggregate_asks_the_providers_at_the_same_time():
    """Each handler waits for the other to have been asked: in turn, the first would wait out its timeout."""
    asked = {"searxng": anyio.Event(), "wikipedia": anyio.Event()}

    def handler(name: str, other: str, body: dict[str, Any]) -> Any:
        async def answer(request: web.Request) -> web.Response:
            asked[name].set()
            with anyio.move_on_after(30):
                await asked[other].wait()
            return web.json_response(body if asked[other].is_set() else {"error": {"code": "alone"}})
        return answer

    app = web.Application()
    app.router.add_get("/search", handler("searxng", "wikipedia", {"results": [searx_item("https://a.example", "A", ["g"])]}))
    app.router.add_get("/w/api.php", handler("wikipedia", "searxng", {"query": {"search": [wiki_item("B")]}}))
    async with serving(app) as port:
        ok, payload = await search(settings_for(f"http://127.0.0.1:{port}", search_timeout_s=60.0))

    assert ok is True
    assert payload["providers"] == ["searxng", "wikipedia"]
    assert "failed_providers" not in payload


async def test_the_run_cache_keeps_one_answer_per_mode_and_provider_list(upstream):
    served, base = upstream
    served.searx = [searx_item("https://a.example/", "A", ["google"])]
    served.wiki = [wiki_item("Ada Whitlock")]
    cache = await ToolCache.open(None)
    try:
        _, fallback = await search(settings_for(base, mode="fallback"), cache)
        _, aggregate = await search(settings_for(base), cache)
        served.searx, served.wiki = [], []  # upstream changes; both stored answers stay as first given
        _, fallback_again = await search(settings_for(base, mode="fallback"), cache)
        _, aggregate_again = await search(settings_for(base), cache)
    finally:
        await cache.aclose()

    assert fallback["provider"] == "searxng" and "found_by" not in fallback["results"][0]
    assert [hit["url"] for hit in aggregate["results"]] == ["https://a.example/",
                                                            "https://en.wikipedia.org/wiki/Ada_Whitlock"]
    assert (fallback_again, aggregate_again) == (fallback, aggregate)
    keys = {chain_cache_key(mode, names) for mode in ("fallback", "aggregate")
            for names in (["searxng", "wikipedia"], ["wikipedia", "searxng"], ["searxng"])}
    assert len(keys) == 6
    assert chain_cache_key("aggregate", ["searxng", "wikipedia"]) == "chain:aggregate:searxng,wikipedia"


async def test_a_degraded_aggregate_answer_is_not_frozen_for_the_run(upstream):
    served, base = upstream
    served.searx_status = 502
    served.wiki = [wiki_item("Ada Whitlock")]
    cache = await ToolCache.open(None)
    try:
        _, first = await search(settings_for(base), cache)
        served.searx_status = 200
        served.searx = [searx_item("https://a.example/", "A", ["google"])]
        _, second = await search(settings_for(base), cache)
    finally:
        await cache.aclose()

    assert "failed_providers" in first
    assert second["providers"] == ["searxng", "wikipedia"] and "failed_providers" not in second


async def test_a_brave_endpoint_override_is_asked_with_the_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("BRAVE_API_KEY", "test-brave-key")
    seen: list[tuple[str, str | None]] = []

    async def brave(request: web.Request) -> web.Response:
        seen.append((request.query["q"], request.headers.get("X-Subscription-Token")))
        return web.json_response({"web": {"results": [{"title": "T", "url": "https://t.example", "description": "d"}]}})

    app = web.Application()
    app.router.add_get("/res/v1/web/search", brave)
    async with serving(app) as port:
        settings = ToolSettings(search_providers=("brave",), allow_private_urls=True,
                                search_endpoints=(("brave", f"http://127.0.0.1:{port}/res/v1/web/search"),))
        ok, payload = await search(settings)

    assert (ok, seen) == (True, [(QUERY, "test-brave-key")])
    assert payload["results"] == [{"title": "T", "url": "https://t.example", "snippet": "d", "provider": "brave"}]


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/w/api.php", "http://localhost:9/w/api.php",
                                 "http://10.1.2.3/w/api.php", "http://[::1]:9/w/api.php", "http://2130706433/w/api.php"])
def test_a_private_endpoint_is_refused_without_allow_private_urls(url: str):
    with pytest.raises(ConfigError, match=r"^search endpoint wikipedia .*: .* is a (loopback|private) address; pass "
                                          r"--allow-private-urls \(local testing only\)\.$"):
        ToolSettings(search_endpoints=(("wikipedia", url),))


def test_a_private_endpoint_is_allowed_by_the_flag_or_by_its_network():
    endpoint = (("wikipedia", "http://127.0.0.1:9/w/api.php"),)

    assert ToolSettings(search_endpoints=endpoint, allow_private_urls=True).endpoint("wikipedia") == endpoint[0][1]
    assert ToolSettings(search_endpoints=endpoint, allowed_networks=("127.0.0.0/8",)).endpoint("wikipedia") == (
        endpoint[0][1])
    assert ToolSettings(search_endpoints=(("brave", "https://brave-proxy.example/s"),)).endpoint("wikipedia") is None


@pytest.mark.parametrize("url", ["http://169.254.169.254/latest", "http://metadata.google.internal/x"])
def test_a_metadata_endpoint_is_refused_even_with_allow_private_urls(url: str):
    with pytest.raises(ConfigError, match="is a cloud metadata endpoint"):
        ToolSettings(search_endpoints=(("wikipedia", url),), allow_private_urls=True)


def test_a_search_config_file_sets_mode_and_endpoints_and_the_flag_wins(tmp_path: Path):
    config = tmp_path / "search.yaml"
    config.write_text("providers: [searxng, wikipedia]\nmode: aggregate\nendpoints:\n"
                      "  wikipedia: https://wiki-mirror.example/w/api.php\n  searxng: https://searx.example/\n",
                      encoding="utf-8")

    from_file = apply_search_options(ToolSettings(), providers=None, config=config)
    flag_wins = apply_search_options(ToolSettings(), providers=None, config=config, mode="fallback")

    assert (from_file.search_mode, from_file.search_endpoints, from_file.searxng_url) == (
        "aggregate", (("wikipedia", "https://wiki-mirror.example/w/api.php"),), "https://searx.example/")
    assert flag_wins.search_mode == "fallback"


@pytest.mark.parametrize(("text", "message"), [
    ("mode: parallel\n", r"search.yaml: mode: must be one of fallback, aggregate \(got 'parallel'\)"),
    ("endpoints: [https://x.example]\n", "endpoints must be a mapping"),
    ("endpoints: {bing: https://x.example}\n", "endpoints: unknown search provider 'bing'"),
    ("endpoints: {duckduckgo: https://x.example}\n", "duckduckgo is asked through the ddgs library"),
    ("endpoints: {wikipedia: ftp://x.example}\n", "search endpoint wikipedia must be an http:// or https:// URL"),
    ("endpoints: {wikipedia: http://192.168.1.5/w/api.php}\n", "192.168.1.5 is a private address"),
])
def test_a_bad_mode_or_endpoint_in_the_search_config_is_one_clear_error(tmp_path: Path, text: str, message: str):
    config = tmp_path / "search.yaml"
    config.write_text(text, encoding="utf-8")

    with pytest.raises(ConfigError, match=message):
        apply_search_options(ToolSettings(), providers=None, config=config)


def test_an_unknown_mode_in_settings_is_refused():
    with pytest.raises(ConfigError, match=r"--search-mode must be one of fallback, aggregate \(got 'both'\)"):
        ToolSettings(search_mode="both")


def test_tool_web_search_takes_the_mode_and_the_search_config(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              transport_for):
    config = tmp_path / "search.yaml"
    config.write_text("providers: [searxng, wikipedia]\nendpoints: {wikipedia: https://wiki-mirror.example/w/api.php}\n",
                      encoding="utf-8")
    with respx.mock(assert_all_called=True) as mock:
        mock.get("http://127.0.0.1:8888/search").respond(json={"results": [searx_item("https://a.example", "A", ["g"])]})
        mock.get("https://wiki-mirror.example/w/api.php").respond(json={"query": {"search": [wiki_item("B")]}})
        code = main(["tool", "web_search", "ada", "--searxng-url", "http://127.0.0.1:8888", "--search-config",
                     str(config), "--search-mode", "aggregate"], transport=transport_for(mock))

    assert code == 0
    assert json.loads(capsys.readouterr().out) == {
        "results": [
            {"title": "A", "url": "https://a.example", "snippet": "searx says A",
             "found_by": [{"provider": "searxng", "rank": 1, "engines": ["g"]}]},
            {"title": "B", "url": "https://en.wikipedia.org/wiki/B", "snippet": "wiki says B",
             "found_by": [{"provider": "wikipedia", "rank": 1}]},
        ],
        "providers": ["searxng", "wikipedia"],
    }


def test_settings_stay_a_frozen_value():
    settings = settings_for("http://127.0.0.1:1")
    assert dataclasses.replace(settings) == settings and hash(settings) == hash(dataclasses.replace(settings))


def test_fanout_runs_options_carry_the_mode_to_the_tools_and_the_manifest(tmp_path: Path):
    from fanout.engine.options import RunOptions, settings_from

    config = tmp_path / "search.yaml"
    config.write_text("mode: aggregate\n", encoding="utf-8")

    from_flag = settings_from(RunOptions(search_mode="aggregate"))
    from_file = settings_from(RunOptions(search_config=config))
    flag_wins = settings_from(RunOptions(search_config=config, search_mode="fallback"))

    assert (from_flag.tools.search_mode, from_file.tools.search_mode, flag_wins.tools.search_mode) == (
        "aggregate", "aggregate", "fallback")
    assert settings_from(RunOptions()).tools.search_mode == "fallback"
    assert from_flag.summary()["search_mode"] == "aggregate"


async def test_a_tavily_endpoint_override_gets_the_post_with_the_key(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test")
    seen: list[tuple[str, str | None]] = []

    async def tavily(request: web.Request) -> web.Response:
        seen.append(((await request.json())["query"], request.headers.get("Authorization")))
        return web.json_response({"results": [{"title": "T", "url": "https://t.example", "content": "c"}]})

    app = web.Application()
    app.router.add_post("/search", tavily)
    async with serving(app) as port:
        settings = ToolSettings(search_providers=("tavily",), allow_private_urls=True,
                                search_endpoints=(("tavily", f"http://127.0.0.1:{port}/search"),))
        ok, payload = await search(settings)

    assert (ok, seen) == (True, [(QUERY, "Bearer tvly-test")])
    assert payload["results"] == [{"title": "T", "url": "https://t.example", "snippet": "c", "provider": "tavily"}]


async def test_answers_from_an_endpoint_are_cached_apart_from_the_providers_own(tmp_path: Path):
    """A shared (global) cache must not hand one mirror's answer to a run pointed at another."""
    first, second = Upstream(), Upstream()
    first.wiki = [wiki_item("From the first mirror")]
    second.wiki = [wiki_item("From the second mirror")]
    cache = await ToolCache.open(tmp_path / "global.sqlite")
    try:
        async with serving(first.app()) as one, serving(second.app()) as two:
            titles = []
            for port in (one, two, one):
                settings = ToolSettings(search_providers=("wikipedia",), allow_private_urls=True,
                                        search_endpoints=(("wikipedia", f"http://127.0.0.1:{port}/w/api.php"),))
                async with make_http_client(1, user_agent=settings.user_agent) as http:
                    payload = json.loads((await ToolBox(http, settings, global_cache=cache).web_search(QUERY)).text)
                titles.append(payload["results"][0]["title"])
    finally:
        await cache.aclose()

    assert titles == ["From the first mirror", "From the second mirror", "From the first mirror"]
    assert (len(first.asked), len(second.asked)) == (1, 1)  # the third search came out of the cache


@pytest.mark.timeout(300)
def test_a_run_on_the_simulator_searches_both_providers_in_aggregate_mode(tmp_path: Path, capsys):
    import sqlite3

    import yaml

    from fanout.base.validate import package_data
    from fanout.sim import SimConfig
    from simulated import serving_simulator

    config = tmp_path / "sim-search.yaml"
    with serving_simulator(SimConfig()) as sim:  # `fanout run` through the entry point, in this (main) thread
        config.write_text(f"providers: [searxng, wikipedia]\nmode: aggregate\n"
                          f"endpoints: {{wikipedia: '{sim.wikipedia_api_url}'}}\n", encoding="utf-8")
        code = main(["run", str(package_data("sample_snapshot.yaml")), "--run-dir",
                     str(tmp_path / "run"), "--limit", "2", "-m", "anthropic/claude-haiku-4.5", "--base-url", sim.api_base,
                     "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0",
                     "--search-config", str(config)])
        requests = sim.stats()["requests"]

    assert code == 0, capsys.readouterr()
    assert requests["search"] == requests["wikipedia"] > 0  # every query went to both providers
    with sqlite3.connect(tmp_path / "run" / "search-cache.sqlite") as db:
        kinds = {row[0] for row in db.execute("SELECT provider FROM search")}
    assert kinds == {"searxng", f"wikipedia@{sim.wikipedia_api_url}",
                     f"chain:aggregate:searxng,wikipedia@{sim.wikipedia_api_url}"}
    manifest = yaml.safe_load((tmp_path / "run" / "manifest.yaml").read_text(encoding="utf-8"))
    assert manifest["settings"]["search_mode"] == "aggregate"


async def test_aggregate_skips_a_provider_cooling_down_from_a_rate_limit_and_says_so(upstream):
    served, base = upstream
    served.searx_status = 429
    served.wiki = [wiki_item("Ada Whitlock")]
    settings = settings_for(base)

    async with make_http_client(2, user_agent=settings.user_agent) as http:
        box = ToolBox(http, settings, health=SearchHealth(clock=lambda: 1000.0))  # time stands still
        first = json.loads((await box.web_search(QUERY)).text)
        second = json.loads((await box.web_search("another query")).text)

    assert sorted(name for name, _ in served.asked) == ["searxng", "wikipedia", "wikipedia"]
    assert first["failed_providers"]["searxng"].startswith(f"SearXNG error: HTTP 429 Too Many Requests: {base} rate-limited the request")
    assert second["providers"] == ["wikipedia"]
    assert second["failed_providers"]["searxng"] == "skipped: rate-limited, cooling down for 120 more s"
