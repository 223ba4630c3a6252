"""The cycle collector, set for a run with many verdicts in flight.

Python frees most garbage by reference counting; the cycle collector only
finds cycles, and to do so it walks the objects of a generation. A run keeps
a lot alive for tens of seconds (every verdict in flight holds its
conversation), and every young object that outlives two collections is
promoted and walked again, so with 1,000 verdicts in flight the default
thresholds (700, 10, 10) made the collector the largest user of the loop:
`make bench` measured 616 young, 56 middle and 5 full passes in a 150 s
watch, 15 s of collector time, with pauses up to a second, each a stall
of every verdict at once.

So a run first freezes what exists (modules, the schedule:
never garbage) and collects the young generation only once 50,000 objects
more are alive than when it last did, which is rarely during steady work
(the objects a verdict makes are mostly freed before that) and mostly when
the verdicts in flight grow. Cycles are still found, later. The old
settings come back when the run ends. FANOUT_GC_THRESHOLDS=a,b,c sets other
thresholds (benchmarks compare them).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (50_000, 20, 10)
ENV_VAR = "FANOUT_GC_THRESHOLDS"


def thresholds() -> tuple[int, int, int]:
    """The thresholds a run sets: THRESHOLDS, or FANOUT_GC_THRESHOLDS's when it names three whole numbers."""
    given = os.environ.get(ENV_VAR, "").split(",")
    if len(given) == 3 and all(part.strip().isdigit() for part in given):
        first, second, third = (int(part) for part in given)
        return first, second, third
    return THRESHOLDS


@contextmanager
def collector_for_a_run() -> Iterator[None]:
    """What exists now frozen, and the run's thresholds, until the block ends."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*thresholds())
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
