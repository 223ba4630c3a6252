"""The edits waiting for the jury: bounded, and what overflows is dropped by the user's rule, and counted.

The queue holds accepted edits (already durable in the journal) until an
enricher takes one; it fills when the run takes edits more slowly than the
stream brings them (a budget, a pace, a slow endpoint). When it is full:

- `drop-oldest` drops the edit that has waited longest, so what is judged is
  the newest, as a patroller working the top of the list would;
- `sample` keeps a uniform sample of the backlog (reservoir sampling over the
  edits that came while it was full), so what is judged still represents the
  whole stream, as a survey of it would.

Either way each dropped edit is returned, for the journal and the status.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Iterable

import anyio

from fanout.wikidata.stream_events import RecentChangeEvent


class EditQueue:
    def __init__(self, size: int, overflow: str, *, rng: random.Random | None = None,
                 waiting: Iterable[RecentChangeEvent] = ()) -> None:
        self.size = size
        self.overflow = overflow
        self._rng = rng or random.Random()
        self._edits: OrderedDict[int, RecentChangeEvent] = OrderedDict((e.rcid, e) for e in waiting)
        self._seen_while_full = 0
        self._changed = anyio.Event()
        self.closed = False

    def __len__(self) -> int:
        return len(self._edits)

    def oldest(self) -> RecentChangeEvent | None:
        return next(iter(self._edits.values()), None)

    def overfull(self) -> list[RecentChangeEvent]:
        """Edits beyond the size (a restart with a smaller --queue-size): dropped oldest first."""
        dropped = []
        while len(self._edits) > self.size:
            dropped.append(self._edits.popitem(last=False)[1])
        return dropped

    def push(self, event: RecentChangeEvent) -> RecentChangeEvent | None:
        """Queue an accepted edit; the edit dropped to make room (maybe this one), or None."""
        dropped = None
        if len(self._edits) >= self.size:
            self._seen_while_full += 1
            if self.overflow == "sample":
                keep = self._rng.random() < self.size / (self.size + self._seen_while_full)
                if not keep:
                    return event
                dropped = self._edits.pop(self._rng.choice(list(self._edits)))
            else:
                dropped = self._edits.popitem(last=False)[1]
        else:
            self._seen_while_full = 0
        self._edits[event.rcid] = event
        self._notify()
        return dropped

    async def take(self) -> RecentChangeEvent | None:
        """The oldest edit, waiting for one; None once the queue is closed and empty."""
        while not self._edits:
            if self.closed:
                return None
            changed = self._changed
            await changed.wait()
        return self._edits.popitem(last=False)[1]

    def put_back(self, event: RecentChangeEvent) -> None:
        """An edit taken whose enrichment must be tried again: first in line."""
        self._edits[event.rcid] = event
        self._edits.move_to_end(event.rcid, last=False)
        self._notify()

    def close(self) -> None:
        """No more edits come: takers end once the queue is empty."""
        self.closed = True
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
