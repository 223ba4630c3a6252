"""Every body fanout receives is bounded: bytes after decoding, time as a whole, JSON depth.

Each kind of endpoint (chat, /models, SearXNG, Wikidata) meets the same four
hostile answers from a real aiohttp server on 127.0.0.1: a body over the cap,
a gzip bomb, an endless trickle, and JSON nested 100,000 deep. Memory is
checked as bytes: the wire under the bounded transport counts what it handed
up, which must stop within one network chunk past the cap.
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from aiohttp import web

from fanout.llm.models import ModelSpec
from fanout.tools.settings import ToolSettings
from fanout.base.errors import ConfigError, ProviderError
from fanout.http.bounded import DeadlinePassed, JsonTooDeep, json_depth_over, parse_json
from fanout.http.client import make_http_client, pool_limits
from fanout.http.transport import READ_CHUNK, AiohttpTransport
from fanout.llm.catalog import fetch_model_listing
from fanout.llm.chat import CHAT_RETRY, ChatClient, OversizedReply
from fanout.tools.providers.base import SearchFailure
from fanout.workloads.patrol.prompt import sift_prompt
from fanout.research.verdict import run_verdict
from fanout.tools import ToolResult
from fanout.tools.providers.searxng import SearxngProvider, check_searxng
from fanout.tools.providers.wikipedia import WikipediaProvider
from fanout.wikidata.api import ApiSettings, WikidataClient
from fanout.wikidata.errors import WikidataError
from loopback import app_with, serving

CAP = 1024 * 1024
"""The tests' byte cap (1 MiB), so that bodies past it stay small enough to send quickly."""
BIG = 5 * CAP
DEEP = b"[" * 100_000 + b"]" * 100_000


@functools.cache
def bomb_body() -> bytes:
    """64 MiB of JSON once inflated; about 64 KB on the wire. Made on first use (half a second of CPU), not at
    import: every pytest-xdist worker imports this module to collect it, and only one runs its tests."""
    return gzip.compress(b'{"data": "' + b"a" * (64 * CAP), compresslevel=9)


TRICKLE_S = 0.5
"""The request timeout of the endless-body tests: the deadline the whole answer must meet."""
CHAT_ID = "gen-1764200000-oversized"
MODEL = ModelSpec("test/model")
ONE_TRY = dataclasses.replace(CHAT_RETRY, max_attempts=1)


class CountingTransport(httpx.AsyncBaseTransport):
    """The real aiohttp wire, counting the bytes it hands up: what the bounded layer took off the network."""

    def __init__(self) -> None:
        self._inner = AiohttpTransport(pool_limits(4))
        self.taken = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        return httpx.Response(response.status_code, headers=response.headers.multi_items(),
                              stream=_Counted(response, self), request=request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class _Counted(httpx.AsyncByteStream):
    def __init__(self, response: httpx.Response, counter: CountingTransport) -> None:
        self._response = response
        self._counter = counter

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._response.aiter_raw():
            self._counter.taken += len(chunk)
            yield chunk

    async def aclose(self) -> None:
        await self._response.aclose()


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def oversized(request: web.Request) -> web.StreamResponse:
    """A chat-completion-shaped body 5 MiB long, its id first as OpenRouter sends it."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b'\n\n{"id": "' + CHAT_ID.encode() + b'", "choices": [{"message": {"content": "')
    for _ in range(BIG // READ_CHUNK):
        await response.write(b"x" * READ_CHUNK)
    await response.write(b'"}}]}')
    return response


async def bomb(request: web.Request) -> web.StreamResponse:
    return web.Response(body=bomb_body(), headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})


async def endless(request: web.Request) -> web.StreamResponse:
    """A body that never ends: a byte every 20 ms, each wait far shorter than the timeout between reads."""
    response = web.StreamResponse(headers={"Content-Type": "application/json"})
    await response.prepare(request)
    await response.write(b'{"data": [')
    try:
        while True:
            await response.write(b" ")
            await anyio.sleep(0.02)
    except ConnectionResetError:  # the client gave up at its deadline: what the test wants
        return response


OFFERED: list[str] = []
"""The Accept-Encoding of each request `brotli` answered."""


async def brotli(request: web.Request) -> web.StreamResponse:
    """A body in an encoding fanout never asks for, answered whatever the request offered."""
    OFFERED.append(request.headers.get("Accept-Encoding", ""))
    return web.Response(body=b"\x8b\x03\x80{}\x03", headers={"Content-Type": "application/json",
                                                               "Content-Encoding": "br"})


async def deep(request: web.Request) -> web.StreamResponse:
    return web.Response(body=DEEP, headers={"Content-Type": "application/json"})


async def generation(request: web.Request) -> web.StreamResponse:
    """OpenRouter's /generation for the oversized reply: what it cost, looked up by its id."""
    assert request.query["id"] == CHAT_ID
    return web.json_response({"data": {"id": CHAT_ID, "total_cost": 0.0421}})


def app_answering(handler: Handler) -> web.Application:
    """Every path fanout asks of these endpoints, answered by `handler`."""
    app = web.Application()
    app.router.add_get("/api/v1/generation", generation)
    for path in ("/api/v1/chat/completions", "/w/api.php"):
        app.router.add_post(path, handler)
    for path in ("/api/v1/models", "/search", "/w/api.php"):
        app.router.add_get(path, handler)
    return app


@pytest.fixture
async def wire() -> AsyncIterator[CountingTransport]:
    yield CountingTransport()


class Watcher:
    """A CallWatcher that writes down what it hears, as the in-flight file (fanout.store.attempts) does."""

    def __init__(self) -> None:
        self.heard: list[tuple[str, ...]] = []

    def sent(self) -> None:
        self.heard.append(("sent",))

    def answered(self, result: Any) -> None:
        self.heard.append(("answered", result.response_id, result.cost_usd))

    def failed(self) -> None:
        self.heard.append(("failed",))


async def chat_failure(handler: Handler, wire: CountingTransport, *, timeout_s: float = 30.0,
                       generation_lookup: bool = False, watcher: Watcher | None = None) -> ProviderError:
    async with serving(app_answering(handler)) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP
    ) as http:
        chat = ChatClient(base_url=f"http://127.0.0.1:{port}/api/v1", api_key=None, http=http, retry=ONE_TRY,
                          request_timeout_s=timeout_s, generation_lookup=generation_lookup)
        with pytest.raises(ProviderError) as caught:
            await chat.complete(MODEL, [{"role": "user", "content": "hello"}], watcher=watcher)
    return caught.value


async def test_a_chat_reply_over_the_cap_is_an_error_naming_the_cap_and_costs_what_generation_says(wire):
    error = await chat_failure(oversized, wire, generation_lookup=True)

    assert isinstance(error, OversizedReply)
    assert str(error) == ("the reply was larger than the 1 MiB cap on a response body "
                          "(fanout.http.bounded.MAX_BODY_BYTES) and was not read; its cost, $0.042100, is /generation's")
    assert error.retryable is False and error.refused is False
    assert error.response_id == CHAT_ID
    assert error.spent is not None
    assert (error.spent.cost_usd, error.spent.cost_source) == (0.0421, "generation")
    assert CAP < wire.taken <= CAP + 2 * READ_CHUNK


async def test_a_chat_reply_over_the_cap_without_a_cost_lookup_says_its_cost_is_unknown(wire):
    error = await chat_failure(oversized, wire)

    assert isinstance(error, OversizedReply)
    assert str(error).endswith("; its cost is unknown (the usage at its end was never read)")
    assert error.spent is not None
    assert (error.spent.cost_usd, error.spent.cost_source) == (None, "unknown")


@pytest.mark.parametrize(("generation_lookup", "heard"), [
    (True, [("sent",), ("answered", CHAT_ID, 0.0421)]),
    (False, [("sent",)]),  # unmatched: settled after a kill as cut off, cost unknown
])
async def test_an_oversized_reply_is_never_written_down_as_a_failed_call_that_cost_nothing(
        wire, generation_lookup, heard):
    watcher = Watcher()
    await chat_failure(oversized, wire, generation_lookup=generation_lookup, watcher=watcher)
    assert watcher.heard == heard


async def test_a_gzip_bomb_as_a_chat_reply_inflates_no_further_than_the_cap(wire):
    error = await chat_failure(bomb, wire)

    assert isinstance(error, OversizedReply)
    assert str(error).startswith("the reply was larger than the 1 MiB cap on a response body")
    assert wire.taken <= len(bomb_body())


async def test_an_endless_chat_reply_ends_at_the_request_timeout_as_a_whole(wire):
    error = await chat_failure(endless, wire, timeout_s=TRICKLE_S)

    assert str(error) == ("the endpoint's reply was not complete in time: 127.0.0.1 did not finish answering "
                          "within the request's 0.5 s deadline")
    assert error.retryable is True
    assert isinstance(error.__cause__, DeadlinePassed)


async def test_a_chat_reply_nested_100000_deep_is_an_error_not_retried_nor_a_recursion_error(wire):
    """Not retried: the nesting is the server's own (a cut reply is what a retry mends), so asking again would
    bring, and perhaps bill, the same; `make chaos` saw it retried until the verdict's timeout hid the cause."""
    error = await chat_failure(deep, wire)

    assert str(error) == "the endpoint answered 200 with JSON nested deeper than 100 levels"
    assert error.status == 502 and error.retryable is False


@pytest.mark.parametrize(("handler", "timeout_s", "message"), [
    (oversized, 30.0, "127.0.0.1 sent a body over the 1 MiB cap on a response body; it was not read further"),
    (bomb, 30.0, "127.0.0.1 sent a body over the 1 MiB cap on a response body; it was not read further"),
    (endless, TRICKLE_S, "127.0.0.1 did not finish answering within the request's 0.5 s deadline"),
], ids=["oversized", "gzip-bomb", "endless"])
async def test_the_models_listing_is_bounded_and_each_refusal_is_one_line(wire, handler, timeout_s, message):
    async with serving(app_answering(handler)) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP, timeout_s=timeout_s
    ) as http:
        url = f"http://127.0.0.1:{port}/api/v1"
        with pytest.raises(ConfigError) as caught:
            await fetch_model_listing(http, url, None)

    assert str(caught.value) == f"cannot reach {url}/models: {message}"
    assert wire.taken <= CAP + 2 * READ_CHUNK


async def test_a_models_listing_nested_100000_deep_is_refused_in_one_line(wire):
    async with serving(app_answering(deep)) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP
    ) as http:
        url = f"http://127.0.0.1:{port}/api/v1"
        with pytest.raises(ConfigError) as caught:
            await fetch_model_listing(http, url, None)

    assert str(caught.value) == f"{url}/models answered JSON nested deeper than 100 levels"


async def searxng_failure(handler: Handler, wire: CountingTransport, timeout_s: float = 30.0) -> tuple[str, str]:
    """The error of a SearXNG search whose server answers with `handler`, and the server's base URL."""
    async with serving(app_answering(handler)) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP
    ) as http:
        provider = SearxngProvider(f"http://127.0.0.1:{port}", timeout_s=timeout_s)
        result = await provider.search("Douglas Adams", http)
    assert result.hits == []
    return str(result.error), provider.base_url


async def test_searxng_answers_over_the_cap_deep_or_endless_are_search_errors(wire):
    error, base = await searxng_failure(oversized, wire)
    assert error == f"SearXNG error: {base}: 127.0.0.1 sent a body over the 1 MiB cap on a response body; it was not read further"
    assert wire.taken <= CAP + 2 * READ_CHUNK
    error, base = await searxng_failure(bomb, wire)
    assert error == f"SearXNG error: {base}: 127.0.0.1 sent a body over the 1 MiB cap on a response body; it was not read further"
    error, base = await searxng_failure(deep, wire)
    assert error == f"SearXNG returned invalid JSON: {base} answered JSON nested deeper than 100 levels"
    error, base = await searxng_failure(endless, wire, TRICKLE_S)
    assert error.startswith(f"SearXNG request timed out: {base} did not answer within 0.5 s")


async def test_the_searxng_preflight_check_fails_in_one_line_on_an_endless_body_instead_of_hanging(wire):
    async with serving(app_answering(endless)) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP
    ) as http:
        url = f"http://127.0.0.1:{port}"
        check = await check_searxng(http, url, settings=ToolSettings(search_timeout_s=TRICKLE_S))

    assert (check.level, check.message) == (
        "FAIL", f"SearXNG at {url}: 127.0.0.1 did not finish answering within the request's 0.5 s deadline")


async def wikidata_failure(handler: Handler, wire: CountingTransport, timeout_s: float = 30.0) -> WikidataError:
    async with serving(app_answering(handler)) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP
    ) as http:
        settings = ApiSettings(api_url=f"http://127.0.0.1:{port}/w/api.php", timeout_s=timeout_s,
                               retry=dataclasses.replace(ONE_TRY))
        client = WikidataClient(http, settings)
        with pytest.raises(WikidataError) as caught:
            await client.query({"action": "query", "meta": "userinfo"})
    return caught.value


async def test_wikidata_answers_over_the_cap_deep_or_endless_are_wikidata_errors(wire):
    assert str(await wikidata_failure(oversized, wire)) == (
        "127.0.0.1 sent a body over the 1 MiB cap on a response body; it was not read further")
    assert wire.taken <= CAP + 2 * READ_CHUNK
    assert str(await wikidata_failure(bomb, wire)).startswith("127.0.0.1 sent a body over the 1 MiB cap")
    assert str(await wikidata_failure(deep, wire)) == "127.0.0.1 answered JSON nested deeper than 100 levels"
    late = await wikidata_failure(endless, wire, TRICKLE_S)
    assert str(late) == "127.0.0.1 timed out"
    assert isinstance(late.__cause__, DeadlinePassed)


def test_json_depth_is_counted_outside_strings_only() -> None:
    assert json_depth_over(b"[" * 101 + b"]" * 101, 100) is True
    assert json_depth_over(b"[" * 100 + b"]" * 100, 100) is False
    assert json_depth_over(json.dumps({"text": "[" * 500}).encode(), 100) is False
    assert json_depth_over(json.dumps({"text": '\\"[' * 500}).encode(), 100) is False
    assert parse_json(b'{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    with pytest.raises(JsonTooDeep, match="^JSON nested deeper than 100 levels$"):
        parse_json(DEEP)


@pytest.mark.parametrize(("body", "error"), [
    (b'{"query": {"search": []}, "pad": "' + b"x" * BIG + b'"}',
     "Wikipedia (en): en.wikipedia.org sent a body over the 1 MiB cap on a response body; it was not read further"),
    (DEEP, "Wikipedia (en) answered JSON nested deeper than 100 levels"),
], ids=["oversized", "deep"])
async def test_every_search_provider_gets_the_same_bounds_through_the_shared_client(body, error):
    """The providers' common path (providers.base.send and json_body), shown with Wikipedia on httpx's MockTransport."""
    wire = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
    async with make_http_client(2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP) as http:
        result = await WikipediaProvider("en").search("Douglas Adams", http)

    assert (result.hits, result.error, result.retryable) == ([], error, False)


async def test_a_verdict_whose_reply_is_over_the_cap_is_an_error_record_naming_the_cap_with_its_cost_unknown(edit, wire):
    async with serving(app_answering(oversized)) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP
    ) as http:
        chat = ChatClient(base_url=f"http://127.0.0.1:{port}/api/v1", api_key=None, http=http, retry=ONE_TRY,
                          generation_lookup=False)
        record = await run_verdict(edit, MODEL, chat=chat, tools=NoTools(), prompt=sift_prompt("Check.", "0" * 64))

    assert record.status == "error"
    assert record.error == ("the reply was larger than the 1 MiB cap on a response body "
                            "(fanout.http.bounded.MAX_BODY_BYTES) and was not read; its cost is unknown "
                            "(the usage at its end was never read)")
    assert (record.cost_usd, record.cost_source, record.token_usage.turns) == (None, "unknown", 1)


class NoTools:
    async def dispatch(self, name: str, raw_arguments: str) -> ToolResult:
        raise AssertionError("no tool is asked for: the only reply is over the cap")


async def test_a_body_in_an_encoding_fanout_did_not_ask_for_is_refused_in_one_line(wire):
    OFFERED.clear()
    async with serving(app_answering(brotli)) as port, make_http_client(2, user_agent="fanout-test", transport=wire) as http:
        url = f"http://127.0.0.1:{port}/api/v1"
        with pytest.raises(ConfigError) as caught:
            await fetch_model_listing(http, url, None)
        chat = ChatClient(base_url=url, api_key=None, http=http, retry=ONE_TRY, generation_lookup=False)
        with pytest.raises(ProviderError) as chat_caught:
            await chat.complete(MODEL, [{"role": "user", "content": "hello"}])

    assert OFFERED == ["gzip, deflate", "gzip, deflate"]
    assert str(caught.value) == (f"cannot reach {url}/models: 127.0.0.1 answered with a body fanout cannot read: "
                                 "the server sent Content-Encoding 'br'")
    assert str(chat_caught.value) == ("the endpoint's reply cannot be read: 127.0.0.1 answered with a body fanout "
                                      "cannot read: the server sent Content-Encoding 'br'")
    assert chat_caught.value.retryable is False


@pytest.mark.parametrize("handler", [oversized, endless, deep], ids=["oversized", "endless", "deep"])
async def test_a_generation_lookup_answered_without_bound_leaves_the_cost_unknown(wire, handler):
    app = web.Application()
    app.router.add_get("/api/v1/generation", handler)
    async with serving(app) as port, make_http_client(
        2, user_agent="fanout-test", transport=wire, max_body_bytes=CAP, timeout_s=TRICKLE_S
    ) as http:
        chat = ChatClient(base_url=f"http://127.0.0.1:{port}/api/v1", api_key=None, http=http, sleep=no_sleep)
        cost = await chat.generation_cost(CHAT_ID)

    assert cost is None
    assert wire.taken <= 5 * (CAP + 2 * READ_CHUNK)


async def no_sleep(seconds: float) -> None:
    return None


async def named(request: web.Request) -> web.StreamResponse:
    """A page whose headers carry UTF-8, as servers send a file name (RFC 6266 allows only ASCII; many don't)."""
    return web.Response(body=b"<p>hello</p>", headers={"Content-Type": "text/html",
                                                        "Content-Disposition": 'inline; filename="Zoë.html"'})


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_response_header_in_utf_8_is_read_not_an_encoding_error(streamed: bool) -> None:
    async with serving(app_with("/page", named)) as port, make_http_client(2, user_agent="test") as http:
        url = f"http://127.0.0.1:{port}/page"
        if streamed:
            async with http.stream("GET", url) as response:
                body = await response.aread()
        else:
            response = await http.get(url)
            body = response.content
    assert (response.status_code, body) == (200, b"<p>hello</p>")
    assert response.headers["content-disposition"] == 'inline; filename="Zoë.html"'  # httpx reads it as UTF-8
