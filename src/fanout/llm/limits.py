"""How fast one model's requests may go: an even pace, and the gate a 429 closes.

Both are about the model's quota, not about any one request, so one
ModelLimiter per model holds both and every attempt for that model passes
it (ChatClient acquires it before each attempt, retries included).

The pace is what the user told us (requests_per_minute): one request every
60/N seconds, no burst. AsyncLimiter(N, 60) would be a bucket that holds N:
it lets N requests through at once and keeps leaking more, so close to 2N
can land inside one minute and a provider counting N per minute (OpenRouter
counts over 10 s windows) answers 429 all the same. A bucket of one that
leaks every 60/N seconds keeps within N per minute over any window.

The gate is what the provider told us: a 429 with Retry-After closes it until
the time named. Without it every verdict in flight for that model finds out
on its own, each with a 429 of its own, and each retries on its own jittered
clock, so a model over its limit keeps hitting it. With it, requests for that
model wait at the gate instead of being sent, and other models carry on.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
from aiolimiter import AsyncLimiter

from fanout.retry import Sleep


class ModelLimiter:
    """One model's pace and gate; `acquire` before every request, `rate_limited` after every 429."""

    def __init__(
        self,
        requests_per_minute: float | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Sleep = anyio.sleep,
    ) -> None:
        self._pace = AsyncLimiter(1, 60.0 / requests_per_minute) if requests_per_minute else None
        self._clock = clock
        self._sleep = sleep
        self._open_at = 0.0
        """The clock time the gate opens again; in the past while it is open."""

    async def acquire(self) -> None:
        """Return when the next request may be sent: the gate open, then the request's turn in the pace."""
        delay = self._open_at - self._clock()
        if delay > 0:  # once: should a later 429 have moved the time on, the request meets it and waits again
            await self._sleep(delay)
        if self._pace is not None:
            await self._pace.acquire()

    def rate_limited(self, retry_after: float | None) -> None:
        """The provider answered 429: with a Retry-After, hold every request back that long.

        An earlier, longer hold is never shortened; a 429 without a hint
        closes nothing (the retry policy's backoff is all there is to go by).
        """
        if retry_after:
            self._open_at = max(self._open_at, self._clock() + retry_after)
