"""One builder per table of the report, each registered under the name `report --json` gives its table.

A builder turns the figures of a Basis (fanout.report.basis) into a Table:
its rows and its columns (fanout.report.columns). The report builds every
registered table in the order of registration, which is the order of
`report --json`'s tables; so a new table is one builder here with its
`@table("name")` line, and it reaches `report --json`, `Report.table(name)`
and, through `report.tables[name]`, any renderer that shows it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fanout.base.records import VerdictRecord
from fanout.judging.policy import confidence, confidence_kind
from fanout.judging.scales import stance
from fanout.report.basis import Basis
from fanout.report.columns import (
    HUMAN_AGREEMENT_COLUMNS,
    OVERALL_COLUMNS,
    CertificateRow,
    ConfusionRow,
    PpiRow,
    ReliabilityRow,
    TrustRow,
    VerdictRow,
    calibration_columns,
    certificate_columns,
    comparison_columns,
    cost_columns,
    distribution_columns,
    health_columns,
    pairwise_columns,
    ppi_columns,
    queue_columns,
    reliability_columns,
    replay_columns,
    score_columns,
    trust_columns,
)
from fanout.report.table import Table
from fanout.stats.agreement import model_agreement, overall_agreement, pairwise_agreement, verdict_distribution
from fanout.stats.calibration import CalibrationRow
from fanout.stats.certify import Certificate
from fanout.stats.judged_by_people import AccuracyRow
from fanout.stats.ppi import MeanEstimate
from fanout.stats.dawid_skene import DawidSkene
from fanout.stats.decisions import least_sure_first
from fanout.stats.human_decisions import human_agreement, human_scores
from fanout.stats.model_health import claimed_unfetched, model_health
from fanout.stats.scoring import score_confusion
from fanout.stats.spend import ModelCost, total_cost

TableBuilder = Callable[[Basis], Table[Any]]

TABLES: dict[str, TableBuilder] = {}
"""Every table's builder by the table's name, in the order `report --json` lists them."""


def table(name: str) -> Callable[[TableBuilder], TableBuilder]:
    """Register the decorated function as the builder of table `name` (one name, one builder)."""

    def register(build: TableBuilder) -> TableBuilder:
        if name in TABLES:
            raise ValueError(f"table {name!r} has a builder already: {TABLES[name].__qualname__}")
        TABLES[name] = build
        return build

    return register


def build_tables(basis: Basis) -> dict[str, Table[Any]]:
    """Every registered table, built from one basis, in the order of registration."""
    return {name: build(basis) for name, build in TABLES.items()}


@table("health")
def health(b: Basis) -> Table[Any]:
    return Table(health_columns(b.ctx), model_health(b.run.records, b.run.models))


@table("verdict_distribution")
def distribution(b: Basis) -> Table[Any]:
    return Table(distribution_columns(b.ctx), verdict_distribution(b.verdicts, b.run.models))


@table("pairwise_agreement")
def pairwise(b: Basis) -> Table[Any]:
    return Table(pairwise_columns(b.ctx), pairwise_agreement(b.verdicts, b.run.models, b.bootstrap))


@table("overall_agreement")
def overall(b: Basis) -> Table[Any]:
    return Table(OVERALL_COLUMNS, overall_agreement(b.verdicts, b.run.models, b.bootstrap))


@table("model_agreement")
def agreement_per_model(b: Basis) -> Table[Any]:
    """Each model's mean kappa with the others: data only (the page's cards and `fanout compare` read it)."""
    return Table((), model_agreement(b.verdicts, b.run.models, b.bootstrap))


@table("verdicts")
def verdicts(b: Basis) -> Table[Any]:
    """One row per record: data only."""
    return Table((), [verdict_row(r, b.truth) for r in b.run.records])


@table("committee")
def committee(b: Basis) -> Table[Any]:
    """One row per edit as the committee decided it: data only (the edit table and the queue show it)."""
    return Table((), b.committee_rows)


@table("human_queue")
def human_queue(b: Basis) -> Table[Any]:
    """The paused edits, least sure first (fanout.stats.decisions.LEAST_SURE_FIRST): the order of every queue."""
    rows = {row.rcid: row for row in b.committee_rows}
    return Table(queue_columns(b.ctx), [rows[d.rcid] for d in least_sure_first(b.decisions) if d.needs_human])


@table("reliability")
def reliability(b: Basis) -> Table[Any]:
    return Table(reliability_columns(b.ctx), reliability_rows(b))


@table("calibration")
def calibration(b: Basis) -> Table[Any]:
    return Table(calibration_columns(b.ctx), b.calibration)


@table("dawid_skene_confusion")
def dawid_skene_confusion(b: Basis) -> Table[Any]:
    return Table((), confusion_table(b.consensus))


@table("scores")
def scores(b: Basis) -> Table[Any]:
    return Table(score_columns(b.ctx), b.scores)


@table("model_comparison")
def model_comparison(b: Basis) -> Table[Any]:
    return Table(comparison_columns(b.ctx), b.comparisons)


@table("score_confusion")
def score_confusion_table(b: Basis) -> Table[Any]:
    rows = score_confusion(b.run.models, b.by_edit, b.decisions, b.truth) if b.labels else []
    return Table((), rows)


@table("cost")
def cost(b: Basis) -> Table[Any]:
    return Table(cost_columns(b.ctx), b.costs, footer=[total_cost(b.costs, b.options.project_edits)])


@table("policy_replay")
def policy_replay(b: Basis) -> Table[Any]:
    return Table(replay_columns(b.ctx), b.replay.rows)


@table("human_scores")
def human_score_table(b: Basis) -> Table[Any]:
    """Each model and committee rule against the human decisions that stand (the scores' columns)."""
    return Table(score_columns(b.ctx), human_scores(b.reviews.truth(), b.decisions, b.by_edit, b.run.models))


@table("human_agreement")
def human_agreement_table(b: Basis) -> Table[Any]:
    """How often each committee rule decided as the human did."""
    return Table(HUMAN_AGREEMENT_COLUMNS, human_agreement(b.reviews.truth(), b.decisions, b.by_edit))


@table("trust")
def trust(b: Basis) -> Table[Any]:
    """The first screen: each model's accuracy with its interval, $/correct, $/verdict and calibration."""
    return Table(trust_columns(b.ctx), trust_rows(b.run.models, b.model_scores, b.costs, b.calibration))


@table("certificates")
def certificates(b: Basis) -> Table[Any]:
    """Auto-accept's and auto-reject's certificates; none when nobody decided and none were asked for."""
    applied = b.options.guarantee.applied
    if b.people.source is None and not applied:
        return Table(certificate_columns(), [])
    return Table(certificate_columns(), [certificate_row(c, applied) for c in b.certificates.values()])


@table("accuracy_ppi")
def accuracy_ppi(b: Basis) -> Table[Any]:
    """Each model's and committee rule's accuracy from the random human decisions plus every verdict."""
    return Table(ppi_columns(b.ctx), [ppi_row(r) for r in b.accuracy_from_few])


def certificate_row(c: Certificate, applied: bool) -> CertificateRow:
    return CertificateRow(
        rule=c.rule, stance=c.stance, target_agreement=c.target_agreement, risk=c.risk, applied=applied,
        certified=c.certified, threshold=c.threshold, coverage=c.coverage, decided_alone=c.decided_alone,
        rests_on=c.rests_on, disagreements=c.disagreements, agreement_bound=c.agreement_bound,
        decisions=c.decisions, observed_agreement=c.observed_agreement, more_needed=c.more_needed, why=c.why)


def ppi_row(r: AccuracyRow) -> PpiRow:
    e = r.estimate
    (lo, lo_low, lo_high), (pp, pp_low, pp_high), (plus, plus_low, plus_high) = map(
        _three, (e.classical, e.ppi, e.ppi_plus))
    return PpiRow(
        subject=r.subject, kind=r.kind, proxy=r.proxy, labelled=e.labelled, unlabelled=e.unlabelled,
        labels_only=lo, labels_only_low=lo_low, labels_only_high=lo_high, ppi=pp, ppi_low=pp_low, ppi_high=pp_high,
        ppi_plus=plus, ppi_plus_low=plus_low, ppi_plus_high=plus_high,
        lam=e.lam, narrower=e.narrower, worth=e.worth, few=r.few, why=e.why)


def _three(m: MeanEstimate | None) -> tuple[float | None, float | None, float | None]:
    return (None, None, None) if m is None else (m.estimate, m.low, m.high)


def verdict_row(r: VerdictRecord, truth: Mapping[int, str]) -> VerdictRow:
    return VerdictRow(
        rcid=r.edit_rcid,
        qid=r.qid,
        property=r.property,
        model=r.model,
        status=r.status,
        verdict=r.verdict,
        stance=stance(r.verdict),
        confidence=confidence(r),
        confidence_kind=confidence_kind(r) if confidence(r) is not None else "none",
        truth=truth.get(r.edit_rcid),
        cost_usd=r.cost_usd,
        prompt_tokens=r.token_usage.prompt_tokens,
        completion_tokens=r.token_usage.completion_tokens,
        turns=r.token_usage.turns,
        tool_calls=len(r.tool_calls),
        sources=len(r.sources),
        verified_never_fetched=len(claimed_unfetched(r)),
        duration_s=r.duration_s,
    )


def reliability_rows(b: Basis) -> list[ReliabilityRow]:
    """Each model's Dawid–Skene reliability, its accuracy on the labels, and the vote weight taken from them."""
    accuracy = {row["subject"]: row["accuracy"] for row in b.model_scores}
    weights, sources = b.weights
    return [
        ReliabilityRow(
            model=m,
            dawid_skene_reliability=b.consensus.reliability(m) if m in b.consensus.confusion else None,
            label_accuracy=accuracy.get(m),
            weight=weights[m],
            weight_source=sources[m],
        )
        for m in b.run.models
    ]


def confusion_table(consensus: DawidSkene) -> list[ConfusionRow]:
    return [
        ConfusionRow(model, k, given, p)
        for model, matrix in consensus.confusion.items()
        for k, row in matrix.items()
        for given, p in row.items()
    ]


def trust_rows(models: list[str], scores: list[dict[str, Any]], costs: list[ModelCost],
               calibration: list[CalibrationRow]) -> list[TrustRow]:
    """The first screen's row per model: its score against the labels (none without labels), its cost, and the
    expected calibration error of its stated confidence."""
    scored = {row["subject"]: row for row in scores}
    cost = {c.model: c.mean_cost_usd for c in costs}
    ece = {c.model: c.ece for c in calibration}
    rows = []
    for m in models:
        row = scored.get(m, {})
        rows.append(TrustRow(m, row.get("accuracy"), row.get("accuracy_low"), row.get("accuracy_high"),
                             int(row.get("answered", 0)), int(row.get("labelled", 0)), row.get("cost_per_correct_usd"),
                             cost.get(m), ece.get(m)))
    return rows
