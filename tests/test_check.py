"""`fanout check`: one line per check, a non-zero exit on any FAIL, and never the key."""

from __future__ import annotations

import socket

import anyio
import httpx
import respx

from chat_server import ChatServer, LoopbackWeb
from fanout.cli import main
from fanout.config import OPENROUTER_BASE_URL

SECRET = "sk-or-v1-TESTSECRET0123456789abcdef"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def run_cli(argv: list[str]) -> int:
    """The CLI runs its own event loop, so it gets a thread while the servers keep serving."""
    return await anyio.to_thread.run_sync(main, argv)


async def test_check_prints_one_line_per_check_and_exits_zero_when_all_pass(capsys):
    models = [{"id": "local/model", "context_length": 32_768, "supported_parameters": ["tools"]}]
    async with ChatServer(models=models) as chat, LoopbackWeb({"a.html": "<p>a</p>"}) as web:
        code = await run_cli(["check", "--base-url", chat.base_url, "--searxng-url", web.origin,
                              "--models", "local/model"])
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [
        f"OK   searxng: answers JSON at {web.origin} (1 results for 'test')",
        f"OK   key: not needed for {chat.base_url}",
        "OK   model local/model: listed as local/model, supports tools, context 32,768",
    ]


async def test_check_exits_non_zero_when_searxng_is_down(capsys):
    down = f"http://127.0.0.1:{closed_port()}"
    async with ChatServer(models=[{"id": "m", "supported_parameters": ["tools"]}]) as chat:
        code = await run_cli(["check", "--base-url", chat.base_url, "--searxng-url", down, "--models", "m"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0] == f"FAIL searxng: unreachable at {down} (ConnectError); start it with `make searxng-up`"
    assert len(lines) == 3


def test_check_against_openrouter_validates_the_key_and_models_without_printing_the_key(capsys, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", SECRET)
    listing = {"data": [{"id": "deepseek/deepseek-v3.2", "canonical_slug": "deepseek/deepseek-v3.2",
                         "context_length": 163_840, "supported_parameters": ["tools"],
                         "pricing": {"prompt": "0.00000026", "completion": "0.00000038"}},
                        {"id": "allenai/olmo-3.1-32b-instruct", "supported_parameters": ["temperature"]}]}
    with respx.mock:
        respx.get("http://searxng.test/search").mock(return_value=httpx.Response(200, json={
            "results": [{"url": "https://example.org", "title": "t", "content": "c"}]}))
        key = respx.get(f"{OPENROUTER_BASE_URL}/key").mock(return_value=httpx.Response(200, json={
            "data": {"label": SECRET, "usage": 0.5, "limit": None}}))
        respx.get(f"{OPENROUTER_BASE_URL}/models").mock(return_value=httpx.Response(200, json=listing))
        code = main(["check", "--searxng-url", "http://searxng.test",
                     "--models", "deepseek/deepseek-v3.2", "allenai/olmo-3.1-32b-instruct"])
    captured = capsys.readouterr()
    assert key.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"
    assert code == 1
    assert captured.out.splitlines() == [
        "OK   searxng: answers JSON at http://searxng.test (1 results for 'test')",
        "OK   key: valid (used $0.50, no spending limit)",
        "OK   model deepseek/deepseek-v3.2: listed as deepseek/deepseek-v3.2, supports tools, "
        "context 163,840, $0.26/$0.38 per M tokens",
        "FAIL model allenai/olmo-3.1-32b-instruct: does not support tool calling",
    ]
    assert "TESTSECRET" not in captured.out + captured.err
