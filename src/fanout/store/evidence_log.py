"""The shared evidence of a run (--evidence shared or team): one investigation, or one team's pooled evidence, per
edit, logged before any judge reads it.

`evidence.jsonl` sits beside the checkpoint and follows its rules: append-only,
one EvidenceRecord per line, each appended, flushed and fsynced before the
judges of its edit are asked, a torn last line set aside
(`evidence.torn-N.jsonl`) and cut off when the log is opened, the latest line
of an edit winning. A kill between an investigation's line and its judges'
records therefore loses no investigation: the next start finds the line and
the judges read it.

Why a file of its own rather than lines in checkpoint.jsonl: the checkpoint,
its saved index, its views and every reader of it (progress, status, the
report, the strategies' resume) are keyed by (edit, model) verdicts; an
investigation is neither a verdict nor any model's answer. Kept apart, none
of them has to learn to skip it, and the judges' records carry its id
(`evidence_id`) to join the two.

Only where each edit's latest line lies, its status and its cost are held in
memory; a record is read back (one pread) when a judge asks for it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import NamedTuple

from fanout.base.records import EvidenceRecord, check_evidence, log_line
from fanout.store.atomic import append_durably, open_append
from fanout.store.checkpoint import repair_torn_tail, set_aside_damaged
from fanout.store.layout import EVIDENCE_NAME, run_file
from fanout.store.lines import read_lines
from fanout.store.team_log import read_team_steps


def evidence_path(run_dir: Path) -> Path:
    return run_dir / EVIDENCE_NAME


class _Line(NamedTuple):
    start: int
    end: int
    status: str


class EvidenceLog:
    """The run's evidence log, open for reading and appending (appends may come from several worker threads)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = evidence_path(run_dir)
        self.torn: Path | None = repair_torn_tail(self.path)  # never through a link, never a FIFO: one line each
        """Where a torn last line was set aside when the log was opened (None: the log was whole)."""
        self._latest: dict[int, _Line] = {}
        self.spent_usd = 0.0
        """The cost of every investigation logged, superseded ones included (each was paid for); a team's pooled
        evidence adds nothing: its steps' costs are counted in team.jsonl (fanout.store.team_log)."""
        self.investigations = 0
        """Lines in the log: investigations made, retried ones included."""
        self.damaged = 0
        """Lines that are not evidence records: set aside (evidence.torn-N.jsonl) as the checkpoint's are."""
        self.aside: Path | None = None
        """Where damaged lines were set aside when the log was opened (None: there were none)."""
        self._lock = threading.Lock()
        self._scan()
        self._fh = open_append(self.path, buffering=0)
        self._offset = self._fh.seek(0, os.SEEK_END)

    def _scan(self) -> None:
        found = read_lines(self.path.parent, run_file(EVIDENCE_NAME))
        for line in found.lines:
            data = line.data
            cost = data.get("cost_usd") if data.get("team") is None else None  # a team's: counted in team.jsonl
            self._note(data["edit_rcid"], _Line(line.start, line.end, data["status"]), cost)
        self.damaged = len(found.damaged)
        self.aside = set_aside_damaged(self.path, found.damaged)

    def _note(self, rcid: int, line: _Line, cost: float | None) -> None:
        self._latest[rcid] = line
        self.spent_usd += cost or 0.0
        self.investigations += 1

    def get(self, rcid: int) -> EvidenceRecord | None:
        """The edit's latest evidence, or None when it has none yet."""
        line = self._latest.get(rcid)
        if line is None:
            return None
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)  # checked a regular file when opened
        try:
            record, _ = check_evidence(os.pread(fd, line.end - line.start, line.start))
        finally:
            os.close(fd)
        return record

    def ids(self) -> set[str]:
        """The evidence ids of every investigation in the log (what verdicts may cite)."""
        return {record.evidence_id for record in read_evidence(self.path.parent)}

    def status(self, rcid: int) -> str | None:
        line = self._latest.get(rcid)
        return line.status if line is not None else None

    def append(self, record: EvidenceRecord) -> None:
        """Durable when this returns: written whole, then fsynced (blocking; run it in a worker thread)."""
        line = log_line(record.to_dict())
        with self._lock:
            start, self._offset = self._offset, append_durably(self._fh.fileno(), line, self._offset)
            self._note(record.edit_rcid, _Line(start, self._offset, record.status), own_cost(record))

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> EvidenceLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_evidence(run_dir: Path) -> list[EvidenceRecord]:
    """Every evidence record of a run, in log order (a run without shared evidence has none); damaged lines are
    left out (fanout.store.lines counts and names them), a link or a FIFO in its place is one ConfigError."""
    records = []
    for line in read_lines(run_dir, run_file(EVIDENCE_NAME)).lines:
        try:
            records.append(EvidenceRecord.from_dict(line.data))
        except (ValueError, KeyError, TypeError, AttributeError):  # a tool call of another shape
            continue
    return records


def own_cost(record: EvidenceRecord) -> float | None:
    """What a line of the log adds to the run's spend: a shared investigation's cost; nothing for a team's pooled
    evidence, whose steps were each counted in team.jsonl as they finished."""
    return record.cost_usd if record.team is None else None


def investigation_spend(run_dir: Path) -> float:
    """Everything the run's evidence cost outside the verdicts' records: shared investigations and team steps,
    each counted once (fanout status and the report read this; a running run keeps the same sums)."""
    evidence = sum(own_cost(record) or 0.0 for record in read_evidence(run_dir))
    return evidence + sum(step.cost_usd or 0.0 for step in read_team_steps(run_dir))
