"""Scripted OpenAI-compatible answers for respx: one exact answer per request, in order.

Whole verdicts and whole runs are tested against the simulator (fanout.sim),
which behaves like OpenRouter and its models. These helpers are for what the
simulator cannot say precisely: an exact token count, a cost left out, a
specific error body, a stall right after a given turn. respx answers inside
httpx, so the real ChatClient parses every byte.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx

LOCAL = "http://127.0.0.1:9/v1"
"""A local endpoint nothing listens on: respx answers before any connection is tried."""

STALL = object()
"""A script step that never answers (until the caller gives up)."""

Answer = dict[str, Any] | httpx.Response
Step = Answer | Callable[[dict[str, Any]], Answer] | object
"""A body, a response, a function of the request body giving one of those, or STALL."""
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
) -> dict[str, Any]:
    """A chat completion body in OpenAI's shape (OpenRouter's when `cost` is given)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": prompt_tokens + completion_tokens}
    if cost is not None:
        usage["cost"] = cost
    return {
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
    }


def tool_call(name: str, arguments: str | dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{next(_ids)}", "type": "function",
            "function": {"name": name, "arguments": raw}}


def error_body(status: int, message: str, *, metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """OpenRouter's error shape: {"error": {"code", "message", "metadata"?}}."""
    error: dict[str, Any] = {"code": status, "message": message}
    if metadata is not None:
        error["metadata"] = metadata
    return {"error": error}


def error_response(status: int, message: str, **kwargs: Any) -> httpx.Response:
    return httpx.Response(status, json=error_body(status, message, **kwargs))


class ScriptedChat:
    """A respx side effect for /chat/completions: answers from the script and records each request.

    A step is a body (answered 200), an httpx.Response, STALL, or a function of
    the request body returning one of the first two (so an answer can depend on
    what the client sent). An exhausted script answers 500, which the test's
    assertions on status and request count then expose.
    """

    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[httpx.Headers] = []
        self.stalled = anyio.Event()

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        self.headers.append(request.headers)
        if not self.script:
            return error_response(500, "script exhausted")
        step = self.script.pop(0)
        if step is STALL:
            self.stalled.set()
            await anyio.sleep_forever()
        answer = step(body) if callable(step) else step
        return answer if isinstance(answer, httpx.Response) else httpx.Response(200, json=answer)
