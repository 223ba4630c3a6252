"""A reviewer's decisions on a run's edits: `RUN_DIR/reviews.jsonl`, appended like the checkpoint.

`fanout review` appends one JSON line per decision (rcid, decision, note,
reviewer, time), written and fsynced before the desk answers, so a decision
the reviewer saw acknowledged survives a crash or a power cut. The file is
never rewritten in place: a changed decision is one more line, and the latest
line of an edit stands while the earlier ones stay as its history. Undoing a
decision is one more line too (`"decision": "undo"`, naming the time of the
decision it takes back): the decision before it stands again, or none. Two
fields are optional and left out when empty, so lines without them read as
they always did: `drawn` (how the desk came to show the edit: `random`, a
draw of the seeded random order; `uncertain`, the least sure; `chosen`, picked
by the reviewer) and `undoes`. The only
repair is the checkpoint's: a torn last line (a crash mid-write) is set aside
in `reviews.torn-N.jsonl` and cut off before the next append. Two desks on one
run take turns through an exclusive `flock` on the file for each append.

Readers (the report, `fanout queue`, the desk itself) take no lock, skip what
they cannot parse (nesting too deep included) and count it, and refuse, in
one line, a file over READ_CAP bytes or one that is not a regular file (a
FIFO would block them).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fanout.base.reading import SIDE_FILE_BOUNDS
from fanout.base.errors import DiskFull
from fanout.base.records import utc_now
from fanout.store.atomic import DISK_FULL, cut_torn_tail
from fanout.store.layout import REVIEWS_NAME, run_file
from fanout.store.lines import read_lines
from fanout.store.line_schemas import (
    DECISIONS as DECISIONS, DRAWN as DRAWN, NOTE_CAP as NOTE_CAP, REVIEWER_CAP as REVIEWER_CAP, UNDO as UNDO,
)

TRUTH_OF_DECISION = {"accept": "correct", "reject": "incorrect"}
"""A decision as ground truth; `unsure` is a reviewer not deciding, so it is no truth at all."""
READ_CAP = 64 * 1024 * 1024
"""Bytes of reviews.jsonl a reader takes (about 300,000 decisions); more is refused with a message."""
REVIEWS_BOUNDS = SIDE_FILE_BOUNDS._replace(
    kind="run file", max_bytes=READ_CAP, split_hint="is it a reviews file of `fanout review`?",
    special_hint="fanout writes only regular files there; move it out of the run directory",
)
"""reviews.jsonl: a regular file of at most READ_CAP bytes."""


@dataclass(frozen=True)
class Review:
    """One decision, as its line in reviews.jsonl holds it."""

    rcid: int
    decision: str
    """accept | reject | unsure (DECISIONS)."""
    note: str = ""
    reviewer: str = ""
    """Who decided (`fanout review --reviewer`; the login name by default)."""
    time: str = field(default_factory=utc_now)
    """When, UTC ISO 8601 to the second."""
    drawn: str = ""
    """How the desk came to show the edit (DRAWN), or "" when not recorded (decisions made before it was)."""
    undoes: str = ""
    """For an UNDO line: the time of the decision it takes back."""

    def line(self) -> dict[str, Any]:
        """The line as written: the optional fields only when set."""
        data = asdict(self)
        return {k: v for k, v in data.items() if k not in ("drawn", "undoes") or v}


@dataclass(frozen=True)
class ReviewLog:
    """Every decision of a run in the order made; `latest` is what stands."""

    history: list[Review]
    skipped: int = 0
    """Lines that were not a decision (a torn tail not yet repaired, a hand edit), left out."""

    @property
    def latest(self) -> dict[int, Review]:
        """rcid -> the decision that stands: the edit's last one, less those undone (an undo takes back the
        standing decision; the one before it stands again)."""
        standing: dict[int, list[Review]] = {}
        for r in self.history:
            stack = standing.setdefault(r.rcid, [])
            if r.decision != UNDO:
                stack.append(r)
            elif stack:
                stack.pop()
        return {rcid: stack[-1] for rcid, stack in standing.items() if stack}

    @property
    def decisions(self) -> list[Review]:
        """Every decision made, in order, the undone ones included (not the undo lines)."""
        return [r for r in self.history if r.decision != UNDO]

    def truth(self) -> dict[int, str]:
        """rcid -> correct | incorrect, from the decisions that stand; `unsure` ones are left out."""
        return {rcid: TRUTH_OF_DECISION[r.decision] for rcid, r in self.latest.items() if r.decision in TRUTH_OF_DECISION}

    @property
    def reviewers(self) -> list[str]:
        return sorted({r.reviewer for r in self.latest.values() if r.reviewer})


def reviews_path(run_dir: Path) -> Path:
    return Path(run_dir) / REVIEWS_NAME


def check_review(review: Review) -> None:
    """ValueError naming what is wrong with a decision before it is written."""
    if review.decision not in (*DECISIONS, UNDO):
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, got {review.decision!r}")
    if len(review.note) > NOTE_CAP:
        raise ValueError(f"note is {len(review.note)} characters; at most {NOTE_CAP}")
    if len(review.reviewer) > REVIEWER_CAP:
        raise ValueError(f"reviewer name is {len(review.reviewer)} characters; at most {REVIEWER_CAP}")
    if review.drawn and review.drawn not in DRAWN:
        raise ValueError(f"drawn must be one of {', '.join(DRAWN)}, got {review.drawn!r}")


def append_review(run_dir: Path, review: Review) -> None:
    """Append the decision as one line, fsynced before returning; a torn tail left by a crash is repaired first."""
    check_review(review)
    line = (json.dumps(review.line(), ensure_ascii=False) + "\n").encode("utf-8")
    path = reviews_path(run_dir)
    with _locked_for_append(path) as fd:
        cut_torn_tail(fd, path)  # a last line without its newline is a write cut short
        try:
            os.write(fd, line)
            os.fsync(fd)
        except OSError as exc:
            if exc.errno in DISK_FULL:
                raise DiskFull(path) from exc
            raise


@contextlib.contextmanager
def _locked_for_append(path: Path) -> Iterator[int]:
    """The file opened for appending (never through a symlink), held under an exclusive flock."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield fd
    finally:
        os.close(fd)  # closing drops the flock


def read_reviews(run_dir: Path) -> ReviewLog:
    """The run's decisions (an empty log when nobody has reviewed); ConfigError for a file too big to read,
    or not a regular file."""
    found = read_lines(Path(run_dir), run_file(REVIEWS_NAME))  # each line held to REVIEW_LINE; links, FIFOs refused
    fields = ("rcid", "decision", "note", "reviewer", "time", "drawn", "undoes")
    history = [Review(**{k: line.data[k] for k in fields if k in line.data}) for line in found.lines]
    return ReviewLog(history, len(found.damaged))
