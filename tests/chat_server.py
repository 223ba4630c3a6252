"""Loopback stand-ins still used by test_provenance.py (ChatServer) and test_search_cache.py (LoopbackWeb).

New tests should not use these: a whole verdict or run belongs on the
simulator (fanout.sim, see test_verdict.py), and an exact exchange on respx
(scripted_chat.py). Delete this file once those two tests have moved.

ChatServer answers /v1/chat/completions from a script, one entry per request:
a Reply, or a function of the request body returning one. LoopbackWeb is a
SearXNG stand-in (/search?format=json) plus article pages.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    """One scripted HTTP answer."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


Step = Reply | Callable[[dict[str, Any]], Reply]
_ids = itertools.count(1)


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 20,
    cost: float | None = None,
    model: str = "scripted/model-20250101",
    response_id: str | None = None,
) -> Reply:
    """A chat completion body in OpenAI's shape (OpenRouter's when `cost` is given)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": prompt_tokens + completion_tokens}
    if cost is not None:
        usage["cost"] = cost
    return Reply({
        "id": response_id or f"gen-{next(_ids)}",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": message,
            "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
        }],
        "usage": usage,
    })


def tool_call(name: str, arguments: str | dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": raw}}


class _Server:
    """An aiohttp app on 127.0.0.1, an ephemeral port, stopped cleanly."""

    def __init__(self) -> None:
        self.app = web.Application()
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def __aenter__(self) -> _Server:
        self._runner = web.AppRunner(self.app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def answer(self, reply: Reply) -> web.StreamResponse:
        if isinstance(reply.body, (dict, list)):
            return web.json_response(reply.body, status=reply.status, headers=reply.headers)
        return web.Response(text=reply.body or "", status=reply.status, headers=reply.headers)


class ChatServer(_Server):
    """A scripted OpenAI-compatible endpoint; `base_url` ends in /v1."""

    def __init__(self, script: list[Step] | None = None) -> None:
        super().__init__()
        self.script: list[Step] = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.app.router.add_post("/v1/chat/completions", self._chat)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if not self.script:
            return web.json_response({"error": {"code": 500, "message": "script exhausted"}}, status=500)
        step = self.script.pop(0)
        return await self.answer(step(body) if callable(step) else step)


class LoopbackWeb(_Server):
    """A SearXNG stand-in and article pages: `pages` maps a path to its HTML."""

    def __init__(self, pages: dict[str, str], results: list[dict[str, str]] | None = None) -> None:
        super().__init__()
        self.pages = pages
        self.results = results
        self.searches: list[str] = []
        self.fetches: list[str] = []
        self.app.router.add_get("/search", self._search)
        self.app.router.add_get("/{path:.+}", self._page)

    async def _search(self, request: web.Request) -> web.StreamResponse:
        if request.query.get("format") != "json":
            return web.Response(status=403, text="JSON output is not enabled")
        self.searches.append(request.query.get("q", ""))
        results = self.results if self.results is not None else [
            {"title": f"Page {path}", "url": f"{self.origin}/{path}", "content": f"About {path}",
             "engine": "stand-in", "score": 1.0}
            for path in self.pages
        ]
        return web.json_response({"query": request.query.get("q", ""), "results": results,
                                  "unresponsive_engines": []})

    async def _page(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        self.fetches.append(path)
        if path not in self.pages:
            return web.Response(status=404, text="not found")
        return web.Response(text=self.pages[path], content_type="text/html")
