"""The simulator's HTTP surface: OpenRouter's API, SearXNG's search, a Wikipedia-style search API, and the pages.

One aiohttp application serves them all (with the PubMed- and SerpAPI-style
search of fanout.sim.search_apis), so a demo needs one process and one port. Handlers are thin: they read the request, ask the fault dice what goes
wrong this time, and hand the rest to the modules that know the behaviour
(investigation, verdicts, corpus) and the wire shapes (openrouter).
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from fanout.sim.claims import claim_in, extraction_reply, load_claims_world
from fanout.sim.conversation import Conversation, read_conversation, request_chars
from fanout.sim.corpus import WIKI_WEIGHTS, Hit
from fanout.sim.dice import dice
from fanout.sim.faults import RATE_KINDS, ModelFaults, retry_after_header
from fanout.sim.investigation import Reply, investigate
from fanout.sim.misbehaviour import cut_off, invalid_verdict_json, malformed_arguments, unknown_tool
from fanout.sim.models import SimModel, estimate_tokens, find_model
from fanout.sim.openrouter import (
    completion_body,
    error_body,
    error_in_200_body,
    generation_id,
    generation_record,
)
from fanout.sim.pages import render_error_page, render_page
from fanout.sim.prompt_cache import CacheUse
from fanout.sim.search_apis import EUTILS_PATH, SERPAPI_PATH, search_api_routes
from fanout.sim.state import STATE, SimState
from fanout.sim.team import invalid_brief, team_content, worker_notes
from fanout.sim.verdicts import verdict_answer
from fanout.sim import revertrisk, stream_app, wikidata_api
from fanout.sim.world_state import WORLD, WorldState

ENGINES = ("google", "duckduckgo", "brave")
WIKI_API_PATH = "/w/api.php"
WIKI_TRACKING = "?wprov=srpw1"
"""Wikipedia's search adds this to result links; the stand-in does too, so fused hits must be matched by
canonical URL, not by the exact string."""
WIKI_MAX_LIMIT = 500
WIKI_COVERAGE = 0.8
"""Share of the offline web's pages the Wikipedia-style API indexes (a fixed draw per page): two providers
over one web overlap without either holding every page the other does."""
ENGINE_TROUBLE = ("too many requests", "timeout", "CAPTCHA required", "access denied")
NOTICE = (
    "fanout sim: a stand-in for OpenRouter, SearXNG and the web, for testing and demos. "
    "Its models are simulated (seeded rules over a small bundled corpus), not language models."
)


def build_app(state: SimState) -> web.Application:
    app = web.Application(client_max_size=32 * 1024 * 1024)
    app[STATE] = state
    app.router.add_post("/api/v1/chat/completions", chat_completions)
    app.router.add_get("/api/v1/generation", generation)
    app.router.add_get("/api/v1/key", key_info)
    app.router.add_get("/api/v1/models", models_listing)
    app.router.add_get("/search", search)
    app.router.add_post("/search", search)
    app.router.add_get(WIKI_API_PATH, wiki_search)
    app.add_routes(search_api_routes())
    app.router.add_get("/web/{address:.+}", web_page)
    app.router.add_get("/stats", stats)
    app.router.add_get("/labels", labels)
    app.router.add_get("/", index)
    add_wikidata_routes(app, state)
    return app


def add_wikidata_routes(app: web.Application, state: SimState) -> None:
    """The simulated Wikidata: its live stream (and controls), its API and EntityData, and Lift Wing's score."""
    app[WORLD] = WorldState(state.world, state.stream_control, state.profile.stream, state.stats)
    app.router.add_get("/v2/stream/{streams}", stream_app.stream)
    app.router.add_post("/sim/stream/drop", stream_app.drop)
    app.router.add_post("/sim/stream/stall", stream_app.stall_all)
    app.router.add_post("/sim/stream/advance", stream_app.advance)
    app.router.add_get(wikidata_api.API_PATH, wikidata_api.api)
    app.router.add_post(wikidata_api.API_PATH, wikidata_api.api)
    app.router.add_get(wikidata_api.ENTITY_DATA_PATH, wikidata_api.entity_data)
    app.router.add_get(wikidata_api.PREFIX + "/labels", wikidata_api.labels)
    app.router.add_post(revertrisk.PATH, revertrisk.predict)


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response(data, status=status, headers=headers, dumps=lambda d: json.dumps(d, ensure_ascii=False))


def _bearer(request: web.Request) -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def _unauthorised() -> web.Response:
    return _json(error_body(401, "No auth credentials found"), status=401)


def _key_refusal(state: SimState, request: web.Request, *, required: bool = False) -> web.Response | None:
    """A 401 for a missing token (when one is required) or for a key outside `valid_keys`.

    A refused key is echoed back in the message, the worst an endpoint can do,
    so that tests have a leaked key to catch in the client's errors and logs.
    """
    token = _bearer(request)
    if token is None:
        return _unauthorised() if required or state.require_auth or state.valid_keys is not None else None
    if state.valid_keys is not None and token not in state.valid_keys:
        state.stats.fault("key_refused")
        return _json(error_body(401, f"Invalid API key: {token} is not a valid key"), status=401)
    return None


# --- OpenRouter ------------------------------------------------------------------------------


async def chat_completions(request: web.Request) -> web.Response:
    arrived = asyncio.get_running_loop().time()
    state = request.app[STATE]
    state.stats.request("chat_completions")
    if (refusal := _key_refusal(state, request)) is not None:
        return refusal
    try:
        body = await request.json()
    except ValueError:
        return _json(error_body(400, "Invalid JSON in request body"), status=400)
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body["messages"]:
        return _json(error_body(400, "Input required: specify \"messages\""), status=400)
    model = find_model(state.models, str(body.get("model", "")))
    if model is None:
        return _json(error_body(400, f"{body.get('model')} is not a valid model ID"), status=400)
    conv = read_conversation(body)
    claim = claim_in(conv.first_user_text)
    if claim is not None:  # a claim of a sample text: its pages' stances are the labelled claim's it covers
        conv.rcid = load_claims_world().match(claim)
    faults = state.profile.for_model(model.id, model.canonical_slug)
    key = (model.id, conv.key, conv.turn, conv.phase) + ((conv.team_role,) if conv.team_role else ())
    refusal = _refusal(state, model, faults, body)
    if refusal is not None:
        return refusal
    # Counted after the refusals: a rate limit's 429 depends on the clock, and must not change what the model draws.
    attempt = state.next_attempt(*key)
    draws = dict(zip(RATE_KINDS, _draws(dice(state.seed, "fault", *key, attempt))))
    latency_s = state.latency(faults.latency, *key, attempt)
    gen_id = generation_id()
    failure = _provider_failure(state, model, faults, draws, gen_id)
    reply = _reply(state, conv, model, faults, draws, dice(state.seed, "misbehave", *key, attempt)) if failure is None else None
    await _answer_at(arrived + latency_s)
    state.stats.waited("chat_completions", latency_s)
    if draws["stall"] < faults.stall:
        state.stats.fault("stall")
        await asyncio.sleep(faults.stall_s)
    if failure is not None:
        return failure
    assert reply is not None  # drawn whenever there is no failure
    cache = state.prompt_cache.use(model.cache, (model.id, conv.key), body)
    return _bill(state, gen_id, model, conv, reply, estimate_tokens(request_chars(body)), latency_s, cache)


async def _answer_at(deadline: float) -> None:
    """Wait until `deadline` (arrival + the drawn latency): the simulator's own work on a request is part
    of its latency, as a real provider's is, so the latency /stats reports is the time clients waited and
    `make bench` does not charge the engine for the simulator's CPU."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, deadline - loop.time()))


def _rate_limit(state: SimState, model: SimModel, faults: ModelFaults) -> web.Response | None:
    """429 with Retry-After when the sliding window or the token bucket has no room; the bucket is
    asked only once the window has counted the request, which it takes back if the bucket refuses."""
    slug = model.canonical_slug
    wait_s = state.limiter.admit(slug, faults.rpm, faults.rate_window_s)
    limit = f"{faults.rpm} requests per {faults.rate_window_s:g} s"
    if wait_s is None:
        wait_s = state.bucket.admit(slug, faults)
        limit = f"{faults.bucket_rpm or 0:g} requests a minute, {faults.bucket_burst} at once"
        if wait_s is not None and faults.rpm is not None:
            state.limiter.forget_last(slug)
    if faults.rpm is not None or faults.bucket_rpm is not None:
        state.stats.rate_limit_event(slug, state.clock(), admitted=wait_s is None)
    if wait_s is None:
        return None
    state.stats.fault("rate_limited")
    message = f"Rate limit exceeded: limit_rpm/{model.id}: {limit}."
    return _json(
        error_body(429, message, headers={"X-RateLimit-Remaining": "0"}),
        status=429,
        headers={"Retry-After": retry_after_header(wait_s)},
    )


def _refusal(state: SimState, model: SimModel, faults: ModelFaults, body: dict[str, Any]) -> web.Response | None:
    """Refusals that come back at once, before any model work: rate limit, unsupported options, size."""
    limited = _rate_limit(state, model, faults)
    if limited is not None:
        return limited
    if faults.response_format_unsupported and body.get("response_format"):
        state.stats.fault("response_format_unsupported")
        message = f"Provider {model.provider} does not support the response_format parameter for {model.id}"
        return _json(error_body(400, message, provider_name=model.provider), status=400)
    prompt_tokens = estimate_tokens(request_chars(body))
    if prompt_tokens > model.context_length:
        state.stats.fault("context_length_exceeded")
        message = (
            f"This endpoint's maximum context length is {model.context_length} tokens. "
            f"However, you requested about {prompt_tokens} tokens. Please reduce the length of the messages."
        )
        return _json(error_body(400, message), status=400)
    return None


def _provider_failure(
    state: SimState, model: SimModel, faults: ModelFaults, draws: dict[str, float], gen_id: str
) -> web.Response | None:
    """Failures after the wait: a gateway error status, or an error delivered inside a 200 body."""
    for kind, code, message in (
        ("http_502", 502, f"Provider returned error: {model.provider} is temporarily unreachable"),
        ("http_503", 503, "No instances available for this model right now; try again shortly"),
    ):
        if draws[kind] < getattr(faults, kind):
            state.stats.fault(kind)
            return _json(error_body(code, message, provider_name=model.provider), status=code)
    if draws["error_in_200"] < faults.error_in_200:
        state.stats.fault("error_in_200")
        return _json(error_in_200_body(gen_id, model, code=502))
    return None


def _draws(rng: random.Random) -> list[float]:
    return [rng.random() for _ in RATE_KINDS]


def _reply(
    state: SimState, conv: Conversation, model: SimModel, faults: ModelFaults, draws: dict[str, float], rng: random.Random
) -> Reply:
    """The model's answer, with at most one content fault the dice ask for, then the client's max_tokens."""
    if conv.phase == "extract":
        reply, faulty = _extraction(state, conv, model, faults, draws)
    elif conv.team_role in ("plan", "review", "aggregate"):
        reply, faulty = _team_reply(state, conv, model, faults, draws, rng)
    elif conv.phase == "investigate":
        reply, faulty = _investigation(state, conv, model, faults, draws, rng)
    else:
        reply, faulty = _verdict_reply(state, conv, model, faults, draws, rng)
    if not faulty and draws["length"] < faults.length:
        state.stats.fault("length")
        reply = cut_off(reply)
    if conv.max_tokens and estimate_tokens(_output_chars(reply)) > conv.max_tokens and reply.finish_reason != "length":
        reply = cut_off(reply, keep_chars=int(conv.max_tokens) * 4)
    return reply


def _extraction(state: SimState, conv: Conversation, model: SimModel, faults: ModelFaults,
                draws: dict[str, float]) -> tuple[Reply, bool]:
    """A text's claims as JSON; invalid JSON is the reply cut in half (as a model that stopped mid-list)."""
    reply = Reply(content=extraction_reply(load_claims_world(), conv.first_user_text, faults.habits(model),
                                           state.seed, model.id))
    if draws["invalid_json"] < faults.invalid_json:
        state.stats.fault("invalid_json")
        return Reply(content=(reply.content or "")[: len(reply.content or "") // 2]), True
    return reply, False


def _team_reply(state: SimState, conv: Conversation, model: SimModel, faults: ModelFaults, draws: dict[str, float],
                rng: random.Random) -> tuple[Reply, bool]:
    """A planner's brief (which may come back invalid) or an aggregator's summary (plain text: never invalid)."""
    reply = Reply(content=team_content(conv, model, state.corpus, state.seed))
    if conv.team_role != "aggregate" and draws["invalid_json"] < faults.invalid_json:
        state.stats.fault("invalid_json")
        return Reply(content=invalid_brief(reply.content or "{}", rng)), True
    return reply, False


def _investigation(state: SimState, conv: Conversation, model: SimModel, faults: ModelFaults, draws: dict[str, float],
                   rng: random.Random) -> tuple[Reply, bool]:
    """The next tool calls (perhaps malformed, or of an unknown tool), or a team worker's closing notes."""
    reply = investigate(conv, model, state.corpus, state.seed)
    if conv.team_role == "worker" and not reply.tool_calls:  # a team's worker closes with its notes
        reply = Reply(content=worker_notes(conv, model, state.corpus, state.seed))
    if reply.tool_calls and draws["malformed_args"] < faults.malformed_args:
        state.stats.fault("malformed_args")
        return malformed_arguments(reply, rng), True
    if reply.tool_calls and draws["unknown_tool"] < faults.unknown_tool:
        state.stats.fault("unknown_tool")
        return unknown_tool(reply, rng), True
    return reply, False


def _verdict_reply(state: SimState, conv: Conversation, model: SimModel, faults: ModelFaults, draws: dict[str, float],
                   rng: random.Random) -> tuple[Reply, bool]:
    """The verdict as JSON in the model's own format, or JSON broken the way the dice say."""
    verdict = verdict_answer(conv, faults.habits(model), state.corpus, state.seed)
    if draws["invalid_json"] < faults.invalid_json:
        state.stats.fault("invalid_json")
        return Reply(content=invalid_verdict_json(verdict, rng)), True
    return Reply(content=format_verdict(verdict, conv, model)), False


def role_of(conv: Conversation) -> str:
    """What a completion was for, for the tally: investigate or verdict, or a research team's part (a worker's with
    its round), so a test can count each part's calls."""
    if conv.team_role == "worker" and conv.brief is not None:
        return f"worker-{conv.brief.round}"
    return conv.team_role or conv.phase


def format_verdict(verdict: dict[str, Any], conv: Conversation, model: SimModel) -> str:
    """Plain JSON in JSON mode; some models fence it in markdown when not held to JSON."""
    if conv.json_mode or not model.fences_without_json_mode:
        return json.dumps(verdict, ensure_ascii=False)
    return "Here is my verdict:\n\n```json\n" + json.dumps(verdict, ensure_ascii=False, indent=2) + "\n```"


def _output_chars(reply: Reply) -> int:
    return len(reply.content or "") + sum(len(c.name) + len(c.arguments) + 8 for c in reply.tool_calls)


def _bill(
    state: SimState, gen_id: str, model: SimModel, conv: Conversation, reply: Reply, prompt_tokens: int, latency_s: float,
    cache: CacheUse = CacheUse(),
) -> web.Response:
    """Count the completion, keep its /generation record, and answer: the point where cost is incurred.

    Prompt tokens read from or written to the provider's cache are billed at its cache prices."""
    completion_tokens = estimate_tokens(_output_chars(reply))
    if reply.finish_reason == "length" and conv.max_tokens:
        completion_tokens = int(conv.max_tokens)
    cost = model.cost(prompt_tokens, completion_tokens, cache.read, cache.written)
    discount = model.cost(prompt_tokens, completion_tokens) - cost if cache != CacheUse() else None
    record = generation_record(gen_id, model, prompt_tokens, completion_tokens, cost, reply.finish_reason, latency_s,
                               cache, discount)
    state.generations[gen_id] = (state.clock(), record)
    state.stats.completion(model.canonical_slug, conv.key, prompt_tokens, completion_tokens, cost, cache)
    state.stats.role_call(conv.key, model.canonical_slug, role_of(conv))
    return _json(completion_body(gen_id, model, reply, prompt_tokens, completion_tokens, cost, cache))


async def generation(request: web.Request) -> web.Response:
    state = request.app[STATE]
    state.stats.request("generation")
    if (refusal := _key_refusal(state, request)) is not None:
        return refusal
    gen_id = request.query.get("id")
    if not gen_id:
        return _json(error_body(400, "Missing required query parameter: id"), status=400)
    stored = state.generations.get(gen_id)
    if stored is None or state.clock() - stored[0] < state.profile.generation_delay_s:
        return _json(error_body(404, f"Generation {gen_id} not found"), status=404)
    return _json({"data": stored[1]})


async def key_info(request: web.Request) -> web.Response:
    state = request.app[STATE]
    state.stats.request("key")
    if (refusal := _key_refusal(state, request, required=True)) is not None:
        return refusal
    usage = state.stats.total_cost()
    return _json(
        {
            "data": {
                "label": "fanout sim (any key is accepted)",
                "usage": usage,
                "usage_daily": usage,
                "usage_weekly": usage,
                "usage_monthly": usage,
                "limit": None,
                "limit_remaining": None,
                "limit_reset": None,
                "include_byok_in_limit": False,
                "is_free_tier": False,
                "is_provisioning_key": False,
                "rate_limit": {"requests": -1, "interval": "10s"},
            }
        }
    )


async def models_listing(request: web.Request) -> web.Response:
    state = request.app[STATE]
    state.stats.request("models")
    return _json({"data": [m.listing() for m in state.models]})


# --- SearXNG and the web ---------------------------------------------------------------------


async def search(request: web.Request) -> web.Response:
    arrived = asyncio.get_running_loop().time()
    state = request.app[STATE]
    state.stats.request("search")
    params = dict(request.query)
    if request.method == "POST":
        params.update({k: str(v) for k, v in (await request.post()).items()})
    if params.get("format") != "json":
        return web.Response(status=403, text="403 Forbidden", content_type="text/html")
    query = params.get("q", "").strip()
    # Keyed by the query alone: searches carry no conversation, and a shared attempt counter
    # would let scheduling order decide which conversation meets a fault.
    rng = dice(state.seed, "search", query)
    faults = state.profile.search
    latency_s = state.latency(faults.latency, "search", query)
    if rng.random() < faults.http_429:
        await _answer_at(arrived + latency_s)
        state.stats.waited("search", latency_s)
        state.stats.fault("search_429")
        return web.Response(status=429, text="Too Many Requests")
    base = f"{request.scheme}://{request.host}"
    results = [_search_result(hit, rank, base) for rank, hit in enumerate(state.corpus.search(query), start=1)] if query else []
    unresponsive: list[list[str]] = []
    if rng.random() < faults.unresponsive:
        state.stats.fault("search_unresponsive")
        engine = rng.choice(ENGINES)
        unresponsive.append([engine, rng.choice(ENGINE_TROUBLE)])
        results = _without_engine(results, engine)
    answer = _json(
        {
            "query": query,
            "number_of_results": len(results),
            "results": results,
            "answers": [],
            "corrections": [],
            "infoboxes": [],
            "suggestions": [],
            "unresponsive_engines": unresponsive,
        }
    )
    await _answer_at(arrived + latency_s)
    state.stats.waited("search", latency_s)
    return answer


async def wiki_search(request: web.Request) -> web.Response:
    """MediaWiki's `action=query&list=search` over the same corpus, ranked by full text (WIKI_WEIGHTS).

    Answers as the real API does: hits under query.search, errors as HTTP 200
    with {"error": {code, info}} (a rate limit is code `ratelimited`). Each hit
    also carries `fullurl` (the page on this simulator), as a mirror of
    Wikipedia serving its own copies may, since titles alone name no page here.
    """
    arrived = asyncio.get_running_loop().time()
    state = request.app[STATE]
    state.stats.request("wikipedia")
    params = request.query
    query = params.get("srsearch", "").strip()
    latency_s = state.latency(state.profile.search.latency, "wikipedia", query)
    answer = _wiki_answer(state, params, query, f"{request.scheme}://{request.host}")
    await _answer_at(arrived + latency_s)
    state.stats.waited("wikipedia", latency_s)
    return _json(answer)


def _wiki_answer(state: SimState, params: Any, query: str, base: str) -> dict[str, Any]:
    if params.get("action") != "query" or params.get("list") != "search":
        return _wiki_error("badvalue", "This stand-in answers only action=query&list=search.")
    if not query:
        return _wiki_error("missingparam", "The \"srsearch\" parameter must be set.")
    if dice(state.seed, "wikipedia", query).random() < state.profile.search.http_429:
        state.stats.fault("wikipedia_ratelimited")
        return _wiki_error("ratelimited", "You've exceeded your rate limit. Please wait some time and try again.")
    try:
        limit = min(WIKI_MAX_LIMIT, max(1, int(params.get("srlimit", "10"))))
    except ValueError:
        return _wiki_error("badinteger", f"Invalid value \"{params.get('srlimit')}\" for integer parameter \"srlimit\".")
    ranked = state.corpus.search(query, len(state.corpus.pages), WIKI_WEIGHTS)
    found = [
        {"ns": 0, "title": hit.page.title, "pageid": _page_id(hit.page.address), "snippet": hit.page.snippet(),
         "fullurl": hit.page.url(base) + WIKI_TRACKING}
        for hit in ranked if wiki_indexes(hit.page.address)
    ][:limit]
    return {"batchcomplete": "", "query": {"searchinfo": {"totalhits": len(found)}, "search": found}}


def _wiki_error(code: str, info: str) -> dict[str, Any]:
    return {"error": {"code": code, "info": info, "*": "See https://www.mediawiki.org/w/api.php for API usage."}}


@functools.lru_cache(maxsize=4096)
def wiki_indexes(address: str) -> bool:
    """Whether the Wikipedia-style API knows the page: fixed per page, whatever the seed."""
    return dice("wiki-index", address).random() < WIKI_COVERAGE


@functools.lru_cache(maxsize=4096)
def _page_id(address: str) -> int:
    return dice("pageid", address).randrange(1, 10_000_000)


def _search_result(hit: Hit, rank: int, base: str) -> dict[str, Any]:
    page = hit.page
    url = page.url(base)
    engines = list(_engines_of(page.address)) or [ENGINES[rank % 3]]
    parts = urlsplit(url)
    return {
        "url": url,
        "title": page.title,
        "content": page.snippet(),
        "engine": engines[0],
        "engines": engines,
        "positions": [rank] * len(engines),
        "score": round(hit.score / 10, 4),
        "category": "general",
        "template": "default.html",
        "parsed_url": [parts.scheme, parts.netloc, parts.path, "", parts.query, ""],
        "publishedDate": f"{page.date}T00:00:00" if page.date and page.template in ("article", "obituary") else None,
        "thumbnail": "",
        "priority": "",
    }


@functools.lru_cache(maxsize=4096)
def _engines_of(address: str) -> tuple[str, ...]:
    """Which engines list a page: fixed per page, so drawn once (three seeded draws per result was a
    tenth of the simulator's time in `make bench`)."""
    return tuple(e for i, e in enumerate(ENGINES) if dice("engines", address, i).random() < 0.6)


def _without_engine(results: list[dict[str, Any]], engine: str) -> list[dict[str, Any]]:
    kept = []
    for result in results:
        engines = [e for e in result["engines"] if e != engine]
        if engines:
            kept.append({**result, "engines": engines, "engine": engines[0], "positions": result["positions"][: len(engines)]})
    return kept


async def web_page(request: web.Request) -> web.Response:
    arrived = asyncio.get_running_loop().time()
    state = request.app[STATE]
    state.stats.request("web")
    address = request.match_info["address"]
    page = state.corpus.page_at(address)
    host = address.split("/", 1)[0]
    if page is None:
        return web.Response(status=404, text=render_error_page(404, host), content_type="text/html")
    latency_s = state.latency(state.profile.search.latency, "web", address)
    if page.status != 200:
        answer = web.Response(status=page.status, text=render_error_page(page.status, host), content_type="text/html")
    else:
        answer = web.Response(text=render_page(page, state.seed), content_type="text/html", charset="utf-8")
    await _answer_at(arrived + latency_s)
    state.stats.waited("web", latency_s)
    return answer


# --- the simulator's own pages ---------------------------------------------------------------


async def stats(request: web.Request) -> web.Response:
    state = request.app[STATE]
    state.stats.request("stats")
    return _json(state.stats.snapshot())


async def labels(request: web.Request) -> web.Response:
    state = request.app[STATE]
    state.stats.request("labels")
    return _json({"labels": state.corpus.labels()})


async def index(request: web.Request) -> web.Response:
    request.app[STATE].stats.request("index")
    base = f"{request.scheme}://{request.host}"
    return web.Response(
        text=f"{NOTICE}\n\nOpenAI-compatible API: {base}/api/v1\nSearXNG: {base}/search?q=...&format=json\n"
        f"Wikipedia-style API: {base}{WIKI_API_PATH}?action=query&list=search&srsearch=...&format=json\n"
        f"PubMed-style E-utilities: {base}{EUTILS_PATH} (esearch.fcgi, esummary.fcgi; articles at {base}/pubmed/PMID/)\n"
        f"SerpAPI-style search: {base}{SERPAPI_PATH}?engine=google&q=...&api_key=...\n"
        f"Tally: {base}/stats\nLabels: {base}/labels\n"
        f"Live stream (EventStreams): {base}/v2/stream/recentchange,mediawiki.revision-tags-change\n"
        f"Wikidata API: {base}{wikidata_api.API_PATH}\nRevert risk (Lift Wing): {base}{revertrisk.PATH}\n"
    )
