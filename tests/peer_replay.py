"""A loopback server that replays a real OpenAI-compatible server's recorded answers (`make peers`).

Each model's chat requests are answered in the order they were recorded, with
the recorded status and body byte for byte, so fanout parses exactly what the
real server sent. Before answering, each request is checked the way the real
server would judge it, and against the request recorded in its place: an
assistant message must carry string content (the server refuses null with
HTTP 500), the roles must follow the recorded conversation, tools must be
offered (or not) as they were, and the assistant turns fanout echoes back
must be the recorded replies. A request that fails a check gets HTTP 500
with the reason, as the real server would refuse it, and the test sees an
`error` record. Tool outputs and the system prompt are not compared: they
belong to the tools and the prompt, which change on their own schedule.
"""

from __future__ import annotations

import json
from collections import defaultdict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from aiohttp import web

FIXTURES = Path(__file__).parent / "fixtures" / "peers"


def load_fixture(name: str) -> dict[str, Any]:
    fixture: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return fixture


def strict_problems(sent: dict[str, Any], recorded: dict[str, Any]) -> list[str]:
    """Why the real server would not have answered `sent` as it answered `recorded`."""
    problems = [f"messages.{n}.content: Input should be a valid string"
                for n, m in enumerate(sent["messages"]) if m["role"] == "assistant" and not isinstance(m.get("content"), str)]
    if [m["role"] for m in sent["messages"]] != [m["role"] for m in recorded["messages"]]:
        problems.append("the roles differ from the recorded conversation")
    if ("tools" in sent) != ("tools" in recorded):
        problems.append("tools offered differently from the recorded request")
    echoed = [(m.get("content"), m.get("tool_calls")) for m in sent["messages"] if m["role"] == "assistant"]
    expected = [(m.get("content"), m.get("tool_calls")) for m in recorded["messages"] if m["role"] == "assistant"]
    if echoed != expected:
        problems.append("the assistant turns sent back differ from the recorded replies")
    return problems


class Replay:
    """The recorded exchanges, per model, and what the replay was asked."""

    def __init__(self, fixture: dict[str, Any]) -> None:
        self.queues: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
        self.listing: dict[str, Any] = {"object": "list", "data": []}
        for exchange in fixture["exchanges"]:
            if exchange["path"] == "/chat/completions":
                self.queues[exchange["request"]["model"]].append(exchange)
            elif exchange["path"] == "/models":
                self.listing = exchange["response"]
        self.problems: list[str] = []

    async def chat(self, request: web.Request) -> web.Response:
        sent = await request.json()
        queue = self.queues.get(sent["model"])
        if not queue:
            return self._refuse(f"{sent['model']}: no recorded exchange left")
        exchange = queue.popleft()
        problems = strict_problems(sent, exchange["request"])
        if problems:
            return self._refuse(f"{sent['model']}: " + "; ".join(problems))
        return web.json_response(exchange["response"], status=exchange["status"])

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response(self.listing)

    def _refuse(self, problem: str) -> web.Response:
        self.problems.append(problem)
        return web.json_response({"error": {"message": problem, "type": "internal_server_error"}}, status=500)


@asynccontextmanager
async def replaying(fixture: dict[str, Any]) -> AsyncIterator[tuple[str, Replay]]:
    """The replay server on a free loopback port; yields its base URL (…/v1) and the Replay."""
    replay = Replay(fixture)
    app = web.Application()
    app.router.add_post("/v1/chat/completions", replay.chat)
    app.router.add_get("/v1/models", replay.models)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1", replay
    finally:
        await runner.cleanup()
