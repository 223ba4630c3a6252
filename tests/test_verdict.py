"""The two-phase verdict (AC2.1-AC2.6 and the edge cases).

Whole verdicts run against the simulator: a seeded simulated model, the real
ToolBox over the simulator's SearXNG and pages, and the fault profile to make
a model misbehave on purpose (each fault at rate 1.0, so it fires for sure).
What crossed the wire is read back from httpx's event hooks. Exact sequences
the simulator cannot produce (a given token count, a stall right after one
tool call, a reply that needs repair once) are scripted with respx.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
import respx
import yaml

from fanout.base.validate import package_data
from fanout.llm.models import ModelSpec
from fanout.tools.settings import ToolSettings
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.edit_context import build_edit_context
from fanout.llm.chat import ChatClient
from fanout.research.messages import REPAIR_REQUEST
from fanout.workloads.patrol.prompt import VERDICT_REQUEST, load_prompt, sift_prompt
from fanout.base.records import VERDICTS, Usage, VerdictRecord
from fanout.sim import SimConfig, SimHandle, profile_from_dict, running_simulator
from fanout.sim.pages import ADS
from fanout.workloads.patrol.snapshot import load_snapshot
from fanout.tools import TOOL_SCHEMAS, ToolBox, ToolResult
from fanout.tools.extract_pool import ExtractionPool
from module_pool import ON_THE_MODULE_LOOP, pool  # noqa: F401 -- pool: the module's fixture
from fanout.research.investigation import TRIM_MARKER
from fanout.research.verdict import run_verdict
from fanout.research.verdict_phase import parse_verdict
from scripted_chat import LOCAL, STALL, ScriptedChat, completion, error_response, tool_call

MODEL = ModelSpec("test/model")
HAIKU = ModelSpec("anthropic/claude-haiku-4.5", cache="off")
"""Without cache breakpoints, so the wire shows the conversation's plain messages (test_prompt_caching pins the marked ones)."""
HAIKU_SERVED = "anthropic/claude-4.5-haiku-20251001"
NEMOTRON = ModelSpec("nvidia/nemotron-3-nano-30b-a3b")
SEED = 1
SMALL_PROMPT = sift_prompt("You check one Wikidata edit with web_search and web_fetch.", "0" * 64)
GOOD_VERDICT = {
    "verdict": "incorrect",
    "rationale": "The BBC obituary gives 11 March 1952, not 1852.",
    "sources": [{"url": "https://www.bbc.co.uk/news/adams", "supports_claim": False, "provenance": "reported"}],
}
"""Most scripts here never fetch the BBC page, so the source is `reported`: a `verified` claim would be corrected."""


@pytest.fixture(scope="module")
def edit() -> Edit:
    """Edit 1 of the packaged sample: Douglas Adams's date of birth moved a century back."""
    return load_snapshot(package_data("sample_snapshot.yaml")).edits[0]


@pytest.fixture
async def http():
    async with httpx.AsyncClient() as client:
        yield client


async def noop_sleep(seconds: float) -> None:
    return None


# --- against the simulator -------------------------------------------------------------------


@dataclass
class Wire:
    """Every chat request body and response body, in order, as httpx sent and received them."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    responses: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    sent: anyio.Event = field(default_factory=anyio.Event)
    """Set once the first chat request has gone out."""

    async def on_request(self, request: httpx.Request) -> None:
        if request.url.path.endswith("/chat/completions"):
            self.requests.append(json.loads(request.content))
            self.sent.set()

    async def on_response(self, response: httpx.Response) -> None:
        if response.request.url.path.endswith("/chat/completions"):
            await response.aread()
            self.responses.append((response.status_code, response.json()))

    def completions(self) -> list[dict[str, Any]]:
        """The bodies that were completions: not an error status, not an error inside a 200."""
        return [body for status, body in self.responses
                if status == 200 and body.get("choices") and body["choices"][0].get("finish_reason") != "error"]

    def replies(self) -> list[dict[str, Any]]:
        return [body["choices"][0]["message"] for body in self.completions()]

    def usages(self) -> list[dict[str, Any]]:
        return [body["usage"] for body in self.completions()]

    def tool_calls(self) -> list[dict[str, Any]]:
        return [call for reply in self.replies() for call in reply.get("tool_calls") or []]

    def tool_messages(self) -> list[dict[str, Any]]:
        """The tool results as the model got them back (the last request holds them all)."""
        return [m for m in self.requests[-1]["messages"] if m["role"] == "tool"]


@dataclass
class Simulated:
    sim: SimHandle
    wire: Wire
    chat: ChatClient
    tools: ToolBox

    async def verdict(self, edit: Edit, model: ModelSpec = HAIKU, *, prompt: Prompt = SMALL_PROMPT, **kwargs: Any):
        return await run_verdict(edit, model, chat=self.chat, tools=self.tools, prompt=prompt, **kwargs)





@asynccontextmanager
async def simulated(pool: ExtractionPool, faults: dict[str, Any] | None = None, *,
                    seed: int = SEED) -> AsyncIterator[Simulated]:
    """The simulator with `faults` for every model, a real ToolBox on its search and pages (read in `pool`),
    no retry waits."""
    config = SimConfig(seed=seed, profile=profile_from_dict({"defaults": faults or {}}))
    wire = Wire()
    hooks = {"request": [wire.on_request], "response": [wire.on_response]}
    async with running_simulator(config) as sim, httpx.AsyncClient(event_hooks=hooks) as http:
        settings = ToolSettings(searxng_url=sim.searxng_url, allow_private_urls=True, per_host_delay_s=0.0)
        tools = ToolBox(http, settings, extractor=pool)
        chat = ChatClient(base_url=sim.api_base, api_key=None, http=http, sleep=noop_sleep)
        yield Simulated(sim, wire, chat, tools)


def fetched_urls(record) -> set[str]:
    return {json.loads(t.arguments)["url"] for t in record.tool_calls if t.tool == "web_fetch" and t.ok}


@ON_THE_MODULE_LOOP
async def test_ac2_1_a_verdict_investigates_with_tools_then_answers_in_json_without_tools(edit, pool):
    prompt = load_prompt()
    async with simulated(pool) as run:
        record = await run.verdict(edit, prompt=prompt)
    *phase_a, phase_b = run.wire.requests
    assert record.status == "ok"
    assert all(r["messages"][:2] == [{"role": "system", "content": prompt.text},
                                     {"role": "user", "content": build_edit_context(edit)}] for r in run.wire.requests)
    assert all(r["tools"] == TOOL_SCHEMAS for r in phase_a)
    assert "tools" not in phase_b
    assert phase_b["response_format"] == {"type": "json_object"}
    assert phase_b["messages"][-1] == {"role": "user", "content": VERDICT_REQUEST}
    assert [(t.tool, t.arguments) for t in record.tool_calls] == [
        (c["function"]["name"], c["function"]["arguments"]) for c in run.wire.tool_calls()]
    assert {t.tool for t in record.tool_calls} == {"web_search", "web_fetch"}
    assert all(t.ok for t in record.tool_calls)
    assert record.token_usage.turns == len(run.wire.requests) == 6
    assert record.served_model == HAIKU_SERVED


@ON_THE_MODULE_LOOP
async def test_ac2_2_the_verdict_has_verdict_rationale_and_sources_matching_the_schema(edit, pool):
    """Nemotron's provider rejects response_format, so the verdict comes back in a markdown fence."""
    async with simulated(pool, {"response_format_unsupported": True}) as run:
        record = await run.verdict(edit, NEMOTRON)
    statuses = [status for status, _ in run.wire.responses]
    reply = run.wire.replies()[-1]["content"]
    answered = json.loads(reply.split("```json", 1)[1].split("```", 1)[0])
    assert statuses[-2:] == [400, 200]
    assert "response_format" in run.wire.requests[-2] and "response_format" not in run.wire.requests[-1]
    assert reply.startswith("Here is my verdict:")
    assert record.status == "ok"
    assert record.verdict in VERDICTS
    assert (record.verdict, record.rationale) == (answered["verdict"], answered["rationale"])
    assert [(s.url, s.supports_claim, s.provenance, s.fetched) for s in record.sources] == [
        (s["url"], s["supports_claim"], s["provenance"], s["url"] in fetched_urls(record)) for s in answered["sources"]]
    assert record.sources and all(s.fetched for s in record.sources)
    assert record.raw_verdict is None
    assert record.warnings == ["this model rejects response_format; its verdict was parsed from plain text"]


@ON_THE_MODULE_LOOP
async def test_ac2_3_tokens_and_cost_are_summed_over_every_chat_call(edit, pool):
    async with simulated(pool) as run:
        record = await run.verdict(edit)
        tally = run.sim.stats()
    usages = run.wire.usages()
    assert record.token_usage == Usage(prompt_tokens=sum(u["prompt_tokens"] for u in usages),
                                       completion_tokens=sum(u["completion_tokens"] for u in usages),
                                       turns=len(usages))
    assert record.cost_usd == sum(u["cost"] for u in usages)
    assert record.cost_usd == pytest.approx(tally["cost_usd"]["by_edit"][str(edit.rcid)][HAIKU_SERVED], rel=1e-12)
    assert record.token_usage.prompt_tokens == tally["tokens"][HAIKU_SERVED]["prompt_tokens"]
    assert record.warnings == []


async def test_ac2_3_cost_is_none_when_a_local_server_reports_none(edit, http):
    record, _ = await verdict_with([completion("Nothing to search."), verdict_reply()], edit, http)
    assert record.cost_usd is None
    assert record.token_usage.prompt_tokens == 200


async def test_ac2_3_a_partly_known_cost_is_the_known_sum_with_a_warning(edit, http):
    record, _ = await verdict_with([completion("Nothing.", cost=0.25), verdict_reply()], edit, http)
    assert record.cost_usd == 0.25
    assert record.warnings == ["cost unknown for 1 of 2 chat calls; cost_usd counts only the others"]


async def test_a_cost_left_out_is_estimated_and_the_record_says_its_cost_is_estimated(edit, http):
    priced = ModelSpec("test/priced", input_price=2.0, output_price=10.0)
    script = [completion("Nothing.", cost=0.25), verdict_reply(prompt_tokens=1000, completion_tokens=200)]
    record, _ = await verdict_with(script, edit, http, model=priced)
    assert (record.cost_usd, record.cost_source) == (0.25 + (1000 * 2.0 + 200 * 10.0) / 1e6, "estimated")
    assert record.warnings == []


async def test_costs_reported_by_every_call_make_a_reported_record_and_none_an_unknown_one(edit, http):
    reported, _ = await verdict_with([completion("Nothing.", cost=0.25), verdict_reply(cost=0.5)], edit, http)
    unpriced, _ = await verdict_with([completion("Nothing."), verdict_reply()], edit, http)
    assert (reported.cost_usd, reported.cost_source) == (0.75, "reported")
    assert (unpriced.cost_usd, unpriced.cost_source) == (None, "unknown")


@ON_THE_MODULE_LOOP
async def test_ac2_4_malformed_tool_arguments_go_back_to_the_model_as_an_error_string(edit, pool):
    async with simulated(pool, {"malformed_args": 1.0}) as run:
        record = await run.verdict(edit)
    calls, answers = run.wire.tool_calls(), run.wire.tool_messages()
    assert [a["tool_call_id"] for a in answers] == [c["id"] for c in calls]
    assert all(a["content"].startswith("error: the arguments for web_search are not valid JSON") for a in answers)
    assert record.status == "ok"
    assert [(t.tool, t.arguments, t.ok) for t in record.tool_calls] == [
        ("web_search", c["function"]["arguments"], False) for c in calls]
    assert run.sim.stats()["faults"] == {"malformed_args": len(calls)}
    assert run.sim.stats()["requests"].get("search") is None


@ON_THE_MODULE_LOOP
async def test_ac2_5_an_unknown_tool_gets_an_error_listing_the_valid_tools(edit, pool):
    async with simulated(pool, {"unknown_tool": 1.0}) as run:
        record = await run.verdict(edit)
    calls, answers = run.wire.tool_calls(), run.wire.tool_messages()
    expected = [f"error: unknown tool {c['function']['name']!r}. Valid tools: web_search, web_fetch" for c in calls]
    assert [a["content"] for a in answers] == expected
    assert record.status == "ok"
    assert [t.result for t in record.tool_calls] == expected
    assert not {c["function"]["name"] for c in calls} & {"web_search", "web_fetch"}


async def test_a_cut_off_investigation_still_gets_its_verdict_with_the_oldest_tool_output_trimmed(edit, http):
    script = [
        completion(None, tool_calls=[tool_call("web_search", {"query": "q"})], cost=0.25),
        completion("The evidence so far shows", finish_reason="length", cost=0.5),
        verdict_reply(cost=0.125),
    ]
    record, server = await verdict_with(script, edit, http)
    assert (record.status, record.verdict, record.error) == ("ok", "incorrect", None)
    assert record.investigation_cut_off is True
    assert record.warnings == [
        "an investigation reply was cut off (finish_reason=length); the verdict was asked for with what was gathered",
        "1 old tool output(s) were trimmed to fit the context window",
    ]
    assert [m["content"] for m in server.requests[2]["messages"][3:]] == [
        TRIM_MARKER, "The evidence so far shows", VERDICT_REQUEST]
    assert [t.result for t in record.tool_calls] == ["page text"]
    assert (record.token_usage.turns, record.cost_usd) == (3, 0.875)


@ON_THE_MODULE_LOOP
async def test_a_cut_off_investigation_whose_verdict_is_cut_off_too_is_incomplete(edit, pool):
    async with simulated(pool, {"length": 1.0}) as run:
        record = await run.verdict(edit)
    first, last = run.wire.responses
    assert [body["choices"][0]["finish_reason"] for _, body in (first, last)] == ["length", "length"]
    assert run.wire.requests[1]["messages"][-1] == {"role": "user", "content": VERDICT_REQUEST}
    assert (record.status, record.investigation_cut_off) == ("incomplete", True)
    assert record.error == "the verdict reply was cut off (finish_reason=length)"
    assert (record.verdict, record.tool_calls) == (None, [])
    assert (record.token_usage.turns, record.cost_usd) == (2, first[1]["usage"]["cost"] + last[1]["usage"]["cost"])


async def test_a_verdict_whose_investigation_ran_to_its_end_is_not_marked_cut_off(edit, http):
    record, _ = await verdict_with([completion("Done."), verdict_reply()], edit, http)
    assert (record.status, record.investigation_cut_off) == ("ok", False)


async def test_ac2_6_a_cut_off_verdict_reply_is_incomplete_with_the_raw_text_kept(edit, http):
    script = [completion("Done."), completion('{"verdict": "incorrect", "ratio', finish_reason="length")]
    record, _ = await verdict_with(script, edit, http)
    assert record.status == "incomplete"
    assert record.raw_verdict == '{"verdict": "incorrect", "ratio'
    assert record.verdict is None


async def test_invalid_json_gets_one_repair_turn_and_then_counts(edit, http):
    script = [completion("Done."), verdict_reply("It is clearly wrong."), verdict_reply()]
    record, server = await verdict_with(script, edit, http)
    assert record.status == "ok"
    assert record.verdict == "incorrect"
    assert record.token_usage.turns == 3
    assert server.requests[2]["messages"][-1] == {
        "role": "user", "content": REPAIR_REQUEST.format(problem="the reply contains no JSON object")}
    assert record.warnings == ["the first verdict reply did not fit the schema; a repair turn fixed it"]


@ON_THE_MODULE_LOOP
async def test_invalid_json_twice_keeps_the_raw_text_with_status_invalid_json(edit, pool):
    async with simulated(pool, {"invalid_json": 1.0}) as run:
        record = await run.verdict(edit)
    first, last = (reply["content"] for reply in run.wire.replies()[-2:])
    first_problem, last_problem = parse_verdict(first).problem, parse_verdict(last).problem
    assert first_problem is not None and last_problem is not None
    assert run.wire.requests[-1]["messages"][-1] == {"role": "user", "content": REPAIR_REQUEST.format(problem=first_problem)}
    assert record.status == "invalid_json"
    assert record.raw_verdict == last
    assert record.error == f"invalid verdict JSON after a repair turn: {last_problem}"
    assert record.verdict is None
    assert run.sim.stats()["faults"] == {"invalid_json": 2}


async def test_a_verdict_that_runs_out_of_time_is_a_timeout_record_with_its_tool_calls(edit, http):
    script = [completion(None, tool_calls=[tool_call("web_search", {"query": "q"})], cost=0.25), STALL]
    record, _ = await verdict_with(script, edit, http, tools=StubTools(), timeout_s=1.0)
    assert (record.status, record.timeout) == ("timeout", True)
    assert record.error == "no verdict within 1 s"
    assert [(t.tool, t.result) for t in record.tool_calls] == [("web_search", "page text")]
    assert (record.token_usage.turns, record.cost_usd) == (1, 0.25)
    # The second call was out when time ran out: it may be billed, so the 0.25 is only part of the cost.
    assert record.cost_source == "unknown"
    assert record.warnings == ["a chat call was cut off by the timeout; what it cost (if anything) is unknown"]


@ON_THE_MODULE_LOOP
async def test_a_simulated_model_that_stalls_past_the_timeout_gives_a_timeout_record(edit, pool):
    async with simulated(pool, {"stall": 1.0, "stall_s": 60}) as run:
        record = await run.verdict(edit, timeout_s=1.0)
        tally = run.sim.stats()
    assert (record.status, record.timeout) == ("timeout", True)
    assert record.error == "no verdict within 1 s"
    assert (record.token_usage.turns, record.cost_usd, record.tool_calls) == (0, None, [])
    assert (tally["faults"], tally["completions"]) == ({"stall": 1}, {})


@ON_THE_MODULE_LOOP
async def test_cancellation_from_outside_propagates_and_makes_no_record(edit, pool):
    records = []
    async with simulated(pool, {"stall": 1.0, "stall_s": 60}) as run:
        async with anyio.create_task_group() as tg:
            async def verdict() -> None:
                records.append(await run.verdict(edit))
            tg.start_soon(verdict)
            await run.wire.sent.wait()
            tg.cancel_scope.cancel()
        tally = run.sim.stats()
    assert records == []
    assert tally["completions"] == {}


@pytest.mark.parametrize(("fault", "error"), [
    ("http_502", "HTTP 502: Provider returned error: Anthropic is temporarily unreachable"),
    ("http_503", "HTTP 503: No instances available for this model right now; try again shortly"),
    ("error_in_200", "error in a 200 response (code 502): Upstream error from Anthropic: connection reset by peer"),
], ids=["http_502", "http_503", "error_in_200"])
@ON_THE_MODULE_LOOP
async def test_a_provider_error_after_retries_is_an_error_record(edit, fault, error, pool):
    async with simulated(pool, {fault: 1.0}) as run:
        record = await run.verdict(edit)
        tally = run.sim.stats()
    assert record.status == "error"
    assert record.error == error
    assert (record.token_usage.turns, record.cost_usd) == (0, None)
    assert tally["faults"] == {fault: 6}
    assert tally["requests"]["chat_completions"] == 6


async def test_a_refused_request_after_a_tool_call_is_an_error_record_that_keeps_the_tool_call(edit, http):
    script = [completion(None, tool_calls=[tool_call("web_search", {"query": "q"})]),
              error_response(402, "Insufficient credits")]
    record, server = await verdict_with(script, edit, http)
    assert record.status == "error"
    assert record.error == "HTTP 402: Insufficient credits"
    assert len(record.tool_calls) == 1
    assert len(server.requests) == 2


@ON_THE_MODULE_LOOP
async def test_a_model_that_never_stops_calling_tools_is_asked_for_its_verdict_after_max_turns(edit, pool):
    async with simulated(pool) as run:
        record = await run.verdict(edit, max_turns=3)
    calls_in_three_turns = [c for reply in run.wire.replies()[:3] for c in reply["tool_calls"]]
    assert record.status == "ok"
    assert [t.arguments for t in record.tool_calls] == [c["function"]["arguments"] for c in calls_in_three_turns]
    assert record.token_usage.turns == 4
    assert record.warnings == ["the investigation used all 3 turns; the verdict was asked for anyway"]
    assert run.wire.requests[3]["messages"][-2]["role"] == "tool"
    assert run.wire.requests[3]["messages"][-1] == {"role": "user", "content": VERDICT_REQUEST}


@ON_THE_MODULE_LOOP
async def test_end_to_end_a_verdict_with_real_tools_against_the_simulated_search_and_pages(edit, pool):
    async with simulated(pool) as run:
        record = await run.verdict(edit, prompt=load_prompt())
        requests = run.sim.stats()["requests"]
    answers = {m["tool_call_id"]: m["content"] for m in run.wire.tool_messages()}
    calls = [(c["function"]["name"], answers[c["id"]]) for c in run.wire.tool_calls()]
    searches = [json.loads(text) for name, text in calls if name == "web_search"]
    pages = [text for name, text in calls if name == "web_fetch"]
    assert (requests["search"], requests["web"]) == (len(searches), len(pages))
    assert all(s["results"] and "error" not in s for s in searches)
    assert pages and all("1952" in page for page in pages)
    assert not any(chrome in page for page in pages for chrome in ("<div", "Privacy policy", *ADS))
    assert record.status == "ok"
    assert [(s.url, s.fetched) for s in record.sources if s.provenance == "verified"] == [
        (url, True) for url in sorted(fetched_urls(record))]
    assert all(url.startswith(run.sim.base_url + "/web/") for url in fetched_urls(record))


# --- scripted exchanges (respx) ------------------------------------------------------------


class StubTools:
    """A stand-in with ToolBox's `dispatch`, for unit tests of the loop (not of the tools)."""

    def __init__(self, answers: dict[str, ToolResult] | None = None, default: str = "page text") -> None:
        self.answers = answers or {}
        self.default = default
        self.calls: list[tuple[str, str]] = []

    async def dispatch(self, name: str, raw_arguments: str) -> ToolResult:
        self.calls.append((name, raw_arguments))
        return self.answers.get(raw_arguments, ToolResult(self.default, True))


def verdict_reply(payload: dict | str = GOOD_VERDICT, **kwargs) -> dict:
    return completion(payload if isinstance(payload, str) else json.dumps(payload), **kwargs)


async def verdict_with(script, edit, http, *, tools=None, prompt=SMALL_PROMPT, model=MODEL, api_key=None, **kwargs):
    """run_verdict against a respx-scripted endpoint at LOCAL; returns the record and the script's log."""
    server = ScriptedChat(script)
    chat = ChatClient(base_url=LOCAL, api_key=api_key, http=http, sleep=noop_sleep)
    with respx.mock:
        respx.post(f"{LOCAL}/chat/completions").mock(side_effect=server)
        record = await run_verdict(edit, model, chat=chat, tools=tools or StubTools(), prompt=prompt, **kwargs)
    return record, server


async def test_passing_80_percent_of_the_context_window_adds_a_warning(edit, http):
    small = ModelSpec("test/small", context_window=100_000)
    script = [completion("Done.", prompt_tokens=85_000), verdict_reply(prompt_tokens=86_000)]
    record, _ = await verdict_with(script, edit, http, model=small)
    assert record.warnings == ["prompt reached 85,000 tokens, 85% of the 100,000-token context window"]


def counting_reply(step: dict):
    """A reply whose prompt_tokens is what the request really held (4 characters a token)."""
    def answer(body: dict) -> dict:
        chars = sum(len(m.get("content") or "") for m in body["messages"])
        step["usage"]["prompt_tokens"] = chars // 4
        return step
    return answer


async def test_the_oldest_tool_outputs_are_trimmed_before_a_prompt_would_overflow(edit, http):
    window = ModelSpec("test/small", context_window=5_000)
    tools = StubTools(default="x" * 8_000)  # 2,000 tokens per tool output
    searches = [completion(None, tool_calls=[tool_call("web_search", {"query": f"q{n}"})]) for n in range(4)]
    steps = [*searches, completion("Done."), verdict_reply()]
    record, server = await verdict_with([counting_reply(s) for s in steps], edit, http, tools=tools, model=window)
    contents = [[m["content"] for m in r["messages"] if m["role"] == "tool"] for r in server.requests]
    assert contents[2] == ["x" * 8_000, "x" * 8_000]
    assert contents[3] == [TRIM_MARKER, "x" * 8_000, "x" * 8_000]
    assert max(s["usage"]["prompt_tokens"] for s in steps) <= 4_500
    assert record.status == "ok"
    assert any(w.endswith("trimmed to fit the context window") for w in record.warnings)


async def test_the_record_names_the_edit_the_served_model_and_a_readable_transcript(edit, http):
    long_text = "y" * 5_000
    script = [
        completion(None, tool_calls=[tool_call("web_fetch", {"url": "https://example.org/a"})]),
        completion("Done."),
        verdict_reply(model="test/model-20260101"),
    ]
    record, _ = await verdict_with(script, edit, http, tools=StubTools(default=long_text))
    view = record.yaml_view()
    assert (view["model"], view["edit_rcid"], view["edit_revid"], view["qid"], view["property"],
            view["diff_type"]) == ("test/model", 2540801101, 2464599101, "Q42", "P569", "value_changed")
    assert record.served_model == "test/model-20260101"
    assert record.edit_timestamp == "2026-02-19T08:02:14Z"
    assert record.timestamp.endswith("Z") and len(record.timestamp) == 20
    assert record.duration_s is not None
    assert record.transcript[0].content == f"[SIFT system prompt, sha256 {'0' * 12}]"
    tool_entry = record.transcript[3]
    assert (tool_entry.role, tool_entry.content) == ("tool", "y" * 2_000 + " [... 3000 more characters]")
    assert record.transcript[2].tool_calls[0]["name"] == "web_fetch"


async def test_sources_are_marked_fetched_only_when_a_web_fetch_of_them_succeeded(edit, http):
    good = json.dumps({"url": "https://a.example/page"})
    bad = json.dumps({"url": "https://b.example/page"})
    tools = StubTools({bad: ToolResult("error: HTTP 404", False)})
    cited = {**GOOD_VERDICT, "sources": [
        {"url": "HTTPS://A.example/page/#top", "supports_claim": False, "provenance": "verified"},
        {"url": "https://b.example/page", "supports_claim": False, "provenance": "verified"},
        {"url": "https://c.example/", "supports_claim": True, "provenance": "reported"},
    ]}
    script = [completion(None, tool_calls=[tool_call("web_fetch", good), tool_call("web_fetch", bad)]),
              completion("Done."), verdict_reply(cited)]
    record, _ = await verdict_with(script, edit, http, tools=tools)
    assert [s.fetched for s in record.sources] == [True, False, False]


async def test_a_failed_fetch_shows_the_model_the_seed_s_word_and_keeps_the_detail_in_the_tool_log(edit, http):
    asked = json.dumps({"url": "https://slow.example/page"})
    tools = StubTools({asked: ToolResult("error: timeout", False, detail="https://slow.example/page did not "
                                         "answer within 15 s")})
    script = [completion(None, tool_calls=[tool_call("web_fetch", asked)]), completion("Done."), verdict_reply()]
    record, server = await verdict_with(script, edit, http, tools=tools)
    assert [m["content"] for m in server.requests[1]["messages"] if m["role"] == "tool"] == ["error: timeout"]
    assert record.transcript[3].content == "error: timeout"
    assert (record.tool_calls[0].result, record.tool_calls[0].ok) == (
        "error: timeout: https://slow.example/page did not answer within 15 s", False)


async def test_a_fake_key_never_reaches_the_record_its_yaml_or_the_output(edit, http, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    secret = "sk-or-v1-" + "TESTSECRET0123456789abcdef"  # built at run time: no key-shaped literal in git
    script = [completion(None, tool_calls=[tool_call("web_search", {"query": "q"})]),
              error_response(401, f"Invalid API key {secret}")]
    record, server = await verdict_with(script, edit, http, api_key=secret)
    assert server.headers[0]["Authorization"] == f"Bearer {secret}"
    assert record.status == "error"
    assert record.error == "HTTP 401: Invalid API key [redacted]"
    captured = capsys.readouterr()
    for text in (json.dumps(record.to_dict()), yaml.safe_dump(record.yaml_view()), captured.out, captured.err,
                 caplog.text):
        assert secret not in text
    assert "TESTSECRET" not in caplog.text


# --- parsing ---------------------------------------------------------------------------------


def test_a_verdict_label_is_accepted_up_to_case_and_separators():
    parsed = parse_verdict(json.dumps({**GOOD_VERDICT, "verdict": "Verified_High"}))
    assert parsed.verdict is not None and parsed.verdict["verdict"] == "verified-high"


def test_a_source_with_a_string_for_supports_claim_is_a_schema_problem():
    bad = {**GOOD_VERDICT, "sources": [{"url": "https://x.example", "supports_claim": "yes",
                                        "provenance": "verified"}]}
    assert parse_verdict(json.dumps(bad)) == (None, "sources[0]: supports_claim must be true or false")


def strict_server(step: dict):
    """A reply from a server that validates assistant content as a string (llama-cpp-python's does)."""
    def answer(body: dict) -> dict | httpx.Response:
        for message in body["messages"]:
            if message["role"] == "assistant" and not isinstance(message.get("content"), str):
                return error_response(500, "1 validation error: messages.2.content: Input should be a valid string")
        return step
    return answer


async def test_an_assistant_message_with_tool_calls_goes_back_with_empty_string_content(edit, http):
    script = [
        completion(None, tool_calls=[tool_call("web_search", {"query": "q"}, "call_a")]),
        strict_server(completion("Done.")),
        strict_server(verdict_reply()),
    ]
    record, server = await verdict_with(script, edit, http)
    assert record.status == "ok"
    assert server.requests[1]["messages"][2] == {
        "role": "assistant", "content": "",
        "tool_calls": [{"id": "call_a", "type": "function",
                        "function": {"name": "web_search", "arguments": '{"query": "q"}'}}],
    }


# --- the stated confidence (issue 28) ------------------------------------------------------------------


async def test_the_stated_confidence_is_kept_in_the_record_and_its_yaml_view(edit, http):
    script = [completion("Done."), verdict_reply({**GOOD_VERDICT, "confidence": 0.85})]
    record, _ = await verdict_with(script, edit, http)
    assert (record.status, record.verdict, record.confidence, record.stability) == ("ok", "incorrect", 0.85, None)
    assert record.yaml_view()["confidence"] == 0.85
    assert VerdictRecord.from_dict(record.to_dict()).confidence == 0.85


@pytest.mark.parametrize("stated", [1.5, -0.1, "high", True, 85])
async def test_a_confidence_that_is_not_a_number_from_0_to_1_gets_the_repair_turn(edit, http, stated):
    script = [completion("Done."), verdict_reply({**GOOD_VERDICT, "confidence": stated}),
              verdict_reply({**GOOD_VERDICT, "confidence": 0.7})]
    record, server = await verdict_with(script, edit, http)
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": REPAIR_REQUEST.format(
        problem=f"confidence must be a number from 0 to 1 (got {stated!r})")}
    assert (record.status, record.confidence, record.token_usage.turns) == ("ok", 0.7, 3)


async def test_a_verdict_without_a_confidence_is_kept_with_none(edit, http):
    record, _ = await verdict_with([completion("Done."), verdict_reply()], edit, http)
    assert (record.status, record.verdict, record.confidence) == ("ok", "incorrect", None)


def test_the_verdict_request_asks_for_the_confidence_in_its_example():
    assert '"confidence": 0.8' in VERDICT_REQUEST and "- confidence: the probability, from 0 to 1" in VERDICT_REQUEST


def test_a_reply_nested_past_the_parser_s_depth_is_no_json_object_not_a_recursion_error():
    for reply in ("[" * 100_000, "{" * 100_000, '{"a": ' * 100_000):
        assert parse_verdict(reply) == (None, "the reply contains no JSON object")
    parsed = parse_verdict("[" * 5000 + " then: " + json.dumps(GOOD_VERDICT))
    assert parsed.verdict is not None and parsed.verdict["verdict"] == GOOD_VERDICT["verdict"]
