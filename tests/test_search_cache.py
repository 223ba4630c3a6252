"""The run's tool cache: one answer per query for every model, expiry, persistence, single flight.

Exact search exchanges are scripted with respx; fetches go to the simulator's
pages (fanout.sim), whose own tally counts the downloads.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from fanout.tools.settings import ToolSettings
from fanout.base.errors import ConfigError
from fanout.sim import SimHandle, running_simulator
from fanout.tools import ToolBox, ToolCache, ToolResult, open_run_toolbox
from fanout.tools.cache import normalise_query, page_key
from fanout.tools.singleflight import SingleFlight

SEARX = "http://127.0.0.1:8888"
WIKI_EN = "https://en.wikipedia.org/w/api.php"
SETTINGS = ToolSettings(searxng_url=SEARX)
OBITUARY = "www.theguardian.com/news/2001/may/15/guardianobituaries.books"
"""A simulated corpus page: the Guardian's obituary of Douglas Adams."""


def searx_answer(*urls: str) -> httpx.Response:
    results = [{"url": url, "title": f"Title {n}", "content": f"Snippet {n}", "engine": "brave"}
               for n, url in enumerate(urls)]
    return httpx.Response(200, json={"query": "q", "results": results, "unresponsive_engines": []})


@pytest.fixture
async def sim() -> AsyncIterator[SimHandle]:
    async with running_simulator() as handle:
        yield handle


def fetching_box(http: httpx.AsyncClient, cache: ToolCache) -> ToolBox:
    """A ToolBox allowed to fetch from the simulator on loopback, with no politeness delay."""
    return ToolBox(http, ToolSettings(allow_private_urls=True, per_host_delay_s=0), cache=cache)


@pytest.fixture
async def memory_cache() -> AsyncIterator[ToolCache]:
    cache = await ToolCache.open(None)
    yield cache
    await cache.aclose()


class Clock:
    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_queries_are_the_same_up_to_case_spacing_and_unicode_form():
    assert normalise_query("  Douglas\u00a0ADAMS \t born ") == "douglas adams born"
    assert normalise_query("ＤＯＵＧＬＡＳ ａｄａｍｓ") == "douglas adams"  # full-width forms fold under NFKC
    assert normalise_query("Straße") == normalise_query("STRASSE")
    assert normalise_query("douglas adams") != normalise_query("douglas adam")


def test_a_page_is_keyed_by_its_url_without_the_fragment():
    assert page_key(" https://a.example/p?x=1#top ") == "https://a.example/p?x=1"


async def test_every_model_asking_the_same_query_in_a_run_gets_identical_results_from_one_request(
    http, memory_cache, respx_mock
):
    route = respx_mock.get(f"{SEARX}/search").mock(side_effect=[
        searx_answer("https://a.example/1"), searx_answer("https://b.example/2")])
    box = ToolBox(http, SETTINGS, cache=memory_cache)

    first = await box.web_search("Douglas Adams born")
    second = await box.web_search("  douglas ADAMS   born")

    assert route.call_count == 1
    assert second == first
    assert [r["url"] for r in json.loads(first.text)["results"]] == ["https://a.example/1"]


async def test_a_different_query_is_a_miss(http, memory_cache, respx_mock):
    route = respx_mock.get(f"{SEARX}/search").mock(return_value=searx_answer("https://a.example/1"))
    box = ToolBox(http, SETTINGS, cache=memory_cache)

    await box.web_search("douglas adams")
    await box.web_search("douglas adams obituary")

    assert route.call_count == 2


@pytest.mark.parametrize("remember_chars", [0, 1 << 20])
async def test_an_answer_older_than_the_ttl_is_asked_again(http, respx_mock, remember_chars):
    clock = Clock()
    cache = await ToolCache.open(None, ttl_s=60, clock=clock, remember_chars=remember_chars)
    route = respx_mock.get(f"{SEARX}/search").mock(side_effect=[
        searx_answer("https://a.example/old"), searx_answer("https://a.example/new")])
    box = ToolBox(http, SETTINGS, cache=cache)

    await box.web_search("q")
    clock.now += 60
    still_fresh = await box.web_search("q")
    clock.now += 1
    expired = await box.web_search("q")
    await cache.aclose()

    assert route.call_count == 2
    assert json.loads(still_fresh.text)["results"][0]["url"] == "https://a.example/old"
    assert json.loads(expired.text)["results"][0]["url"] == "https://a.example/new"


async def test_without_a_ttl_a_runs_answers_never_expire(http, respx_mock):
    clock = Clock()
    cache = await ToolCache.open(None, ttl_s=None, clock=clock)
    route = respx_mock.get(f"{SEARX}/search").mock(return_value=searx_answer("https://a.example/"))
    box = ToolBox(http, SETTINGS, cache=cache)

    await box.web_search("q")
    clock.now += 10 * 365 * 86_400
    await box.web_search("q")
    await cache.aclose()

    assert route.call_count == 1


async def test_the_cache_lives_in_the_run_directory_and_survives_a_new_toolbox(http, tmp_path: Path, respx_mock):
    route = respx_mock.get(f"{SEARX}/search").mock(side_effect=[
        searx_answer("https://a.example/1"), searx_answer("https://b.example/2")])

    async with open_run_toolbox(http, SETTINGS, tmp_path / "run") as box:
        before = await box.web_search("douglas adams")
    async with open_run_toolbox(http, SETTINGS, tmp_path / "run") as resumed:
        after = await resumed.web_search("Douglas Adams")

    assert (tmp_path / "run" / "search-cache.sqlite").is_file()
    assert route.call_count == 1
    assert after == before


async def test_errors_are_not_cached(http, memory_cache, respx_mock):
    route = respx_mock.get(f"{SEARX}/search").mock(side_effect=[
        httpx.Response(502), searx_answer("https://a.example/")])
    box = ToolBox(http, SETTINGS, cache=memory_cache)

    failed = await box.web_search("q")
    recovered = await box.web_search("q")

    assert (failed.ok, recovered.ok, route.call_count) == (False, True, 2)


async def test_a_fallback_answer_stays_the_runs_answer_after_the_first_provider_recovers(http, memory_cache, respx_mock):
    """Fairness: the model that asks second must not see other results than the first."""
    searx = respx_mock.get(f"{SEARX}/search").mock(side_effect=[httpx.Response(502), searx_answer("https://a.example/")])
    respx_mock.get(WIKI_EN).respond(json={"query": {"search": [{"title": "Douglas Adams", "snippet": ""}]}})
    settings = ToolSettings(searxng_url=SEARX, search_providers=("searxng", "wikipedia"))
    box = ToolBox(http, settings, cache=memory_cache)

    first = await box.web_search("douglas adams")
    second = await box.web_search("douglas adams")

    assert second == first
    assert json.loads(second.text)["provider"] == "wikipedia"
    assert searx.call_count == 1


async def test_the_global_cache_serves_a_new_run_and_is_copied_into_its_run_cache(http, tmp_path: Path, respx_mock):
    route = respx_mock.get(f"{SEARX}/search").mock(return_value=searx_answer("https://a.example/"))
    settings = ToolSettings(searxng_url=SEARX, global_cache_dir=tmp_path / "global")

    async with open_run_toolbox(http, settings, tmp_path / "run1") as box:
        first = await box.web_search("q")
    async with open_run_toolbox(http, settings, tmp_path / "run2") as box:
        second = await box.web_search("q")
    run2 = await ToolCache.open(tmp_path / "run2" / "search-cache.sqlite")
    copied = await run2.get_search("searxng", "q")
    await run2.aclose()

    assert route.call_count == 1
    assert second == first
    assert copied == {"hits": [["Title 0", "https://a.example/", "Snippet 0", ["brave"], None]], "answers": []}


async def test_a_global_cache_written_before_hits_kept_their_engines_still_answers(http, tmp_path: Path, respx_mock):
    route = respx_mock.get(f"{SEARX}/search").respond(500)
    settings = ToolSettings(searxng_url=SEARX, global_cache_dir=tmp_path / "global")
    older = await ToolCache.open(tmp_path / "global" / "search-cache.sqlite")
    await older.put_search("searxng", "q", {"hits": [["Title 0", "https://a.example/", "Snippet 0"]]})
    await older.aclose()

    async with open_run_toolbox(http, settings, tmp_path / "run") as box:
        result = await box.web_search("q")

    assert route.call_count == 0
    assert json.loads(result.text) == {"results": [{"title": "Title 0", "url": "https://a.example/",
                                                    "snippet": "Snippet 0", "provider": "searxng"}],
                                       "provider": "searxng"}


async def test_a_global_answer_past_its_ttl_is_asked_again(http, tmp_path: Path, respx_mock):
    route = respx_mock.get(f"{SEARX}/search").mock(return_value=searx_answer("https://a.example/"))
    settings = ToolSettings(searxng_url=SEARX, global_cache_dir=tmp_path / "global", global_cache_ttl_s=1e-9)

    async with open_run_toolbox(http, settings, tmp_path / "run1") as box:
        await box.web_search("q")
    async with open_run_toolbox(http, settings, tmp_path / "run2") as box:
        await box.web_search("q")

    assert route.call_count == 2


async def test_concurrent_identical_queries_make_one_upstream_request(http, respx_mock):
    """No cache at all: the single flight alone keeps eight simultaneous askers to one request."""
    entered, release = anyio.Event(), anyio.Event()

    async def slow_searxng(request: httpx.Request) -> httpx.Response:
        entered.set()
        await release.wait()
        return searx_answer("https://a.example/")

    route = respx_mock.get(f"{SEARX}/search").mock(side_effect=slow_searxng)
    box = ToolBox(http, SETTINGS)
    results: list[ToolResult] = []

    async def ask(query: str) -> None:
        results.append(await box.web_search(query))

    async with anyio.create_task_group() as tg:
        for n in range(8):
            tg.start_soon(ask, "Douglas Adams" if n % 2 else "douglas  adams")
        await entered.wait()
        await anyio.wait_all_tasks_blocked()
        release.set()

    assert route.call_count == 1
    assert len(results) == 8 and len(set(results)) == 1 and results[0].ok
    assert len(box.search_chain._flights) == 0


async def test_concurrent_fetches_of_one_page_download_it_once_and_later_fetches_use_the_cache(
    http, memory_cache, sim
):
    box = fetching_box(http, memory_cache)
    url = f"{sim.base_url}/web/{OBITUARY}"
    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(box.web_fetch, url)
    again = await box.web_fetch(url + "#early-life")

    assert sim.stats()["requests"] == {"web": 1}
    assert again.ok is True and again.text.startswith(
        "Douglas Adams, who has died suddenly of a heart attack aged 49, turned a radio comedy")
    assert again.final_url == url


async def test_a_failed_fetch_is_not_cached(http, memory_cache, sim):
    box = fetching_box(http, memory_cache)
    missing = f"{sim.base_url}/web/www.theguardian.com/missing.html"
    first = await box.web_fetch(missing)
    second = await box.web_fetch(missing)

    assert (first, second) == (ToolResult("error: HTTP 404 Not Found", False), ToolResult("error: HTTP 404 Not Found", False))
    assert sim.stats()["requests"] == {"web": 2}


async def test_a_cancelled_leader_hands_the_flight_to_a_waiting_follower():
    """The leader's verdict timed out: the follower must not inherit the cancellation, it leads a new attempt."""
    flights: SingleFlight[str] = SingleFlight()
    leader_started = anyio.Event()
    leader_scope = anyio.CancelScope()
    calls: list[str] = []
    got: list[str] = []

    async def work(who: str) -> str:
        calls.append(who)
        if who == "leader":
            leader_started.set()
            await anyio.sleep_forever()
        return f"answer by {who}"

    async def leader() -> None:
        with leader_scope:
            await flights.run("k", lambda: work("leader"))

    async def follower() -> None:
        got.append(await flights.run("k", lambda: work("follower")))

    async with anyio.create_task_group() as tg:
        tg.start_soon(leader)
        await leader_started.wait()
        tg.start_soon(follower)
        await anyio.wait_all_tasks_blocked()
        leader_scope.cancel()

    assert calls == ["leader", "follower"]
    assert got == ["answer by follower"]
    assert len(flights) == 0


async def test_a_file_that_is_not_a_sqlite_cache_is_a_config_error(tmp_path: Path):
    bad = tmp_path / "search-cache.sqlite"
    bad.write_bytes(b"this is not a database" * 100)

    with pytest.raises(ConfigError, match="cannot open the search cache .*search-cache.sqlite"):
        await ToolCache.open(bad)


async def test_a_broken_cache_never_breaks_a_search(http, tmp_path: Path, respx_mock, caplog):
    respx_mock.get(f"{SEARX}/search").mock(return_value=searx_answer("https://a.example/"))
    cache = await ToolCache.open(tmp_path / "c.sqlite")
    await cache.aclose()  # every later call fails inside SQLite

    result = await ToolBox(http, SETTINGS, cache=cache).web_search("q")

    assert result.ok is True
    assert "searching upstream without it" in caplog.text


async def test_the_cache_file_is_real_sqlite_in_wal_mode(tmp_path: Path):
    cache = await ToolCache.open(tmp_path / "c.sqlite")
    await cache.put_search("searxng", "Q", {"hits": []})
    await cache.aclose()

    db = sqlite3.connect(tmp_path / "c.sqlite")
    try:
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        rows = db.execute("SELECT provider, query, answer FROM search").fetchall()
    finally:
        db.close()
    assert mode == "wal"
    assert rows == [("searxng", "q", '{"hits": []}')]


async def test_a_resume_finds_the_answers_an_older_run_stored_under_the_chain_key_it_used(http, respx_mock):
    """Runs before --search-mode kept the fallback chain's answer under `chain:NAMES`; a resume must still find it
    there (the same answer every model saw), not ask again and hand the next model other results."""
    route = respx_mock.get(f"{SEARX}/search").mock(side_effect=[searx_answer("https://a.example/1"),
                                                                searx_answer("https://b.example/2")])
    first_cache, older_cache = await ToolCache.open(None), await ToolCache.open(None)
    try:
        before = await ToolBox(http, SETTINGS, cache=first_cache).web_search("douglas adams")
        stored = await first_cache.get_search("chain:fallback:searxng", "douglas adams")
        assert stored is not None
        await older_cache.put_search("chain:searxng", "douglas adams", stored)  # as an older run wrote it

        after = await ToolBox(http, SETTINGS, cache=older_cache).web_search("Douglas Adams")
    finally:
        await first_cache.aclose()
        await older_cache.aclose()
    assert (after, route.call_count) == (before, 1)


async def test_a_remembering_cache_answers_as_its_file_does_and_past_its_memory_reads_the_file(tmp_path: Path):
    clock = Clock()
    cache = await ToolCache.open(tmp_path / "c.sqlite", ttl_s=60, clock=clock, remember_chars=60)
    await cache.put_search("searxng", "Q one", {"hits": ["a" * 10]})
    await cache.put_page("https://a.example/p#x", "page text", "https://a.example/final")
    remembered = [await cache.get_search("searxng", "q  ONE"), await cache.get_page("https://a.example/p")]
    await cache.put_search("searxng", "two", {"hits": ["b" * 30]})  # 44 characters: the first two (55) go
    from_file = [await cache.get_search("searxng", "q one"), await cache.get_page("https://a.example/p#y")]
    clock.now += 30
    tighter = await cache.get_search("searxng", "two", max_age_s=29)
    clock.now += 31
    expired = [await cache.get_search("searxng", "two"), await cache.get_search("searxng", "q one")]
    await cache.aclose()

    assert remembered == from_file == [{"hits": ["aaaaaaaaaa"]}, ("page text", "https://a.example/final")]
    assert tighter is None
    assert expired == [None, None]
    db = sqlite3.connect(tmp_path / "c.sqlite")
    try:
        assert db.execute("SELECT query, answer FROM search ORDER BY query").fetchall() == [
            ("q one", '{"hits": ["aaaaaaaaaa"]}'), ("two", '{"hits": ["' + "b" * 30 + '"]}')]
    finally:
        db.close()


async def test_a_new_runs_cache_is_known_whole_until_it_lets_a_row_go(tmp_path: Path):
    cache = await ToolCache.open(tmp_path / "c.sqlite", remember_chars=60)
    await cache.put_search("searxng", "one", {"hits": ["a" * 10]})
    await cache.aclose()
    reopened = await ToolCache.open(tmp_path / "c.sqlite", remember_chars=60)  # not new: misses read the file
    assert await reopened.get_search("searxng", "one") == {"hits": ["aaaaaaaaaa"]}
    await reopened.aclose()

    new = await ToolCache.open(tmp_path / "new.sqlite", remember_chars=60)
    missing_while_whole = await new.get_search("searxng", "one")
    await new.put_search("searxng", "one", {"hits": ["a" * 10]})
    await new.put_search("searxng", "two", {"hits": ["b" * 30]})  # 24 + 44 characters: "one" goes
    after_letting_go = [await new.get_search("searxng", "one"), await new.get_search("searxng", "three")]
    await new.aclose()

    assert missing_while_whole is None
    assert after_letting_go == [{"hits": ["aaaaaaaaaa"]}, None]
