"""One chat call to an OpenAI-compatible endpoint, with retries, error translation and cost.

This is the boundary with the provider: httpx exceptions, error statuses,
errors hidden in a 200 body and malformed bodies all leave here as a
ProviderError (see fanout.errors), and a response leaves as a plain
ChatResult. The body is read as a dict because providers add fields typed
models do not know (OpenRouter's `usage.cost`, an `error` object next to
`choices`, finish_reason "error").

The request is a plain JSON POST on the run's shared httpx pool, not the
openai SDK: the SDK's import costs over a second of start-up and its
request-parameter transform walks every message of every call (about 10 ms
of CPU per chat call on a long conversation, most of the engine's overhead
in `make bench`). Errors are read the way the SDK reads them (the `error`
object's message, else "Error code: N - body"), so messages are unchanged.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import anyio
import httpx

from fanout.config import ModelSpec, is_openrouter
from fanout.errors import ProviderError
from fanout.llm.limits import ModelLimiter
from fanout.retry import (
    RetryPolicy,
    Sleep,
    call_with_retries,
    is_retryable_status,
    parse_retry_after,
    retry_after_from_metadata,
)

# An error in a 200 body that names no HTTP status is most likely the upstream
# provider failing mid-answer: treat it like a 502, which is worth retrying.
UNKNOWN_BODY_ERROR_STATUS = 502
CHAT_RETRY = RetryPolicy(max_attempts=6, max_total_wait_s=600.0, base_wait_s=2.0, max_wait_s=60.0)
GENERATION_ATTEMPTS = 5
GENERATION_DELAY_S = 0.5


class ToolCall(NamedTuple):
    """A tool call as the model asked for it; `arguments` is the raw JSON string."""

    id: str
    name: str
    arguments: str


@dataclass
class ChatResult:
    """What one chat completion produced, reduced to what a verdict needs."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    """USD as the provider reported it; None = unknown (local servers), never a guess."""
    response_id: str | None = None
    served_model: str | None = None
    json_mode_used: bool = False
    """False when json_mode was asked for but this model rejects response_format."""


class ChatClient:
    """Chat completions against one endpoint; one instance per endpoint per run."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None,
        http: httpx.AsyncClient,
        retry: RetryPolicy = CHAT_RETRY,
        request_timeout_s: float = 120.0,
        sleep: Sleep = anyio.sleep,
        clock: Callable[[], float] = time.monotonic,
        generation_lookup: bool | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._http = http
        self._url = httpx.URL(f"{self.base_url}/chat/completions")  # parsed once, not per call
        # Any string will do for local servers, which ignore it but may insist on the header.
        self._headers = {"Authorization": f"Bearer {api_key or 'unused'}", "Accept": "application/json"}
        self._timeout = request_timeout_s
        self.policy = retry
        self._sleep = sleep
        self._openrouter = is_openrouter(self.base_url)
        self._generation_lookup = self._openrouter if generation_lookup is None else generation_lookup
        self._template: tuple[list[tuple[bytes, bytes]], dict[str, Any]] | None = None
        """Headers and extensions every chat POST shares (see _build); made on the first call."""
        self._no_json_mode: set[str] = set()
        """Models that rejected response_format once; not asked again this run."""
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
    ) -> ChatResult:
        """One logical chat call: retried per the policy; raises ProviderError when it gives up."""
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
        if result.cost_usd is None and self._generation_lookup and result.response_id:
            result.cost_usd = await self.generation_cost(result.response_id)
        return result

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
            await limiter.acquire()
            try:
                return parse_completion(await self._post(request), secret=self._api_key)
            except ProviderError as exc:
                if exc.status == 429:
                    limiter.rate_limited(exc.retry_after)
                raise

        return await call_with_retries(attempt, self.policy, sleep=self._sleep)

    def limiter(self, model: ModelSpec) -> ModelLimiter:
        """`model`'s limiter, made on its first request from its requests_per_minute."""
        limiter = self._limiters.get(model.name)
        if limiter is None:
            limiter = ModelLimiter(model.requests_per_minute, clock=self._clock, sleep=self._sleep)
            self._limiters[model.name] = limiter
        return limiter

    def _request(
        self,
        model: ModelSpec,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        json_mode: bool,
    ) -> dict[str, Any]:
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

    async def _post(self, request: dict[str, Any]) -> dict[str, Any]:
        """POST the completion and return the JSON body; every failure becomes a ProviderError."""
        try:
            response = await self._http.send(self._build(request))
        except httpx.TimeoutException as exc:
            raise ProviderError("the endpoint did not answer in time", retryable=True) from exc
        except Exception as exc:  # like the SDK before it: no response at all is a connection problem
            detail = redact(str(exc), self._api_key)
            raise ProviderError(f"cannot reach the endpoint: {detail}", retryable=True) from exc
        if not response.is_success:
            raise status_error(response, secret=self._api_key)
        try:
            body = json.loads(response.content)
        except ValueError as exc:
            raise ProviderError(
                "the endpoint answered 200 with a body that is not JSON",
                status=UNKNOWN_BODY_ERROR_STATUS,
                retryable=True,
            ) from exc
        if not isinstance(body, dict):
            raise ProviderError(
                "the endpoint answered 200 with JSON that is not an object",
                status=UNKNOWN_BODY_ERROR_STATUS,
                retryable=True,
            )
        return body

    def _build(self, request: dict[str, Any]) -> httpx.Request:
        """The request `http.post(url, json=request, headers=..., timeout=...)` would send, built cheaply.

        httpx's build_request merges the client's headers, URL, cookies and
        params and re-derives the body headers on every call, about a third
        of a chat call's CPU before a byte is sent. All of that is the same
        for every call but the body, so it is done once, on the first call
        (the client's headers are read then), and only the body and its
        length are new. A client that holds cookies (never the run's, whose
        jar refuses them all) gets httpx's own path.
        """
        if self._http.cookies:
            return self._http.build_request(
                "POST", self._url, json=request, headers=self._headers, timeout=self._timeout
            )
        headers, extensions = self._template or self._make_template()
        body = json.dumps(request, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        length = str(len(body)).encode("ascii")
        raw = [(key, length if key.lower() == b"content-length" else value) for key, value in headers]
        built = httpx.Request("POST", self._url, headers=raw, stream=httpx.ByteStream(body), extensions=extensions)
        built.read()  # as httpx does for a body it holds in full: `request.content` is then readable
        return built

    def _make_template(self) -> tuple[list[tuple[bytes, bytes]], dict[str, Any]]:
        """Headers (in httpx's order) and extensions of a chat POST, from one request httpx builds itself."""
        probe = self._http.build_request("POST", self._url, json={}, headers=self._headers, timeout=self._timeout)
        self._template = (probe.headers.raw, probe.extensions)
        return self._template

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
    try:
        data = response.json().get("data") or {}
        cost = data.get("total_cost")
    except (ValueError, AttributeError):
        return None
    return float(cost) if isinstance(cost, (int, float)) else None


def parse_completion(body: Mapping[str, Any], *, secret: str | None = None) -> ChatResult:
    """A completion body as a ChatResult, or the ProviderError an error inside it carries."""
    choices = body.get("choices") or []
    if body.get("error") and not choices:
        raise body_error(body["error"], secret=secret)
    if not choices or not isinstance(choices[0], Mapping):
        raise ProviderError(
            "the endpoint answered without choices",
            status=UNKNOWN_BODY_ERROR_STATUS,
            retryable=True,
        )
    choice = choices[0]
    if choice.get("finish_reason") == "error" or body.get("error"):
        raise body_error(choice.get("error") or body.get("error") or {}, secret=secret)
    message = choice.get("message") or {}
    tool_calls = parse_tool_calls(message.get("tool_calls"))
    usage = body.get("usage") or {}
    return ChatResult(
        content=message_text(message.get("content")),
        tool_calls=tool_calls,
        finish_reason=choice.get("finish_reason") or ("tool_calls" if tool_calls else "stop"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cost_usd=_cost(usage.get("cost")),
        response_id=body.get("id"),
        served_model=body.get("model"),
    )


def _cost(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return float(value)
    except ValueError:
        return None


def message_text(content: Any) -> str | None:
    """Message content as text; some servers send a list of typed parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, Mapping)]
        return "".join(parts)
    return str(content)


def parse_tool_calls(raw: Any) -> list[ToolCall]:
    """Tool calls with ids filled in and arguments as a string, whatever the server sent."""
    calls: list[ToolCall] = []
    for index, item in enumerate(raw or []):
        if not isinstance(item, Mapping):
            continue
        function = item.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        call_id = item.get("id") or f"call_{index}"
        calls.append(ToolCall(id=str(call_id), name=str(function.get("name") or ""), arguments=arguments))
    return calls


def status_error(response: httpx.Response, *, secret: str | None) -> ProviderError:
    """Translate an HTTP error status, keeping the server's message and retry hint.

    The message is the `error` object's own, else "Error code: N - <body>" as
    the openai SDK words it, so logs read the same whichever client sent it.
    """
    status = response.status_code
    text = response.text.strip()
    try:
        parsed: Any = json.loads(text)
        fallback = f"Error code: {status} - {parsed}"
    except ValueError:
        parsed = text
        fallback = text or f"Error code: {status}"
    error = parsed.get("error", parsed) if isinstance(parsed, Mapping) else parsed
    body = error if isinstance(error, Mapping) else {}
    message = body.get("message") or fallback
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if retry_after is None:
        retry_after = retry_after_from_metadata(body.get("metadata"))
    return ProviderError(
        f"HTTP {status}: {redact(str(message), secret)}",
        status=status,
        retryable=is_retryable_status(status),
        retry_after=retry_after,
    )


def body_error(error: Any, *, secret: str | None) -> ProviderError:
    """An error delivered inside a 200 body, treated like the status it names."""
    error = error if isinstance(error, Mapping) else {"message": str(error)}
    status = _status_code(error.get("code")) or UNKNOWN_BODY_ERROR_STATUS
    message = redact(str(error.get("message") or "the provider reported an error"), secret)
    return ProviderError(
        f"error in a 200 response (code {status}): {message}",
        status=status,
        retryable=is_retryable_status(status),
        retry_after=retry_after_from_metadata(error.get("metadata")),
    )


def _status_code(code: Any) -> int | None:
    try:
        value = int(code)
    except (TypeError, ValueError):
        return None
    return value if 100 <= value <= 599 else None


def rejects_response_format(exc: ProviderError) -> bool:
    """A 400/422 that complains about response_format: the model lacks JSON mode."""
    return exc.status in (400, 422) and "response_format" in str(exc).lower()


def redact(text: str, secret: str | None) -> str:
    """Keep a key out of error messages that echo the request back."""
    return text.replace(secret, "[redacted]") if secret else text
