"""What the desk shows: the run's edits in the order a reviewer works them, and one edit in full.

Everything comes from the report (fanout.report.build_report, and its words for
an edit, Report.edit_words), so the desk shows whatever the committee decides
under the options given, and the human decisions from reviews.jsonl. The
report is read without the run lock, so a run still going shows its new
verdicts on the next load; it is rebuilt only when the log has changed.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from fanout.report import EditInfo, Report, ReportOptions, build_report
from fanout.judging.policy import confidence
from fanout.judging.scales import stance
from fanout.base.records import VerdictRecord
from fanout.store.layout import LOG_NAME
from fanout.store.reviews import Review, ReviewLog, read_reviews


@dataclass
class Desk:
    """One run's desk: the report cached per state of the log, the decisions read fresh on every request."""

    run_dir: Path
    options: ReportOptions
    _report: Report | None = None
    _seen: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        self._lock = anyio.Lock()
        self.options = dataclasses.replace(self.options, resamples=0)  # no agreement intervals: most of the time

    async def report(self) -> Report:
        """The report of the log as it is now; built off the event loop (a large run takes a second)."""
        async with self._lock:
            seen = self._log_state()
            if self._report is None or seen != self._seen:
                self._report = await anyio.to_thread.run_sync(build_report, self.run_dir, self.options)
                self._seen = seen
            return self._report

    def _log_state(self) -> tuple[int, int]:
        """When and how long the log was last written; a missing log lets build_report say what is wrong."""
        try:
            stat = os.stat(self.run_dir / LOG_NAME)
        except OSError:
            return 0, -1
        return stat.st_mtime_ns, stat.st_size

    def reviews(self) -> ReviewLog:
        return read_reviews(self.run_dir)


def edit_rows(report: Report, reviews: ReviewLog) -> list[dict[str, Any]]:
    """Every edit: the paused ones first, most uncertain first (lowest mean confidence, then the closest
    top two), then the others in the run's order."""
    committee = {row["rcid"]: row for row in report.table("committee")}
    latest, by_edit = reviews.latest, report.run.by_edit()
    rows = [_row(report, e, by_edit[e.rcid], committee[e.rcid], latest.get(e.rcid)) for e in report.run.edits]
    paused = sorted((r for r in rows if r["outcome"] == "paused"), key=_uncertainty)
    return paused + [r for r in rows if r["outcome"] != "paused"]


def _uncertainty(row: dict[str, Any]) -> tuple[float, float]:
    """Sort key: no confidence or a low one first, then the smallest gap between the top two stances."""
    sure = row["mean_confidence"]
    gap = row["top_gap"]
    return (-1.0 if sure is None else sure, -1.0 if gap is None else gap)


def _row(report: Report, edit: EditInfo, records: dict[str, VerdictRecord], committee: dict[str, Any],
         human: Review | None) -> dict[str, Any]:
    words = report.edit_words(edit)
    top, second = committee["top_share"], committee["second_share"]
    return {
        "rcid": edit.rcid,
        "qid": edit.qid,
        "item": words.item,
        "property": edit.property,
        "what": words.what,
        "old": words.old,
        "new": words.new,
        "change": words.change,
        "diff_url": words.diff_url,
        "link_text": words.link_text,
        "outcome": committee["outcome"],
        "why": committee["why"],
        "majority": committee["majority"],
        "dawid_skene": committee["dawid_skene"],
        "mean_confidence": committee["mean_confidence"],
        "top_gap": None if top is None else top - second,
        "verdicts": {m: records[m].verdict if m in records else None for m in report.models},
        "human": None if human is None else _review(human),
    }


def _review(review: Review) -> dict[str, Any]:
    return {"decision": review.decision, "note": review.note, "reviewer": review.reviewer, "time": review.time}


def edit_detail(report: Report, reviews: ReviewLog, rcid: int) -> dict[str, Any] | None:
    """One edit in full: its row, each model's verdict, confidence, rationale and sources, and the
    decisions made on it (oldest first); None for an rcid the run does not hold."""
    committee = {row["rcid"]: row for row in report.table("committee")}
    edit = next((e for e in report.run.edits if e.rcid == rcid), None)
    if edit is None or rcid not in committee:
        return None
    records = report.run.by_edit()[rcid]
    row = _row(report, edit, records, committee[rcid], reviews.latest.get(rcid))
    row["models"] = [_model(m, records.get(m)) for m in report.models]
    row["history"] = [_review(r) for r in reviews.history if r.rcid == rcid]
    row["reasons"] = committee[rcid]["reasons"]
    row["transcript_url"] = f"/edits/{rcid}"
    return row


def _model(model: str, record: VerdictRecord | None) -> dict[str, Any]:
    if record is None:
        return {"model": model, "status": "not run", "verdict": None, "stance": None, "confidence": None,
                "rationale": None, "sources": [], "error": None}
    return {
        "model": model,
        "status": record.status,
        "verdict": record.verdict,
        "stance": stance(record.verdict),
        "confidence": confidence(record),
        "rationale": record.rationale,
        "sources": [{"url": s.url, "supports_claim": s.supports_claim, "provenance": s.provenance}
                    for s in record.sources],
        "error": record.error,
    }
