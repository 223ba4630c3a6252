"""The claims workload's tables (per text, per claim) and seed 004's FactualityEvaluator fields made of them.

Two tables, each with a row per judge (every model, and the committee):

    factuality       one row per (text, judge): the shares of its claims supported, refuted and unsure, the
                     overall factuality with its 95 % interval, the judge's mean confidence, the sources
                     consulted, the cost, and the explanation naming each refuted claim with its sources
    claim_verdicts   one row per (claim, judge): its stance, is_factual, confidence, evidence and sources

and `factuality_documents` maps them onto seed 004's fields, nested as the
seed nests them (`report --json`'s `factuality`, and the quarantine file):

    verified_claims      [{claim, is_factual, confidence, evidence, sources}]   (+ claim_key, stance)
    overall_factuality   float in [0, 1] (None with no claim judged)
    confidence           float in [0, 1]
    explanation          str
    sources_consulted    int

`is_factual` is true for a supported claim, false for a refuted one and
null for one judged unsure (the seed's bool has no third value; an unsure
claim is not counted as factual in overall_factuality).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fanout.report.fmt import with_interval
from fanout.report.table import NOT_DATA, Column, Table, amount, check_fields, fixed, money

COMMITTEE = "committee"
"""The judge a row of the committee's stances names."""
IS_FACTUAL = {"accept": True, "reject": False}


@dataclass(frozen=True)
class FactualityRow:
    text_id: str
    subject: str
    """A model's name, or `committee`."""
    claims: int
    judged: int
    supported: int
    refuted: int
    unsure: int
    overall_factuality: float | None
    overall_factuality_low: float | None
    overall_factuality_high: float | None
    confidence: float | None
    sources_consulted: int
    cost_usd: float | None
    """What the judge's verdicts on the text's claims cost; the committee's row adds the text's extraction."""
    truth: str | None
    """The whole text's label (correct when every labelled claim is), None without labels."""
    explanation: str


@dataclass(frozen=True)
class ClaimRow:
    text_id: str
    subject: str
    claim_key: int
    claim: str
    stance: str | None
    is_factual: bool | None
    confidence: float | None
    verdict: str | None
    """The model's verdict; the committee's row gives its decision's stance."""
    truth: str | None
    sources: str
    """The URLs cited, separated by spaces (the JSON's nested form lists them)."""
    evidence_list: tuple[str, ...] = field(default=(), metadata=NOT_DATA)
    source_list: tuple[str, ...] = field(default=(), metadata=NOT_DATA)


def factuality_columns() -> tuple[Column[FactualityRow], ...]:
    return (
        Column("text_id", "text", left=True),
        Column("subject", "judge", left=True),
        Column("claims", "claims"),
        Column("supported", "supported"),
        Column("refuted", "refuted"),
        Column("unsure", "unsure"),
        Column("overall_factuality", "factuality [95% interval]", short="factuality",
               show=lambda r: with_interval(_fields(r), "overall_factuality")),
        Column("confidence", "confidence", fmt=fixed(2)),
        Column("sources_consulted", "sources", fmt=amount(0)),
        Column("cost_usd", "cost", fmt=money(4)),
        Column("truth", "truth", left=True, when=lambda rows: any(r.truth is not None for r in rows)),
    )


def claim_columns() -> tuple[Column[ClaimRow], ...]:
    return (
        Column("claim_key", "key"),
        Column("text_id", "text", left=True),
        Column("subject", "judge", left=True),
        Column("claim", "claim", left=True),
        Column("stance", "stance", left=True),
        Column("confidence", "confidence", fmt=fixed(2)),
        Column("truth", "truth", left=True, when=lambda rows: any(r.truth is not None for r in rows)),
    )


def _fields(row: FactualityRow) -> Mapping[str, object]:
    return {"overall_factuality": row.overall_factuality, "overall_factuality_low": row.overall_factuality_low,
            "overall_factuality_high": row.overall_factuality_high}


def factuality_documents(texts: Table[FactualityRow], claims: Table[ClaimRow]) -> list[dict[str, Any]]:
    """One entry per text: seed 004's fields for the committee and for each model."""
    by_judge: dict[tuple[str, str], list[ClaimRow]] = {}
    for row in claims.rows:
        by_judge.setdefault((row.text_id, row.subject), []).append(row)
    documents: dict[str, dict[str, Any]] = {}
    for text in texts.rows:
        entry = documents.setdefault(text.text_id, {"text_id": text.text_id, "truth": text.truth, "committee": None,
                                                    "models": {}})
        document = seed_fields(text, by_judge.get((text.text_id, text.subject), []))
        if text.subject == COMMITTEE:
            entry["committee"] = document
        else:
            entry["models"][text.subject] = document
    return list(documents.values())


def seed_fields(text: FactualityRow, claims: Sequence[ClaimRow]) -> dict[str, Any]:
    """One judge's view of one text in seed 004's FactualityResponse shape (plus the counts it leaves implicit)."""
    return {
        "verified_claims": [{"claim": c.claim, "claim_key": c.claim_key, "is_factual": c.is_factual,
                             "stance": c.stance, "confidence": c.confidence, "evidence": list(c.evidence_list),
                             "sources": list(c.source_list)} for c in claims],
        "overall_factuality": text.overall_factuality,
        "overall_factuality_interval": [text.overall_factuality_low, text.overall_factuality_high],
        "confidence": text.confidence,
        "explanation": text.explanation,
        "sources_consulted": text.sources_consulted,
        "claims": text.claims, "judged": text.judged, "supported": text.supported, "refuted": text.refuted,
        "unsure": text.unsure, "cost_usd": text.cost_usd,
    }


check_fields(FactualityRow, factuality_columns())
check_fields(ClaimRow, claim_columns())
