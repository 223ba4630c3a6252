"""A research team's finished steps (--evidence team): one line each, durable before the next step reads it.

`team.jsonl` sits beside `evidence.jsonl` and follows the checkpoint's rules:
append-only, one TeamStep per line, each written whole, flushed and fsynced
as its step finishes; a torn last line set aside (`team.torn-N.jsonl`) and cut
off when the log is opened; the latest line of an (item, step) winning.

Why the steps have a file of their own: a team's work on one item is several
paid calls by several models (the planner's brief, each worker's research,
the planner's review, the aggregator's summary), and a kill may land between
any two. The pooled evidence (evidence.jsonl) is written only when the work
is done; the steps before it must survive on their own, or a resume would pay
for them again. Their cost is counted here, each step once; the pooled record
made of them names the steps and repeats no cost (fanout.store.evidence_log).

Only where each step's latest line lies, its status and its cost are held in
memory; a step is read back (one pread) when a resumed team asks for it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import NamedTuple

from fanout.base.records import TeamStep, log_line
from fanout.store.atomic import append_durably, open_append
from fanout.store.checkpoint import repair_torn_tail, set_aside_damaged
from fanout.store.layout import TEAM_NAME, run_file
from fanout.store.lines import read_lines


STEP_ATTEMPT = " (team "
"""How a team step's in-flight calls are named (fanout.store.attempts): `<model> (team <step>)`, so a kill's
abandoned attempt says which model and which step it was, and a logged step's file is known for one."""


def team_path(run_dir: Path) -> Path:
    return run_dir / TEAM_NAME


def step_attempt_name(model: str, step: str) -> str:
    """The name a team step's in-flight calls are written down under: `m/a (team work-1-2)`."""
    return f"{model}{STEP_ATTEMPT}{step})"


def parse_step_attempt(name: str) -> tuple[str, str] | None:
    """(model, step) from a step's in-flight name; None for any other attempt (a verdict's, an investigation's)."""
    model, found, rest = name.rpartition(STEP_ATTEMPT)
    if not found or not rest.endswith(")") or not model:
        return None
    return model, rest[:-1]


def step_role(step: str) -> str:
    """The role a step id belongs to: plan-N the planner's, work-N-M a worker's, aggregate the aggregator's."""
    return {"plan": "planner", "work": "worker"}.get(step.split("-", 1)[0], "aggregator")


class _Line(NamedTuple):
    start: int
    end: int
    status: str
    finished_ns: int
    model: str


class TeamLog:
    """The run's team steps, open for reading and appending (appends come from the workers' threads)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = team_path(run_dir)
        self.torn: Path | None = repair_torn_tail(self.path)
        """Where a torn last line was set aside when the log was opened (None: the log was whole)."""
        self._latest: dict[tuple[int, str], _Line] = {}
        self.spent_usd = 0.0
        """The cost of every step logged, superseded ones included (each was paid for)."""
        self.steps = 0
        """Lines in the log: steps finished, redone ones included."""
        self.damaged = 0
        """Lines that are not team steps: set aside (team.torn-N.jsonl) as the checkpoint's are."""
        self.aside: Path | None = None
        self._lock = threading.Lock()
        self._scan()
        self._fh = open_append(self.path, buffering=0)
        self._offset = self._fh.seek(0, os.SEEK_END)

    def _scan(self) -> None:
        found = read_lines(self.path.parent, run_file(TEAM_NAME))
        for line in found.lines:
            data = line.data
            self._note((data["edit_rcid"], data["step"]), _Line(line.start, line.end, data["status"],
                                                                data.get("finished_ns") or 0, data["model"]),
                       data.get("cost_usd"))
        self.damaged = len(found.damaged)
        self.aside = set_aside_damaged(self.path, found.damaged)

    def _note(self, key: tuple[int, str], line: _Line, cost: object) -> None:
        self._latest[key] = line
        self.spent_usd += float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else 0.0
        self.steps += 1

    def steps_of(self, rcid: int) -> list[TeamStep]:
        """The item's logged steps (the latest line of each), in the order they were logged."""
        lines = sorted((line for (key, _), line in self._latest.items() if key == rcid), key=lambda line: line.start)
        if not lines:
            return []
        fd = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)  # checked a regular file when opened
        try:
            return [TeamStep.from_dict(json.loads(os.pread(fd, line.end - line.start, line.start))) for line in lines]
        finally:
            os.close(fd)

    def logged_after(self, rcid: int, attempt: str, started_ns: int) -> bool:
        """Whether the in-flight file `attempt` (a step's: step_attempt_name) belongs to a step logged after the
        attempt started: the process died between logging the step and removing the file, and the step's line
        holds its cost (fanout.store.attempts.settle_abandoned asks)."""
        parsed = parse_step_attempt(attempt)
        line = self._latest.get((rcid, parsed[1])) if parsed is not None else None
        return parsed is not None and line is not None and line.model == parsed[0] and line.finished_ns >= started_ns

    def append(self, step: TeamStep) -> None:
        """Durable when this returns: written whole, then fsynced (blocking; run it in a worker thread)."""
        line = log_line(step.to_dict())
        with self._lock:
            start, self._offset = self._offset, append_durably(self._fh.fileno(), line, self._offset)
            self._note(step.key, _Line(start, self._offset, step.status, step.finished_ns, step.model), step.cost_usd)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> TeamLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_team_steps(run_dir: Path) -> list[TeamStep]:
    """Every step line of a run, in log order (readers: the report, status); a run without a team has none.
    Damaged lines are left out (fanout.store.lines counts and names them); a link or a FIFO is one ConfigError."""
    steps = []
    for line in read_lines(run_dir, run_file(TEAM_NAME)).lines:
        try:
            steps.append(TeamStep.from_dict(line.data))
        except (ValueError, KeyError, TypeError, AttributeError):  # a tool call of another shape
            continue
    return steps
