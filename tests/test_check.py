"""`fanout check`: one line per check, a non-zero exit on any FAIL, and never the key.

Local endpoints are the simulator (fanout.sim); OpenRouter itself is respx.
"""

from __future__ import annotations

import anyio
import httpx
import respx

from fanout.cli import main
from fanout.llm.keys import OPENROUTER_BASE_URL
from fanout.llm.models import DEFAULT_MODELS
from fanout.sim import running_simulator

SECRET = "sk-or-v1-" + "TESTSECRET0123456789abcdef"  # built at run time: no key-shaped literal in git


async def run_cli(argv: list[str]) -> int:
    """The CLI runs its own event loop, so it gets a thread while the servers keep serving."""
    return await anyio.to_thread.run_sync(main, argv)


async def test_check_prints_one_line_per_check_and_exits_zero_when_all_pass(capsys):
    async with running_simulator() as sim:
        code = await run_cli(["check", "--base-url", sim.api_base, "--searxng-url", sim.searxng_url,
                              "--models", *(m.name for m in DEFAULT_MODELS)])
        requests = sim.stats()["requests"]
    assert code == 0
    assert capsys.readouterr().out.splitlines() == [
        f"OK   searxng: answers JSON at {sim.searxng_url} (1 results for 'test')",
        f"OK   key: not needed for {sim.api_base}",
        "OK   model nvidia/nemotron-3-nano-30b-a3b: listed as nvidia/nemotron-3-nano-30b-a3b, supports tools, "
        "context 262,144, $0.05/$0.2 per M tokens",
        "OK   model allenai/olmo-3.1-32b-instruct: listed as allenai/olmo-3.1-32b-instruct, supports tools, "
        "context 65,536, $0.2/$0.6 per M tokens",
        "OK   model deepseek/deepseek-v3.2: listed as deepseek/deepseek-v3.2, supports tools, "
        "context 163,840, $0.26/$0.38 per M tokens",
        "OK   model anthropic/claude-4.5-haiku-20251001: listed as anthropic/claude-haiku-4.5 "
        "(anthropic/claude-4.5-haiku-20251001), supports tools, context 200,000, $1/$5 per M tokens",
    ]
    assert requests == {"models": 1, "search": 1}


async def test_check_exits_1_for_a_model_neither_the_endpoint_lists_nor_the_model_table_knows(capsys):
    async with running_simulator() as sim:
        code = await run_cli(["check", "--base-url", sim.api_base, "--searxng-url", sim.searxng_url,
                              "--models", "deepseek/deepseek-v3.3", "deepseek/deepseek-v3.2"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[2] == ("FAIL model deepseek/deepseek-v3.3: unknown: not listed by the endpoint nor in fanout's "
                        "model table; did you mean deepseek/deepseek-v3.2?")
    assert lines[3].startswith("OK   model deepseek/deepseek-v3.2: listed as deepseek/deepseek-v3.2")


async def test_check_exits_non_zero_when_searxng_is_down(capsys, refused_port):
    down = f"http://127.0.0.1:{refused_port}"
    async with running_simulator() as sim:
        code = await run_cli(["check", "--base-url", sim.api_base, "--searxng-url", down,
                              "--models", "deepseek/deepseek-v3.2"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0] == (f"FAIL searxng: SearXNG is unreachable at {down} (ConnectError): start it with "
                        "`make searxng-up`, point --searxng-url at a running one, or search without it: "
                        "--search-providers wikipedia")
    assert lines[1:] == [
        f"OK   key: not needed for {sim.api_base}",
        "OK   model deepseek/deepseek-v3.2: listed as deepseek/deepseek-v3.2, supports tools, "
        "context 163,840, $0.26/$0.38 per M tokens",
    ]


def test_check_against_openrouter_validates_the_key_and_models_without_printing_the_key(capsys, monkeypatch,
                                                                                        transport_for):
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
                     "--models", "deepseek/deepseek-v3.2", "allenai/olmo-3.1-32b-instruct"],
                    transport=transport_for(respx.mock))
    captured = capsys.readouterr()
    assert key.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"
    assert code == 0
    assert captured.out.splitlines() == [
        "OK   searxng: answers JSON at http://searxng.test (1 results for 'test')",
        "OK   key: valid (used $0.50, no spending limit)",
        "OK   model deepseek/deepseek-v3.2: listed as deepseek/deepseek-v3.2, supports tools, "
        "context 163,840, $0.26/$0.38 per M tokens",
        "WARN model allenai/olmo-3.1-32b-instruct: does not support tool calling; its tools are offered "
        "in the prompt (tool_protocol prompted)",
    ]
    assert "TESTSECRET" not in captured.out + captured.err
