"""Politeness: a minimum gap between two requests to the same host, per host.

Many verdicts run at once and models like the same few sites, so a site must
not see a burst from us. But one slow site must not hold up the others, so
there is no global lock: each host has its own next free slot, and a request
to another host never waits.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

import anyio


class HostPacer:
    """Hands out per-host slots `delay_s` apart.

    A caller reserves its slot before it sleeps (no await between reading and
    writing the slot), so concurrent callers for one host queue up in order
    without a lock. `clock` and `sleep` are injectable so tests need no real time.
    """

    def __init__(
        self,
        delay_s: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
    ) -> None:
        self._delay_s = delay_s
        self._clock = clock
        self._sleep = sleep
        self._next_free: dict[str, float] = {}

    async def wait(self, host: str) -> None:
        """Return when a request to `host` may go out."""
        if self._delay_s <= 0:
            return
        now = self._clock()
        start = max(now, self._next_free.get(host, now))
        self._next_free[host] = start + self._delay_s
        if start > now:
            await self._sleep(start - now)
