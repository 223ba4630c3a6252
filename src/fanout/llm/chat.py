"""One logical chat call: the model's limiter, retries, JSON mode's fallback, and the cost.

A request goes out through fanout.llm.endpoint (one POST on the run's
shared httpx client, never retried there) and comes back as a
ChatResult or a ProviderError: error statuses, errors inside a 200 body and
malformed bodies are all translated there, at the boundary. Here each
attempt first waits for its model's limiter (fanout.llm.limits: the cap the
user set, the pace learned from 429s, and the gate a 429 closes), failures are retried by the one policy
in fanout.base.retry, a model that rejects response_format is asked again without
it, and a cost the reply left out is looked up afterwards on OpenRouter, or
else estimated from the tokens and the model's prices (fanout.llm.cost).
A model whose provider caches prompts only at explicit breakpoints gets them
in the request sent, a marked copy of the conversation (fanout.llm.caching).
A model whose request with tools was refused is remembered, so that its
later verdicts offer the tools in the prompt from the start
(fanout.research.prompted).

The SDK is imported when the first ChatClient is made, not when this module
is: commands that never chat do not pay for its import (most of a second).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

import anyio
import httpx

from fanout.llm.keys import is_openrouter
from fanout.llm.models import CHAT_TIMEOUT_S, ModelSpec
from fanout.base.errors import ProviderError
from fanout.http.bounded import response_json
from fanout.llm.caching import uses_breakpoints, with_breakpoints
from fanout.llm.endpoint import Endpoint
from fanout.llm.cost import call_cost
from fanout.llm.limits import ModelLimiter
from fanout.llm.reply import ChatResult, OversizedReply, ToolCall
from fanout.base.retry import RetryPolicy, Sleep, call_with_retries, is_retryable_status

__all__ = ["CHAT_RETRY", "CallWatcher", "ChatClient", "ChatResult", "OversizedReply", "ToolCall"]
"""ChatResult and ToolCall are defined with the reply's reading, and are what a caller of ChatClient handles."""

CHAT_RETRY = RetryPolicy(max_attempts=6, max_total_wait_s=600.0, base_wait_s=2.0, max_wait_s=60.0)
GENERATION_ATTEMPTS = 5
GENERATION_DELAY_S = 0.5


class CallWatcher(Protocol):
    """Hears of each chat call of one verdict as it happens (see ChatClient.complete)."""

    def sent(self) -> None: ...

    def answered(self, result: ChatResult) -> None: ...

    def failed(self) -> None: ...


class ChatClient:
    """Chat completions against one endpoint; one instance per endpoint per run."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        http: httpx.AsyncClient,
        retry: RetryPolicy = CHAT_RETRY,
        request_timeout_s: float = CHAT_TIMEOUT_S,
        sleep: Sleep = anyio.sleep,
        clock: Callable[[], float] = time.monotonic,
        generation_lookup: bool | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._http = http
        self._endpoint = Endpoint(
            base_url=self.base_url, api_key=api_key, http=http, timeout_s=request_timeout_s
        )
        self.policy = retry
        self._sleep = sleep
        self._openrouter = is_openrouter(self.base_url)
        self._generation_lookup = self._openrouter if generation_lookup is None else generation_lookup
        self._no_json_mode: set[str] = set()
        """Models that rejected response_format once; not asked again this run."""
        self._refused_tools: set[str] = set()
        """Models whose request with `tools` was refused once; offered tools in the prompt from then on."""
        self._clock = clock
        self._limiters: dict[str, ModelLimiter] = {}
        """Per model name: its pace and the gate its 429s close (see limiter)."""

    async def complete(
        self,
        model: ModelSpec,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        json_mode: bool = False,
        watcher: CallWatcher | None = None,
    ) -> ChatResult:
        """One logical chat call: retried per the policy; raises ProviderError when it gives up.

        `watcher` hears of the call when it goes out and when it is answered
        (before any cost lookup), so that its response id is known even if
        the process dies before the verdict is recorded.
        """
        if watcher is not None:
            watcher.sent()
        try:
            result = await self._answer(model, messages, tools, json_mode)
        except OversizedReply as exc:
            priced = await self.priced(exc)
            if watcher is not None and priced.spent is not None and priced.spent.cost_usd is not None:
                watcher.answered(priced.spent)  # generated, and /generation says what it cost
            # Else left unmatched: after a kill it counts as cut off, its cost unknown, never as a failed call's $0.
            raise priced from exc
        except ProviderError:
            if watcher is not None:
                watcher.failed()
            raise
        if watcher is not None:
            watcher.answered(result)
        await self.complete_cost(result, model)
        return result

    async def _answer(
        self, model: ModelSpec, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, json_mode: bool
    ) -> ChatResult:
        use_json = json_mode and model.name not in self._no_json_mode
        try:
            result = await self._complete_with_retries(model, messages, tools, use_json)
        except ProviderError as exc:
            if not (use_json and rejects_response_format(exc)):
                raise
            self._no_json_mode.add(model.name)
            use_json = False
            result = await self._complete_with_retries(model, messages, tools, False)
        result.json_mode_used = use_json
        return result

    async def priced(self, exc: OversizedReply) -> OversizedReply:
        """The oversized reply with what it cost in `spent`: /generation's figure by its id, else unknown.

        Its tokens were never read, so there is nothing to estimate from; an
        unknown cost is said so in the message and counted as unknown.
        """
        cost = None
        if self._generation_lookup and exc.response_id:
            cost = await self.generation_cost(exc.response_id)
        spent = ChatResult(content=None, response_id=exc.response_id, cost_usd=cost,
                           cost_source="generation" if cost is not None else "unknown")
        note = (f"its cost, ${cost:.6f}, is /generation's" if cost is not None
                else "its cost is unknown (the usage at its end was never read)")
        return OversizedReply(f"{exc}; {note}", response_id=exc.response_id, spent=spent)

    async def complete_cost(self, result: ChatResult, model: ModelSpec) -> None:
        """Fill in a cost the response left out: OpenRouter's /generation, else tokens x the model's prices."""
        if result.cost_usd is not None:
            return
        lookup = self.generation_cost if self._generation_lookup else None
        tokens = (result.prompt_tokens, result.completion_tokens, result.cached_tokens, result.cache_write_tokens)
        result.cost_usd, result.cost_source = await call_cost(model, None, result.response_id, tokens, lookup)

    async def _complete_with_retries(
        self,
        model: ModelSpec,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        json_mode: bool,
    ) -> ChatResult:
        request = self._request(model, messages, tools, json_mode)
        limiter = self.limiter(model)

        async def attempt() -> ChatResult:
            ticket = await limiter.acquire()
            try:
                result = await self._endpoint.complete(request)
            except ProviderError as exc:
                if exc.status == 429:
                    limiter.rate_limited(exc.retry_after, ticket)
                raise
            return result

        return await call_with_retries(attempt, self.policy, sleep=self._sleep)

    def tool_protocol(self, model: ModelSpec) -> str:
        """`native` or `prompted`: the one the user forced, else prompted once this model refused tools."""
        if model.tool_protocol is not None:
            return model.tool_protocol
        return "prompted" if model.name in self._refused_tools else "native"

    def tools_refused(self, model: ModelSpec) -> None:
        """Remember for the rest of the run that this model's endpoint refuses requests with tools."""
        self._refused_tools.add(model.name)

    def limiter(self, model: ModelSpec) -> ModelLimiter:
        """`model`'s limiter, made on its first request from its requests_per_minute."""
        limiter = self._limiters.get(model.name)
        if limiter is None:
            limiter = ModelLimiter(model.requests_per_minute, clock=self._clock, sleep=self._sleep)
            self._limiters[model.name] = limiter
        return limiter

    def held_back(self) -> dict[str, float]:
        """Requests per minute of each model now held back by a pace learned from its 429s."""
        rates = {name: limiter.held_back_rpm() for name, limiter in self._limiters.items()}
        return {name: rpm for name, rpm in rates.items() if rpm is not None}

    def _request(
        self,
        model: ModelSpec,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        json_mode: bool,
    ) -> dict[str, Any]:
        if uses_breakpoints(model):
            messages = with_breakpoints(messages)
        request: dict[str, Any] = {"model": model.name, "messages": messages}
        if tools:
            request["tools"] = tools
            request["tool_choice"] = "auto"
        if json_mode:
            request["response_format"] = {"type": "json_object"}
        if self._openrouter:
            # Ask OpenRouter to put the cost in the response, sparing a lookup.
            request["usage"] = {"include": True}
        return request

    async def generation_cost(self, response_id: str) -> float | None:
        """Cost from OpenRouter's generation endpoint, which lags the completion by a second or so.

        A lookup that keeps failing leaves the cost unknown (None): losing a
        cost figure is better than losing the verdict.
        """
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        url = f"{self.base_url}/generation"
        for attempt in range(1, GENERATION_ATTEMPTS + 1):
            try:
                response = await self._http.get(url, params={"id": response_id}, headers=headers)
            except httpx.HTTPError:
                response = None
            if response is not None and response.status_code == 200:
                return generation_total_cost(response)
            if response is not None and response.status_code != 404 and not is_retryable_status(
                response.status_code
            ):
                return None
            if attempt < GENERATION_ATTEMPTS:
                await self._sleep(GENERATION_DELAY_S * attempt)
        return None


def generation_total_cost(response: httpx.Response) -> float | None:
    """/generation's `total_cost`; for a bring-your-own-key call (`is_byok`) plus `upstream_inference_cost`,
    what the user's own provider account was charged (fanout.llm.reply.reported_cost says why)."""
    try:
        data = response_json(response).get("data") or {}
        cost = data.get("total_cost")
        upstream = data.get("upstream_inference_cost") if data.get("is_byok") is True else 0.0
    except (ValueError, AttributeError):
        return None
    if not isinstance(cost, (int, float)) or not isinstance(upstream, (int, float)):
        return None
    return float(cost) + float(upstream)


def rejects_tools(exc: ProviderError) -> bool:
    """A 4xx that complains about tools: the model or its endpoint has no tool calling.

    OpenRouter says 404 "No endpoints found that support tool use"; vLLM 400
    "auto" tool choice requires --enable-auto-tool-choice; others 400/422/501.
    """
    text = str(exc).lower()
    return exc.status in (400, 404, 422, 501) and ("tool" in text or "function call" in text)


def rejects_response_format(exc: ProviderError) -> bool:
    """A 400/422 that complains about response_format: the model lacks JSON mode."""
    return exc.status in (400, 422) and "response_format" in str(exc).lower()
