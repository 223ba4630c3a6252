"""The chat key goes to its own endpoint only, and never comes back out of the model's mouth.

A loopback echo server plays every part (an OpenAI-compatible endpoint, SearXNG
and a web page) and hands back whatever Bearer token it received: in the
model's search query, in a URL the model asks to fetch, and in its verdict.
The CLI runs against it through its entry point (fanout.cli.main, what
`python -m fanout` calls) with keys planted in the environment, the server
served from a thread; what the commands print is read at file descriptors 1
and 2.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from aiohttp import web
from anyio.from_thread import start_blocking_portal

from fanout.base.validate import package_data
from fanout.cli import main
from fanout.llm.reply import redact
from loopback import serving

pytestmark = pytest.mark.timeout(180)

SAMPLE = package_data("sample_snapshot.yaml")
OPENROUTER_KEY = "sk-or-v1-" + "0123456789abcdef" * 4
ENDPOINT_KEY = "local-" + "fedcba9876543210" * 2
MODEL = "echo/model"


@dataclass
class Echo:
    """What the echo server received, and where it listens."""

    base: str = ""
    tokens: list[str] = field(default_factory=list)
    """The Authorization header of every request to the model endpoint."""
    queries: list[str] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)
    """The `k` query parameter of every page request."""


def reply(content: str | None, tool_calls: list[dict] | None = None) -> web.Response:
    message: dict = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return web.json_response({
        "id": "chatcmpl-echo", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "finish_reason": "tool_calls" if tool_calls else "stop", "message": message}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })


def echo_app(echo: Echo) -> web.Application:
    async def models(request: web.Request) -> web.Response:
        echo.tokens.append(request.headers.get("Authorization", ""))
        return web.json_response({"data": [{"id": MODEL, "supported_parameters": ["tools"]}]})

    async def chat(request: web.Request) -> web.Response:
        header = request.headers.get("Authorization", "")
        echo.tokens.append(header)
        key = header.removeprefix("Bearer ")
        body = await request.json()
        if body.get("response_format"):
            verdict = {"verdict": "plausible", "rationale": f"the key is {key}",
                       "sources": [{"url": f"{echo.base}/page?k={key}", "supports_claim": True, "provenance": "verified"}]}
            return reply(json.dumps(verdict))
        if any(m["role"] == "tool" for m in body["messages"]):
            return reply(f"done; by the way my key is {key}")
        return reply(None, [
            {"id": "c1", "type": "function", "function": {"name": "web_search", "arguments": json.dumps({"query": f"about {key}"})}},
            {"id": "c2", "type": "function", "function": {"name": "web_fetch", "arguments": json.dumps({"url": f"{echo.base}/page?k={key}"})}},
        ])

    async def search(request: web.Request) -> web.Response:
        echo.queries.append(request.query["q"])
        return web.json_response({"results": [{"url": "https://example.org/a", "title": "A", "content": "a page"}],
                                  "unresponsive_engines": []})

    async def page(request: web.Request) -> web.Response:
        echo.fetched.append(request.query.get("k", ""))
        return web.Response(text="<html><body><article><p>" + "A page about the edit. " * 20 + "</p></article></body></html>",
                            content_type="text/html")

    app = web.Application()
    app.router.add_get("/v1/models", models)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/search", search)
    app.router.add_get("/page", page)
    return app


@asynccontextmanager
async def echo_server() -> AsyncIterator[Echo]:
    echo = Echo()
    async with serving(echo_app(echo)) as port:
        echo.base = f"http://127.0.0.1:{port}"
        yield echo


@contextmanager
def serving_echo() -> Iterator[Echo]:
    """The echo server, served from a thread while the command runs in this one."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(echo_server()) as echo:
        yield echo


Command = Callable[..., tuple[int, bytes]]


@pytest.fixture
def fanout(monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]) -> Command:
    """`fanout ARGS` with `env` planted: its exit code and what reached file descriptors 1 and 2."""
    def command(env: dict[str, str], *args: str) -> tuple[int, bytes]:
        with monkeypatch.context() as planted:
            for name, value in env.items():
                planted.setenv(name, value)
            capfdbinary.readouterr()
            code = main(list(args))
            out, err = capfdbinary.readouterr()
        return code, out + err
    return command


def run_against(fanout: Command, echo: Echo, run_dir: Path, env: dict[str, str]) -> dict[str, tuple[int, bytes]]:
    """`fanout run` for one edit, then status and report, all with `env` planted."""
    outputs = {"run": fanout(env, "run", str(SAMPLE), "--run-dir", str(run_dir), "--models", MODEL, "--limit", "1",
                             "--base-url", f"{echo.base}/v1", "--searxng-url", echo.base,
                             "--allow-private-urls", "--fetch-delay", "0")}
    outputs["status"] = fanout(env, "status", str(run_dir))
    outputs["report"] = fanout(env, "report", str(run_dir), "--html", "--json")
    return outputs


def files_holding(run_dir: Path, needle: str) -> list[str]:
    return sorted(str(p.relative_to(run_dir)) for p in run_dir.rglob("*")
                  if p.is_file() and needle.encode() in p.read_bytes())


def test_the_openrouter_key_is_never_sent_to_another_endpoint(tmp_path, fanout):
    with serving_echo() as echo:
        outputs = run_against(fanout, echo, tmp_path / "run", {"OPENROUTER_API_KEY": OPENROUTER_KEY})

    assert outputs["run"][0] == 0, outputs["run"][1].decode()
    # The models listing goes without a header, the three chat calls with the SDK's placeholder.
    assert echo.tokens == ["", "Bearer unused", "Bearer unused", "Bearer unused"]


def test_another_endpoint_gets_its_own_key_and_an_echoed_key_is_redacted_before_it_is_stored_or_sent(tmp_path, fanout):
    run_dir = tmp_path / "run"
    with serving_echo() as echo:
        outputs = run_against(fanout, echo, run_dir, {"OPENROUTER_API_KEY": OPENROUTER_KEY, "FANOUT_API_KEY": ENDPOINT_KEY})

    assert outputs["run"][0] == 0, outputs["run"][1].decode()
    assert echo.tokens == [f"Bearer {ENDPOINT_KEY}"] * 4
    assert "about [redacted]" in echo.queries and not [q for q in echo.queries if ENDPOINT_KEY in q]
    assert echo.fetched == ["[redacted]"]
    record = json.loads((run_dir / "checkpoint.jsonl").read_text())
    assert (record["status"], record["rationale"]) == ("ok", "the key is [redacted]")
    assert [json.loads(t["arguments"]) for t in record["tool_calls"]] == [
        {"query": "about [redacted]"}, {"url": f"{echo.base}/page?k=[redacted]"}]
    assert files_holding(run_dir, ENDPOINT_KEY) == [] and files_holding(run_dir, OPENROUTER_KEY) == []
    assert "report.html" in os.listdir(run_dir) and "search-cache.sqlite" in os.listdir(run_dir)
    assert {name: ENDPOINT_KEY.encode() in out for name, (_, out) in outputs.items()} == {
        "run": False, "status": False, "report": False}


def test_a_key_is_redacted_whole_and_its_body_without_the_prefix_too():
    body = OPENROUTER_KEY.removeprefix("sk-or-v1-")
    text = f"key {OPENROUTER_KEY}; body {body}; prefix sk-or-v1- alone"
    assert redact(text, OPENROUTER_KEY) == "key [redacted]; body [redacted]; prefix sk-or-v1- alone"
    assert redact("short-abc and short-abc", "short-abc") == "[redacted] and [redacted]"  # a short tail is not cut alone
    assert redact("abc here", "short-abc") == "abc here"
