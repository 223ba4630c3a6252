"""The simulator's two search providers over one offline web: SearXNG and a Wikipedia-style API.

They overlap but rank differently (and the Wikipedia-style API spells its
links with Wikipedia's tracking parameter), so fused search and its dedup by
canonical URL can be tested without the network.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from fanout.http.client import make_http_client
from fanout.sim import SimConfig, profile_from_dict, running_simulator
from fanout.tools import ToolBox
from fanout.tools.settings import ToolSettings

DIFFERENT_ORDER = "Douglas Adams English author and humourist (1952–2001)"


def wiki_params(query: str, **more: str) -> dict[str, str]:
    return {"action": "query", "list": "search", "srsearch": query, "format": "json", **more}


async def test_the_wikipedia_style_api_answers_in_mediawikis_shape_with_full_urls():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        data = (await http.get(sim.wikipedia_api_url, params=wiki_params("Tom Hanks IMDb ID"))).json()

    found = data["query"]["search"]
    assert [(item["title"], item["fullurl"]) for item in found] == [
        ("Tom Hanks - Actor, Producer, Director", f"{sim.base_url}/web/www.imdb.com/name/nm0000158/?wprov=srpw1"),
        ("Tom Hanks — The Movie Database (TMDB)", f"{sim.base_url}/web/www.themoviedb.org/person/31-tom-hanks?wprov=srpw1"),
    ]
    assert data["query"]["searchinfo"] == {"totalhits": 2}
    assert all(set(item) == {"ns", "title", "pageid", "snippet", "fullurl"} for item in found)


async def test_the_two_providers_overlap_but_rank_the_shared_pages_differently():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        searx = (await http.get(f"{sim.searxng_url}/search", params={"q": DIFFERENT_ORDER, "format": "json"})).json()
        wiki = (await http.get(sim.wikipedia_api_url, params=wiki_params(DIFFERENT_ORDER, srlimit="5"))).json()

    prefix = f"{sim.base_url}/web/"
    searx_pages = [r["url"].removeprefix(prefix) for r in searx["results"]][:5]
    wiki_pages = [r["fullurl"].removeprefix(prefix).removesuffix("?wprov=srpw1") for r in wiki["query"]["search"]]
    assert searx_pages == ["catalogue.bnf.fr/ark:/12148/cb11888209t", "www.bbc.co.uk/news/entertainment-arts/1331105",
                           "www.theguardian.com/news/2001/may/15/guardianobituaries.books",
                           "www.gracesguide.co.uk/Douglas_Adams", "www.timeanddate.com/on-this-day/march/11"]
    assert wiki_pages == ["catalogue.bnf.fr/ark:/12148/cb11888209t", "www.timeanddate.com/on-this-day/march/11",
                          "www.bbc.co.uk/news/entertainment-arts/1331105", "www.gracesguide.co.uk/Douglas_Adams",
                          "www1.city.obama.fukui.jp/english/"]


async def test_the_wikipedia_style_api_refuses_what_mediawiki_refuses():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        no_query = (await http.get(sim.wikipedia_api_url, params=wiki_params(""))).json()
        other_list = (await http.get(sim.wikipedia_api_url, params={"action": "query", "list": "allpages"})).json()
        bad_limit = (await http.get(sim.wikipedia_api_url, params=wiki_params("Tom Hanks", srlimit="many"))).json()

    assert [d["error"]["code"] for d in (no_query, other_list, bad_limit)] == ["missingparam", "badvalue", "badinteger"]


async def test_a_rate_limit_arrives_as_mediawikis_ratelimited_error_and_the_provider_reads_it():
    config = SimConfig(profile=profile_from_dict({"name": "limited", "search": {"http_429": 1.0}}))
    async with running_simulator(config) as sim, make_http_client(2, user_agent="test") as http:
        settings = ToolSettings(search_providers=("wikipedia",), allow_private_urls=True,
                                search_endpoints=(("wikipedia", sim.wikipedia_api_url),))
        result = await ToolBox(http, settings).web_search("Tom Hanks")
        tally = sim.stats()

    assert result.ok is False
    assert json.loads(result.text)["error"] == (
        f"web search is unavailable: Wikipedia (en) at {sim.wikipedia_api_url} answered an API error: ratelimited: "
        "You've exceeded your rate limit. Please wait some time and try again.")
    assert tally["faults"]["wikipedia_ratelimited"] == 1


async def test_aggregate_search_on_the_simulator_shows_each_page_once_with_both_providers():
    async with running_simulator() as sim, make_http_client(2, user_agent="test") as http:
        settings = ToolSettings(searxng_url=sim.searxng_url, search_providers=("searxng", "wikipedia"),
                                search_mode="aggregate", allow_private_urls=True,
                                search_endpoints=(("wikipedia", sim.wikipedia_api_url),))
        result = await ToolBox(http, settings).web_search("Tom Hanks IMDb ID")

    payload = json.loads(result.text)
    shown = [(r["url"].removeprefix(f"{sim.base_url}/web/"), _ranks(r)) for r in payload["results"]]
    # imdb: 1/61 + 1/61; tmdb: 1/62 + 1/62; bbc: 1/63 (SearXNG only). The imdb link is SearXNG's
    # spelling (rank 1 in both, SearXNG asked first); the Wikipedia-style one differs only by
    # ?wprov=srpw1, so the two are one page.
    assert shown == [
        ("www.imdb.com/name/nm0000158/", [("searxng", 1), ("wikipedia", 1)]),
        ("www.themoviedb.org/person/31-tom-hanks", [("searxng", 2), ("wikipedia", 2)]),
        ("www.bbc.co.uk/news/entertainment-arts/38003191", [("searxng", 3)]),
    ]
    assert payload["providers"] == ["searxng", "wikipedia"]


def _ranks(result: dict[str, Any]) -> list[tuple[str, int]]:
    return [(source["provider"], source["rank"]) for source in result["found_by"]]
