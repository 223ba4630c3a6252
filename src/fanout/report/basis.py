"""What a report's tables are built from: the run as read, the options, and the figures several tables share.

The committee's decisions feed the committee table, the queue, the scores,
the replay and the totals; the costs feed the cost table, the first screen and
the replay. `Basis` works each such figure out once, the first time a table
(fanout.report.builders), the totals or a note (fanout.report.notes) asks for
it, so a builder names what it needs and nothing else; the statistics
themselves are fanout.stats's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

from fanout.base.records import VerdictRecord
from fanout.judging.policy import Aspect, aspect_of
from fanout.judging.policy_file import PolicySpec
from fanout.judging.registry import recorded_strategy
from fanout.judging.scales import ACCEPT, REJECT, STANCES, UNSURE, stance
from fanout.judging.strategy import Answer, Settlement
from fanout.llm.cost import cache_savings
from fanout.llm.models import KNOWN_MODELS
from fanout.report.change import Change, describe_run
from fanout.report.columns import CommitteeRow, Context, confidence_read
from fanout.report.document import ReportOptions
from fanout.report.fmt import short_names
from fanout.report.guarantee import People, run_order_seed, who_decided
from fanout.report.run_data import EditInfo, RunData
from fanout.report.truth import Labels
from fanout.judging.policy import is_term_diff
from fanout.stats.calibration import (
    Key,
    Scored,
    applied_calibration,
    calibration_rows,
    held_out_calibrated,
    scored_verdicts,
)
from fanout.stats.calibration import CalibrationRow
from fanout.stats.dawid_skene import PRIOR, PRIOR_DIAGONAL, DawidSkene, dawid_skene
from fanout.stats.decisions import (
    COMMITTEE_RULES,
    Ballot,
    EditDecision,
    Weights,
    applied_policy,
    ballot,
    calibrated_ballots,
    committee_stance,
    decide_edits,
    held_out_weights,
    rule_predictions,
    say_calibrated,
    set_aside_text,
    set_aside_rule,
    vote_weights,
)
from fanout.stats.certify import Certificate
from fanout.stats.judged_by_people import AccuracyRow, accuracy_rows, apply_certificates, certify_committee
from fanout.stats.replay import ReplayInput, replay_table
from fanout.stats.scoring import committee_scores, compare_models, model_score, own_predictions, strategy_scores
from fanout.stats.spend import ModelCost, model_costs
from fanout.stats.uncertainty import Bootstrap
from fanout.store.reviews import ReviewLog

ByEdit = dict[int, dict[str, VerdictRecord]]


@dataclass(frozen=True)
class ReadRun:
    """What a report reads: the run, its truth (labels or outcomes), its human decisions and any --policy file."""

    run: RunData
    labels: Labels | None = None
    found_labels: Path | None = None
    """The labels file the run directory held, read because no --labels was given (a note says so)."""
    reviews: ReviewLog = field(default_factory=lambda: ReviewLog([]))
    specs: list[PolicySpec] = field(default_factory=list)


class Described(NamedTuple):
    changes: dict[int, Change]
    """What each edit changed, for the edits the run's snapshot still describes."""
    notes: list[str]


class Replay(NamedTuple):
    rows: list[dict[str, Any]]
    notes: list[str]


class Basis:
    """The run, its truth, the options, and each figure several tables share, worked out when first asked for."""

    def __init__(self, read: ReadRun, options: ReportOptions) -> None:
        self.run = read.run
        self.labels = read.labels
        self.found_labels = read.found_labels
        self.reviews = read.reviews
        self.specs = read.specs
        self.options = options
        self.truth: dict[int, str] = read.labels.truth if read.labels else {}

    @cached_property
    def by_edit(self) -> ByEdit:
        return self.run.by_edit()

    @cached_property
    def ctx(self) -> Context:
        return Context(short_names(self.run.models), self.options.project_edits, self.described.changes,
                       confidence_read=confidence_read(self.run.records, calibrated=bool(self.applied)))

    @cached_property
    def verdicts(self) -> dict[int, dict[str, str | None]]:
        """rcid -> model -> the verdict as given: what the agreement statistics read."""
        return {rcid: {m: r.verdict for m, r in recs.items()} for rcid, recs in self.by_edit.items()}

    @cached_property
    def stances(self) -> dict[int, dict[str, str | None]]:
        """rcid -> model -> its committee vote (None: no verdict, or one set aside by --rule-violations)."""
        rule = self.options.rule_violations
        return {rcid: {m: committee_stance(r, rule) for m, r in recs.items()} for rcid, recs in self.by_edit.items()}

    @cached_property
    def consensus(self) -> DawidSkene:
        return dawid_skene(self.stances, STANCES, smoothing=PRIOR, diagonal=PRIOR_DIAGONAL)

    @cached_property
    def bootstrap(self) -> Bootstrap:
        return Bootstrap(len(self.verdicts), resamples=self.options.resamples)

    @cached_property
    def model_scores(self) -> list[dict[str, Any]]:
        """Each model's score against the labels; none without labels."""
        return [model_score(m, self.by_edit, self.truth) for m in self.run.models] if self.labels else []

    @cached_property
    def weights(self) -> Weights:
        return vote_weights(self.run.models, self.consensus, self.model_scores)

    @cached_property
    def scored(self) -> dict[Key, Scored]:
        return scored_verdicts(self.run.records, self.truth)

    @cached_property
    def calibrated(self) -> dict[Key, float]:
        """Each labelled verdict's held-out calibrated confidence; none without labels."""
        return held_out_calibrated(self.scored) if self.labels else {}

    @cached_property
    def applied(self) -> dict[Key, float]:
        """The calibrated confidences the thresholds read."""
        return applied_calibration(self.calibrated, self.scored, calibrate=self.options.calibrate,
                                   calibrate_from=self.options.calibrate_from)

    @cached_property
    def decisions(self) -> list[EditDecision]:
        """Each edit as the committee (or the run's strategy) decided it, and what became of it."""
        options, ballots = self.options, calibrated_ballots(self._ballots(), self.applied)
        decisions = decide_edits(
            self.stances, self.run.models, weights=held_out_weights(*self.weights, self.stances, self.truth),
            consensus=self.consensus, policy=applied_policy(options.policy, self.consensus), ballots=ballots,
            thresholds=options.thresholds, settlements=settlements(self.run), set_aside=self._set_aside())
        if options.guarantee.applied:  # --target-agreement: the certificates decide what passes alone
            apply_certificates(decisions, self._certify(decisions))
        say_calibrated(decisions, ballots, self.applied)
        return decisions

    @cached_property
    def people(self) -> People:
        """Who decided (reviews.jsonl, else a labels file), and which decisions are the random sample."""
        return who_decided(self.run.run_dir, [e.rcid for e in self.run.edits], self.reviews, self.labels,
                           run_order_seed(self.run.manifest))

    @cached_property
    def certificates(self) -> dict[str, Certificate]:
        """Auto-accept's and auto-reject's certificates at the target asked (or the default one, shown only)."""
        return self._certify(self.decisions)  # the rule reads what apply_certificates leaves as it was

    def _certify(self, decisions: list[EditDecision]) -> dict[str, Certificate]:
        g = self.options.guarantee
        return certify_committee(decisions, self.people.stances, self.people.sample, target_agreement=g.target,
                                 risk=g.risk)

    @cached_property
    def own_stances(self) -> dict[int, dict[str, str | None]]:
        """rcid -> model -> the stance of its verdict as given (what each model's own accuracy scores)."""
        return {rcid: {m: stance(r.verdict) for m, r in recs.items()} for rcid, recs in self.by_edit.items()}

    @cached_property
    def accuracy_from_few(self) -> list[AccuracyRow]:
        """Each model's and committee rule's accuracy by PPI++ on the random sample; none without one."""
        people = self.people
        if not people.sample:
            return []
        return accuracy_rows(self.run.models, self.own_stances, self.decisions, people.stances, people.sample)

    def _ballots(self) -> dict[int, dict[str, Ballot]]:
        return {rcid: {m: ballot(r, s) for m, r in self.by_edit[rcid].items() if (s := given[m]) is not None}
                for rcid, given in self.stances.items()}

    def _set_aside(self) -> dict[int, dict[str, str]]:
        rule = self.options.rule_violations
        return {rcid: {m: aside for m, r in recs.items() if (aside := set_aside_rule(r, rule))}
                for rcid, recs in self.by_edit.items()}

    @cached_property
    def costs(self) -> list[ModelCost]:
        run = self.run
        return model_costs(run.records, run.models, self.options.project_edits, run.earlier_attempts,
                           self._cache_saved, run.investigations)

    def _cache_saved(self, model: str, cached: int, written: int) -> float | None:
        """What the model's prompt cache saved at the run's prices for it (its manifest's), else the table's."""
        return cache_savings(self.run.prices.get(model) or KNOWN_MODELS.get(model), cached, written)

    @cached_property
    def edit_costs(self) -> dict[int, float]:
        """rcid -> every record's known cost there, and the edit's shared investigation."""
        spent = self.run.investigation_usd
        return {rcid: sum(r.cost_usd or 0.0 for r in recs.values()) + spent.get(rcid, 0.0)
                for rcid, recs in self.by_edit.items()}

    @cached_property
    def scores(self) -> list[dict[str, Any]]:
        """Each model, committee rule and (after a cascade or router run) strategy against the labels."""
        if not self.labels:
            return []
        return (self.model_scores + committee_scores(self.decisions, self.truth, self.edit_costs)
                + strategy_scores(self.decisions, self.truth, self.edit_costs))

    @cached_property
    def comparisons(self) -> list[dict[str, object]]:
        """McNemar's test for each pair of models on the labels; none without labels."""
        if not self.labels:
            return []
        return compare_models({m: own_predictions(m, self.by_edit) for m in self.run.models}, self.truth)

    @cached_property
    def calibration(self) -> list[CalibrationRow]:
        if not self.labels:
            return []
        return calibration_rows(self.run.records, self.run.models, self.scored, self.calibrated)

    @cached_property
    def human(self) -> dict[int, str]:
        """rcid -> the reviewer's decision that stands."""
        return {rcid: r.decision for rcid, r in self.reviews.latest.items()}

    @cached_property
    def committee_rows(self) -> list[CommitteeRow]:
        """Each edit's decision as a row, with the reviewer's decision that stands."""
        edits = {e.rcid: e for e in self.run.edits}
        return [replace(committee_row(edits[d.rcid], d, self.truth), human=self.human.get(d.rcid))
                for d in self.decisions]

    @cached_property
    def described(self) -> Described:
        return Described(*describe_run(self.run))

    @cached_property
    def replay(self) -> Replay:
        """The --policy table: each policy next to each model and committee rule, on the same edits."""
        if not self.specs:
            return Replay([], [])
        changes = self.described.changes
        aspects = {e.rcid: record_aspect(self.by_edit[e.rcid], changes[e.rcid].aspect if e.rcid in changes else None,
                                         e.diff_type) for e in self.run.edits}
        committee = {rule: rule_predictions(self.decisions, rule) for rule in COMMITTEE_RULES}
        given = ReplayInput(self.run, aspects, {c.model: c.mean_cost_usd for c in self.costs}, committee, self.truth)
        return Replay(*replay_table(self.specs, given))


def settlements(run: RunData) -> dict[int, tuple[str, Settlement]]:
    """What the run's strategy settled on each edit, from the records it chose (each edit's answers in step
    order); empty for a run that asked every model, where the committee of all of them decides."""
    found: dict[int, tuple[str, Settlement]] = {}
    for rcid, records in run.by_edit().items():
        chosen = [r for r in records.values() if r.escalation is not None]
        strategy = recorded_strategy(chosen[0].strategy, run.strategy_settings()) if chosen else None
        if strategy is None:
            continue
        answers = sorted((Answer.of(r) for r in chosen), key=lambda a: a.step)
        settled = strategy.settle(run.planned_models(), answers)
        if settled is not None:
            found[rcid] = (strategy.name, settled)
    return found


def committee_row(edit: EditInfo, d: EditDecision, truth: Mapping[int, str]) -> CommitteeRow:
    votes = [s for s in d.stances.values() if s is not None]
    return CommitteeRow(
        rcid=d.rcid,
        qid=edit.qid,
        property=edit.property,
        votes=len(votes),
        accept=votes.count(ACCEPT),
        unsure=votes.count(UNSURE),
        reject=votes.count(REJECT),
        majority=d.majority.decision,
        majority_share=d.majority.confidence,
        weighted=d.weighted.decision,
        weighted_share=d.weighted.confidence,
        dawid_skene=d.dawid_skene.decision,
        dawid_skene_confidence=d.dawid_skene.confidence,
        needs_human=d.needs_human,
        reasons="; ".join(d.reasons),
        mean_confidence=d.mean_confidence,
        top_share=d.top_two[0] if d.top_two else None,
        second_share=d.top_two[1] if d.top_two else None,
        outcome=d.outcome,
        why=d.why,
        truth=truth.get(d.rcid),
        decision=d.decision,
        settled_by=d.settlement_by,
        set_aside=set_aside_text(d.set_aside) if d.set_aside else "",
    )


def record_aspect(records: Mapping[str, VerdictRecord], known: Aspect | None, diff_type: str | None) -> Aspect:
    """The aspect a run recorded, else the one the snapshot gives, else what the change type alone says."""
    for record in records.values():
        recorded = getattr(record, "aspect", None)
        if isinstance(recorded, str) and "/" in recorded:
            datatype, change = recorded.split("/", 1)
            return Aspect(datatype, change)
    if known is not None:
        return known
    return aspect_of(None, None, diff_type, term_edit=is_term_diff(diff_type or ""))
