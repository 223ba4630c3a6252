"""The claims workload's two tables: each text's factuality and each claim's stance, per model and committee.

Registered like every other table (fanout.report.builders), so they reach
`report --json`, `--csv` and any renderer; a run of another workload gets
them empty. A claim's committee stance is the reviewer's decision where one
stands (the review desk), else the committee's decision (Dawid–Skene's
consensus, or what a cascade or router settled). The arithmetic is
fanout.stats.factuality's; the rows and seed 004's fields are
fanout.report.claims_rows'.
"""

from __future__ import annotations

from typing import Any

from fanout.base.records import VerdictRecord
from fanout.report.basis import Basis
from fanout.report.builders import table
from fanout.report.claims_rows import (
    COMMITTEE, IS_FACTUAL, ClaimRow, FactualityRow, claim_columns, factuality_columns,
)
from fanout.report.columns import CommitteeRow
from fanout.report.run_data import EditInfo
from fanout.report.table import Table
from fanout.stats.factuality import Judgement, distinct, group_factuality
from fanout.workloads.claims.workload import NAME as CLAIMS

EVIDENCE_CHARS = 300
"""A rationale as a claim's evidence is cut here (the record keeps it whole)."""


def is_claims_run(b: Basis) -> bool:
    return b.run.workload == CLAIMS


def texts_of(b: Basis) -> dict[str, list[EditInfo]]:
    """Each text's claims that have a record, in the run's order (by key: text by text, claim by claim)."""
    found: dict[str, list[EditInfo]] = {}
    for edit in sorted(b.run.edits, key=lambda e: e.rcid):
        found.setdefault(edit.qid, []).append(edit)
    return found


def claim_text(b: Basis, edit: EditInfo) -> str:
    change = b.described.changes.get(edit.rcid)
    return change.new if change is not None and change.new else f"claim {edit.rcid}"


def model_judgement(b: Basis, edit: EditInfo, model: str) -> Judgement:
    record = b.by_edit.get(edit.rcid, {}).get(model)
    given = b.stances.get(edit.rcid, {}).get(model) if record is not None else None
    evidence = (_short(record.rationale),) if record is not None and record.rationale else ()
    return Judgement(edit.qid, edit.rcid, claim_text(b, edit), given,
                     record.confidence if record is not None and given is not None else None, evidence,
                     _sources([record], given) if record is not None else ())


def committee_judgement(b: Basis, edit: EditInfo, row: CommitteeRow | None) -> Judgement:
    taken = (row.human or row.decision) if row is not None else None
    agreeing = [r for m, r in b.by_edit.get(edit.rcid, {}).items() if b.stances.get(edit.rcid, {}).get(m) == taken]
    return Judgement(edit.qid, edit.rcid, claim_text(b, edit), taken, _committee_confidence(row, taken),
                     tuple(_short(r.rationale) for r in agreeing if r.rationale), _sources(agreeing, taken))


def _committee_confidence(row: CommitteeRow | None, taken: str | None) -> float | None:
    """Dawid–Skene's confidence in its own consensus; the models' mean where a reviewer or a cascade decided."""
    if row is None or taken is None:
        return None
    return row.dawid_skene_confidence if row.settled_by is None and row.human is None else row.mean_confidence


def _sources(records: list[VerdictRecord], taken: str | None) -> tuple[str, ...]:
    """The URLs cited for the stance: those that agree with it first (against the claim for a refutation)."""
    cited = [s for r in records for s in r.sources]
    wanted = {"accept": True, "reject": False}.get(taken or "")
    agreeing = [s.url for s in cited if wanted is None or s.supports_claim is wanted]
    return distinct(agreeing or [s.url for s in cited])


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[:EVIDENCE_CHARS - 1] + "…"


def judgements(b: Basis) -> dict[tuple[str, str], list[Judgement]]:
    """(text id, judge) -> the judge's stance on each claim of the text, for every model and the committee."""
    rows = {row.rcid: row for row in b.committee_rows}
    found: dict[tuple[str, str], list[Judgement]] = {}
    for text_id, edits in texts_of(b).items():
        found[(text_id, COMMITTEE)] = [committee_judgement(b, e, rows.get(e.rcid)) for e in edits]
        for model in b.run.models:
            found[(text_id, model)] = [model_judgement(b, e, model) for e in edits]
    return found


def _cost(b: Basis, text_id: str, edits: list[EditInfo], subject: str) -> float:
    records = [r for e in edits for m, r in b.by_edit.get(e.rcid, {}).items() if subject in (COMMITTEE, m)]
    spent = sum(r.cost_usd or 0.0 for r in records)
    return spent + (b.run.preparation_usd.get(text_id, 0.0) if subject == COMMITTEE else 0.0)


def text_truth(b: Basis, edits: list[EditInfo]) -> str | None:
    """The text's truth from its claims' labels: incorrect if any claim is, correct if all are; else None."""
    truths = [b.truth.get(e.rcid) for e in edits]
    if not truths or any(t is None for t in truths):
        return "incorrect" if "incorrect" in truths else None
    return "incorrect" if "incorrect" in truths else ("unverifiable" if "unverifiable" in truths else "correct")


@table("factuality")
def factuality(b: Basis) -> Table[Any]:
    if not is_claims_run(b):
        return Table(factuality_columns(), [])
    texts = texts_of(b)
    rows = []
    for (text_id, subject), given in judgements(b).items():
        g = group_factuality(text_id, subject, given)
        rows.append(FactualityRow(text_id, subject, g.claims, g.judged, g.supported, g.refuted, g.unsure, g.factuality,
                                  g.low, g.high, g.confidence, g.sources_consulted,
                                  _cost(b, text_id, texts[text_id], subject), text_truth(b, texts[text_id]),
                                  g.explanation))
    return Table(factuality_columns(), rows)


@table("claim_verdicts")
def claim_verdicts(b: Basis) -> Table[Any]:
    if not is_claims_run(b):
        return Table(claim_columns(), [])
    rows = []
    for (text_id, subject), given in judgements(b).items():
        for j in given:
            record = b.by_edit.get(j.key, {}).get(subject)
            truth = b.truth.get(j.key)
            rows.append(ClaimRow(text_id, subject, j.key, j.statement, j.stance, IS_FACTUAL.get(j.stance or ""),
                                 j.confidence, record.verdict if record is not None else j.stance, truth,
                                 " ".join(j.sources), j.evidence, j.sources))
    return Table(claim_columns(), rows)

