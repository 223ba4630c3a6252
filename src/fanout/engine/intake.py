"""How items come into a run that grows: kept while their verdicts run, let in under a budget and a pace.

A snapshot's items are all known when a run starts; a live source's
(fanout.base.item.LiveItems, `fanout watch`) arrive for as long as it runs.
The orchestrator keeps those in `GrowingItems`, numbered in arrival order as
a snapshot's are by their place, and forgets each once its verdicts are
logged, so a run that goes on for weeks holds only the items in progress.

`Admission` decides when the next item may come in: at most `per_minute`
items in any minute, and at most `cost_per_hour_usd` spent in any hour. The
cost of an item is known only once its verdicts are done, so an item in
progress counts for what items have cost on average this session (the first
one alone, until one has finished): the next is let in only when that hour's
spend, the estimates of the items in progress and its own estimate fit under
the cap. While it waits, items wait at their source (its queue), which is
where a live source's back-pressure belongs.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import anyio

from fanout.base.item import Item

HOUR_S = 3600.0
MINUTE_S = 60.0


class GrowingItems(Sequence[Item]):
    """Items by their arrival number; an item forgotten (its verdicts done) is no longer held."""

    def __init__(self) -> None:
        self._items: dict[int, Item] = {}
        self._added = 0

    def add(self, item: Item) -> int:
        """Keep `item`; its number (the schedule's edit index)."""
        index = self._added
        self._items[index] = item
        self._added += 1
        return index

    def forget(self, index: int) -> None:
        self._items.pop(index, None)

    @property
    def held(self) -> int:
        """Items kept now: those whose verdicts are still to come or to be logged."""
        return len(self._items)

    def __len__(self) -> int:
        return self._added

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | Sequence[Item]:
        if isinstance(index, slice):
            raise TypeError("a growing run's items are taken one at a time")
        return self._items[index]

    def __iter__(self) -> Iterator[Item]:
        return iter(list(self._items.values()))


@dataclass(frozen=True)
class AdmissionLimits:
    per_minute: int | None = None
    """Items let in during any 60 s, at most."""
    cost_per_hour_usd: float | None = None
    """Spend in any hour, at most (estimated ahead for the items in progress)."""

    @property
    def limited(self) -> bool:
        return self.per_minute is not None or self.cost_per_hour_usd is not None


Sleep = Callable[[float], Awaitable[None]]


class Admission:
    """When the next item may come in; fed what items cost as their verdicts finish."""

    def __init__(self, limits: AdmissionLimits, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._admitted: deque[float] = deque()
        self._spent: deque[tuple[float, float]] = deque()
        self._hour_usd = 0.0
        self._in_progress: dict[int, float] = {}
        """Per item let in and not finished: what it has cost so far."""
        self._finished_items = 0
        self._finished_usd = 0.0
        self._changed = anyio.Event()
        self.holding: str | None = None
        """Why the next item waits now (None: it does not): what the status says."""

    async def wait(self) -> None:
        """Return once one more item may come in."""
        while True:
            hold = self.hold()
            if hold is None:
                self.holding = None
                return
            self.holding, wait_s = hold
            changed = self._changed
            with anyio.move_on_after(wait_s):
                await changed.wait()

    def admitted(self, index: int) -> None:
        self._admitted.append(self._clock())
        self._in_progress[index] = 0.0

    def spent(self, index: int, usd: float | None) -> None:
        """A verdict of item `index` finished, costing `usd` (counted in this hour's spend)."""
        if not usd:
            return
        now = self._clock()
        self._spent.append((now, usd))
        self._hour_usd += usd
        if index in self._in_progress:
            self._in_progress[index] += usd
        self._notify()

    def finished(self, index: int) -> None:
        """Item `index` has every verdict it will get: its cost is known."""
        cost = self._in_progress.pop(index, None)
        if cost is not None:
            self._finished_items += 1
            self._finished_usd += cost
        self._notify()

    def estimate_usd(self) -> float | None:
        """What an item has cost on average this session; None before one has finished."""
        return self._finished_usd / self._finished_items if self._finished_items else None

    def hold(self) -> tuple[str, float] | None:
        """Why the next item must wait and for how long at most before asking again; None when it may come in."""
        now = self._clock()
        per_minute = self.limits.per_minute
        while self._admitted and self._admitted[0] <= now - MINUTE_S:
            self._admitted.popleft()
        if per_minute is not None and len(self._admitted) >= per_minute:
            return f"--max-edits-per-minute {per_minute}", self._admitted[0] + MINUTE_S - now
        return self._hold_for_cost(now)

    def _hold_for_cost(self, now: float) -> tuple[str, float] | None:
        cap = self.limits.cost_per_hour_usd
        if cap is None:
            return None
        while self._spent and self._spent[0][0] <= now - HOUR_S:
            self._hour_usd -= self._spent.popleft()[1]
        estimate = self.estimate_usd()
        reason = f"--max-cost-per-hour {cap:g}"
        if estimate is None:  # nothing to estimate from: one item at a time until one has finished
            if self._in_progress:
                return reason, HOUR_S
            estimate = 0.0
        ahead = sum(max(estimate - spent, 0.0) for spent in self._in_progress.values())
        if self._hour_usd + ahead + estimate <= cap or (estimate > cap and not self._in_progress and not self._spent):
            return None
        expires = self._spent[0][0] + HOUR_S - now if self._spent else HOUR_S
        return reason, max(expires, 0.001)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
