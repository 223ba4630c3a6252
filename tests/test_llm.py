"""The chat client: one retry layer, error translation at the boundary, and cost capture.

Single exchanges and exact retry sequences are scripted with respx; what a
real OpenRouter-like endpoint sends back (usage.cost, tool calls, the served
model) comes from the simulator.
"""

from __future__ import annotations

import dataclasses
import json
import random
from datetime import datetime, timezone

import anyio
import httpx
import pytest
import respx

from fanout.base.validate import package_data
from fanout.llm.keys import OPENROUTER_BASE_URL
from fanout.llm.models import ModelSpec
from fanout.workloads.patrol.edit_context import build_edit_context
from fanout.base.errors import ProviderError
from fanout.llm.chat import CHAT_RETRY, ChatClient, ToolCall
from fanout.llm.limits import CAP_SPARE
from fanout.llm.reply import parse_completion
from fanout.base.retry import RetryPolicy, parse_retry_after, retry_after_from_metadata
from fanout.sim import running_simulator
from fanout.workloads.patrol.snapshot import load_snapshot
from fanout.tools import TOOL_SCHEMAS
from scripted_chat import LOCAL, completion, error_body

MODEL = ModelSpec("test/model")
HAIKU = ModelSpec("anthropic/claude-haiku-4.5")
MESSAGES = [{"role": "user", "content": "hello"}]


class Sleeps:
    """An injected sleep that only records and moves a fake clock on: retry tests wait for nothing."""

    def __init__(self) -> None:
        self.waits: list[float] = []
        self.now = 1000.0

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


def ok_body(content: str | None = "fine", **kwargs: object) -> dict:
    return completion(content, **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def attempts(n: int) -> RetryPolicy:
    return dataclasses.replace(CHAT_RETRY, max_attempts=n)


def client(http: httpx.AsyncClient, sleeps: Sleeps, base_url: str = LOCAL, **kwargs) -> ChatClient:
    return ChatClient(base_url=base_url, api_key=kwargs.pop("api_key", None), http=http, sleep=sleeps, clock=sleeps.clock,
                      **kwargs)


@respx.mock
async def test_a_429_with_retry_after_waits_that_long_then_succeeds(http, sleeps):
    route = respx.post(f"{LOCAL}/chat/completions").mock(side_effect=[
        httpx.Response(429, headers={"Retry-After": "7"}, json=error_body(429, "slow down")),
        httpx.Response(200, json=ok_body("after the wait")),
    ])
    result = await client(http, sleeps).complete(MODEL, MESSAGES)
    assert result.content == "after the wait"
    assert route.call_count == 2
    assert sleeps.waits == [7.0]


def answer_by_model(first_for: dict[str, httpx.Response]):
    """A respx side effect: the first request for a model gets its scripted answer, every other one a completion."""
    sent: list[str] = []

    def respond(request: httpx.Request) -> httpx.Response:
        model = json.loads(request.content)["model"]
        first = model not in sent
        sent.append(model)
        return first_for[model] if first and model in first_for else httpx.Response(200, json=ok_body())

    return respond, sent


@respx.mock
async def test_after_a_429_with_retry_after_the_model_waits_before_its_next_request_and_others_do_not(http, sleeps):
    respond, sent = answer_by_model(
        {MODEL.name: httpx.Response(429, headers={"Retry-After": "5"}, json=error_body(429, "slow down"))}
    )
    respx.post(f"{LOCAL}/chat/completions").mock(side_effect=respond)
    chat = client(http, sleeps, retry=attempts(1))
    with pytest.raises(ProviderError):
        await chat.complete(MODEL, MESSAGES)  # gives up at once (one attempt), but the gate is closed
    await chat.complete(HAIKU, MESSAGES)
    assert sleeps.waits == []  # another model is not held back
    sleeps.now += 2.0
    await chat.complete(MODEL, MESSAGES)
    assert sleeps.waits == [3.0]  # the 3 s left of the 5 s the provider asked for, before sending
    await chat.complete(MODEL, MESSAGES)
    assert sleeps.waits == [3.0]
    assert sent == [MODEL.name, HAIKU.name, MODEL.name, MODEL.name]


@respx.mock
async def test_a_429_without_retry_after_closes_no_gate(http, sleeps):
    respond, sent = answer_by_model({MODEL.name: httpx.Response(429, json=error_body(429, "slow down"))})
    respx.post(f"{LOCAL}/chat/completions").mock(side_effect=respond)
    chat = client(http, sleeps, retry=attempts(1))
    with pytest.raises(ProviderError):
        await chat.complete(MODEL, MESSAGES)
    await chat.complete(MODEL, MESSAGES)
    assert sleeps.waits == []
    assert sent == [MODEL.name, MODEL.name]


@respx.mock
async def test_a_retry_hint_in_openrouter_error_metadata_is_honoured(http, sleeps):
    metadata = {"provider_name": "X", "headers": {"Retry-After": "12"}}
    respx.post(f"{LOCAL}/chat/completions").mock(side_effect=[
        httpx.Response(429, json=error_body(429, "upstream rate limited", metadata=metadata)),
        httpx.Response(200, json=ok_body()),
    ])
    await client(http, sleeps).complete(MODEL, MESSAGES)
    assert sleeps.waits == [12.0]


@respx.mock
async def test_a_503_every_time_gives_up_after_max_attempts_with_a_provider_error(http, sleeps):
    route = respx.post(f"{LOCAL}/chat/completions").mock(
        return_value=httpx.Response(503, json=error_body(503, "no provider available"))
    )
    with pytest.raises(ProviderError) as caught:
        await client(http, sleeps, retry=attempts(3)).complete(MODEL, MESSAGES)
    assert caught.value.status == 503
    assert caught.value.retryable is True
    assert "no provider available" in str(caught.value)
    assert route.call_count == 3
    assert len(sleeps.waits) == 2


@respx.mock
async def test_the_total_wait_is_bounded_even_when_attempts_remain(http, sleeps):
    route = respx.post(f"{LOCAL}/chat/completions").mock(
        return_value=httpx.Response(429, headers={"Retry-After": "4"}, json=error_body(429, "slow down"))
    )
    retry = dataclasses.replace(CHAT_RETRY, max_attempts=10, max_total_wait_s=10.0)
    with pytest.raises(ProviderError):
        await client(http, sleeps, retry=retry).complete(MODEL, MESSAGES)
    assert sleeps.waits == [4.0, 4.0]
    assert route.call_count == 3


@respx.mock
async def test_a_retry_after_longer_than_the_whole_budget_gives_up_without_waiting(http, sleeps):
    route = respx.post(f"{LOCAL}/chat/completions").mock(
        return_value=httpx.Response(429, headers={"Retry-After": "3600"}, json=error_body(429, "come back later"))
    )
    with pytest.raises(ProviderError) as caught:
        await client(http, sleeps, retry=CHAT_RETRY).complete(MODEL, MESSAGES)  # 600 s of waiting at most
    assert caught.value.retry_after == 3600.0
    assert sleeps.waits == []
    assert route.call_count == 1


@pytest.mark.parametrize("status", [400, 401, 402, 403])
@respx.mock
async def test_client_errors_are_not_retried(http, sleeps, status):
    route = respx.post(f"{LOCAL}/chat/completions").mock(
        return_value=httpx.Response(status, json=error_body(status, "refused"))
    )
    with pytest.raises(ProviderError) as caught:
        await client(http, sleeps).complete(MODEL, MESSAGES)
    assert caught.value.status == status
    assert caught.value.retryable is False
    assert route.call_count == 1
    assert sleeps.waits == []


@respx.mock
async def test_an_error_body_nested_past_the_parser_s_depth_is_told_as_its_text(http, sleeps):
    nested = "[" * 5000 + "]" * 5000
    respx.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(400, text=nested))
    with pytest.raises(ProviderError) as caught:
        await client(http, sleeps).complete(MODEL, MESSAGES)
    assert (caught.value.status, str(caught.value)) == (400, f"HTTP 400: {nested}")


@respx.mock
async def test_an_error_inside_a_200_body_is_retried_like_the_status_it_carries(http, sleeps):
    in_body = ok_body(None)
    in_body["choices"][0]["finish_reason"] = "error"
    in_body["error"] = {"code": 502, "message": "provider dropped the stream"}
    route = respx.post(f"{LOCAL}/chat/completions").mock(side_effect=[
        httpx.Response(200, json=in_body),
        httpx.Response(200, json=ok_body("second time lucky")),
    ])
    result = await client(http, sleeps).complete(MODEL, MESSAGES)
    assert result.content == "second time lucky"
    assert route.call_count == 2
    assert len(sleeps.waits) == 1


@respx.mock
async def test_a_non_retryable_error_inside_a_200_body_fails_at_once(http, sleeps):
    route = respx.post(f"{LOCAL}/chat/completions").mock(
        return_value=httpx.Response(200, json=error_body(402, "insufficient credits"))
    )
    with pytest.raises(ProviderError) as caught:
        await client(http, sleeps).complete(MODEL, MESSAGES)
    assert caught.value.status == 402
    assert caught.value.retryable is False
    assert route.call_count == 1


@pytest.mark.parametrize("failure", [httpx.ConnectError("refused"), httpx.ReadTimeout("slow")])
@respx.mock
async def test_connection_errors_and_timeouts_are_retried(http, sleeps, failure):
    route = respx.post(f"{LOCAL}/chat/completions").mock(side_effect=[failure, httpx.Response(200, json=ok_body())])
    result = await client(http, sleeps).complete(MODEL, MESSAGES)
    assert result.content == "fine"
    assert route.call_count == 2


@pytest.mark.parametrize(("failure", "message"), [
    (httpx.ConnectError("refused for sk-or-v1-secret"), "cannot reach the endpoint: refused for [redacted]"),
    (httpx.ReadTimeout("slow"), "the endpoint did not answer in time"),
])
@respx.mock
async def test_a_connection_error_or_timeout_that_persists_is_a_retryable_provider_error(http, sleeps, failure, message):
    respx.post(f"{LOCAL}/chat/completions").mock(side_effect=failure)
    with pytest.raises(ProviderError) as caught:
        await client(http, sleeps, api_key="sk-or-v1-secret", retry=attempts(1)).complete(MODEL, MESSAGES)
    assert (str(caught.value), caught.value.status, caught.value.retryable) == (message, None, True)


@pytest.mark.parametrize(("answer", "message"), [
    (httpx.Response(200, text="<html>upstream hiccup</html>"), "the endpoint answered 200 with a body that is not JSON"),
    (httpx.Response(200, json=[1, 2]), "the endpoint answered 200 with JSON that is not an object"),
])
@respx.mock
async def test_a_200_body_that_cannot_be_read_is_retried_like_a_502(http, sleeps, answer, message):
    route = respx.post(f"{LOCAL}/chat/completions").mock(side_effect=[answer, answer])
    with pytest.raises(ProviderError) as caught:
        await client(http, sleeps, retry=attempts(2)).complete(MODEL, MESSAGES)
    assert (str(caught.value), caught.value.status, caught.value.retryable) == (message, 502, True)
    assert route.call_count == 2


@respx.mock
async def test_a_reply_that_does_not_fit_the_sdks_type_is_read_as_it_was_sent(http, sleeps):
    body = ok_body(None, cost=0.25)
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": [{"type": "text", "text": "Looking "}, {"type": "text", "text": "it up"}, "stray"],
        "tool_calls": [
            {"type": "function", "function": {"name": "web_search", "arguments": {"query": "Douglas Adams"}}},
            "not a tool call",
            {"id": "call_x", "type": "function", "function": {"name": "web_fetch"}},
        ],
    }
    del body["choices"][0]["finish_reason"]
    respx.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(200, json=body))
    result = await client(http, sleeps).complete(MODEL, MESSAGES)
    assert result.content == "Looking it up"
    assert result.tool_calls == [
        ToolCall("call_0", "web_search", '{"query": "Douglas Adams"}'), ToolCall("call_x", "web_fetch", "{}"),
    ]
    assert (result.finish_reason, result.cost_usd, result.prompt_tokens) == ("tool_calls", 0.25, 100)


@respx.mock
async def test_the_models_limiter_is_acquired_before_every_attempt(http, sleeps):
    chat = client(http, sleeps)

    def fail_and_close_the_gate(request: httpx.Request) -> httpx.Response:
        chat.limiter(MODEL).rate_limited(30.0)  # as another verdict's 429 would, while this attempt fails
        return httpx.Response(500, json=error_body(500, "oops"))

    respx.post(f"{LOCAL}/chat/completions").mock(side_effect=[
        fail_and_close_the_gate, httpx.Response(200, json=ok_body()),
    ])
    await chat.complete(MODEL, MESSAGES)
    backoff, gate = sleeps.waits
    assert backoff + gate == pytest.approx(30.0)  # the retry waited at the gate for what the backoff left


async def test_requests_per_minute_paces_a_models_calls_evenly_with_no_burst(http, sleeps):
    paced = ModelSpec("test/paced", requests_per_minute=1200)  # one call every 50 ms
    with respx.mock:
        respx.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(200, json=ok_body()))
        chat = client(http, sleeps)
        for _ in range(3):
            await chat.complete(paced, MESSAGES)
    interval = 0.05 / (1 - CAP_SPARE)  # 50 ms, and the spare for a request that reaches the provider early
    assert sleeps.waits == pytest.approx([interval, interval])  # the second and the third call each waited their turn
    assert chat.held_back() == {}  # the user's cap is not a learned limit


@respx.mock
async def test_a_model_that_rejects_response_format_is_asked_again_without_it_and_remembered(http, sleeps):
    route = respx.post(f"{LOCAL}/chat/completions").mock(side_effect=[
        httpx.Response(400, json=error_body(400, "response_format is not supported by this model")),
        httpx.Response(200, json=ok_body('{"a": 1}')),
        httpx.Response(200, json=ok_body('{"b": 2}')),
    ])
    chat = client(http, sleeps)
    first = await chat.complete(MODEL, MESSAGES, json_mode=True)
    second = await chat.complete(MODEL, MESSAGES, json_mode=True)
    sent = [httpx.Request.read(call.request) for call in route.calls]
    assert b"response_format" in sent[0]
    assert b"response_format" not in sent[1]
    assert b"response_format" not in sent[2]
    assert (first.json_mode_used, second.json_mode_used) == (False, False)
    assert first.content == '{"a": 1}'


async def test_ac2_3_cost_is_read_from_usage_cost_in_the_response(http, sleeps):
    async with running_simulator() as sim:
        result = await client(http, sleeps, base_url=sim.api_base).complete(HAIKU, MESSAGES)
        tally = sim.stats()
    served = result.served_model
    assert served == "anthropic/claude-4.5-haiku-20251001"
    assert (result.prompt_tokens, result.completion_tokens) == (
        tally["tokens"][served]["prompt_tokens"], tally["tokens"][served]["completion_tokens"])
    assert result.cost_usd is not None and result.cost_usd > 0
    assert result.cost_usd == tally["cost_usd"]["total"]
    assert "generation" not in tally["requests"]


@respx.mock
async def test_ac2_3_cost_falls_back_to_the_generation_endpoint_retrying_its_404(http, sleeps):
    respx.post(f"{OPENROUTER_BASE_URL}/chat/completions").mock(
        return_value=httpx.Response(200, json=ok_body(response_id="gen-abc"))
    )
    generation = respx.get(f"{OPENROUTER_BASE_URL}/generation").mock(side_effect=[
        httpx.Response(404, json=error_body(404, "not found yet")),
        httpx.Response(200, json={"data": {"id": "gen-abc", "total_cost": 0.0042,
                                           "tokens_prompt": 100, "tokens_completion": 20}}),
    ])
    chat = client(http, sleeps, base_url=OPENROUTER_BASE_URL, api_key="sk-or-v1-placeholder")
    result = await chat.complete(MODEL, MESSAGES)
    assert result.cost_usd == 0.0042
    assert generation.call_count == 2
    assert generation.calls[0].request.url.params["id"] == "gen-abc"
    assert generation.calls[0].request.headers["authorization"] == "Bearer sk-or-v1-placeholder"
    assert len(sleeps.waits) == 1


@respx.mock
async def test_openrouter_requests_ask_for_the_cost_inline(http, sleeps):
    route = respx.post(f"{OPENROUTER_BASE_URL}/chat/completions").mock(
        return_value=httpx.Response(200, json=ok_body(cost=0.001))
    )
    await client(http, sleeps, base_url=OPENROUTER_BASE_URL, api_key="k").complete(MODEL, MESSAGES)
    assert b'"usage":{"include":true}' in route.calls[0].request.read().replace(b" ", b"")


async def test_ac2_3_cost_is_none_for_a_local_server_and_no_lookup_is_made(http, sleeps):
    with respx.mock(assert_all_called=False) as mock:
        mock.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(
            200, json=ok_body("hi", prompt_tokens=10, completion_tokens=2, response_id="gen-1")))
        generation = mock.get(f"{LOCAL}/generation").mock(return_value=httpx.Response(404))
        result = await client(http, sleeps).complete(MODEL, MESSAGES)
    assert (result.cost_usd, result.cost_source) == (None, "unknown")
    assert (result.prompt_tokens, result.completion_tokens) == (10, 2)
    assert generation.call_count == 0


@respx.mock
async def test_a_generation_lookup_that_keeps_404ing_leaves_the_cost_unknown(http, sleeps):
    respx.post(f"{OPENROUTER_BASE_URL}/chat/completions").mock(return_value=httpx.Response(200, json=ok_body()))
    generation = respx.get(f"{OPENROUTER_BASE_URL}/generation").mock(return_value=httpx.Response(404))
    result = await client(http, sleeps, base_url=OPENROUTER_BASE_URL, api_key="k").complete(MODEL, MESSAGES)
    assert result.cost_usd is None
    assert generation.call_count == 5


def with_cached(body: dict, cached: int) -> dict:
    body["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    return body


@pytest.mark.parametrize(("cached_price", "expected"), [
    (0.5, (600 * 2.0 + 400 * 0.5 + 200 * 10.0) / 1e6),  # cached prompt tokens at their own price
    (None, (1000 * 2.0 + 200 * 10.0) / 1e6),  # no cached price: every prompt token at the input price
])
@respx.mock
async def test_a_cost_the_endpoint_leaves_out_is_estimated_from_tokens_and_prices(http, sleeps, cached_price, expected):
    model = ModelSpec("test/priced", input_price=2.0, output_price=10.0, cached_input_price=cached_price)
    respx.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(
        200, json=with_cached(ok_body(prompt_tokens=1000, completion_tokens=200), 400)))
    result = await client(http, sleeps).complete(model, MESSAGES)
    assert (result.cost_usd, result.cost_source, result.cached_tokens) == (expected, "estimated", 400)


@respx.mock
async def test_a_reported_cost_wins_over_the_prices(http, sleeps):
    model = ModelSpec("test/priced", input_price=2.0, output_price=10.0)
    respx.post(f"{LOCAL}/chat/completions").mock(return_value=httpx.Response(200, json=ok_body(cost=0.125)))
    result = await client(http, sleeps).complete(model, MESSAGES)
    assert (result.cost_usd, result.cost_source) == (0.125, "reported")


@respx.mock
async def test_a_watcher_hears_each_call_go_out_and_its_answer_before_the_cost_lookup(http, sleeps):
    heard: list[tuple[str, object]] = []

    class Watcher:
        def sent(self) -> None:
            heard.append(("sent", None))

        def answered(self, result) -> None:
            heard.append(("answered", (result.response_id, result.cost_usd)))

        def failed(self) -> None:
            heard.append(("failed", None))

    respx.post(f"{OPENROUTER_BASE_URL}/chat/completions").mock(side_effect=[
        httpx.Response(200, json=ok_body(response_id="gen-1")), httpx.Response(400, json=error_body(400, "bad"))])
    respx.get(f"{OPENROUTER_BASE_URL}/generation").mock(return_value=httpx.Response(
        200, json={"data": {"id": "gen-1", "total_cost": 0.0042}}))
    chat = client(http, sleeps, base_url=OPENROUTER_BASE_URL, api_key="k")
    result = await chat.complete(MODEL, MESSAGES, watcher=Watcher())
    with pytest.raises(ProviderError):
        await chat.complete(MODEL, MESSAGES, watcher=Watcher())
    assert heard == [("sent", None), ("answered", ("gen-1", None)), ("sent", None), ("failed", None)]
    assert (result.cost_usd, result.cost_source) == (0.0042, "generation")


async def test_tool_calls_from_a_real_server_arrive_as_tool_call_tuples(sleeps):
    edit = load_snapshot(package_data("sample_snapshot.yaml")).edits[0]
    messages = [{"role": "user", "content": build_edit_context(edit)}]
    sent: list[dict] = []

    async def keep(response: httpx.Response) -> None:
        await response.aread()
        sent.append(response.json())

    async with running_simulator() as sim, httpx.AsyncClient(event_hooks={"response": [keep]}) as http:
        result = await client(http, sleeps, base_url=sim.api_base).complete(HAIKU, messages, tools=TOOL_SCHEMAS)
    [wire_call] = sent[0]["choices"][0]["message"]["tool_calls"]
    assert result.finish_reason == "tool_calls"
    assert [tuple(c) for c in result.tool_calls] == [
        (wire_call["id"], "web_search", wire_call["function"]["arguments"])]
    assert wire_call["id"].startswith("toolu_vrtx_01")
    assert "Douglas Adams" in result.tool_calls[0].arguments
    assert result.served_model == "anthropic/claude-4.5-haiku-20251001"


def test_a_body_without_choices_is_a_retryable_provider_error():
    with pytest.raises(ProviderError) as caught:
        parse_completion({"id": "x", "choices": []})
    assert caught.value.retryable is True


def test_retry_after_is_read_as_seconds_or_as_an_http_date():
    now = datetime(2026, 2, 19, 12, 0, 0, tzinfo=timezone.utc)
    assert parse_retry_after("30") == 30.0
    assert parse_retry_after("Thu, 19 Feb 2026 12:00:45 GMT", now=now) == 45.0
    assert parse_retry_after("Thu, 19 Feb 2026 11:00:00 GMT", now=now) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_a_rate_limit_reset_in_epoch_milliseconds_becomes_seconds_to_wait():
    now = datetime(2026, 2, 19, 12, 0, 0, tzinfo=timezone.utc)
    reset_ms = str(int((now.timestamp() + 20) * 1000))
    assert retry_after_from_metadata({"headers": {"X-RateLimit-Reset": reset_ms}}, now=now) == 20.0
    assert retry_after_from_metadata({"raw": "nothing useful"}, now=now) is None


def test_backoff_grows_exponentially_within_its_jitter_band_and_never_undercuts_retry_after():
    policy = RetryPolicy(base_wait_s=2.0, max_wait_s=60.0)
    rng = random.Random(1)
    waits = [policy.backoff(attempt, None, rng) for attempt in (1, 2, 3, 4, 5, 6, 7)]
    ceilings = [2, 4, 8, 16, 32, 60, 60]
    assert all(c / 2 <= w <= c for w, c in zip(waits, ceilings))
    assert policy.backoff(1, 30.0, rng) == 30.0


@respx.mock
async def test_a_chat_request_carries_the_key_the_runs_user_agent_its_timeout_and_the_body_as_utf8_json():
    route = respx.post(f"{OPENROUTER_BASE_URL}/chat/completions").mock(
        return_value=httpx.Response(200, json=ok_body(cost=0.001))
    )
    messages = [{"role": "user", "content": "h\u00e9llo \u2028 \u2603"}]
    async with httpx.AsyncClient(headers={"User-Agent": "fanout-test"}) as http:
        chat = ChatClient(base_url=OPENROUTER_BASE_URL, api_key="sk-test", http=http, request_timeout_s=7.5)
        await chat.complete(MODEL, messages)
    request = route.calls[0].request
    expected = {"model": MODEL.name, "messages": messages, "usage": {"include": True}}
    assert request.content == json.dumps(expected, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    assert (request.headers["authorization"], request.headers["user-agent"]) == ("Bearer sk-test", "fanout-test")
    assert request.headers["content-type"] == "application/json"
    # Nothing about the machine (the SDK's X-Stainless-* OS, CPU and Python headers) goes out.
    assert sorted(request.headers) == [
        "accept", "accept-encoding", "authorization", "connection", "content-length", "content-type", "host", "user-agent",
    ]
    assert request.extensions["timeout"] == {"connect": 7.5, "read": 7.5, "write": 7.5, "pool": 7.5}


@pytest.mark.parametrize(("status", "message", "refused"), [
    (400, "HTTP 400: deepseek/deepseek-v3.3 is not a valid model ID", True),
    (404, "HTTP 404: No endpoints found for lab/gone.", True),
    (404, "HTTP 404: The model `gpt-9` does not exist or you do not have access to it.", True),
    (404, "HTTP 404: model 'llama9' not found, try pulling it first", True),
    (400, "HTTP 400: messages: the conversation is too long", False),
    (400, "HTTP 400: invalid model output format: response_format is not supported", False),
    (500, "HTTP 500: unknown model error", False),
    # A model without tool calling is switched to the prompted protocol, not stopped.
    (404, "HTTP 404: No endpoints found that support tool use. Try disabling \"web_search\".", False),
])
def test_only_a_refusal_of_the_model_itself_counts_as_one(status, message, refused):
    from fanout.llm.endpoint import refuses_model

    assert refuses_model(status, message) is refused
