"""The table of a watched run's first stage: what the revert-risk prefilter let through, and what came of it.

`fanout watch --prefilter revertrisk` scores each edit before the jury and
sends those below its threshold past it (prefilter.jsonl has every
decision). By score band this table counts the edits scored, those sent past
the jury, those judged and what the jury decided of them (the committee's
stance: reject, accept, unsure), and the reverts the stream later showed
among each (outcomes.jsonl): a band whose judged edits the jury rejects, or
whose prefiltered edits get reverted, is a band the threshold should not
pass. A run without a prefilter has no rows.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

from fanout.report.basis import Basis
from fanout.report.builders import table
from fanout.report.table import Column, Table
from fanout.report.truth import stream_outcomes
from fanout.store.layout import PREFILTER_NAME, run_file
from fanout.store.lines import ReadLines, each_record

BANDS = 10
UNSCORED = "not scored"


@dataclass(frozen=True)
class PrefilterRow:
    band: str
    """The revert-risk score band, `0.1-0.2` (or `not scored`: Lift Wing gave no score, so the jury judged it)."""
    scored: int
    prefiltered: int
    """Sent past the jury (below the threshold)."""
    judged: int
    """Sent to the jury and judged (a committee decision in the log)."""
    jury_reject: int
    jury_accept: int
    jury_unsure: int
    reverted_prefiltered: int
    """Of the prefiltered, how many the stream has shown reverted since: what the prefilter missed."""
    reverted_judged: int


def prefilter_columns() -> tuple[Column[PrefilterRow], ...]:
    return (
        Column("band", "revert-risk score", short="score", left=True),
        Column("scored", "edits"),
        Column("prefiltered", "past the jury", short="prefiltered"),
        Column("judged", "judged"),
        Column("jury_reject", "jury: reject", short="reject"),
        Column("jury_accept", "jury: accept", short="accept"),
        Column("jury_unsure", "jury: unsure", short="unsure"),
        Column("reverted_prefiltered", "reverted, prefiltered", short="rev. past"),
        Column("reverted_judged", "reverted, judged", short="rev. judged"),
    )


@table("prefilter")
def prefilter(b: Basis) -> Table[PrefilterRow]:
    decisions = _latest_decisions(b)
    stream = stream_outcomes(b.run.run_dir)
    reverted = {rcid for rcid, truth in (stream.truth if stream else {}).items() if truth == "incorrect"}
    decided = {d.rcid: d.decision for d in b.decisions}
    counts: dict[str, Counter[str]] = {}
    for rcid, entry in decisions.items():
        band = _band(entry.get("score"))
        row = counts.setdefault(band, Counter())
        row["scored"] += 1
        if entry.get("passed") is True:
            _count_judged(row, decided.get(rcid), rcid in decided, rcid in reverted)
        else:
            row["prefiltered"] += 1
            row["reverted_prefiltered"] += rcid in reverted
    rows = [PrefilterRow(band, **{k: counts[band][k] for k in _COUNTS}) for band in _order(counts)]
    return Table(prefilter_columns(), rows)


_COUNTS = ("scored", "prefiltered", "judged", "jury_reject", "jury_accept", "jury_unsure", "reverted_prefiltered",
           "reverted_judged")


def _count_judged(row: Counter[str], decision: str | None, judged: bool, reverted: bool) -> None:
    if not judged:
        return
    row["judged"] += 1
    row[f"jury_{decision}" if decision in ("reject", "accept") else "jury_unsure"] += 1
    row["reverted_judged"] += reverted


def _latest_decisions(b: Basis) -> dict[int, dict[str, Any]]:
    """The last decision per edit in prefilter.jsonl (an edit scored again after a restart keeps its last)."""
    path = b.run.run_dir / PREFILTER_NAME
    found: dict[int, dict[str, Any]] = {}
    for entry in each_record(path, run_file(PREFILTER_NAME), ReadLines(path)):
        if isinstance(entry.get("rcid"), int):
            found[entry["rcid"]] = entry
    return found


def _band(score: Any) -> str:
    if not isinstance(score, (int, float)) or isinstance(score, bool) or not math.isfinite(score):
        return UNSCORED
    low = min(int(score * BANDS), BANDS - 1) / BANDS
    return f"{low:.1f}-{low + 1 / BANDS:.1f}"


def _order(counts: dict[str, Counter[str]]) -> list[str]:
    return sorted((b for b in counts if b != UNSCORED)) + ([UNSCORED] if UNSCORED in counts else [])
