"""The simulator speaks OpenRouter's, SearXNG's and the web's protocols well enough
for the real client code paths (openai SDK, httpx, trafilatura) to run unchanged."""

from __future__ import annotations

import asyncio
import json
import math
from typing import TYPE_CHECKING

import httpx
import pytest

from fanout.base.validate import package_data
from fanout.workloads.patrol.edit_context import build_edit_context
from fanout.base.records import PROVENANCES, VERDICTS
from fanout.sim import FaultProfile, SimConfig, running_simulator
from fanout.sim.models import SIM_MODELS
from fanout.workloads.patrol.snapshot import load_snapshot
from fanout.tools import TOOL_SCHEMAS

from parsed_yaml import package_yaml

if TYPE_CHECKING:
    from aiohttp import ClientSession
    from openai import AsyncOpenAI

SNAPSHOT = load_snapshot(package_data("sample_snapshot.yaml"))
EDITS = {edit.rcid: edit for edit in SNAPSHOT.edits}
HAIKU = "anthropic/claude-4.5-haiku-20251001"
VERDICT_REQUEST = "Give your final verdict as a JSON object with verdict, rationale and sources."


def extract_text(html: str) -> str | None:
    """trafilatura's article text; imported here, not at the top: every xdist worker collects this file,
    and only the worker that runs it needs the library (about a second of imports)."""
    import trafilatura

    return trafilatura.extract(html)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def openai_client(sim) -> AsyncOpenAI:
    from openai import AsyncOpenAI  # imported by the tests that use it: every xdist worker collects this file

    return AsyncOpenAI(base_url=sim.api_base, api_key="sk-test-not-a-key", max_retries=0)


async def run_tool(http: httpx.AsyncClient, sim, name: str, arguments: str, *, extract: bool = True) -> str:
    """What fanout's tool box would hand back: search results as JSON, a page's article text."""
    args = json.loads(arguments)
    if name == "web_search":
        data = (await http.get(f"{sim.searxng_url}/search", params={"q": args["query"], "format": "json"})).json()
        results = [{"title": r["title"], "url": r["url"], "snippet": r["content"]} for r in data["results"]]
        return json.dumps({"results": results})
    response = await http.get(args["url"])
    if response.status_code != 200:
        return f"error: HTTP {response.status_code} from {args['url']}"
    if not extract:
        return response.text[:300]
    return extract_text(response.text) or "error: nothing to extract"


async def investigate_and_judge(sim, client: AsyncOpenAI, http: httpx.AsyncClient, model: str, rcid: int):
    """A minimal two-phase loop through the openai SDK; returns (responses, messages)."""
    responses = []

    async def complete(messages, **options):
        response = await client.chat.completions.create(model=model, messages=messages, **options)
        responses.append(response)
        return response.choices[0].message.model_dump(exclude_none=True)

    messages = await two_phases(sim, http, rcid, complete, extract=True)
    return responses, messages


async def two_phases(sim, http: httpx.AsyncClient, rcid: int, complete, *, extract: bool) -> list[dict]:
    messages = [
        {"role": "system", "content": "You verify Wikidata edits with the SIFT method."},
        {"role": "user", "content": build_edit_context(EDITS[rcid])},
    ]
    for _ in range(15):
        message = await complete(messages, tools=TOOL_SCHEMAS)
        messages.append(message)
        if not message.get("tool_calls"):
            break
        for call in message["tool_calls"]:
            function = call["function"]
            text = await run_tool(http, sim, function["name"], function["arguments"], extract=extract)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    messages.append({"role": "user", "content": VERDICT_REQUEST})
    messages.append(await complete(messages, response_format={"type": "json_object"}))
    return messages


def assert_valid_verdict(text: str) -> dict:
    verdict = json.loads(text)
    assert set(verdict) == {"verdict", "confidence", "rationale", "sources"}
    assert 0 <= verdict["confidence"] <= 1
    assert verdict["verdict"] in VERDICTS
    assert isinstance(verdict["rationale"], str) and verdict["rationale"]
    for source in verdict["sources"]:
        assert set(source) == {"url", "supports_claim", "provenance"}
        assert isinstance(source["supports_claim"], bool)
        assert source["provenance"] in PROVENANCES
    return verdict


async def test_the_openai_sdk_gets_tool_calls_and_then_a_verdict_that_validates():
    async with running_simulator(SimConfig(seed=3)) as sim, httpx.AsyncClient() as http, openai_client(sim) as client:
        responses, _ = await investigate_and_judge(sim, client, http, HAIKU, 2540801101)
    first = responses[0]
    assert first.id.startswith("gen-")
    assert first.object == "chat.completion"
    assert first.model == HAIKU
    assert first.choices[0].finish_reason == "tool_calls"
    call = first.choices[0].message.tool_calls[0]
    assert call.type == "function" and call.function.name == "web_search"
    assert "Douglas Adams" in json.loads(call.function.arguments)["query"]
    assert any(c.function.name == "web_fetch" for r in responses for c in r.choices[0].message.tool_calls or [])
    final = responses[-1]
    assert final.choices[0].finish_reason == "stop"
    assert_valid_verdict(final.choices[0].message.content)


async def test_usage_reports_tokens_estimated_from_the_request_and_cost_from_the_models_price():
    async with running_simulator() as sim, openai_client(sim) as client:
        messages = [{"role": "user", "content": build_edit_context(EDITS[2540801108])}]
        response = await client.chat.completions.create(
            model="deepseek/deepseek-v3.2", messages=messages, tools=TOOL_SCHEMAS
        )
    usage = response.usage
    chars = len(messages[0]["content"]) + 16 + len(json.dumps(TOOL_SCHEMAS, ensure_ascii=False))
    assert usage.prompt_tokens == math.ceil(chars / 4)
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    expected = round((usage.prompt_tokens * 0.26 + usage.completion_tokens * 0.38) / 1e6, 12)
    assert usage.model_extra["cost"] == expected


async def test_a_model_is_found_by_its_id_or_its_canonical_slug_and_answers_with_the_slug():
    async with running_simulator() as sim, openai_client(sim) as client:
        messages = [{"role": "user", "content": "rcid: 2540801104\nqid: Q80"}]
        by_id = await client.chat.completions.create(model="anthropic/claude-haiku-4.5", messages=messages)
        by_slug = await client.chat.completions.create(model=HAIKU, messages=messages)
    assert by_id.model == by_slug.model == HAIKU


async def test_an_unknown_model_is_refused_with_openrouters_error_shape():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        response = await http.post(
            f"{sim.api_base}/chat/completions",
            json={"model": "acme/nonexistent-7b", "messages": [{"role": "user", "content": "hi"}]},
        )
    assert response.status_code == 400
    assert response.json()["error"] == {"code": 400, "message": "acme/nonexistent-7b is not a valid model ID"}


async def test_the_generation_endpoint_answers_404_until_the_delay_has_passed_then_the_cost():
    clock = FakeClock()
    config = SimConfig(clock=clock, profile=FaultProfile(generation_delay_s=1.5))
    async with running_simulator(config) as sim, httpx.AsyncClient() as http, openai_client(sim) as client:
        response = await client.chat.completions.create(
            model="allenai/olmo-3.1-32b-instruct", messages=[{"role": "user", "content": "rcid: 2540801102"}]
        )
        url = f"{sim.api_base}/generation"
        early = await http.get(url, params={"id": response.id}, headers={"Authorization": "Bearer x"})
        clock.now += 1.5
        later = await http.get(url, params={"id": response.id}, headers={"Authorization": "Bearer x"})
        unknown = await http.get(url, params={"id": "gen-0-nothing"})
    assert early.status_code == 404 and early.json()["error"]["code"] == 404
    assert later.status_code == 200
    data = later.json()["data"]
    assert data["id"] == response.id
    assert data["model"] == "allenai/olmo-3.1-32b-instruct"
    assert data["total_cost"] == response.usage.model_extra["cost"]
    assert data["tokens_prompt"] == response.usage.prompt_tokens
    assert data["tokens_completion"] == response.usage.completion_tokens
    assert data["native_tokens_prompt"] == round(response.usage.prompt_tokens * 1.07)
    assert data["native_tokens_completion"] == round(response.usage.completion_tokens * 1.07)
    assert unknown.status_code == 404


async def test_the_key_endpoint_needs_a_bearer_token_and_reports_usage():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        anonymous = await http.get(f"{sim.api_base}/key")
        with_key = await http.get(f"{sim.api_base}/key", headers={"Authorization": "Bearer sk-or-v1-test"})
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == 401
    data = with_key.json()["data"]
    assert with_key.status_code == 200
    assert data["usage"] == 0.0 and data["limit"] is None and data["is_free_tier"] is False
    assert "sk-or-v1-test" not in with_key.text


async def test_require_auth_refuses_chat_without_a_bearer_token():
    async with running_simulator(SimConfig(require_auth=True)) as sim, httpx.AsyncClient() as http:
        body = {"model": HAIKU, "messages": [{"role": "user", "content": "hi"}]}
        refused = await http.post(f"{sim.api_base}/chat/completions", json=body)
        accepted = await http.post(
            f"{sim.api_base}/chat/completions", json=body, headers={"Authorization": "Bearer k"}
        )
    assert (refused.status_code, accepted.status_code) == (401, 200)


async def test_the_models_listing_gives_ids_slugs_windows_per_token_prices_and_tool_support():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        data = (await http.get(f"{sim.api_base}/models")).json()["data"]
    listed = {m["canonical_slug"]: m for m in data}
    assert [m["id"] for m in data] == [m.id for m in SIM_MODELS]
    assert listed["nvidia/nemotron-3-nano-30b-a3b"]["pricing"]["prompt"] == "0.00000005"
    assert listed["nvidia/nemotron-3-nano-30b-a3b"]["pricing"]["completion"] == "0.0000002"
    assert listed["allenai/olmo-3.1-32b-instruct"]["pricing"]["prompt"] == "0.0000002"
    assert listed["deepseek/deepseek-v3.2"]["pricing"]["completion"] == "0.00000038"
    assert listed[HAIKU]["id"] == "anthropic/claude-haiku-4.5"
    assert listed[HAIKU]["pricing"] == {**listed[HAIKU]["pricing"], "prompt": "0.000001", "completion": "0.000005"}
    assert listed["allenai/olmo-3.1-32b-instruct"]["context_length"] == 65_536
    assert all({"tools", "tool_choice", "response_format"} <= set(m["supported_parameters"]) for m in data)


async def test_search_answers_in_searxngs_json_shape_and_finds_the_entitys_pages():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        response = await http.get(f"{sim.searxng_url}/search", params={"q": "Iceland population", "format": "json"})
    data = response.json()
    assert set(data) >= {"query", "number_of_results", "results", "answers", "suggestions", "unresponsive_engines"}
    assert data["query"] == "Iceland population"
    assert data["unresponsive_engines"] == []
    assert data["number_of_results"] == len(data["results"]) > 0
    first = data["results"][0]
    assert set(first) >= {"url", "title", "content", "engine", "engines", "score", "category", "publishedDate"}
    assert first["engine"] == first["engines"][0]
    urls = [r["url"] for r in data["results"]]
    assert f"{sim.base_url}/web/statice.is/statistics/population/inhabitants/overview/" in urls


async def test_search_without_format_json_is_refused_with_403_as_searxng_does():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        html = await http.get(f"{sim.searxng_url}/search", params={"q": "Iceland"})
        csv = await http.get(f"{sim.searxng_url}/search", params={"q": "Iceland", "format": "csv"})
    assert (html.status_code, csv.status_code) == (403, 403)


async def test_a_corpus_page_extracts_to_its_article_without_navigation_cookies_or_ads():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        url = f"{sim.base_url}/web/www.theguardian.com/news/2001/may/15/guardianobituaries.books"
        response = await http.get(url)
        missing = await http.get(f"{sim.base_url}/web/www.example.com/nothing-here")
        paywalled = await http.get(f"{sim.base_url}/web/www.ft.com/content/berners-lee-web-at-35")
    html = response.text
    for chrome in ("Accept all cookies", "Advertisement", "Most read", "All rights reserved", "primary-nav"):
        assert chrome in html
    text = extract_text(html)
    assert "Douglas Noël Adams was born in Cambridge on 11 March 1952." in text
    for chrome in ("Accept all cookies", "Advertisement", "Most read", "All rights reserved", "Sport", "Sign up"):
        assert chrome not in text
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert (missing.status_code, paywalled.status_code) == (404, 403)


async def test_models_fetch_only_urls_their_own_searches_returned():
    async with running_simulator(SimConfig(seed=11)) as sim, httpx.AsyncClient() as http, openai_client(sim) as client:
        for model in (m.canonical_slug for m in SIM_MODELS):
            _, messages = await investigate_and_judge(sim, client, http, model, 2540801109)
            returned: set[str] = set()
            for message in messages:
                if message["role"] == "tool" and message["content"].startswith("{"):
                    returned |= {r["url"] for r in json.loads(message["content"])["results"]}
                for call in message.get("tool_calls") or []:
                    if call["function"]["name"] == "web_fetch":
                        assert json.loads(call["function"]["arguments"])["url"] in returned


class AiohttpGet:
    """The two calls run_tool makes on an httpx client (`get` and the response's status_code, text and json), on an
    aiohttp session: the committees make about 9,000 loopback requests, and httpx spends about twice aiohttp's CPU
    on each (the client is not what these tests are about; the SDK tests above go through httpx)."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def get(self, url: str, params: dict[str, str] | None = None) -> httpx.Response:
        async with self.session.get(url, params=params) as response:
            return httpx.Response(response.status, content=await response.read(), headers=dict(response.headers))


async def run_committee(seed: int) -> dict[tuple[int, str], dict]:
    """Every sample edit through every simulated model (raw HTTP, for speed): (rcid, model) -> verdict JSON."""
    import aiohttp

    results = {}
    async with running_simulator(SimConfig(seed=seed)) as sim, aiohttp.ClientSession() as session:
        http = AiohttpGet(session)
        for rcid in EDITS:
            for model in (m.canonical_slug for m in SIM_MODELS):

                async def complete(messages, **options):
                    body = {"model": model, "messages": messages, **options}
                    async with session.post(f"{sim.api_base}/chat/completions", json=body) as response:
                        return (await response.json())["choices"][0]["message"]

                messages = await two_phases(sim, http, rcid, complete, extract=False)
                verdict = assert_valid_verdict(messages[-1]["content"])
                verdict["fetched"] = {
                    json.loads(c["function"]["arguments"])["url"]
                    for m in messages
                    for c in m.get("tool_calls") or []
                    if c["function"]["name"] == "web_fetch"
                }
                results[(rcid, model)] = verdict
    return results


@pytest.fixture(scope="module")
def committees():
    """Seeds 0, 1 and 2, each a committee of its own simulator: made once for the module's tests."""
    return [asyncio.run(run_committee(seed)) for seed in (0, 1, 2)]


@pytest.mark.timeout(300)  # the module's three committees are made in its set-up: 62 s at a load average of 16
async def test_the_same_seed_gives_the_same_verdicts_and_another_seed_can_differ(committees):
    first, other = committees[0], committees[1]
    again = await run_committee(0)  # a new simulator on seed 0
    strip = lambda results: {k: (v["verdict"], v["rationale"], len(v["sources"])) for k, v in results.items()}  # noqa: E731
    assert strip(first) == strip(again)
    assert strip(first) != strip(other)


TRUTH = {entry["rcid"]: entry["truth"] for entry in package_yaml("sample_truth.yaml")["truth"]}
DIRECTION = {"verified-high": "correct", "verified-low": "correct", "plausible": "correct",
             "unverifiable": "unverifiable", "suspect": "incorrect", "incorrect": "incorrect"}


def share(committees, model, predicate) -> float:
    hits = [predicate(rcid, v) for results in committees for (rcid, m), v in results.items() if m == model]
    return sum(hits) / len(hits)


def test_the_careful_model_mostly_agrees_with_the_truth(committees):
    accuracy = share(committees, "deepseek/deepseek-v3.2", lambda rcid, v: DIRECTION[v["verdict"]] == TRUTH[rcid])
    assert accuracy >= 0.75


def test_the_credulous_model_says_verified_more_often_than_the_careful_one_on_edits_that_are_not_correct(committees):
    def verified_when_not_correct(rcid, v):
        return TRUTH[rcid] != "correct" and v["verdict"].startswith("verified")

    credulous = share(committees, "nvidia/nemotron-3-nano-30b-a3b", verified_when_not_correct)
    careful = share(committees, "deepseek/deepseek-v3.2", verified_when_not_correct)
    assert credulous > careful


def test_the_sceptical_model_says_verified_high_less_often_than_the_careful_one(committees):
    def verified_high(rcid, v):
        return v["verdict"] == "verified-high"

    assert share(committees, HAIKU, verified_high) < share(committees, "deepseek/deepseek-v3.2", verified_high)


def test_the_snippet_model_sometimes_claims_to_have_read_pages_it_never_fetched(committees):
    def claims_unread(rcid, v):
        return any(s["provenance"] == "verified" and s["url"] not in v["fetched"] for s in v["sources"])

    assert share(committees, "allenai/olmo-3.1-32b-instruct", claims_unread) > 0
    for honest in ("deepseek/deepseek-v3.2", HAIKU):
        assert share(committees, honest, claims_unread) == 0


async def test_the_tally_cost_equals_the_sum_of_the_usage_costs_returned():
    costs = []
    async with running_simulator(SimConfig(seed=2)) as sim, httpx.AsyncClient() as http, openai_client(sim) as client:
        for model in (m.canonical_slug for m in SIM_MODELS):
            responses, _ = await investigate_and_judge(sim, client, http, model, 2540801110)
            costs += [(model, r.usage.model_extra["cost"]) for r in responses]
        stats = sim.stats()
        served = (await http.get(f"{sim.base_url}/stats")).json()
    assert stats["cost_usd"]["total"] == math.fsum(c for _, c in costs) > 0
    for model in {m for m, _ in costs}:
        assert stats["cost_usd"]["by_model"][model] == math.fsum(c for m, c in costs if m == model)
        assert stats["cost_usd"]["by_edit"]["2540801110"][model] == stats["cost_usd"]["by_model"][model]
    assert sum(stats["completions"].values()) == len(costs)
    assert served["cost_usd"] == stats["cost_usd"]
    assert stats["requests"]["chat_completions"] == len(costs)


async def test_labels_cover_every_sample_rcid_at_labels_and_on_the_handle():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        served = (await http.get(f"{sim.base_url}/labels")).json()
    assert served == {"labels": sim.labels()}
    assert [label["rcid"] for label in served["labels"]] == sorted(EDITS)
    assert {label["rcid"]: label["truth"] for label in served["labels"]} == TRUTH
