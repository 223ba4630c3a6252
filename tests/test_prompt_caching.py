"""Prompt caching: breakpoints in the request, cached tokens in the record, their price, the report, the simulator."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx
import yaml
from scripted_chat import LOCAL, ScriptedChat, completion, tool_call
from test_report_support import make_record, write_run

from fanout.report import build_report, render_summary
from fanout.report.first_page import render_html
from fanout.base.validate import package_data
from fanout.llm.models import ModelSpec, load_limits, model_spec
from fanout.tools.settings import ToolSettings
from fanout.base.errors import ConfigError
from fanout.llm.catalog import fill_spec
from fanout.llm.chat import ChatClient
from fanout.llm.cost import cache_savings, estimate_cost
from fanout.base.records import Usage, parse_record
from fanout.workloads.patrol.edit_context import build_edit_context
from fanout.research.messages import REPAIR_REQUEST, TOOLS_CLOSED
from fanout.workloads.patrol.prompt import VERDICT_REQUEST, load_prompt, sift_prompt
from fanout.workloads.patrol.snapshot import load_snapshot
from fanout.research.verdict import run_verdict
from fanout.sim import SIM_MODELS, SimConfig, running_simulator
from fanout.sim.cache_terms import ANTHROPIC_HAIKU_4_5, DEEPSEEK, CacheTerms
from fanout.sim.conversation import read_conversation
from fanout.sim.prompt_cache import CacheUse, PromptCache
from fanout.tools import TOOL_SCHEMAS, ToolBox, ToolResult
from fanout.tools.extract_pool import ExtractionPool
from module_pool import ON_THE_MODULE_LOOP, pool  # noqa: F401 -- pool: the module's fixture

HAIKU = "anthropic/claude-4.5-haiku-20251001"
MARK = {"cache_control": {"type": "ephemeral"}}
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "SIFT rules"},
    {"role": "user", "content": "the edit"},
    {"role": "assistant", "content": "", "tool_calls": [tool_call("web_search", {"query": "q"}, "c1")]},
    {"role": "tool", "tool_call_id": "c1", "content": "results 1"},
    {"role": "assistant", "content": "", "tool_calls": [tool_call("web_fetch", {"url": "http://x"}, "c2")]},
    {"role": "tool", "tool_call_id": "c2", "content": "page 2"},
]


def parts(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, **MARK}]


async def sent_body(model: ModelSpec, messages: list[dict[str, Any]]) -> bytes:
    """The exact bytes ChatClient sends for one call with the tools."""
    with respx.mock(assert_all_called=True) as mock:
        route = mock.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(200, json=completion("ok")))
        async with httpx.AsyncClient() as http:
            await ChatClient(base_url=LOCAL, api_key=None, http=http).complete(model, messages, tools=TOOL_SCHEMAS)
    return bytes(route.calls.last.request.content)


# --- the request ---------------------------------------------------------------------------------


async def test_an_anthropic_model_gets_breakpoints_on_the_stable_prefix_the_previous_turn_and_the_latest() -> None:
    kept = copy.deepcopy(CONVERSATION)
    body = json.loads(await sent_body(model_spec(HAIKU), CONVERSATION))
    assert body["messages"] == [
        {"role": "system", "content": parts("SIFT rules")},
        {"role": "user", "content": parts("the edit")},
        CONVERSATION[2],
        {"role": "tool", "tool_call_id": "c1", "content": parts("results 1")},  # the previous request ended here
        CONVERSATION[4],  # a reply that only calls tools has no text to mark
        {"role": "tool", "tool_call_id": "c2", "content": parts("page 2")},
    ]
    assert CONVERSATION == kept  # the verdict's conversation is not turned into parts


async def test_the_verdict_request_gets_four_breakpoints_and_none_on_a_message_itself() -> None:
    """The previous request ended at the first tool result: the reply after it is the last assistant turn."""
    longer = CONVERSATION + [{"role": "user", "content": "verdict please"}]
    body = json.loads(await sent_body(model_spec(HAIKU), longer))
    marked = [i for i, m in enumerate(body["messages"]) if isinstance(m["content"], list)]
    assert marked == [0, 1, 3, 6]
    assert not any("cache_control" in m for m in body["messages"])


async def test_other_models_and_cache_off_send_the_conversation_byte_for_byte_unchanged() -> None:
    plain = json.dumps(CONVERSATION, separators=(",", ":")).encode()
    for model in (model_spec("deepseek/deepseek-v3.2"), ModelSpec("vendor/model"), ModelSpec(HAIKU, cache="off")):
        body = await sent_body(model, CONVERSATION)
        assert b"cache_control" not in body
        assert plain in body


async def test_a_cache_setting_of_explicit_marks_a_model_that_is_not_anthropic() -> None:
    body = json.loads(await sent_body(ModelSpec("google/gemini-2.5-flash", cache="explicit"), CONVERSATION[:2]))
    assert body["messages"] == [{"role": "system", "content": parts("SIFT rules")},
                                {"role": "user", "content": parts("the edit")}]


def test_the_cache_setting_is_checked_once_in_config(tmp_path: Path) -> None:
    limits = tmp_path / "limits.yaml"
    limits.write_text(f"{HAIKU}: {{cache: off, cache_write_price: 1.25}}\n")
    assert load_limits(limits) == {HAIKU: {"cache": "off", "cache_write_price": 1.25}}
    limits.write_text(f"{HAIKU}: {{cache: sometimes}}\n")
    with pytest.raises(ConfigError, match=r"cache must be explicit, implicit or off \(got 'sometimes'\)"):
        load_limits(limits)


# --- the verdict request ------------------------------------------------------------------------

SMALL_PROMPT = sift_prompt("You check one Wikidata edit.", "0" * 64)
VERDICT = {"verdict": "incorrect", "rationale": "The BBC says 1952.",
           "sources": [{"url": "https://www.bbc.co.uk/news/adams", "supports_claim": False, "provenance": "reported"}]}
SEARCHED = completion("", tool_calls=[tool_call("web_search", {"query": "q"}, "c1")])


class NoteTools:
    """ToolBox's `dispatch`, answering every call with the same text and noting each call it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def dispatch(self, name: str, raw_arguments: str) -> ToolResult:
        self.ran.append(name)
        return ToolResult("results", True)


async def scripted_verdict(model: ModelSpec, script: list[Any]) -> tuple[Any, ScriptedChat, NoteTools]:
    edit = load_snapshot(package_data("sample_snapshot.yaml")).edits[0]
    server, tools = ScriptedChat(script), NoteTools()
    with respx.mock:
        respx.post(f"{LOCAL}/chat/completions").mock(side_effect=server)
        async with httpx.AsyncClient() as http:
            chat = ChatClient(base_url=LOCAL, api_key=None, http=http)
            record = await run_verdict(edit, model, chat=chat, tools=tools, prompt=SMALL_PROMPT)  # type: ignore[arg-type]
    return record, server, tools


def investigation_messages() -> list[dict[str, Any]]:
    edit = load_snapshot(package_data("sample_snapshot.yaml")).edits[0]
    return [{"role": "system", "content": SMALL_PROMPT.text}, {"role": "user", "content": build_edit_context(edit)},
            {"role": "assistant", "content": "", "tool_calls": [tool_call("web_search", {"query": "q"}, "c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "results"}, {"role": "assistant", "content": "Done."}]


async def test_an_anthropic_verdict_request_offers_the_investigations_tools_so_it_reads_their_cached_prefix() -> None:
    record, server, _ = await scripted_verdict(model_spec(HAIKU), [SEARCHED, completion("Done."),
                                                                  completion(json.dumps(VERDICT))])
    system, user, call, result, closing = investigation_messages()
    assert record.status == "ok" and record.warnings == []
    assert server.requests[2] == {
        "model": HAIKU,
        "messages": [{"role": "system", "content": parts(system["content"])},
                     {"role": "user", "content": parts(user["content"])}, call,
                     {"role": "tool", "tool_call_id": "c1", "content": parts("results")},  # the investigation's end
                     closing, {"role": "user", "content": parts(VERDICT_REQUEST)}],
        "tools": TOOL_SCHEMAS, "tool_choice": "auto", "response_format": {"type": "json_object"},
    }
    assert (server.requests[2]["tools"], server.requests[2]["tool_choice"]) == (
        server.requests[0]["tools"], server.requests[0]["tool_choice"])


@pytest.mark.parametrize("model", [ModelSpec("deepseek/deepseek-v3.2"), ModelSpec(HAIKU, cache="off"),
                                   ModelSpec(HAIKU, cache="implicit")], ids=lambda m: f"{m.name}-{m.cache}")
async def test_other_models_get_todays_verdict_request_with_no_tools(model: ModelSpec) -> None:
    _, server, _ = await scripted_verdict(model, [SEARCHED, completion("Done."), completion(json.dumps(VERDICT))])
    assert server.requests[2] == {
        "model": model.name,
        "messages": [*investigation_messages(), {"role": "user", "content": VERDICT_REQUEST}],
        "response_format": {"type": "json_object"},
    }


def unmarked(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**m, "content": m["content"][0]["text"]} if isinstance(m["content"], list) else m for m in messages]


def every_call_answered(messages: list[dict[str, Any]]) -> bool:
    """What strict servers check: each assistant tool call is answered by a tool message right after it."""
    for index, message in enumerate(messages):
        wanted = [c["id"] for c in message.get("tool_calls") or []]
        answers = [m.get("tool_call_id") for m in messages[index + 1:index + 1 + len(wanted)]]
        if answers != wanted:
            return False
    return True


async def test_a_tool_called_for_the_verdict_is_answered_not_run_and_the_repair_turn_asks_again() -> None:
    fetch = tool_call("web_fetch", {"url": "https://www.bbc.co.uk/news/adams"}, "v1")
    script = [completion("Done."), completion("", tool_calls=[fetch]), completion(json.dumps(VERDICT))]
    record, server, tools = await scripted_verdict(model_spec(HAIKU), script)
    assert (record.status, record.verdict, tools.ran, record.tool_calls) == ("ok", "incorrect", [], [])
    repair = unmarked(server.requests[2]["messages"])
    assert repair[-3:] == [
        {"role": "assistant", "content": "", "tool_calls": [fetch]},
        {"role": "tool", "tool_call_id": "v1", "content": TOOLS_CLOSED},
        {"role": "user", "content": REPAIR_REQUEST.format(problem="it called web_fetch instead of giving the verdict")},
    ]
    assert every_call_answered(repair) and server.requests[2]["tools"] == TOOL_SCHEMAS
    assert record.warnings == [
        "the model called a tool when asked for its verdict; the call was not run, "
        "and was answered that the investigation was closed",
        "the first verdict reply did not fit the schema; a repair turn fixed it",
    ]


# --- tokens and their price ----------------------------------------------------------------------

PRICED = ModelSpec("vendor/priced", input_price=1.0, output_price=5.0, cached_input_price=0.125, cache_write_price=1.25)


def test_estimated_cost_bills_cache_reads_and_writes_at_their_prices() -> None:
    # 1 000 uncached x $1 + 6 000 read x $0.125 + 3 000 written x $1.25 + 1 000 out x $5, per million
    assert estimate_cost(PRICED, 10_000, 1_000, 6_000, 3_000) == 0.0105
    # without cache prices, both are billed as input
    assert estimate_cost(ModelSpec("v/m", input_price=1.0, output_price=5.0), 10_000, 1_000, 6_000, 3_000) == 0.015


def test_cache_savings_are_the_full_input_price_less_what_the_cache_prices_cost() -> None:
    assert cache_savings(PRICED, 8_000, 2_000) == (10_000 * 1.0 - 8_000 * 0.125 - 2_000 * 1.25) / 1e6 == 0.0065
    assert cache_savings(PRICED, 0, 4_000) == -0.001
    assert cache_savings(ModelSpec("v/m", input_price=1.0), 8_000, 0) is None
    assert cache_savings(None, 0, 0) == 0.0


async def test_a_reply_without_a_cost_is_estimated_with_its_cached_and_written_tokens() -> None:
    answer = completion("ok", prompt_tokens=10_000, completion_tokens=1_000)
    answer["usage"]["prompt_tokens_details"] = {"cached_tokens": 6_000, "cache_write_tokens": 3_000}
    with respx.mock() as mock:
        mock.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(200, json=answer))
        async with httpx.AsyncClient() as http:
            result = await ChatClient(base_url=LOCAL, api_key=None, http=http).complete(PRICED, CONVERSATION[:2])
    assert (result.cached_tokens, result.cache_write_tokens) == (6_000, 3_000)
    assert (result.cost_usd, result.cost_source) == (0.0105, "estimated")


def test_the_listing_fills_the_cache_write_price() -> None:
    entry = {"pricing": {"prompt": "0.000001", "completion": "0.000005", "input_cache_read": "0.0000001",
                         "input_cache_write": "0.00000125"}}
    spec = fill_spec(ModelSpec("anthropic/claude-sonnet-4.5"), entry)
    assert (spec.cached_input_price, spec.cache_write_price) == pytest.approx((0.1, 1.25))


def test_records_written_before_caching_still_load_with_no_cached_tokens() -> None:
    data = make_record(1, HAIKU, "plausible").to_dict()
    data["token_usage"] = {"prompt_tokens": 1000, "completion_tokens": 100, "turns": 3}
    record = parse_record(json.dumps(data).encode())
    assert record is not None
    assert record.token_usage == Usage(1000, 100, 3, cached_tokens=0, cache_write_tokens=0)


# --- a verdict against the simulator -------------------------------------------------------------


def haiku_with_minimum(tokens: int) -> tuple[Any, ...]:
    return tuple(dataclasses.replace(m, cache=dataclasses.replace(m.cache, min_tokens=tokens))
                 if m.canonical_slug == HAIKU else m for m in SIM_MODELS)





async def verdict_through_the_simulator(pool: ExtractionPool, models: tuple[Any, ...] = SIM_MODELS
                                        ) -> tuple[Any, list[dict[str, Any]], Any]:
    edit = load_snapshot(package_data("sample_snapshot.yaml")).edits[0]
    usages: list[dict[str, Any]] = []

    async def on_response(response: httpx.Response) -> None:
        if response.request.url.path.endswith("/chat/completions"):
            await response.aread()
            usages.append(response.json()["usage"])

    async with running_simulator(SimConfig(seed=7, models=models)) as sim, \
            httpx.AsyncClient(event_hooks={"response": [on_response]}) as http:
        settings = ToolSettings(searxng_url=sim.searxng_url, allow_private_urls=True, per_host_delay_s=0.0)
        tools = ToolBox(http, settings, extractor=pool)
        chat = ChatClient(base_url=sim.api_base, api_key=None, http=http)
        record = await run_verdict(edit, model_spec(HAIKU), chat=chat, tools=tools, prompt=load_prompt())
        return record, usages, sim.stats()


@ON_THE_MODULE_LOOP
async def test_cached_and_written_tokens_are_summed_into_the_record_and_billed_by_the_simulator(pool) -> None:
    record, usages, tally = await verdict_through_the_simulator(pool, haiku_with_minimum(1024))
    read = [u["prompt_tokens_details"]["cached_tokens"] for u in usages]
    written = [u["prompt_tokens_details"]["cache_write_tokens"] for u in usages]
    prompt = [u["prompt_tokens"] for u in usages]
    assert record.status == "ok" and len(usages) == 6
    # each investigation turn reads what the one before it sent and writes its own new tail
    assert read[:5] == [0, *prompt[:4]]
    assert written[:5] == [prompt[0], *(b - a for a, b in zip(prompt, prompt[1:5]))]
    # the verdict request offers the investigation's tools: it reads all the last investigation request sent
    assert prompt == [2242, 2879, 3407, 3536, 3661, 4206]
    assert (read[5], written[5]) == (3661, 545)
    assert (record.token_usage.cached_tokens, record.token_usage.cache_write_tokens) == (sum(read), sum(written))
    assert tally["tokens"][HAIKU]["cached_tokens"] == sum(read)
    haiku = next(m for m in SIM_MODELS if m.canonical_slug == HAIKU)
    assert [u["cost"] for u in usages] == [
        haiku.cost(p, u["completion_tokens"], r, w) for p, u, r, w in zip(prompt, usages, read, written)]
    assert record.cost_usd == sum(u["cost"] for u in usages)
    assert record.cost_usd < sum(haiku.cost(p, u["completion_tokens"]) for p, u in zip(prompt, usages))


@pytest.mark.parametrize("json_mode", [True, False], ids=["json-mode", "without-json-mode"])
def test_the_simulator_reads_a_verdict_request_that_offers_tools_as_the_verdict_phase(json_mode: bool) -> None:
    """As a real model does, it answers the verdict, not with more tool calls (with or without JSON mode)."""
    body: dict[str, Any] = {"messages": [*investigation_messages(), {"role": "user", "content": VERDICT_REQUEST}],
                            "tools": TOOL_SCHEMAS, "tool_choice": "auto"}
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    assert read_conversation(body).phase == "verdict"
    investigating = {"messages": investigation_messages()[:4], "tools": TOOL_SCHEMAS, "tool_choice": "auto"}
    assert read_conversation(investigating).phase == "investigate"


@ON_THE_MODULE_LOOP
async def test_the_simulated_haiku_caches_nothing_under_its_documented_minimum(pool) -> None:
    """The investigation stays under 4 096 tokens: nothing to read; only the verdict request, past it, writes."""
    record, usages, _ = await verdict_through_the_simulator(pool)
    assert max(u["prompt_tokens"] for u in usages[:5]) < ANTHROPIC_HAIKU_4_5.min_tokens
    assert usages[5]["prompt_tokens"] == 4206
    assert (record.token_usage.cached_tokens, record.token_usage.cache_write_tokens) == (0, 4206)


# --- the simulator's cache -----------------------------------------------------------------------

EXPLICIT = CacheTerms("explicit", read_ratio=0.1, write_ratio=1.25, min_tokens=1000)


def request(*texts: str, marks: tuple[int, ...] = ()) -> dict[str, Any]:
    """A request of user messages of these texts (each is len + 16 characters, 4 to a token), marked where asked."""
    return {"messages": [{"role": "user", "content": parts(t) if i in marks else t} for i, t in enumerate(texts)]}


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_explicit_caching_reads_the_longest_prefix_written_at_an_earlier_breakpoint() -> None:
    cache = PromptCache(Clock())
    a, b, c = "a" * 3984, "b" * 3984, "c" * 3984  # 1 000 tokens each
    assert cache.use(EXPLICIT, ("m", "1"), request(a, b, marks=(1,))) == CacheUse(0, 2000)
    assert cache.use(EXPLICIT, ("m", "1"), request(a, b, c, marks=(1, 2))) == CacheUse(2000, 1000)
    assert cache.use(EXPLICIT, ("m", "1"), request(a, b, c, "d" * 3984)) == CacheUse(0, 0)  # no breakpoint: no cache
    assert cache.use(EXPLICIT, ("m", "1"), request(a, b, c, "d" * 3984, marks=(3,))) == CacheUse(3000, 1000)


def test_a_prefix_under_the_minimum_is_never_cached() -> None:
    cache = PromptCache(Clock())
    short = request("a" * 3984, marks=(0,))  # 1 000 tokens
    assert cache.use(ANTHROPIC_HAIKU_4_5, ("m", "1"), short) == CacheUse(0, 0)
    assert cache.use(ANTHROPIC_HAIKU_4_5, ("m", "1"), short) == CacheUse(0, 0)


def test_different_conversations_never_share_and_entries_expire() -> None:
    clock = Clock()
    cache = PromptCache(clock)
    body = request("a" * 3984, "b" * 3984, marks=(1,))
    cache.use(EXPLICIT, ("m", "1"), body)
    assert cache.use(EXPLICIT, ("m", "2"), body) == CacheUse(0, 2000)
    assert cache.use(EXPLICIT, ("other", "1"), body) == CacheUse(0, 2000)
    clock.now = 299.0
    assert cache.use(EXPLICIT, ("m", "1"), body) == CacheUse(2000, 0)  # read: five more minutes
    clock.now = 598.0
    assert cache.use(EXPLICIT, ("m", "1"), body) == CacheUse(2000, 0)
    clock.now = 899.0
    assert cache.use(EXPLICIT, ("m", "1"), body) == CacheUse(0, 2000)


def test_the_cache_is_bounded_in_conversations_and_in_prefixes_per_conversation() -> None:
    cache = PromptCache(Clock(), max_conversations=2, max_entries=3)
    body = request("a" * 3984, "b" * 3984, marks=(1,))
    for conversation in ("1", "2", "3"):
        cache.use(EXPLICIT, ("m", conversation), body)
    assert len(cache) == 2
    assert cache.use(EXPLICIT, ("m", "1"), body) == CacheUse(0, 2000)  # the least recently used was forgotten
    texts = [c * 3984 for c in "abcdef"]
    cache.use(DEEPSEEK, ("m", "4"), request(*texts))
    assert len(cache) == 1 + 3  # conversation 1's one prefix, and 4's last three of six


def test_implicit_caching_reads_what_an_earlier_request_sent_in_whole_units_and_writes_nothing_billed() -> None:
    cache = PromptCache(Clock())
    first = request("a" * 3984, "b" * 1000)  # 1 000 + 254 tokens
    assert cache.use(DEEPSEEK, ("m", "1"), first) == CacheUse(0, 0)
    assert cache.use(DEEPSEEK, ("m", "1"), request("a" * 3984, "b" * 1000, "c" * 100)) == CacheUse(1216, 0)


# --- the report ----------------------------------------------------------------------------------


def cached_run(tmp_path: Path) -> Path:
    records = [make_record(1, HAIKU, "plausible", prompt_tokens=10_000), make_record(2, HAIKU, "plausible"),
               make_record(1, "vendor/alpha", "plausible")]
    records[0].token_usage.cached_tokens, records[0].token_usage.cache_write_tokens = 6_000, 2_000
    records[1].token_usage.cached_tokens = 500
    manifest = {"models": [HAIKU, "vendor/alpha"], "edits": 2,
                "settings": {"models": {HAIKU: {"input_price": 2.0, "cached_input_price": 0.25}}}}
    return write_run(tmp_path / "run", records, manifest=manifest)


def test_the_report_shows_each_models_cache_hit_rate_and_savings(tmp_path: Path) -> None:
    report = build_report(cached_run(tmp_path))
    rows = {r["model"]: r for r in report.table("cost")}
    haiku = rows[HAIKU]
    assert (haiku["cached_tokens"], haiku["cache_write_tokens"], haiku["prompt_tokens"]) == (6_500, 2_000, 11_000)
    assert haiku["cache_hit_rate"] == 6_500 / 11_000
    # the run's own input and read prices ($2, $0.25); the write price from the table ($1.25)
    assert haiku["cache_saved_usd"] == (8_500 * 2.0 - 6_500 * 0.25 - 2_000 * 1.25) / 1e6 == 0.012875
    assert (rows["vendor/alpha"]["cache_hit_rate"], rows["vendor/alpha"]["cache_saved_usd"]) == (0.0, 0.0)
    assert (report.totals["cached_tokens"], report.totals["cache_saved_usd"]) == (6_500, 0.012875)
    assert report.totals["cache_hit_rate"] == 6_500 / 12_000
    summary = render_summary(report)
    assert "cache hit  cache saved" in summary and "59%      $0.0129" in summary
    html = render_html(report)
    assert "<th>cache hit</th>" in html and "<td>59%</td><td>$0.0129</td>" in html


def test_a_run_without_cached_tokens_shows_no_cache_columns(tmp_path: Path) -> None:
    report = build_report(write_run(tmp_path / "run", [make_record(1, HAIKU, "plausible")]))
    assert report.table("cost")[0]["cache_saved_usd"] == 0.0
    assert "cache hit" not in render_summary(report) and "cache hit" not in render_html(report)


def test_savings_without_prices_are_unknown_and_said_so(tmp_path: Path) -> None:
    record = make_record(1, "vendor/unpriced", "plausible")
    record.token_usage.cached_tokens = 400
    report = build_report(write_run(tmp_path / "run", [record]))
    assert report.table("cost")[0]["cache_saved_usd"] is None
    assert "Cache savings are unknown for models without input and cache prices" in render_summary(report)
    assert yaml.safe_load(yaml.safe_dump(report.table("cost")))[0]["cache_hit_rate"] == 0.4


def test_a_model_that_wrote_to_the_cache_and_never_read_shows_no_reads_not_a_negative_saving(tmp_path: Path) -> None:
    record = make_record(1, HAIKU, "plausible")
    record.token_usage.cache_write_tokens = 4_000
    manifest = {"models": [HAIKU], "edits": 1, "settings": {"models": {HAIKU: {"input_price": 1.0}}}}
    report = build_report(write_run(tmp_path / "run", [record], manifest=manifest))
    # the write premium: 4,000 tokens at $1.25 instead of $1 per M
    assert report.table("cost")[0]["cache_saved_usd"] == pytest.approx(-0.001)
    summary = render_summary(report)
    assert "no reads yet (writes cost $0.0010)" in summary and "$-0.0010" not in summary
    assert "<td>no reads yet (writes cost $0.0010)</td>" in render_html(report)
