"""What a chat completion said, read from its JSON: a ChatResult, or a ProviderError.

The reply is read as the server sent it, field by field: OpenRouter's extras
(`usage.cost`, an `error` object next to `choices` or inside a choice) by
name, and whatever does not fit the OpenAI shape (a tool call that is not an
object, arguments that are not a string, content as a list of parts, a count
that is not a number) as leniently as the JSON allows, so that a reply that
was paid for is not lost to a detail of its shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fanout.base.errors import ProviderError
from fanout.http.bounded import parse_json
from fanout.llm.cost import CostSource
from fanout.base.retry import is_refusal, is_retryable_status, retry_after_from_metadata

# An error in a 200 body that names no HTTP status is most likely the upstream
# provider failing mid-answer: treat it like a 502, which is worth retrying.
UNKNOWN_BODY_ERROR_STATUS = 502


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
    """USD for this call; None = unknown, never a guess (see cost_source for where it came from)."""
    cost_source: CostSource = "unknown"
    """reported (in the response), generation (looked up), estimated (tokens x prices) or unknown."""
    cached_tokens: int = 0
    """Prompt tokens the provider read from its cache (`usage.prompt_tokens_details.cached_tokens`)."""
    cache_write_tokens: int = 0
    """Prompt tokens the provider wrote to its cache (`usage.prompt_tokens_details.cache_write_tokens`,
    OpenRouter's field; 0 where it is not reported)."""
    response_id: str | None = None
    served_model: str | None = None
    json_mode_used: bool = False
    """False when json_mode was asked for but this model rejects response_format."""

    def call_record(self) -> dict[str, Any]:
        """What an in-flight file keeps of the call (fanout.store.attempts), so a kill cannot lose its cost."""
        return {"id": self.response_id, "cost": self.cost_usd, "prompt": self.prompt_tokens,
                "completion": self.completion_tokens, "cached": self.cached_tokens, "written": self.cache_write_tokens}


class OversizedReply(ProviderError):
    """A reply longer than the byte cap on a response body (fanout.http.bounded): not read, not retried.

    The endpoint generated it and may charge for it, so its cost is looked up
    by `response_id` where that can be done (OpenRouter's /generation) and
    kept in `spent`; else the cost is unknown and the message says so.
    """

    def __init__(self, message: str, *, response_id: str | None, spent: ChatResult | None = None) -> None:
        super().__init__(message, retryable=False)
        self.response_id = response_id
        self.spent = spent


def parse_completion(completion: Mapping[str, Any], *, secret: str | None = None) -> ChatResult:
    """A completion (its JSON object) as a ChatResult, or the ProviderError an error inside it carries."""
    choice = _first_choice(completion, secret)
    finish_reason = _field(choice, "finish_reason")
    message = _field(choice, "message")
    tool_calls = parse_tool_calls(_field(message, "tool_calls"))
    usage = completion.get("usage")
    cost, cost_source = reported_cost(usage)
    return ChatResult(
        content=message_text(_field(message, "content")),
        tool_calls=tool_calls,
        finish_reason=finish_reason or ("tool_calls" if tool_calls else "stop"),
        prompt_tokens=int(_field(usage, "prompt_tokens") or 0),
        completion_tokens=int(_field(usage, "completion_tokens") or 0),
        cost_usd=cost,
        cost_source=cost_source,
        cached_tokens=_count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens")),
        cache_write_tokens=_count(_field(_field(usage, "prompt_tokens_details"), "cache_write_tokens")),
        response_id=_text(completion.get("id")),
        served_model=_text(completion.get("model")),
    )


def _first_choice(completion: Mapping[str, Any], secret: str | None) -> Any:
    """The reply's first choice; the ProviderError for an error in the body (beside the choices or in the first
    one, finish_reason `error`), or for a reply without choices."""
    choices = completion.get("choices")
    choices = choices if isinstance(choices, list) else []
    error = completion.get("error")
    if error and not choices:
        raise body_error(error, secret=secret)
    if not _is_object(choices[0] if choices else None):
        raise ProviderError(
            "the endpoint answered without choices",
            status=UNKNOWN_BODY_ERROR_STATUS,
            retryable=True,
        )
    choice = choices[0]
    if _field(choice, "finish_reason") == "error" or error:
        raise body_error(_field(choice, "error") or error or {}, secret=secret)
    return choice


def reported_cost(usage: Any) -> tuple[float | None, CostSource]:
    """What the reply says the call cost, and how it says it.

    A bring-your-own-key call on OpenRouter (`is_byok: true`) reports as
    `cost` only OpenRouter's fee, often 0; the provider bills the user's own
    account `cost_details.upstream_inference_cost`, and the call cost both.
    Without that figure a BYOK call's cost is not in the reply (None), so it
    is looked up or estimated like any cost left out; never counted as $0.
    """
    cost = _cost(_field(usage, "cost"))
    if _field(usage, "is_byok") is True:
        upstream = _cost(_field(_field(usage, "cost_details"), "upstream_inference_cost"))
        if upstream is None:
            return None, "unknown"
        return (cost or 0.0) + upstream, "byok"
    return cost, "reported" if cost is not None else "unknown"


def _is_object(value: Any) -> bool:
    """Whether `value` was a JSON object."""
    return isinstance(value, dict)


def _field(value: Any, name: str) -> Any:
    """A field of a JSON object; None if absent, or if `value` is not an object."""
    return value.get(name) if isinstance(value, dict) else None


def _text(value: Any) -> str | None:
    """An id or a name as text, whatever JSON type the server sent it as."""
    return None if value is None else value if isinstance(value, str) else json.dumps(value)


def _count(value: Any) -> int:
    """A token count as the server sent it; one that is not a count is 0, never an error that loses the reply."""
    try:
        number = int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0
    return max(number, 0)


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
        if not _is_object(item):
            continue
        function = _field(item, "function")
        arguments = _field(function, "arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        call_id = _field(item, "id") or f"call_{index}"
        calls.append(ToolCall(id=str(call_id), name=str(_field(function, "name") or ""), arguments=arguments))
    return calls


def body_error(error: Any, *, secret: str | None) -> ProviderError:
    """An error delivered inside a 200 body, treated like the status it names."""
    error = error if isinstance(error, Mapping) else {"message": str(error)}
    status = _status_code(error.get("code")) or UNKNOWN_BODY_ERROR_STATUS
    message = redact(error_text(error), secret)
    return ProviderError(
        f"error in a 200 response (code {status}): {message}",
        status=status,
        retryable=is_retryable_status(status),
        retry_after=retry_after_from_metadata(error.get("metadata")),
        refused=is_refusal(status, message),
    )


UPSTREAM_REASON_CHARS = 500
"""How much of the upstream provider's own reason an error message keeps."""


def error_text(error: Mapping[str, Any]) -> str:
    """An error object's message, with the upstream provider's own reason when OpenRouter relayed one.

    OpenRouter wraps a provider's refusal as "Provider returned error" and
    puts the provider's words in `metadata.raw` (a string, often itself
    JSON) and its name in `metadata.provider_name`. Those words are what
    says the prompt was over the context, or that tools or JSON mode are not
    supported, so they are kept in the message, and the record, where the
    classifiers (fanout.base.retry.is_refusal, rejects_tools,
    rejects_response_format) read them as they read an unwrapped message.
    """
    message = str(error.get("message") or "the provider reported an error")
    reason = upstream_reason(error.get("metadata"), message)
    return f"{message} ({reason})" if reason else message


def upstream_reason(metadata: Any, message: str = "") -> str | None:
    """`<provider> said: <its message>` from OpenRouter's error metadata; None when it relays no raw error,
    or when `message` already says it."""
    if not isinstance(metadata, Mapping) or metadata.get("raw") in (None, ""):
        return None
    text = " ".join(_raw_text(metadata["raw"]).split())
    if not text or text in message:
        return None
    if len(text) > UPSTREAM_REASON_CHARS:
        text = text[:UPSTREAM_REASON_CHARS] + "..."
    provider = metadata.get("provider_name")
    who = str(provider) if isinstance(provider, str) and provider else "the upstream provider"
    return f"{who} said: {text}"


def _raw_text(raw: Any) -> str:
    """The provider's message inside `raw`: its `message` (and `param`) when raw is JSON, else raw as it is."""
    parsed = raw
    if isinstance(raw, str):
        try:
            parsed = parse_json(raw, max_depth=RAW_DEPTH)
        except ValueError:
            return raw
    found = _message_in(parsed, RAW_DEPTH)
    if found is not None:
        return found
    return raw if isinstance(raw, str) else json.dumps(raw)[:UPSTREAM_REASON_CHARS]


RAW_DEPTH = 8
"""Provider errors nest their message two or three objects down ({"error": {"message": ...}})."""


def _message_in(value: Any, depth: int) -> str | None:
    """The first `message` string in a provider's error object, with its `param` when it names one."""
    if depth <= 0 or not isinstance(value, Mapping):
        return None
    message = value.get("message")
    if isinstance(message, str) and message:
        param = value.get("param")
        return f"{message} (param: {param})" if isinstance(param, str) and param else message
    for inner in value.values():
        found = _message_in(inner, depth - 1)
        if found is not None:
            return found
    return None


def _status_code(code: Any) -> int | None:
    try:
        value = int(code)
    except (TypeError, ValueError):
        return None
    return value if 100 <= value <= 599 else None


SECRET_TAIL_CHARS = 16
"""A key's last dash-separated part this long is secret on its own (`sk-or-v1-<64 hex>`)."""


def redact(text: str, secret: str | None) -> str:
    """Keep a key out of text that may echo it: error messages, and what the model writes.

    The key's body without its prefix is cut out too: a prefix stripped is still a leak.
    """
    if not secret:
        return text
    text = text.replace(secret, "[redacted]")
    tail = secret.rsplit("-", 1)[-1]
    return text.replace(tail, "[redacted]") if tail != secret and len(tail) >= SECRET_TAIL_CHARS else text
