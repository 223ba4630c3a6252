"""The one door to an OpenAI-compatible endpoint: one POST per chat call on the run's shared httpx client.

fanout speaks the chat-completions wire itself. The request body is already
in the wire's shape; it goes out as compact UTF-8 JSON with the headers an
OpenAI-compatible server expects (the key as a Bearer token, JSON in and out,
fanout's User-Agent), and the reply is read as JSON into a plain dict that
fanout.llm.reply reads as leniently as the raw JSON allows. The openai SDK
did this until issue 31: importing it cost 1 to 2 s of CPU in every process
(781 modules), about a third of a short run's start-up, and each call about
3 ms of CPU in its request options, headers and reply models, for a request
it did not change (docs/departures.md says so with the figures).

Nothing is retried here: fanout.base.retry is the one retry layer. Failures
are translated here, once, into ProviderError: the status, the server's
message (the `error` object unwrapped, else "Error code: N - <body>", the
words the SDK used), its Retry-After; the key never appears in a message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import httpx

from fanout.base.errors import ModelRefused, ProviderError
from fanout.http.bounded import (
    BodyTooLarge, DeadlinePassed, EncodingRefused, JsonTooDeep, describe_bytes, parse_json,
)
from fanout.llm.reply import (
    UNKNOWN_BODY_ERROR_STATUS, ChatResult, OversizedReply, error_text, parse_completion, redact,
)
from fanout.base.retry import is_refusal, is_retryable_status, parse_retry_after, retry_after_from_metadata


class Endpoint:
    """Chat completions from one base URL; a request body in, a ChatResult or a ProviderError out."""

    def __init__(self, *, base_url: str, api_key: str | None, http: httpx.AsyncClient, timeout_s: float) -> None:
        self._secret = api_key
        self._http = http
        self._url = httpx.URL(base_url.rstrip("/") + "/chat/completions")
        self._headers = {
            "Authorization": f"Bearer {api_key or 'unused'}",  # local servers ignore it, but some insist on it
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        self._timeout = httpx.Timeout(timeout_s)

    async def complete(self, body: dict[str, Any]) -> ChatResult:
        """POST one chat completion; every failure, in the status or in the body, is a ProviderError."""
        response = await self._post(wire_json(body))
        if not response.is_success:  # redirects are not followed, so one is an error too
            raise status_error(response, secret=self._secret)
        return without_secret(parse_completion(read_completion(response.content), secret=self._secret), self._secret)

    async def _post(self, content: bytes) -> httpx.Response:
        """The response, body read; not getting one is a ProviderError that says why."""
        try:
            return await self._http.post(self._url, content=content, headers=self._headers, timeout=self._timeout)
        except httpx.TimeoutException as exc:
            if isinstance(exc, DeadlinePassed):
                raise ProviderError(f"the endpoint's reply was not complete in time: {exc}", retryable=True) from exc
            raise ProviderError("the endpoint did not answer in time", retryable=True) from exc
        except BodyTooLarge as exc:
            raise oversized_reply(exc) from exc
        except EncodingRefused as exc:  # asking again brings the same encoding
            raise ProviderError(f"the endpoint's reply cannot be read: {exc}") from exc
        except Exception as exc:  # no response at all, whatever stopped it (the SDK caught as widely): it says why
            raise ProviderError(f"cannot reach the endpoint: {redact(str(exc), self._secret)}", retryable=True) from exc


def wire_json(body: dict[str, Any]) -> bytes:
    """The body as httpx and the openai SDK encode JSON: UTF-8, compact, no NaN."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def without_secret(result: ChatResult, secret: str | None) -> ChatResult:
    """The reply with the key cut out of everything the model (or the server) wrote.

    An endpoint that echoes the key would otherwise get it into the log, the
    views, the report and the search cache, and send it on as a tool argument
    (a search query, a URL to fetch). Redacted here, before anything reads it.
    """
    if not secret:
        return result
    if result.content is not None:
        result.content = redact(result.content, secret)
    if result.served_model is not None:
        result.served_model = redact(result.served_model, secret)
    result.tool_calls = [
        call._replace(name=redact(call.name, secret), arguments=redact(call.arguments, secret))
        for call in result.tool_calls
    ]
    return result


def read_completion(content: bytes) -> dict[str, Any]:
    """The body as JSON: an object, or the ProviderError that says what came instead.

    Bytes that are not UTF-8 (a provider cutting a character in two) become
    U+FFFD: JSON's own syntax is ASCII, so only the text they sit in changes,
    and the reply, its usage and its cost are read, not lost as "not JSON"
    after being paid.
    """
    try:
        data = parse_json(content)
    except JsonTooDeep as exc:  # a server's own nesting, not a cut: asking again brings (and may bill) the same
        raise ProviderError(f"the endpoint answered 200 with {exc}", status=UNKNOWN_BODY_ERROR_STATUS) from exc
    except UnicodeDecodeError:
        return read_completion(content.decode("utf-8", errors="replace").encode())
    except ValueError as exc:
        raise malformed_body("a body that is not JSON") from exc
    if not isinstance(data, dict):
        raise malformed_body("JSON that is not an object")
    return data


RESPONSE_ID = re.compile(rb'^\{\s*"id"\s*:\s*"([^"\\]{1,200})"')
"""A chat completion's id, its first field as OpenAI and OpenRouter send it."""


def oversized_reply(exc: BodyTooLarge) -> OversizedReply:
    """A reply over the byte cap: generated, perhaps paid for, never read. Its id, if it came first, is kept
    so that its cost can still be looked up (fanout.llm.chat)."""
    found = RESPONSE_ID.match(exc.head)
    return OversizedReply(
        f"the reply was larger than the {describe_bytes(exc.cap)} cap on a response body "
        "(fanout.http.bounded.MAX_BODY_BYTES) and was not read",
        response_id=found.group(1).decode("utf-8", "replace") if found else None,
    )


def malformed_body(what: str) -> ProviderError:
    """A 200 that cannot be read: most likely a proxy or provider failing mid-answer, so worth retrying."""
    return ProviderError(f"the endpoint answered 200 with {what}", status=UNKNOWN_BODY_ERROR_STATUS, retryable=True)


def status_error(response: httpx.Response, *, secret: str | None) -> ProviderError:
    """Translate an HTTP error status, keeping the server's message and retry hint.

    The message is the `error` object's own, with the upstream provider's
    reason OpenRouter relays in its metadata (fanout.llm.reply.error_text),
    else the words the openai SDK used: "Error code: N - <body>", or the
    body's text when it is not JSON.
    """
    status = response.status_code
    text = response.text.strip()
    try:
        parsed: Any = parse_json(text)  # depth-bounded, as every body fanout reads (too deep: its text)
        fallback = f"Error code: {status} - {parsed}"
    except ValueError:
        parsed, fallback = None, text or f"Error code: {status}"
    body = parsed.get("error", parsed) if isinstance(parsed, Mapping) else None
    body = body if isinstance(body, Mapping) else {}
    message = error_text(body) if body.get("message") else fallback
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if retry_after is None:
        retry_after = retry_after_from_metadata(body.get("metadata"))
    said = f"HTTP {status}: {redact(str(message), secret)}"
    if refuses_model(status, said):
        return ModelRefused(said, status=status)
    return ProviderError(said, status=status, retryable=is_retryable_status(status), retry_after=retry_after,
                         refused=is_refusal(status, said))


NO_SUCH_MODEL = re.compile(r"not a valid model|invalid model|no such model|unknown model|model\b.*\b(not found|does not exist)"
                           r"|no endpoints found", re.IGNORECASE)
"""How endpoints say a model is not theirs: OpenRouter (400 "X is not a valid model ID", 404 "No endpoints found
for X"), OpenAI and vLLM (404 "The model `X` does not exist"), Ollama (404 "model 'X' not found")."""


def refuses_model(status: int, message: str) -> bool:
    """A refusal of the model itself, not of one request: every pair of the model would meet it.

    Refusals of a feature are not: response_format (the JSON-mode fallback
    handles it) and tools (the model is switched to the prompted protocol).
    """
    features = ("response_format", "tool")
    return (status in (400, 404) and NO_SUCH_MODEL.search(message) is not None
            and not any(word in message.lower() for word in features))
