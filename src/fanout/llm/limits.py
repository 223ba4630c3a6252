"""Holding back a model's requests after its provider has said when to come back.

A 429 with Retry-After is about the model's quota, not about the one request
that received it. Without a gate every verdict in flight for that model finds
out on its own, each with a 429 of its own, and each retries on its own
jittered clock, so a model over its limit keeps hitting it. With one, the
first 429 closes the model's gate until the time the provider named; requests
for that model wait there instead of being sent, and other models carry on.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio

Sleep = Callable[[float], Awaitable[None]]


class RateGate:
    """One gate per model name; closed until a time a provider named, open otherwise."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, sleep: Sleep = anyio.sleep) -> None:
        self._clock = clock
        self._sleep = sleep
        self._open_at: dict[str, float] = {}

    async def wait(self, model: str) -> None:
        """Return once `model`'s gate is open (at once when it never closed)."""
        delay = self._open_at.get(model, 0.0) - self._clock()
        if delay > 0:  # once: should a later 429 have moved the time on, the request meets it and waits again
            await self._sleep(delay)

    def close(self, model: str, seconds: float) -> None:
        """Keep `model`'s requests back for `seconds` from now (never shortening an earlier close)."""
        self._open_at[model] = max(self._open_at.get(model, 0.0), self._clock() + seconds)
