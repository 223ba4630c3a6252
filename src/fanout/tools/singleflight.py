"""Single-flight: concurrent callers asking for the same key share one call.

When eight models search the same query at the same moment, one request
goes upstream and the other seven wait for its answer (then the cache
serves everyone after). The first caller, the leader, runs the work in its
own task; followers wait on an anyio.Event. If the leader is cancelled (its
verdict timed out) or fails, the followers do not inherit that: they loop
and one of them leads a fresh attempt. Entries are removed as soon as the
flight lands, so the map holds only what is in the air.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

import anyio

T = TypeVar("T")


class _Flight(Generic[T]):
    def __init__(self) -> None:
        self.landed = anyio.Event()
        self.value: T | None = None
        self.ok = False


class SingleFlight(Generic[T]):
    def __init__(self) -> None:
        self._flights: dict[str, _Flight[T]] = {}

    def __len__(self) -> int:
        """Keys with a call in flight (0 when idle: nothing leaks)."""
        return len(self._flights)

    async def run(self, key: str, work: Callable[[], Awaitable[T]]) -> T:
        while True:
            flight = self._flights.get(key)
            if flight is None:
                return await self._lead(key, work)
            await flight.landed.wait()
            if flight.ok:
                return flight.value  # type: ignore[return-value]

    async def _lead(self, key: str, work: Callable[[], Awaitable[T]]) -> T:
        flight: _Flight[T] = _Flight()
        self._flights[key] = flight
        try:
            flight.value = await work()
            flight.ok = True
            return flight.value
        finally:
            del self._flights[key]
            flight.landed.set()
