"""What the desk shows: the run's edits in the order a reviewer works them, and one edit in full.

Everything comes from the report (fanout.report.build_report, and its words for
an edit, Report.edit_words), so the desk shows whatever the committee decides
under the options given (--target-agreement included), and the human
decisions from reviews.jsonl. The report is read without the run lock, so a
run still going (or a `fanout watch` growing it) shows its new edits on the
next poll; it is rebuilt only when the log or the decisions have changed.

The working order (`work_order`) is fanout.stats.draw.next_items over every
edit nobody decided yet: a stated share (`--random-share`) drawn from the
run's seeded random order, the rest the least sure first, paused edits before
the others (fanout.stats.decisions.LEAST_SURE_FIRST, the report's order). The
random draws keep the certificates and the accuracy estimates unbiased
(fanout.report.guarantee); each row says how it was drawn, and a decision
records it (`drawn` in reviews.jsonl).

A page of the desk gets a token (`Pages`); the desk remembers which edits it
offered that page and which it showed in full, and takes a decision only on
an edit the page showed: a held key, a stale tab or a script cannot decide an
edit nobody saw.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from fanout.base.declare import flag, setting
from fanout.base.errors import ConfigError
from fanout.base.item import Editor
from fanout.base.records import VerdictRecord
from fanout.judging.policy import confidence, confidence_kind
from fanout.judging.scales import stance
from fanout.report import EditInfo, Report, ReportOptions, build_report
from fanout.stats.certify import min_decisions
from fanout.stats.decisions import AUTO_PASSED, LEAST_SURE_FIRST, PAUSED, EditDecision, least_sure_first
from fanout.stats.draw import SEED, Candidate, Pick, next_items
from fanout.stats.judged_by_people import human_kappas, percent
from fanout.store.layout import LOG_NAME
from fanout.store.reviews import UNDO, Review, ReviewLog, read_reviews, reviews_path

PAGES_KEPT = 64
"""Open pages the desk remembers (a page older than that is asked to reload)."""


def _share(value: float | None, name: str) -> None:
    if value is not None and not 0 <= value <= 1:
        raise ConfigError(f"{name} must be between 0 and 1, got {value}.")


@dataclass(frozen=True)
class DeskSettings:
    """How the desk picks what people see next."""

    random_share: float = setting(0.3, flag(
        "--random-share", type=float, metavar="S", check=_share,
        help="the share of decisions spent on edits drawn at random from the whole run (default {default}); the "
             "rest go to the least sure edits, paused ones first. Only random draws can certify auto-decisions "
             "and estimate accuracy without bias (docs/decisions.md)"))


@dataclass
class Shown:
    """What one page of the desk was offered (rcid -> `random` or `uncertain`) and which edits it showed in full."""

    drawn: dict[int, str] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)


class Pages:
    """The desk's open pages by token, the newest PAGES_KEPT of them."""

    def __init__(self, kept: int = PAGES_KEPT) -> None:
        self._pages: OrderedDict[str, Shown] = OrderedDict()
        self._kept = kept

    def new(self) -> str:
        token = secrets.token_urlsafe(16)
        self._pages[token] = Shown()
        while len(self._pages) > self._kept:
            self._pages.popitem(last=False)
        return token

    def get(self, token: object) -> Shown | None:
        return self._pages.get(token) if isinstance(token, str) else None


@dataclass
class Desk:
    """One run's desk: the report cached per state of the log and of the decisions, and the open pages."""

    run_dir: Path
    options: ReportOptions
    settings: DeskSettings = field(default_factory=DeskSettings)
    pages: Pages = field(default_factory=Pages)
    _report: Report | None = None
    _seen: tuple[tuple[int, int], ...] | None = None

    def __post_init__(self) -> None:
        self._lock = anyio.Lock()
        self.options = dataclasses.replace(self.options, resamples=0)  # no agreement intervals: most of the time

    async def report(self) -> Report:
        """The report of the log and decisions as they are now; built off the event loop (a large run takes a
        second). The decisions count: the certificates, and with --target-agreement the outcomes, rest on them."""
        async with self._lock:
            seen = (_state(self.run_dir / LOG_NAME), _state(reviews_path(self.run_dir)))
            if self._report is None or seen != self._seen:
                self._report = await anyio.to_thread.run_sync(build_report, self.run_dir, self.options)
                self._seen = seen
            return self._report

    def reviews(self) -> ReviewLog:
        return read_reviews(self.run_dir)


def _state(path: Path) -> tuple[int, int]:
    """When and how long a file was last written; a missing one lets build_report say what is wrong."""
    try:
        found = os.stat(path)
    except OSError:
        return 0, -1
    return found.st_mtime_ns, found.st_size


def check_reviews_file(run_dir: Path) -> None:
    """ConfigError, in one line, when the desk could not append its decisions. What the file is (a link, a FIFO,
    a directory) is refused by the one reader of run files (fanout.store.lines), which reads it first; then
    whether the desk may write it (or, before the first decision, the run directory)."""
    read_reviews(run_dir)
    path = reviews_path(run_dir)
    if not os.path.lexists(path):
        if not os.access(run_dir, os.W_OK):
            raise ConfigError(f"cannot write decisions into {run_dir}: the directory is not writable")
        return
    if not os.access(path, os.W_OK):
        raise ConfigError(f"the run's {path.name} ({path}) cannot be written; the desk appends its decisions there")


# --- the working order -----------------------------------------------------------------------------------


def work_order(report: Report, decided: set[int], random_share: float) -> list[Pick]:
    """Every edit nobody decided, in the order to work them: random draws at `random_share` of all decisions,
    the rest least sure first (paused edits before the others)."""
    ranked = [d.rcid for d in _paused_first(least_sure_first(report.decisions))]
    candidates = [Candidate(rcid, 1 - i / max(len(ranked), 1)) for i, rcid in enumerate(ranked)]
    seed = report.people.seed if report.people is not None else SEED
    return next_items(candidates, decided, count=len(ranked), random_share=random_share, seed=seed)


def _paused_first(decisions: list[EditDecision]) -> list[EditDecision]:
    return [d for d in decisions if d.outcome == PAUSED] + [d for d in decisions if d.outcome != PAUSED]


def edit_rows(report: Report, reviews: ReviewLog, random_share: float) -> list[dict[str, Any]]:
    """Every edit: the undecided ones in the working order (each saying how it was drawn), then the decided ones
    in the run's order."""
    latest = reviews.latest
    picks = work_order(report, set(latest), random_share)
    by_edit, decisions = report.run.by_edit(), {d.rcid: d for d in report.decisions}
    edits = {e.rcid: e for e in report.run.edits}
    rows = [_row(report, edits[p.key], by_edit[p.key], decisions[p.key], None, "random" if p.random else "uncertain")
            for p in picks]
    rows += [_row(report, e, by_edit[e.rcid], decisions[e.rcid], latest[e.rcid], None)
             for e in report.run.edits if e.rcid in latest]
    return rows


# --- an edit as the desk shows it ----------------------------------------------------------------------------


def stance_text(d: EditDecision) -> str:
    """The committee's stance and what became of the edit, in words that never read "passed" for a rejection:
    `auto-rejected`, `committee accepts`, `paused · leans reject`."""
    taken = d.decision
    if d.outcome == PAUSED:
        return f"paused · leans {taken}" if taken else "paused · no committee decision"
    if taken is None:
        return "no committee decision"
    if d.outcome == AUTO_PASSED:
        return {"accept": "auto-accepted", "reject": "auto-rejected"}.get(taken, f"auto-decided {taken}")
    return {"accept": "committee accepts", "reject": "committee rejects"}.get(taken, "committee is unsure")


def _row(report: Report, edit: EditInfo, records: dict[str, VerdictRecord], d: EditDecision,
         human: Review | None, drawn: str | None) -> dict[str, Any]:
    words = report.edit_words(edit)
    given = {m: stance(records[m].verdict) if m in records else None for m in report.models}
    return {
        "rcid": edit.rcid, "qid": edit.qid, "item": words.item, "property": edit.property, "what": words.what,
        "old": words.old, "new": words.new, "change": words.change, "timestamp": edit.edit_timestamp,
        "diff_url": words.diff_url, "link_text": words.link_text, "history_url": words.history_url,
        "undo_url": words.undo_url, "editor": _editor(words.editor),
        "outcome": d.outcome, "stance": d.decision, "stance_text": stance_text(d), "why": d.why,
        "reasons": "; ".join(d.reasons), "majority": d.majority.decision, "dawid_skene": d.dawid_skene.decision,
        "dawid_skene_posterior": d.dawid_skene.confidence, "mean_confidence": d.mean_confidence,
        "mean_confidence_words": report.mean_confidence_words,
        "split": len({s for s in given.values() if s is not None}) > 1,
        "verdicts": {m: records[m].verdict if m in records else None for m in report.models},
        "stances": given, "drawn": drawn, "human": None if human is None else review_json(human),
    }


def _editor(editor: Editor | None) -> dict[str, Any] | None:
    return None if editor is None else editor._asdict()


def review_json(review: Review) -> dict[str, Any]:
    """A line of reviews.jsonl as the API gives it (the optional fields always there)."""
    return {"decision": review.decision, "note": review.note, "reviewer": review.reviewer, "time": review.time,
            "drawn": review.drawn, "undoes": review.undoes}


def edit_detail(report: Report, reviews: ReviewLog, rcid: int) -> dict[str, Any] | None:
    """One edit in full: its row, each model's verdict, confidence, rationale and sources, and every line of its
    decision history (oldest first, undos included); None for an rcid the run does not hold."""
    edit = next((e for e in report.run.edits if e.rcid == rcid), None)
    if edit is None:
        return None
    decision = next(d for d in report.decisions if d.rcid == rcid)
    records = report.run.by_edit()[rcid]
    row = _row(report, edit, records, decision, reviews.latest.get(rcid), None)
    row["models"] = [_model(m, records.get(m)) for m in report.models]
    row["history"] = [review_json(r) for r in reviews.history if r.rcid == rcid]
    row["transcript_url"] = f"/edits/{rcid}"
    return row


def _model(model: str, record: VerdictRecord | None) -> dict[str, Any]:
    if record is None:
        return {"model": model, "status": "not run", "verdict": None, "stance": None, "confidence": None,
                "confidence_kind": None, "rationale": None, "sources": [], "error": None}
    return {
        "model": model,
        "status": record.status,
        "verdict": record.verdict,
        "stance": stance(record.verdict),
        "confidence": confidence(record),
        "confidence_kind": confidence_kind(record),
        "rationale": record.rationale,
        "sources": [{"url": s.url, "supports_claim": s.supports_claim, "provenance": s.provenance}
                    for s in record.sources],
        "error": record.error,
    }


# --- the desk's figures: counts, progress toward a certificate, agreement with people ---------------------------


def desk_state(report: Report, reviews: ReviewLog, settings: DeskSettings) -> dict[str, Any]:
    """Everything the desk's list shows, in one answer (`GET /api/edits`, polled)."""
    rows = edit_rows(report, reviews, settings.random_share)
    return {"run_dir": str(report.run.run_dir), "models": report.models, "simulated": report.run.simulated(),
            "random_share": settings.random_share, "order": LEAST_SURE_FIRST, "counts": counts(report, reviews),
            "progress": progress(report), "agreement": agreement(report, reviews), "edits": rows}


def counts(report: Report, reviews: ReviewLog) -> dict[str, int]:
    """The counts the report and `fanout queue` give: paused, waiting (paused, no human decision), decided."""
    latest = reviews.latest
    paused = [d.rcid for d in report.decisions if d.outcome == PAUSED]
    decided = sum(e.rcid in latest for e in report.run.edits)
    return {"edits": len(report.run.edits), "paused": len(paused), "waiting": sum(r not in latest for r in paused),
            "decided": decided, "random_sample": 0 if report.people is None else len(report.people.sample)}


def progress(report: Report) -> list[dict[str, Any]]:
    """Per rule (auto-accept, auto-reject): certified or not, and how far from a certificate, in a sentence."""
    g = report.options.guarantee
    rows = report.table("certificates")
    if not rows:  # nobody decided yet
        fewest = min_decisions(g.target, g.risk)
        return [{"rule": rule, "certified": False, "threshold": None, "more_needed": None,
                 "text": f"at least {fewest} random decisions to certify {rule} at {percent(g.target)}"}
                for rule in ("auto-accept", "auto-reject")]
    return [{"rule": r["rule"], "certified": r["certified"], "threshold": r["threshold"],
             "more_needed": r["more_needed"], "text": _progress_text(r)} for r in rows]


def _progress_text(row: dict[str, Any]) -> str:
    rule, target = row["rule"], percent(row["target_agreement"])
    if row["certified"]:
        return (f"{rule} certified at {target} (confidence ≥ {row['threshold']:.2f}): it decides "
                f"{row['coverage']:.0%} of the edits alone")
    if row["more_needed"]:
        return f"{row['more_needed']} more random decisions to certify {rule} at {target}"
    if row["decisions"]:
        return (f"{rule} cannot be certified at {target} from the decisions so far: people agreed with it on "
                f"{row['observed_agreement']:.0%} of {row['decisions']}")
    fewest = min_decisions(row["target_agreement"], row["risk"])
    return f"at least {fewest} random decisions to certify {rule} at {target}"


def agreement(report: Report, reviews: ReviewLog) -> list[dict[str, Any]]:
    """Each model against the people who decided (every decision that stands): Cohen's kappa with its n."""
    human = {rcid: r.decision for rcid, r in reviews.latest.items() if r.decision != UNDO}
    stances = {rcid: {m: stance(r.verdict) for m, r in recs.items()} for rcid, recs in report.run.by_edit().items()}
    return [dataclasses.asdict(k) for k in human_kappas(report.models, stances, human)]
