"""Progress of a run: the counts the orchestrator feeds, and plain periodic lines for a log file.

The same `Tally` serves the live display (fanout.cli.progress_display, which
the command line passes in as the run's display) and `fanout status`, which
rebuilds it from the checkpoint log, so the two always agree about what is done.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TextIO

import anyio

from fanout.base.safe_text import for_terminal
from fanout.store.attempts import SpendTotals
from fanout.store.checkpoint import LogEntry, LogIndex
from fanout.engine.orchestrator import ProgressSink
from fanout.base.records import STATUSES, VerdictRecord


NO_VERDICT = ("incomplete", "invalid_json")
"""Statuses of records that are results (kept on resume) but carry no verdict to compare."""


class Outcomes(NamedTuple):
    """The pairs done, by what they came to."""

    verdicts: int
    no_verdict: int
    """incomplete and invalid_json records: the model answered, but gave no usable verdict."""
    errors: int
    timeouts: int
    refused: int = 0
    """Requests the endpoint will never take (too large, over the context): named only when there are some."""

    def parts(self) -> list[str]:
        """`verdicts 1032`, `no verdict 168`, `errors 0`, `timeouts 0`: each count on its own, never folded together."""
        refused = [f"refused {self.refused}"] if self.refused else []
        return [f"verdicts {self.verdicts}", f"no verdict {self.no_verdict}", f"errors {self.errors}",
                f"timeouts {self.timeouts}", *refused]

    def summary(self) -> str:
        """The last word on a run: each kind counted, and a share without a verdict named as such."""
        done = sum(self)
        text = (f"{self.verdicts} with a verdict, {self.no_verdict} without one (incomplete or invalid_json), "
                f"{self.errors} error(s), {self.timeouts} timeout(s)")
        if self.refused:
            text += f", {self.refused} refused by the endpoint"
        if self.no_verdict and done:
            text += (f". {self.no_verdict / done:.0%} of the pairs done ended without a verdict: they count as done; "
                     "`--retry incomplete,invalid_json` runs them again")
        return text


@dataclass
class Tally:
    """Status counts per model over the latest record of each pair; spend over every attempt.

    Spend counts each attempt once it is paid for: a pair's superseded
    attempts (an `error` retried on resume), and attempts cut off by a kill
    and settled on the next start (fanout.store.attempts).
    """

    total: int
    models: list[str]
    by_model: dict[str, Counter[str]] = field(default_factory=dict)
    spent_usd: float = 0.0
    """Known cost of every attempt: reported, looked up or estimated."""
    estimated_usd: float = 0.0
    """The part of spent_usd estimated from tokens and prices."""
    unknown_cost: int = 0
    """Attempts whose cost is unknown, wholly or in part (spent_usd leaves it out)."""
    spent_by_model: dict[str, float] = field(default_factory=dict)
    """Known cost per model: of each pair's latest record in the log, and of every attempt this session."""

    @classmethod
    def from_index(cls, index: LogIndex, total: int, models: list[str], abandoned: SpendTotals = SpendTotals(),
                   *, only_models: bool = False) -> Tally:
        """The tally of the index's latest entries, from its per-model counts (a million pairs in milliseconds),
        and the spend of every line plus the abandoned attempts'.

        `only_models`: count the pairs of `models` alone, as `total` does: a session run with `-m X` on a run of
        four models has X's pairs to do, and the others' records once made it say "8/2 pairs done". The spend
        still counts every line: the cap is the run's.
        """
        tally = cls(total, list(models))
        for model, statuses in index.counts().items():
            if only_models and model not in models:
                continue
            tally.by_model.setdefault(model, Counter()).update(statuses)
            if model not in tally.models:
                tally.models.append(model)
        for (_rcid, model), entry in index.entries.items():
            tally.spent_by_model[model] = tally.spent_by_model.get(model, 0.0) + (entry.cost_usd or 0.0)
        tally.spent_usd = index.spent_usd + abandoned.spent_usd
        tally.estimated_usd = index.estimated_usd + abandoned.estimated_usd
        tally.unknown_cost = index.unknown_cost_lines + abandoned.unknown
        return tally

    def add(self, model: str, entry: LogEntry, previous: LogEntry | None) -> None:
        """A new record: it replaces the pair's previous status, and its cost adds to the spend (the previous
        attempt's cost was real money too)."""
        counts = self.by_model.setdefault(model, Counter())
        if model not in self.models:
            self.models.append(model)
        if previous is not None:
            counts[previous.status] -= 1
        counts[entry.status] += 1
        self.spent_by_model[model] = self.spent_by_model.get(model, 0.0) + (entry.cost_usd or 0.0)
        self.spent_usd += entry.cost_usd or 0.0
        self.estimated_usd += (entry.cost_usd or 0.0) if entry.cost_source == "estimated" else 0.0
        self.unknown_cost += entry.cost_usd is None or entry.cost_source == "unknown"

    def add_spend(self, usd: float) -> None:
        """Spend that is no pair's record: a shared investigation (--evidence shared)."""
        self.spent_usd += usd

    def spend_text(self) -> str:
        """`$0.4100`, saying how much of it is estimated and how many attempts' cost is unknown."""
        notes = []
        if self.estimated_usd:
            notes.append(f"${self.estimated_usd:.4f} of it estimated")
        if self.unknown_cost:
            notes.append(f"+ unknown cost of {self.unknown_cost} attempt(s)")
        return f"${self.spent_usd:.4f}" + (f" ({'; '.join(notes)})" if notes else "")

    @property
    def done(self) -> int:
        return sum(sum(c.values()) for c in self.by_model.values())

    def count(self, status: str) -> int:
        return sum(c[status] for c in self.by_model.values())

    def outcomes(self) -> Outcomes:
        """What the pairs done came to: a record without a verdict is done, but not a verdict."""
        return Outcomes(self.count("ok"), sum(self.count(s) for s in NO_VERDICT), self.count("error"),
                        self.count("timeout"), self.count("refused"))


class Progress(ProgressSink):
    """Live counters fed by the orchestrator; rendering is someone else's job."""

    def __init__(
        self,
        tally: Tally,
        *,
        health: Callable[[], str | None] | None = None,
        held_back: Callable[[], dict[str, float]] | None = None,
        strategy: Callable[[], str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.tally = tally
        self._clock = clock
        """Seconds from some fixed point; tests pass a clock they move by hand."""
        self._strategy = strategy
        """Under --strategy cascade|router: how many edits settled at each step, and the escalations."""
        self._health = health
        """The search alarm (ToolBox.health.warning): a line when every search backend is failing."""
        self._held_back = held_back
        """Per model, the requests a minute a pace learned from its 429s holds it to (ChatClient.held_back)."""
        self.in_flight: Counter[str] = Counter()
        self.session_done = 0
        self.started_at = clock()
        self.last_error: str | None = None
        self._starts: dict[str, deque[float]] = {}
        """Per model, when each verdict in flight started (oldest first; a freed slot ends the oldest)."""
        self._verdict_s = 0.0
        self._verdicts_timed = 0

    def started(self, model: str) -> None:
        self.in_flight[model] += 1
        self._starts.setdefault(model, deque()).append(self._clock())

    def finished(self, model: str) -> None:
        """Counted when the slot frees, not when the writer logs the record: a verdict started in the freed slot
        would otherwise be counted beside the one still in the writer's queue (9 in flight at concurrency 8)."""
        self.in_flight[model] -= 1
        starts = self._starts.get(model)
        if starts:
            self._verdict_s += self._clock() - starts.popleft()
            self._verdicts_timed += 1

    def mean_verdict_s(self) -> float | None:
        """How long a verdict has taken this session, slot taken to slot freed; None before the first."""
        return self._verdict_s / self._verdicts_timed if self._verdicts_timed else None

    def recorded(self, record: VerdictRecord, previous: LogEntry | None = None) -> None:
        entry = LogEntry(record.status, record.cost_usd, record.file_name(), record.cost_source)
        self.tally.add(record.model, entry, previous)
        self.session_done += 1
        if record.status in ("error", "refused") and record.error:
            self.last_error = f"{record.model} rcid {record.edit_rcid}: {record.error}"

    def grew(self, pairs: int) -> None:
        self.tally.total += pairs

    def search_warning(self) -> str | None:
        return self._health() if self._health is not None else None

    def per_minute(self) -> float:
        elapsed = self._clock() - self.started_at
        return self.session_done / elapsed * 60 if elapsed > 0 else 0.0

    def waiting(self) -> int:
        """Pairs left that no slot has taken yet: 0 in the tail, when only the verdicts in flight remain."""
        return max(self.tally.total - self.tally.done - sum(self.in_flight.values()), 0)

    def eta_s(self) -> float | None:
        """The pairs waiting at the session's rate, then the verdicts in flight: the youngest needs about the
        mean verdict time less its age. In steady state that is the rate alone (remaining / rate); in the tail
        it is what the verdicts in flight still need, never 0 s while one runs. None when the rate is not
        known yet, or every verdict in flight has run past the mean (it may take any time)."""
        rate, mean = self.per_minute(), self.mean_verdict_s()
        remaining = self.tally.total - self.tally.done
        youngest = max((t for starts in self._starts.values() for t in starts), default=None)
        if mean is None or youngest is None or not sum(self.in_flight.values()):
            return remaining / rate * 60 if rate > 0 else None
        tail = mean - (self._clock() - youngest)
        waiting = self.waiting()
        if waiting:
            return waiting / rate * 60 + mean if rate > 0 else None
        return tail if tail > 0 else None

    def in_flight_text(self) -> str:
        """`8 in flight`; in the tail `finishing 3 in flight`, so a slow end does not read as a hang."""
        flying = sum(self.in_flight.values())
        return f"finishing {flying} in flight" if flying and not self.waiting() else f"{flying} in flight"

    def line(self) -> str:
        """One plain line for logs: everything a `tail -f` reader needs."""
        t = self.tally
        pct = 100 * t.done / t.total if t.total else 100.0
        eta = self.eta_s()
        parts = [
            time.strftime("%H:%M:%S"),
            f"{t.done}/{t.total} done ({pct:.0f}%)",
            self.in_flight_text(),
            f"{self.per_minute():.1f}/min",
            f"ETA {format_duration(eta)}" if eta is not None else "ETA -",
            t.spend_text(),
            *t.outcomes().parts(),
        ]
        if self._strategy is not None:  # what a cascade spends: how far its edits had to go
            parts.append(self._strategy())
        held = self._held_back() if self._held_back is not None else {}
        if held:  # so a user sees why a model is slow: its provider's limit, learned from its 429s
            parts.append("held back by learned limits: " + ", ".join(f"{m} {rpm:.0f}/min" for m, rpm in held.items()))
        return " | ".join(parts)


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def shown_statuses(tally: Tally) -> tuple[str, ...]:
    """The status columns of a table: `refused` only in a run that has some, so the live table still fits 80 columns."""
    return tuple(s for s in STATUSES if s != "refused" or tally.count("refused"))


def status_table(tally: Tally, in_flight: Counter[str] | None = None) -> list[str]:
    """Per-model status counts as fixed-width lines (shared by `status` and the live view)."""
    statuses = shown_statuses(tally)
    cols = ["done", *statuses, "in flight", "spent"]
    width = max([len(m) for m in tally.models] + [5])
    lines = [f"{'model':<{width}}  " + "  ".join(f"{c:>12}" for c in cols)]
    for model in tally.models:
        counts = tally.by_model.get(model, Counter())
        row = [sum(counts.values()), *(counts[s] for s in statuses), (in_flight or Counter())[model],
               spent_text(tally.spent_by_model.get(model, 0.0))]
        lines.append(f"{model:<{width}}  " + "  ".join(f"{v:>12}" for v in row))
    return lines


async def print_progress(progress: Progress, stream: TextIO, interval_s: float | None = None) -> None:
    """Print the progress line every `interval_s` (default 15 s) until cancelled, and once more then: the plain
    display for a log file, and the default of a run started from code (the command line shows a live table on
    a terminal: fanout.cli.progress_display)."""
    try:
        while True:
            await anyio.sleep(interval_s or 15.0)
            _print_lines(progress, stream)
    finally:
        _print_lines(progress, stream)


def _print_lines(progress: Progress, stream: TextIO) -> None:
    """The progress line, then the search alarm on its own line so a `tail -f` reader cannot miss it."""
    print(for_terminal(progress.line()), file=stream, flush=True)
    warning = progress.search_warning()
    if warning:
        print(for_terminal(f"!!! {warning}"), file=stream, flush=True)


def spent_text(usd: float) -> str:
    """A model's spend in the progress table: `$0.41`, or `$0.0041` for the small sums of a short run."""
    return f"${usd:.2f}" if usd >= 1 else f"${usd:.4f}"


ProgressDisplay = Callable[[Progress, TextIO, float | None], Coroutine[Any, Any, None]]
"""What shows a run's progress while it runs, until cancelled: (progress, stream, interval in seconds or None for
the display's own). `print_progress` by default; the command line's shows a live table on a terminal."""
