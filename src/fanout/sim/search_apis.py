"""PubMed-style (NCBI E-utilities) and SerpAPI-style search over the simulator's pages.

So a simulated run can use the `pubmed` and `serpapi` providers, with the
shapes the real services answer (tests/fixtures/pubmed and serpapi hold real
answers of each):

    GET /entrez/eutils/esearch.fcgi?db=pubmed&term=...&retmode=json&retmax=N
    GET /entrez/eutils/esummary.fcgi?db=pubmed&id=PMID,...&retmode=json
    GET /pubmed/{pmid}/              the article's page (article_url in the provider's settings)
    GET /search.json?engine=google&q=...&num=N&api_key=...

The PubMed stand-in indexes a fixed share of the pages (PUBMED_COVERAGE), each
under a PMID fixed by its address; its rate limit (the profile's search
http_429) answers 429 with NCBI's body, which quotes the key it was sent, as
NCBI's does, so the secrets test has a leak to catch. The SerpAPI stand-in
ranks all the pages its own way (SERPAPI_WEIGHTS), wants an api_key (any),
and answers Google finding nothing as SerpAPI does: a Success with `error`.
"""

from __future__ import annotations

import asyncio
import functools
import json
from xml.sax.saxutils import escape
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from fanout.sim.corpus import PUBMED_PREFIX, pubmed_id
from fanout.sim.corpus_types import Page
from fanout.sim.dice import dice, short_hash
from fanout.sim.pages import render_error_page, render_page
from fanout.sim.state import STATE, SimState

EUTILS_PATH = "/entrez/eutils/"
ARXIV_PATH = "/api/query"
"""The arXiv-style export API: an Atom feed of the preprints only it holds (Page.only == "arxiv")."""
ATOM = "http://www.w3.org/2005/Atom"
SERPAPI_PATH = "/search.json"
PUBMED_COVERAGE = 0.5
"""Share of the pages the PubMed-style API indexes (a fixed draw per page)."""
PUBMED_DEFAULT_RETMAX = 20
SERPAPI_WEIGHTS = (2.5, 1.5, 1.5, 1.0)
"""Title, keywords, body and word-pair weights of the SerpAPI stand-in's ranking (fanout.sim.corpus.search)."""
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
NO_RESULTS = "Google hasn't returned any results for this query."
web_handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def search_api_routes() -> list[web.RouteDef]:
    """The routes, each reading the simulator's state from the app (fanout.sim.state.STATE)."""

    def handler(answer: Callable[[SimState, web.Request], Awaitable[web.Response]]) -> web_handler:
        async def handle(request: web.Request) -> web.StreamResponse:
            return await answer(request.app[STATE], request)
        return handle

    return [web.get(EUTILS_PATH + "esearch.fcgi", handler(esearch)),
            web.get(EUTILS_PATH + "esummary.fcgi", handler(esummary)),
            web.get(PUBMED_PREFIX + "{pmid:[0-9]{1,12}}", handler(article)),
            web.get(PUBMED_PREFIX + "{pmid:[0-9]{1,12}}/", handler(article)),
            web.get(SERPAPI_PATH, handler(serpapi_search)),
            web.get(ARXIV_PATH, handler(arxiv_query))]


@functools.lru_cache(maxsize=4096)
def pubmed_indexes(address: str) -> bool:
    return dice("pubmed-index", address).random() < PUBMED_COVERAGE


def in_pubmed(page: Page) -> bool:
    """Whether the PubMed stand-in indexes the page: a fixed share of the web's, and the literature only it holds."""
    return page.only == "pubmed" or (page.only is None and pubmed_indexes(page.address))


async def esearch(state: SimState, request: web.Request) -> web.Response:
    state.stats.request("pubmed")
    term = request.query.get("term", "").strip()
    refused = await _pubmed_refusal(state, request, term)
    if refused is not None:
        return refused
    if not term:
        return _json({"esearchresult": {"ERROR": "Empty term and query_key - nothing todo"}})
    try:
        retmax = max(0, int(request.query.get("retmax", str(PUBMED_DEFAULT_RETMAX))))
    except ValueError:
        return _json({"esearchresult": {"ERROR": "Invalid retmax value"}})
    found = [pubmed_id(hit.page.address) for hit in state.corpus.search(term, len(state.corpus.pages), source="pubmed")
             if in_pubmed(hit.page)]
    ids = [str(pmid) for pmid in found[:retmax]]
    return _json({"header": {"type": "esearch", "version": "0.3"}, "esearchresult": {
        "count": str(len(found)), "retmax": str(len(ids)), "retstart": "0", "idlist": ids, "translationset": [],
        "querytranslation": term}})


async def esummary(state: SimState, request: web.Request) -> web.Response:
    state.stats.request("pubmed")
    asked = [uid.strip() for uid in request.query.get("id", "").split(",") if uid.strip()]
    refused = await _pubmed_refusal(state, request, ",".join(asked))
    if refused is not None:
        return refused
    result: dict[str, Any] = {"uids": asked}
    for uid in asked:
        page = state.corpus.by_pmid.get(int(uid)) if uid.isdigit() and len(uid) <= 12 else None
        indexed = page is not None and in_pubmed(page)
        result[uid] = docsum(uid, page) if page is not None and indexed else {
            "uid": uid, "error": "cannot get document summary"}
    return _json({"header": {"type": "esummary", "version": "0.3"}, "result": result})


async def article(state: SimState, request: web.Request) -> web.Response:
    state.stats.request("pubmed_article")
    page = state.corpus.by_pmid.get(int(request.match_info["pmid"]))
    if page is None or not in_pubmed(page):
        return web.Response(status=404, text=render_error_page(404, "pubmed.ncbi.nlm.nih.gov"), content_type="text/html")
    return web.Response(text=render_page(page, state.seed), content_type="text/html", charset="utf-8")


def docsum(uid: str, page: Page) -> dict[str, Any]:
    """A page as esummary summarises an article (the fields fanout reads, and a few it does not)."""
    authors = [{"name": page.byline, "authtype": "Author", "clusterid": ""}] if page.byline else []
    return {"uid": uid, "pubdate": pubmed_date(page.date), "source": page.host,
            "authors": authors, "title": page.title, "lang": ["eng"], "pubtype": ["Journal Article"],
            "articleids": [{"idtype": "pubmed", "idtypen": 1, "value": uid}],
            "fulljournalname": page.section or page.host, "elocationid": "", "availablefromurl": "",
            "sortpubdate": (page.date or "").replace("-", "/")}


def pubmed_date(date: str | None) -> str:
    """`2001-05-11` -> `2001 May 11`, as esummary writes dates."""
    try:
        year, month, day = (int(part) for part in (date or "").split("-"))
        return f"{year} {MONTHS[month - 1]} {day}"
    except (ValueError, IndexError):
        return ""


async def _pubmed_refusal(state: SimState, request: web.Request, asked: str) -> web.Response | None:
    """NCBI's 429 (quoting the key it was sent, or the address), or an unknown database."""
    await _wait(state, "pubmed", asked)
    if request.query.get("db", "pubmed") != "pubmed":
        return _json({"error": f"Invalid db name specified: {request.query.get('db')}"}, status=400)
    if dice(state.seed, "pubmed", asked).random() < state.profile.search.http_429:
        state.stats.fault("pubmed_429")
        keyed = "api_key" in request.query
        who = request.query["api_key"] if keyed else (request.remote or "127.0.0.1")
        return _json({"error": "API rate limit exceeded", "api-key": who, "count": "11" if keyed else "4",
                      "limit": "10" if keyed else "3"}, status=429)
    return None


async def serpapi_search(state: SimState, request: web.Request) -> web.Response:
    state.stats.request("serpapi")
    params = request.query
    query = params.get("q", "").strip()
    await _wait(state, "serpapi", query)
    refused = _serpapi_refusal(state, params, query)
    if refused is not None:
        return refused
    try:
        num = min(100, max(1, int(params.get("num", "10"))))
    except ValueError:
        return _json({"error": "Invalid `num` parameter."}, status=400)
    base = f"{request.scheme}://{request.host}"
    found = [serp_result(rank, hit.page, base) for rank, hit in
             enumerate(state.corpus.search(query, num, SERPAPI_WEIGHTS), start=1)]
    answer: dict[str, Any] = {
        "search_metadata": {"id": short_hash(query, 24), "status": "Success", "total_time_taken": 0.5},
        "search_parameters": {"engine": "google", "q": query, "google_domain": "google.com", "num": str(num)},
        "search_information": {"query_displayed": query,
                               "organic_results_state": "Results for exact spelling" if found else "Fully empty"}}
    if found:
        answer["organic_results"] = found
    else:
        answer["error"] = NO_RESULTS
    return _json(answer)


def _serpapi_refusal(state: SimState, params: Any, query: str) -> web.Response | None:
    if not params.get("api_key"):
        return _json({"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"},
                     status=401)
    if params.get("engine", "google") != "google":
        return _json({"error": f"Unsupported `{params.get('engine')}` search engine."}, status=400)
    if not query:
        return _json({"error": "Missing query `q` parameter."}, status=400)
    if dice(state.seed, "serpapi", query).random() < state.profile.search.http_429:
        state.stats.fault("serpapi_429")
        return _json({"error": "Your searches per hour limit has been reached."}, status=429)
    return None


def serp_result(position: int, page: Page, base: str) -> dict[str, Any]:
    url = page.url(base)
    return {"position": position, "title": page.title, "link": url,
            "displayed_link": " › ".join(page.address.split("/")[:3]), "snippet": page.snippet(),
            **({"date": page.date} if page.date and page.template in ("article", "obituary") else {})}


async def _wait(state: SimState, endpoint: str, asked: str) -> None:
    """The profile's search latency, as the SearXNG stand-in waits it."""
    latency_s = state.latency(state.profile.search.latency, endpoint, asked)
    await asyncio.sleep(latency_s)
    state.stats.waited(endpoint, latency_s)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=lambda d: json.dumps(d, ensure_ascii=False))


async def arxiv_query(state: SimState, request: web.Request) -> web.Response:
    """`search_query=all:w1 AND all:w2&max_results=N` as arXiv's export API answers it: an Atom feed."""
    state.stats.request("arxiv")
    asked = request.query.get("search_query", "")
    await _wait(state, "arxiv", asked)
    terms = " ".join(part.split(":", 1)[-1] for part in asked.replace(" AND ", " ").split())
    try:
        limit = min(50, max(0, int(request.query.get("max_results", "10"))))
    except ValueError:
        return web.Response(status=400, text=_feed([_error_entry("max_results must be an integer")]),
                            content_type="application/atom+xml")
    base = f"{request.scheme}://{request.host}"
    entries = [_entry(hit.page, base) for hit in state.corpus.search(terms, limit, source="arxiv")] if terms else []
    return web.Response(text=_feed(entries), content_type="application/atom+xml", charset="utf-8")


def _entry(page: Page, base: str) -> str:
    url = page.url(base)
    summary = " ".join(page.body)
    return (f"<entry><id>http://arxiv.org/abs/{escape(page.address.rsplit('/', 1)[-1])}</id>"
            f"<title>{escape(page.title)}</title><summary>{escape(summary)}</summary>"
            f"<published>{escape(page.date or '2017-06-12')}T00:00:00Z</published>"
            f"<author><name>{escape(page.byline or 'Anonymous')}</name></author>"
            f'<link rel="alternate" type="text/html" href="{escape(url)}"/></entry>')


def _error_entry(message: str) -> str:
    return (f"<entry><id>http://arxiv.org/api/errors#{escape(message)}</id><title>Error</title>"
            f"<summary>{escape(message)}</summary></entry>")


def _feed(entries: list[str]) -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="{ATOM}"><title>arXiv Query</title>'
            + "".join(entries) + "</feed>")
