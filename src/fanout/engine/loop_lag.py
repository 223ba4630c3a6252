"""An opt-in probe of event-loop stalls, for `make bench`: FANOUT_LOOP_LAG_LOG=FILE.

Every verdict shares one event loop, so anything that blocks it (a parse, a
dump, a synchronous file write) delays every other verdict's next step. The
probe asks to wake every `interval_s` and counts how late it wakes; when the
run ends it writes a small JSON summary to FILE. Nothing runs unless the
variable is set, so a normal run pays nothing for it.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

from fanout.store.outputs import write_atomic

ENV_VAR = "FANOUT_LOOP_LAG_LOG"
THRESHOLDS_MS = (5, 20, 50, 100, 250)


def lag_log_path() -> Path | None:
    value = os.environ.get(ENV_VAR)
    return Path(value) if value else None


HISTOGRAM_MS = 2000
"""Lags are counted by the millisecond up to this (longer ones in one last bucket): percentiles in constant memory."""


class LagStats:
    """The worst lag, how often lags passed each threshold, and their percentiles; constant memory however long
    the run."""

    def __init__(self, started: float) -> None:
        self.samples = 0
        self.total_s = 0.0
        self.worst_s = 0.0
        self.worst_at_s = 0.0
        self.over = dict.fromkeys(THRESHOLDS_MS, 0)
        self.started = started
        self.by_ms = [0] * (HISTOGRAM_MS + 1)

    def add(self, lag_s: float, now: float) -> None:
        self.samples += 1
        self.total_s += lag_s
        if lag_s > self.worst_s:
            self.worst_s, self.worst_at_s = lag_s, now - self.started
        for ms in THRESHOLDS_MS:
            if lag_s * 1000 > ms:
                self.over[ms] += 1
        self.by_ms[min(int(lag_s * 1000), HISTOGRAM_MS)] += 1

    def percentile_ms(self, share: float) -> int | None:
        """The lag (whole milliseconds, rounded down) that `share` of the samples do not exceed."""
        if not self.samples:
            return None
        wanted, seen = share * self.samples, 0
        for ms, count in enumerate(self.by_ms):
            seen += count
            if seen >= wanted:
                return ms
        return HISTOGRAM_MS

    def summary(self, interval_s: float) -> dict[str, object]:
        return {
            "interval_ms": interval_s * 1000,
            "samples": self.samples,
            "max_lag_ms": round(self.worst_s * 1000, 3),
            "max_lag_at_s": round(self.worst_at_s, 3),
            "mean_lag_ms": round(self.total_s / self.samples * 1000, 3) if self.samples else 0.0,
            "p50_lag_ms": self.percentile_ms(0.5),
            "p99_lag_ms": self.percentile_ms(0.99),
            "over_ms": {str(ms): n for ms, n in self.over.items()},
        }


class GcPauses:
    """How long the cycle collector held the loop, by generation (gc.callbacks): a full pass walks every object
    alive, so it grows with the verdicts in flight. CPU time of the collecting thread, so a machine busy with
    other work does not inflate it; the longest pause is wall time, as the verdicts waited it."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.cpu_s = [0.0, 0.0, 0.0]
        self.worst_s = [0.0, 0.0, 0.0]
        self._started = (0.0, 0.0)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = (time.thread_time(), time.perf_counter())
            return
        generation = info["generation"]
        self.count[generation] += 1
        self.cpu_s[generation] += time.thread_time() - self._started[0]
        self.worst_s[generation] = max(self.worst_s[generation], time.perf_counter() - self._started[1])

    def summary(self) -> dict[str, object]:
        return {f"gen{g}": {"count": self.count[g], "cpu_ms": round(self.cpu_s[g] * 1000, 1),
                            "max_ms": round(self.worst_s[g] * 1000, 1)} for g in range(3)}


async def watch_loop_lag(path: Path, interval_s: float = 0.01, *, clock: Callable[[], float] = time.monotonic,
                         sleep: Callable[[float], Awaitable[None]] = anyio.sleep, gc_pauses: bool = False) -> None:
    """Sample until cancelled, then write the summary to `path` (with `gc_pauses`, the collector's pauses too).

    `clock` and `sleep` are the loop's own unless a test gives a virtual pair,
    whose lags are then exact.
    """
    stats = LagStats(clock())
    pauses = GcPauses() if gc_pauses else None
    if pauses is not None:
        gc.callbacks.append(pauses)
    try:
        while True:
            asked = clock()
            await sleep(interval_s)
            now = clock()
            stats.add(max(0.0, now - asked - interval_s), now)
    finally:
        summary = stats.summary(interval_s)
        if pauses is not None:
            gc.callbacks.remove(pauses)
            summary["gc"] = pauses.summary()
        write_atomic(path, ENV_VAR, json.dumps(summary) + "\n")  # the output writer's
