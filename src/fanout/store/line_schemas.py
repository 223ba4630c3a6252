"""What a line of each of the store's own logs may hold (fanout.base.schema), beside the record types of base.

The verdict and evidence records' lines are declared with those records
(fanout.base.records: VERDICT_LINE, EVIDENCE_LINE); these are the lines the
store itself writes: a reviewer's decisions, the cost of abandoned attempts,
and the in-flight files of verdicts. The layout (fanout.store.layout) names
each run file with its schema; every reader checks each line against it.
"""

from __future__ import annotations

from typing import Any

from fanout.base.schema import Schema, flag, list_of, number, one_of, optional, record, text, whole

DECISIONS = ("accept", "reject", "unsure")
"""What a reviewer can decide about an edit: the patroller's three stances."""
NOTE_CAP = 2000
"""Characters in a note; a longer note is refused, not cut."""
REVIEWER_CAP = 100
UNDO = "undo"
"""A line that takes back the edit's standing decision (an older reader skips it as not a decision)."""
DRAWN = ("random", "uncertain", "chosen")
"""How the desk came to show an edit, recorded beside a decision (`drawn`)."""

REVIEW_LINE = record({"rcid": whole(), "decision": one_of((*DECISIONS, UNDO)), "note": text(max_chars=NOTE_CAP),
                      "reviewer": text(max_chars=REVIEWER_CAP), "time": text(), "drawn": one_of(("", *DRAWN)),
                      "undoes": text()},
                     ("rcid", "decision", "note", "reviewer", "time"), "decision")
"""A line of reviews.jsonl (fanout.store.reviews.Review): `drawn` and `undoes` are optional, left out when empty."""
ABANDONED_LINE = record({"edit_rcid": whole(), "model": text(empty=False), "attempt": text(), "calls": whole(low=0),
                         "cut_off": whole(low=0), "cost_usd": optional(number(low=0)),
                         "cost_source": one_of(("reported", "generation", "estimated", "unknown")),
                         "response_ids": list_of(text()), "settled_at": text()},
                        ("edit_rcid", "model", "attempt", "calls", "cut_off", "cost_usd", "cost_source"),
                        "abandoned attempt")
"""A line of abandoned.jsonl (fanout.store.attempts.Abandoned)."""
PREPARED_LINE = record({"unit": text(), "model": text(empty=False), "status": text(), "cost_usd": optional(number(low=0)),
                        "cost_source": optional(text())}, ("unit", "model", "status"), "prepared unit")
"""A line of prepared.jsonl (fanout.store.prepared.PreparedLine): the fields the store knows; the rest is the
workload's and passes through."""
ATTEMPT_HEADER = record({"edit_rcid": whole(low=0), "model": text(empty=False), "log_bytes": whole(low=0),
                         "started_ns": whole(low=0)}, ("edit_rcid", "model", "log_bytes"), "attempt header")
ATTEMPT_CALL = record({"e": one_of(("sent", "answered", "failed")), "cost": optional(number(low=0))}, ("e",),
                      "chat call")

WATCH_JOURNAL_LINE = record({
    **{kind: whole() for kind in ("accepted", "dropped", "prefiltered", "unusable", "judged")},
    "event": record({}, what="event"), "position": record({}, what="position"), "gap": record({}, what="gap"),
    "listed": whole(low=0), "kept": whole(low=0)}, what="watch journal entry")
"""A line of watch.jsonl (fanout.workloads.patrol.live.journal): an accepted edit with the stream position, a
position, a decision (dropped, prefiltered, unusable, judged) or a backfilled gap; each kind read by its key."""
WATCH_EDIT_LINE = record({"rcid": whole()}, ("rcid",), "watched edit")
"""A line of watch.edits.jsonl: an edit as `fetch-edits --enrich` writes it; the patrol snapshot checks the rest,
naming the edit and the field (fanout.workloads.patrol.snapshot)."""
PREFILTER_LINE = record({"rcid": whole(), "score": optional(number(low=0, high=1)), "passed": flag()},
                        ("rcid", "passed"), "prefilter decision")
"""A line of prefilter.jsonl (fanout.workloads.patrol.live.prefilter.PrefilterDecision)."""
STREAM_OUTCOME_LINE = record({"rcid": whole(), "outcome": text()}, ("rcid", "outcome"), "stream outcome")
"""A line of outcomes.jsonl: an outcome in `fanout outcomes`' shape, learnt from the stream."""


class Either:
    """A line that is one of several kinds (an in-flight file: its header, then its calls)."""

    def __init__(self, *kinds: Schema, what: str) -> None:
        self.kinds = kinds
        self.what = what

    def problem(self, data: Any) -> str | None:
        problems = [kind.problem(data) for kind in self.kinds]
        if any(p is None for p in problems):
            return None
        return problems[0] if isinstance(data, dict) and "e" not in data else problems[-1]


ATTEMPT_LINE = Either(ATTEMPT_HEADER, ATTEMPT_CALL, what="in-flight line")
"""A line of inflight/*.jsonl (fanout.store.attempts.AttemptFile): its header, then one line per chat call."""
