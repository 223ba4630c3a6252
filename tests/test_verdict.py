"""The two-phase verdict against a scripted chat server on 127.0.0.1 (AC2.1-AC2.6 and the edge cases)."""

from __future__ import annotations

import json
import logging

import anyio
import httpx
import pytest
import yaml

from chat_server import ChatServer, LoopbackWeb, Reply, completion, error_reply, tool_call
from fanout.config import ModelSpec, ToolSettings, package_data
from fanout.edit_context import build_edit_context
from fanout.llm import ChatClient
from fanout.prompt import REPAIR_REQUEST, VERDICT_REQUEST, Prompt, load_prompt
from fanout.snapshot import load_snapshot
from fanout.tools import TOOL_SCHEMAS, ToolBox, ToolResult
from fanout.verdict import TRIM_MARKER, parse_verdict, run_verdict

MODEL = ModelSpec("test/model")
SMALL_PROMPT = Prompt("You check one Wikidata edit with web_search and web_fetch.", "0" * 64)
GOOD_VERDICT = {
    "verdict": "incorrect",
    "rationale": "The BBC obituary gives 11 March 1952, not 1852.",
    "sources": [{"url": "https://www.bbc.co.uk/news/adams", "supports_claim": False, "provenance": "reported"}],
}
"""Most scripts here never fetch the BBC page, so the source is `reported`: a `verified` claim would be corrected."""
READ_VERDICT = {**GOOD_VERDICT, "sources": [{**GOOD_VERDICT["sources"][0], "provenance": "verified"}]}


@pytest.fixture(scope="module")
def edit() -> dict:
    """Edit 1 of the packaged sample: Douglas Adams's date of birth moved a century back."""
    return load_snapshot(package_data("sample_snapshot.yaml")).edits[0]


@pytest.fixture
async def http():
    async with httpx.AsyncClient() as client:
        yield client


class StubTools:
    """A stand-in with ToolBox's `dispatch`, for unit tests of the loop (not of the tools)."""

    def __init__(self, answers: dict[str, ToolResult] | None = None, default: str = "page text") -> None:
        self.answers = answers or {}
        self.default = default
        self.calls: list[tuple[str, str]] = []

    async def dispatch(self, name: str, raw_arguments: str) -> ToolResult:
        self.calls.append((name, raw_arguments))
        return self.answers.get(raw_arguments, ToolResult(self.default, True))


async def noop_sleep(seconds: float) -> None:
    return None


def chat_for(server: ChatServer, http: httpx.AsyncClient, **kwargs) -> ChatClient:
    return ChatClient(base_url=server.base_url, api_key=kwargs.pop("api_key", None), http=http,
                      sleep=noop_sleep, **kwargs)


def verdict_reply(payload: dict | str = GOOD_VERDICT, **kwargs) -> Reply:
    return completion(payload if isinstance(payload, str) else json.dumps(payload), **kwargs)


async def verdict_with(script, edit, http, *, tools=None, prompt=SMALL_PROMPT, model=MODEL, **kwargs):
    async with ChatServer(script) as server:
        record = await run_verdict(edit, model, chat=chat_for(server, http), tools=tools or StubTools(),
                                   prompt=prompt, **kwargs)
    return record, server


async def test_ac2_1_a_verdict_investigates_with_tools_then_answers_in_json_without_tools(edit, http):
    prompt = load_prompt()
    script = [
        completion(None, tool_calls=[tool_call("web_search", {"query": "Douglas Adams born"})]),
        completion("The sources say 1952."),
        verdict_reply(),
    ]
    record, server = await verdict_with(script, edit, http, prompt=prompt)
    phase_a, _, phase_b = server.requests
    assert record.status == "ok"
    assert phase_a["messages"][:2] == [
        {"role": "system", "content": prompt.text},
        {"role": "user", "content": build_edit_context(edit)},
    ]
    assert phase_a["tools"] == TOOL_SCHEMAS
    assert "tools" not in phase_b
    assert phase_b["response_format"] == {"type": "json_object"}
    assert phase_b["messages"][-1] == {"role": "user", "content": VERDICT_REQUEST}
    assert record.token_usage.turns == 3


async def test_ac2_2_the_verdict_has_verdict_rationale_and_sources_matching_the_schema(edit, http):
    tools = StubTools()
    fetched = json.dumps({"url": "https://www.bbc.co.uk/news/adams/"})
    script = [
        completion(None, tool_calls=[tool_call("web_fetch", fetched)]),
        completion("Done."),
        verdict_reply("Here it is:\n```json\n" + json.dumps(READ_VERDICT) + "\n```"),
    ]
    record, _ = await verdict_with(script, edit, http, tools=tools)
    assert (record.status, record.verdict, record.rationale) == (
        "ok", "incorrect", "The BBC obituary gives 11 March 1952, not 1852.")
    assert [(s.url, s.supports_claim, s.provenance, s.fetched) for s in record.sources] == [
        ("https://www.bbc.co.uk/news/adams", False, "verified", True)]
    assert record.raw_verdict is None


async def test_ac2_3_tokens_and_cost_are_summed_over_every_chat_call(edit, http):
    script = [
        completion(None, tool_calls=[tool_call("web_search", {"query": "q"})], prompt_tokens=1000,
                   completion_tokens=50, cost=0.25),
        completion("Done.", prompt_tokens=1200, completion_tokens=30, cost=0.5),
        verdict_reply(prompt_tokens=1300, completion_tokens=80, cost=0.125),
    ]
    record, _ = await verdict_with(script, edit, http)
    usage = record.token_usage
    assert (usage.prompt_tokens, usage.completion_tokens, usage.turns) == (3500, 160, 3)
    assert record.cost_usd == 0.875
    assert record.warnings == []


async def test_ac2_3_cost_is_none_when_a_local_server_reports_none(edit, http):
    record, _ = await verdict_with([completion("Nothing to search."), verdict_reply()], edit, http)
    assert record.cost_usd is None
    assert record.token_usage.prompt_tokens == 200


async def test_ac2_3_a_partly_known_cost_is_the_known_sum_with_a_warning(edit, http):
    record, _ = await verdict_with([completion("Nothing.", cost=0.25), verdict_reply()], edit, http)
    assert record.cost_usd == 0.25
    assert record.warnings == ["cost unknown for 1 of 2 chat calls; cost_usd counts only the others"]


async def test_ac2_4_malformed_tool_arguments_go_back_to_the_model_as_an_error_string(edit, http):
    tools = ToolBox(http, ToolSettings(searxng_url="http://127.0.0.1:9"))
    script = [
        completion(None, tool_calls=[tool_call("web_search", '{"query": "Douglas Adams', "call_bad")]),
        completion("I could not search."),
        verdict_reply(),
    ]
    record, server = await verdict_with(script, edit, http, tools=tools)
    answer = server.requests[1]["messages"][-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "call_bad"
    assert answer["content"].startswith("error: the arguments for web_search are not valid JSON")
    assert record.status == "ok"
    assert [(t.tool, t.arguments, t.ok) for t in record.tool_calls] == [
        ("web_search", '{"query": "Douglas Adams', False)]


async def test_ac2_5_an_unknown_tool_gets_an_error_listing_the_valid_tools(edit, http):
    tools = ToolBox(http, ToolSettings(searxng_url="http://127.0.0.1:9"))
    script = [
        completion(None, tool_calls=[tool_call("browse_web", {"url": "https://example.org"})]),
        completion("No such tool, then."),
        verdict_reply(),
    ]
    record, server = await verdict_with(script, edit, http, tools=tools)
    answer = server.requests[1]["messages"][-1]["content"]
    assert answer == "error: unknown tool 'browse_web'. Valid tools: web_search, web_fetch"
    assert record.status == "ok"
    assert record.tool_calls[0].result == answer


async def test_ac2_6_a_cut_off_investigation_is_incomplete_and_keeps_what_exists(edit, http):
    script = [
        completion(None, tool_calls=[tool_call("web_search", {"query": "q"})], cost=0.25),
        completion("The evidence so far shows", finish_reason="length", cost=0.5),
    ]
    record, server = await verdict_with(script, edit, http)
    assert record.status == "incomplete"
    assert "finish_reason=length" in record.error
    assert record.verdict is None
    assert len(record.tool_calls) == 1
    assert (record.token_usage.turns, record.cost_usd) == (2, 0.75)
    assert record.transcript[-1].content == "The evidence so far shows"
    assert len(server.requests) == 2


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


async def test_invalid_json_twice_keeps_the_raw_text_with_status_invalid_json(edit, http):
    bad = dict(GOOD_VERDICT, verdict="probably wrong")
    script = [completion("Done."), verdict_reply(bad), verdict_reply("still not JSON, sorry")]
    record, server = await verdict_with(script, edit, http)
    assert record.status == "invalid_json"
    assert record.raw_verdict == "still not JSON, sorry"
    assert record.verdict is None
    assert "verdict must be one of verified-high" in server.requests[2]["messages"][-1]["content"]
    assert len(server.requests) == 3


async def test_a_verdict_that_runs_out_of_time_is_a_timeout_record_with_its_tool_calls(edit, http):
    script = [
        completion(None, tool_calls=[tool_call("web_search", {"query": "q"})], cost=0.25),
        Reply(stall=True),
    ]
    tools = StubTools()
    record, _ = await verdict_with(script, edit, http, tools=tools, timeout_s=1.0)
    assert (record.status, record.timeout) == ("timeout", True)
    assert record.error == "no verdict within 1 s"
    assert [(t.tool, t.result) for t in record.tool_calls] == [("web_search", "page text")]
    assert (record.token_usage.turns, record.cost_usd) == (1, 0.25)


async def test_cancellation_from_outside_propagates_and_makes_no_record(edit, http):
    records = []
    async with ChatServer([Reply(stall=True)]) as server:
        async with anyio.create_task_group() as tg:
            async def verdict() -> None:
                records.append(await run_verdict(edit, MODEL, chat=chat_for(server, http), tools=StubTools(),
                                                 prompt=SMALL_PROMPT))
            tg.start_soon(verdict)
            await server.stalled.wait()
            tg.cancel_scope.cancel()
    assert records == []


async def test_a_provider_error_after_retries_is_an_error_record(edit, http):
    script = [completion(None, tool_calls=[tool_call("web_search", {"query": "q"})]),
              error_reply(402, "Insufficient credits")]
    record, _ = await verdict_with(script, edit, http)
    assert record.status == "error"
    assert record.error == "HTTP 402: Insufficient credits"
    assert len(record.tool_calls) == 1


async def test_a_model_that_never_stops_calling_tools_is_asked_for_its_verdict_after_max_turns(edit, http):
    script = [completion(None, tool_calls=[tool_call("web_search", {"query": f"q{n}"})]) for n in range(3)]
    record, server = await verdict_with([*script, verdict_reply()], edit, http, max_turns=3)
    assert record.status == "ok"
    assert len(record.tool_calls) == 3
    assert record.token_usage.turns == 4
    assert record.warnings == ["the investigation used all 3 turns; the verdict was asked for anyway"]
    assert server.requests[3]["messages"][-2]["role"] == "tool"


async def test_passing_80_percent_of_the_context_window_adds_a_warning(edit, http):
    small = ModelSpec("test/small", context_window=100_000)
    script = [completion("Done.", prompt_tokens=85_000), verdict_reply(prompt_tokens=86_000)]
    record, _ = await verdict_with(script, edit, http, model=small)
    assert record.warnings == ["prompt reached 85,000 tokens, 85% of the 100,000-token context window"]


def counting_reply(step: Reply):
    """A reply whose prompt_tokens is what the request really held (4 characters a token)."""
    def answer(body: dict) -> Reply:
        chars = sum(len(m.get("content") or "") for m in body["messages"])
        step.body["usage"]["prompt_tokens"] = chars // 4
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
    assert max(s.body["usage"]["prompt_tokens"] for s in steps) <= 4_500
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


def test_a_verdict_label_is_accepted_up_to_case_and_separators():
    parsed = parse_verdict(json.dumps({**GOOD_VERDICT, "verdict": "Verified_High"}))
    assert parsed.verdict is not None and parsed.verdict["verdict"] == "verified-high"


def test_a_source_with_a_string_for_supports_claim_is_a_schema_problem():
    bad = {**GOOD_VERDICT, "sources": [{"url": "https://x.example", "supports_claim": "yes",
                                        "provenance": "verified"}]}
    assert parse_verdict(json.dumps(bad)) == (None, "sources[0]: supports_claim must be true or false")


async def test_a_fake_key_never_reaches_the_record_its_yaml_or_the_output(edit, http, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    secret = "sk-or-v1-TESTSECRET0123456789abcdef"
    script = [completion(None, tool_calls=[tool_call("web_search", {"query": "q"})]),
              error_reply(401, f"Invalid API key {secret}")]
    async with ChatServer(script) as server:
        record = await run_verdict(edit, MODEL, chat=chat_for(server, http, api_key=secret), tools=StubTools(),
                                   prompt=SMALL_PROMPT)
    assert server.headers[0]["Authorization"] == f"Bearer {secret}"
    assert record.status == "error"
    assert record.error == "HTTP 401: Invalid API key [redacted]"
    captured = capsys.readouterr()
    for text in (json.dumps(record.to_dict()), yaml.safe_dump(record.yaml_view()), captured.out, captured.err,
                 caplog.text):
        assert secret not in text
    assert "TESTSECRET" not in caplog.text


async def test_end_to_end_a_verdict_with_real_tools_against_loopback_search_and_pages(edit, http):
    page = ("<html><head><title>Douglas Adams obituary</title></head><body><article><h1>Douglas Adams "
            "1952-2001</h1>" + "<p>Douglas Noel Adams was born in Cambridge on 11 March 1952 and died in "
            "Santa Barbara on 11 May 2001. He wrote The Hitchhiker's Guide to the Galaxy.</p>" * 5
            + "</article></body></html>")
    async with LoopbackWeb({"obituary.html": page}) as web:
        settings = ToolSettings(searxng_url=web.origin, allow_private_urls=True, per_host_delay_s=0.0)
        tools = ToolBox(http, settings)

        def fetch_first_result(body: dict) -> Reply:
            results = json.loads(body["messages"][-1]["content"])["results"]
            return completion(None, tool_calls=[tool_call("web_fetch", {"url": results[0]["url"]})])

        def cite_what_was_read(body: dict) -> Reply:
            fetch = next(c for m in body["messages"] for c in m.get("tool_calls", [])
                         if c["function"]["name"] == "web_fetch")
            url = json.loads(fetch["function"]["arguments"])["url"]
            return verdict_reply({"verdict": "incorrect", "rationale": "The obituary gives 1952.",
                                  "sources": [{"url": url, "supports_claim": False, "provenance": "verified"}]})

        script = [
            completion(None, tool_calls=[tool_call("web_search", {"query": "Douglas Adams date of birth"})]),
            fetch_first_result,
            completion("The obituary I read says 11 March 1952."),
            cite_what_was_read,
        ]
        record, server = await verdict_with(script, edit, http, tools=tools, prompt=load_prompt())
    assert web.searches == ["Douglas Adams date of birth"]
    assert web.fetches == ["obituary.html"]
    assert "born in Cambridge on 11 March 1952" in server.requests[2]["messages"][-1]["content"]
    assert record.status == "ok"
    assert record.verdict == "incorrect"
    assert [(t.tool, t.ok) for t in record.tool_calls] == [("web_search", True), ("web_fetch", True)]
    assert [(s.url, s.fetched) for s in record.sources] == [(f"{web.origin}/obituary.html", True)]
