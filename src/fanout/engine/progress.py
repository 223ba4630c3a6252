"""Progress of a run: a live table on a terminal, plain periodic lines in a log file.

The same `Tally` serves the live display and `fanout status`, which rebuilds it
from the checkpoint log, so the two always agree about what is done.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

import anyio

from fanout.store.checkpoint import LogEntry, LogIndex
from fanout.engine.orchestrator import ProgressSink
from fanout.records import STATUSES, VerdictRecord


@dataclass
class Tally:
    """Status counts per model and spend, over the latest record of each pair."""

    total: int
    models: list[str]
    by_model: dict[str, Counter[str]] = field(default_factory=dict)
    spent_usd: float = 0.0
    unknown_cost: int = 0

    @classmethod
    def from_index(cls, index: LogIndex, total: int, models: list[str]) -> Tally:
        """The tally of the index's latest entries, from its per-model counts (a million pairs in milliseconds)."""
        tally = cls(total, list(models))
        for model, (statuses, cost, unknown) in index.counts().items():
            tally.by_model.setdefault(model, Counter()).update(statuses)
            if model not in tally.models:
                tally.models.append(model)
            tally.spent_usd += cost
            tally.unknown_cost += unknown
        return tally

    def add(self, model: str, entry: LogEntry, previous: LogEntry | None) -> None:
        counts = self.by_model.setdefault(model, Counter())
        if model not in self.models:
            self.models.append(model)
        if previous is not None:
            counts[previous.status] -= 1
            self.spent_usd -= previous.cost_usd or 0.0
            self.unknown_cost -= previous.cost_usd is None
        counts[entry.status] += 1
        self.spent_usd += entry.cost_usd or 0.0
        self.unknown_cost += entry.cost_usd is None

    @property
    def done(self) -> int:
        return sum(sum(c.values()) for c in self.by_model.values())

    def count(self, status: str) -> int:
        return sum(c[status] for c in self.by_model.values())


class Progress(ProgressSink):
    """Live counters fed by the orchestrator; rendering is someone else's job."""

    def __init__(
        self,
        tally: Tally,
        *,
        health: Callable[[], str | None] | None = None,
        held_back: Callable[[], dict[str, float]] | None = None,
    ) -> None:
        self.tally = tally
        self._health = health
        """The search alarm (ToolBox.health.warning): a line when every search backend is failing."""
        self._held_back = held_back
        """Per model, the requests a minute a pace learned from its 429s holds it to (ChatClient.held_back)."""
        self.in_flight: Counter[str] = Counter()
        self.session_done = 0
        self.started_at = time.monotonic()
        self.last_error: str | None = None

    def started(self, model: str) -> None:
        self.in_flight[model] += 1

    def recorded(self, record: VerdictRecord, previous: LogEntry | None = None) -> None:
        self.in_flight[record.model] -= 1
        entry = LogEntry(record.status, record.cost_usd, record.file_name())
        self.tally.add(record.model, entry, previous)
        self.session_done += 1
        if record.status == "error" and record.error:
            self.last_error = f"{record.model} rcid {record.edit_rcid}: {record.error}"

    def search_warning(self) -> str | None:
        return self._health() if self._health is not None else None

    def per_minute(self) -> float:
        elapsed = time.monotonic() - self.started_at
        return self.session_done / elapsed * 60 if elapsed > 0 else 0.0

    def eta_s(self) -> float | None:
        rate = self.per_minute()
        remaining = self.tally.total - self.tally.done
        return remaining / rate * 60 if rate > 0 else None

    def line(self) -> str:
        """One plain line for logs: everything a `tail -f` reader needs."""
        t = self.tally
        pct = 100 * t.done / t.total if t.total else 100.0
        eta = self.eta_s()
        parts = [
            time.strftime("%H:%M:%S"),
            f"{t.done}/{t.total} done ({pct:.0f}%)",
            f"{sum(self.in_flight.values())} in flight",
            f"{self.per_minute():.1f}/min",
            f"ETA {format_duration(eta)}" if eta is not None else "ETA -",
            f"${t.spent_usd:.4f}",
            f"errors {t.count('error')}",
            f"timeouts {t.count('timeout')}",
        ]
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


def status_table(tally: Tally, in_flight: Counter[str] | None = None) -> list[str]:
    """Per-model status counts as fixed-width lines (shared by `status` and the live view)."""
    cols = ["done", *STATUSES, "in flight"]
    width = max([len(m) for m in tally.models] + [5])
    lines = [f"{'model':<{width}}  " + "  ".join(f"{c:>12}" for c in cols)]
    for model in tally.models:
        counts = tally.by_model.get(model, Counter())
        row = [sum(counts.values()), *(counts[s] for s in STATUSES), (in_flight or Counter())[model]]
        lines.append(f"{model:<{width}}  " + "  ".join(f"{v:>12}" for v in row))
    return lines


async def show_progress(progress: Progress, *, stream: TextIO | None = None, interval_s: float | None = None) -> None:
    """Render until cancelled: a rich live table on a terminal, plain lines otherwise."""
    stream = stream or sys.stdout
    if stream.isatty():
        await _show_live(progress, stream, interval_s or 0.5)
    else:
        await _show_lines(progress, stream, interval_s or 15.0)


async def _show_lines(progress: Progress, stream: TextIO, interval_s: float) -> None:
    try:
        while True:
            await anyio.sleep(interval_s)
            _print_lines(progress, stream)
    finally:
        _print_lines(progress, stream)


def _print_lines(progress: Progress, stream: TextIO) -> None:
    """The progress line, then the search alarm on its own line so a `tail -f` reader cannot miss it."""
    print(progress.line(), file=stream, flush=True)
    warning = progress.search_warning()
    if warning:
        print(f"!!! {warning}", file=stream, flush=True)


async def _show_live(progress: Progress, stream: TextIO, interval_s: float) -> None:
    from rich.console import Console, Group
    from rich.live import Live
    from rich.text import Text

    def render() -> Group:
        parts = [Text(progress.line(), style="bold"), Text("\n".join(status_table(progress.tally, progress.in_flight)))]
        if progress.last_error:
            parts.append(Text(f"last error: {progress.last_error}", style="red"))
        warning = progress.search_warning()
        if warning:
            parts.append(Text(f"!!! {warning}", style="bold white on red"))
        return Group(*parts)

    with Live(render(), console=Console(file=stream), auto_refresh=False, transient=False) as live:
        try:
            while True:
                await anyio.sleep(interval_s)
                live.update(render(), refresh=True)
        finally:
            live.update(render(), refresh=True)
