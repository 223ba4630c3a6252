"""The one retry policy for remote calls: which failures to retry, and how long to wait.

LLM chat calls and Wikidata requests are retried here, each caller with its
own bounds (a RetryPolicy value); search providers do not retry, they hand
their failure to the next provider, but classify it with the same helpers.
Nothing below it retries (fanout.llm.endpoint posts once) so that exactly one layer
decides; two layers would multiply attempts and ignore each other's waits.
Whether an error is worth retrying is decided once, when it is translated into
a RetryableError (`retryable`, `retry_after`); this module only schedules.

Waits grow exponentially with jitter (so many verdicts hit by the same 429 do
not come back in lockstep), never undercut the server's own Retry-After, and
stop when either the attempts or the total time spent waiting run out.
"""

from __future__ import annotations

import random
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import anyio
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from fanout.base.errors import RetryableError

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]

RETRYABLE_STATUSES = frozenset({408, 429})
_JITTER = random.Random()
"""One generator for every call's jitter: seeding a fresh one costs an os.urandom call per chat call."""


def is_retryable_status(status: int | None) -> bool:
    """408 and 429 are "try later"; any 5xx is the provider's trouble, not ours."""
    return status is not None and (status in RETRYABLE_STATUSES or 500 <= status <= 599)


REFUSED_STATUSES = frozenset({413})
CONTEXT_TOO_LONG = re.compile(
    r"context[ _-]?(length|window|size)|prompt is too long|maximum number of tokens", re.IGNORECASE
)
"""How endpoints word a request over the model's context: OpenAI, OpenRouter and vLLM ("maximum context
length"), Anthropic ("prompt is too long"), llama.cpp ("context size"), LiteLLM (ContextWindowExceeded),
Gemini ("maximum number of tokens")."""


def is_refusal(status: int | None, message: str) -> bool:
    """The endpoint will never take this request as it stands: too large (413), or over the model's context.

    Asking again sends the same conversation, so a resume would pay for the
    same refusal every time. Any other 400 or 422 (a wrong model name, a
    parameter the endpoint rejects) is more likely a set-up mistake that
    fails every pair: it stays an error, so the run does not finish quietly.
    """
    if status in REFUSED_STATUSES:
        return True
    return status in (400, 422) and CONTEXT_TOO_LONG.search(message) is not None


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After value: delta-seconds or an HTTP date."""
    if value is None or not str(value).strip():
        return None
    text = str(value).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def retry_after_from_metadata(metadata: Any, *, now: datetime | None = None) -> float | None:
    """OpenRouter relays the upstream provider's hint inside error.metadata.

    It may be a plain number of seconds, a copy of the provider's headers
    (Retry-After, or X-RateLimit-Reset as epoch milliseconds), or absent.
    """
    if not isinstance(metadata, Mapping):
        return None
    for key in ("retry_after", "retry_after_seconds", "retryAfter"):
        if key in metadata:
            seconds = parse_retry_after(str(metadata[key]), now=now)
            if seconds is not None:
                return seconds
    headers = metadata.get("headers")
    if not isinstance(headers, Mapping):
        return None
    return _from_headers({str(k).lower(): v for k, v in headers.items()}, now)


def _from_headers(lowered: Mapping[str, Any], now: datetime | None) -> float | None:
    """From the provider's headers (names lower-cased): Retry-After first, else X-RateLimit-Reset (epoch ms)."""
    if "retry-after" in lowered:
        return parse_retry_after(str(lowered["retry-after"]), now=now)
    reset = lowered.get("x-ratelimit-reset")
    try:
        reset_ms = float(reset) if reset is not None else None
    except (TypeError, ValueError):
        return None
    if reset_ms is None:
        return None
    current = (now or datetime.now(timezone.utc)).timestamp()
    return max(0.0, reset_ms / 1000.0 - current)


@dataclass(frozen=True)
class RetryPolicy:
    """Bounds for one logical call: how many attempts and how much waiting in total."""

    max_attempts: int = 6
    max_total_wait_s: float = 600.0
    base_wait_s: float = 2.0
    max_wait_s: float = 60.0

    def backoff(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Wait before attempt `attempt + 1`: jittered exponential, at least Retry-After."""
        ceiling = min(self.max_wait_s, self.base_wait_s * 2 ** (attempt - 1))
        jittered = rng.uniform(ceiling / 2, ceiling)
        return max(jittered, retry_after or 0.0)


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, RetryableError) and exc.retryable


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Sleep = anyio.sleep,
    rng: random.Random | None = None,
) -> T:
    """Run `attempt` until it succeeds, fails for good, or the policy's bounds are spent.

    The last RetryableError is re-raised as is, so callers see the real status.
    Most calls succeed at once, so the first attempt runs outside tenacity (whose
    set-up costs about as much as parsing the reply); a retryable failure is then
    replayed as tenacity's own first attempt, so waits and limits count the same.
    """
    try:
        return await attempt()
    except RetryableError as exc:
        if not exc.retryable:
            raise
        replayed: list[RetryableError] = [exc]

    async def replay_then_attempt() -> T:
        if replayed:
            raise replayed.pop()
        return await attempt()

    jitter = rng or _JITTER

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        hint = exc.retry_after if isinstance(exc, RetryableError) else None
        return policy.backoff(state.attempt_number, hint, jitter)

    def stop(state: RetryCallState) -> bool:
        # tenacity computes the upcoming wait before asking whether to stop,
        # so a Retry-After longer than the remaining budget ends it at once.
        out_of_attempts = state.attempt_number >= policy.max_attempts
        return out_of_attempts or state.idle_for + state.upcoming_sleep > policy.max_total_wait_s

    retrying = AsyncRetrying(
        retry=retry_if_exception(_retryable), wait=wait, stop=stop, sleep=sleep, reraise=True
    )
    return await retrying(replay_then_attempt)
