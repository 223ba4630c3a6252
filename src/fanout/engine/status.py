"""A run's progress read from its files alone: what `fanout status` shows, without running anything.

`read_status` gathers it (manifest, log index, one pass over the log for the
newest errors and the recent rate) into a StatusReport; `render_status` turns
that into the lines a terminal shows. Nothing here writes, so it is safe to
use on a run in progress.
"""

from __future__ import annotations

import sys
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from fanout.base.safe_text import for_terminal
from fanout.base.validate import require_count
from fanout.engine.progress import Tally, format_duration, status_table
from fanout.base.errors import ConfigError
from fanout.judging.registry import asks_every_model
from fanout.store.attempts import abandoned_totals, read_abandoned, unsettled_attempts
from fanout.store.evidence_log import investigation_spend
from fanout.store.checkpoint import iter_log, log_path, read_index
from fanout.store.layout import LOG_NAME
from fanout.store.lines import damage_notes
from fanout.store.log_index import DamagedLine
from fanout.store.run_lock import lock_holder
from fanout.store.manifest import Manifest, load_manifest
from fanout.store.prepared import prepared_spend

RATE_WINDOW = 200
"""Records whose finish times give the recent rate: recent enough to reflect the current session."""
DEFAULT_ERRORS = 5


class RecentError(NamedTuple):
    model: str
    edit_rcid: int
    message: str | None


class LogScan(NamedTuple):
    errors: list[RecentError]
    """The newest error records, oldest first."""
    per_minute: float | None
    """Verdicts per minute over the last RATE_WINDOW records; None when they span no time."""


@dataclass(frozen=True)
class StatusReport:
    run_dir: Path
    manifest: Manifest | None
    """None for a log whose manifest is missing: models and total then come from the log."""
    tally: Tally
    scan: LogScan
    damaged: tuple[DamagedLine, ...] = ()
    """Lines of the log that are not records: skipped here, set aside by the next run."""
    unsettled: Counter[str] = field(default_factory=Counter)
    """Attempts with an in-flight file, per model: running now when a run holds the directory, else cut off
    since the run last started."""
    holder: int | None = None
    """The PID of the `fanout run` holding the directory now; None when no run does."""
    damage: tuple[str, ...] = ()
    """One line per log of the run (fanout.store.layout: the checkpoint, evidence, reviews...) with damaged lines:
    how many, which and why (fanout.store.lines.damage_notes)."""

    @property
    def total(self) -> int:
        return self.tally.total

    @property
    def in_flight(self) -> Counter[str]:
        """Verdicts running now, per model: the in-flight files count only while a run holds the directory."""
        return self.unsettled if self.holder is not None else Counter()


def read_status(run_dir: Path, *, n_errors: int = DEFAULT_ERRORS) -> StatusReport:
    """Everything `fanout status` shows; a ConfigError when `run_dir` holds no run."""
    require_count(n_errors, "--errors", minimum=0)
    if run_dir.is_file():
        raise ConfigError(f"{run_dir} is a file; pass the run directory that holds it: fanout status {run_dir.parent}")
    manifest = load_manifest(run_dir)
    path = log_path(run_dir)
    if manifest is None and not path.exists():
        raise ConfigError(f"{run_dir} is not a run directory (no manifest.yaml or checkpoint.jsonl).")
    index = read_index(path)
    models = manifest.models if manifest else sorted({m for _, m in index.entries})
    total = manifest.total_pairs if manifest else len(index.entries)
    tally = Tally.from_index(index, total, models, abandoned_totals(read_abandoned(run_dir)))
    tally.add_spend(investigation_spend(run_dir))  # --evidence shared or team: no model's record
    tally.add_spend(prepared_spend(run_dir).spent_usd)  # a workload's preparation (claims extracted): neither
    damage = damage_notes(run_dir, {LOG_NAME: [d for d in index.damaged if not d.torn]})
    return StatusReport(
        run_dir, manifest, tally, scan_log(path, n_errors), tuple(index.damaged), unsettled_attempts(run_dir),
        lock_holder(run_dir), tuple(damage),
    )


def scan_log(path: Path, n_errors: int) -> LogScan:
    """The newest error and refusal messages and the recent verdicts per minute, in one pass over the log."""
    # deque's maxlen is a C ssize_t: --errors 10**22 ended in OverflowError; asking for more than that is all of them.
    errors: deque[RecentError] = deque(maxlen=min(n_errors, sys.maxsize))
    finished: deque[datetime] = deque(maxlen=RATE_WINDOW)
    for record in iter_log(path):
        if record.status in ("error", "refused") and n_errors > 0:
            message = f"refused: {record.error}" if record.status == "refused" else record.error
            errors.append(RecentError(record.model, record.edit_rcid, message))
        finished.append(_finish_time(record.timestamp))
    return LogScan(list(errors), _per_minute(finished))


def _finish_time(timestamp: str) -> datetime:
    return datetime.fromisoformat(str(timestamp).replace("Z", "+00:00"))


def _per_minute(finished: deque[datetime]) -> float | None:
    span = (finished[-1] - finished[0]).total_seconds() if len(finished) > 1 else 0.0
    return (len(finished) - 1) / span * 60 if span > 0 else None


def render_status(report: StatusReport) -> list[str]:
    """The report as terminal lines: totals, whether it runs now, sessions, time left, the per-model table, errors."""
    tally, total, manifest = report.tally, report.total, report.manifest
    pct = 100 * tally.done / total if total else 100.0
    lines = [f"{report.run_dir}: {tally.done}/{total} pairs done ({pct:.0f}%), spend {tally.spend_text()}",
             f"of them: {tally.outcomes().summary()}"]
    lines.extend(_running_lines(report))
    if manifest and manifest.starts:
        lines.append(f"started {manifest.starts[0]}, {len(manifest.starts)} session(s); snapshot {manifest.snapshot_path}")
    lines.extend(_time_left(report))
    lines.extend(status_table(tally, report.in_flight))
    lines.extend(_error_lines(report.scan.errors))
    lines.extend(for_terminal(note) for note in report.damage)
    lines.extend(_damage_lines(report.damaged))
    return lines


def _running_lines(report: StatusReport) -> list[str]:
    """Whether a run holds the directory now, and what its in-flight files mean accordingly."""
    if report.holder is not None:
        return [f"running now (PID {report.holder}): {sum(report.in_flight.values())} verdict(s) in flight"]
    cut_off = sum(report.unsettled.values())
    if cut_off:
        return [f"not running; {cut_off} attempt(s) were cut off when it last stopped: their cost is settled on the "
                "next start"]
    return []


def _time_left(report: StatusReport) -> list[str]:
    """Time left only while a run is at it: a finished run has none, and a stopped one resumes when told to."""
    left = report.total - report.tally.done
    if left <= 0:
        return ["every pair is done"]
    strategy = _strategy_name(report.manifest)
    if not asks_every_model(strategy):  # an edit is asked only the models it needs: not every pair is work left
        return [f"{left} pair(s) not asked: --strategy {strategy} asks each edit only the models it needs, so these "
                "may all be settled; the same `fanout run` command asks any step still due (and ends if none is)"]
    if report.holder is None:
        return [f"{left} pair(s) left; the same `fanout run` command resumes"]
    per_minute = report.scan.per_minute
    if not per_minute:
        return []
    return [f"recent rate {per_minute:.1f} verdicts/min; at that rate the rest takes {format_duration(left / per_minute * 60)}"]


def _strategy_name(manifest: Manifest | None) -> str:
    """The run's --strategy as its manifest pins it (Strategy.settings); "all" before it did."""
    summary = manifest.settings.get("strategy") if manifest is not None else None
    return str(summary.get("name", "all")) if isinstance(summary, dict) else "all"


def _damage_lines(damaged: Iterable[DamagedLine]) -> list[str]:
    """A torn last line of the log (the damaged ones are counted by the notes above it): resume repairs it."""
    if any(d.torn for d in damaged):
        return ["skipped a torn last line (a crash mid-write); the next `fanout run` repairs the log"]
    return []


def _error_lines(errors: Iterable[RecentError]) -> list[str]:
    shown = [f"  {for_terminal(e.model)} rcid {e.edit_rcid}: {for_terminal(e.message)}" for e in errors]
    return ["last errors:", *shown] if shown else []
