"""Committee decisions per edit, and which edits need a human.

Every rule decides on the three-way stance scale (accept / unsure / reject),
the scale a patroller acts on. A tie is no decision: the committee is split,
and a split committee hands the edit to a human rather than guessing (seed
003: ties and low confidence pause for a person).

On top of those queue reasons, fanout.judging.policy.Thresholds read each
edit's ballots: the models' mean confidence (fanout.judging.policy.confidence:
the share of a model's samples that agree with its verdict under --samples N,
the confidence it stated with a verdict asked once; calibrated on the labels
where the report fits a calibration map) and how far apart the top two
stances are. Each model has one vote on the stance scale, split over its
samples' stances when it has samples (2 of 3 samples accept: 2/3 of a vote for
accept), whole on its verdict's stance when it has none. A low confidence or a
close top two pauses the edit; a high confidence with nothing pausing it
passes it on its own; anything else is decided by the committee as before.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, NamedTuple

from fanout.judging.scales import STANCE_OF_TRUTH
from fanout.stats.calibration import Key
from fanout.stats.dawid_skene import MIN_EDITS, DawidSkene
from fanout.judging.policy import Judged, Thresholds, confidence
from fanout.judging.scales import stance
from fanout.judging.strategy import Settlement
from fanout.base.records import VERIFIED_WITHOUT_SOURCE, VerdictRecord

COMMITTEE_RULES = ("majority", "weighted", "dawid_skene")
"""The committee's rules, each an attribute of EditDecision holding its Vote."""
PAUSED, AUTO_PASSED, DECIDED = "paused", "auto-passed", "decided"
OUTCOMES = (AUTO_PASSED, DECIDED, PAUSED)
"""What became of an edit: a human looks, it passes on its own, or the committee's decision stands."""
_EPSILON = 1e-9
"""Shares like 0.6 - 0.4 come out a hair under 0.2: a threshold met exactly is met."""


RULE_TEXT = {VERIFIED_WITHOUT_SOURCE: "verified without a verified source, --rule-violations abstain"}
"""How a set-aside vote's rule reads beside it (fanout.base.records names the rules)."""


def set_aside_rule(record: VerdictRecord, rule_violations: str) -> str | None:
    """Why the record's verdict casts no committee vote (the rule it broke, under --rule-violations abstain);
    None when it votes. The chip, the queue line and the edit page all say it with this text."""
    if record.verdict is None or not record.rule_violations or rule_violations != "abstain":
        return None
    return "; ".join(RULE_TEXT.get(rule, rule) for rule in record.rule_violations)


@dataclass(frozen=True)
class Vote:
    """One rule's answer for one edit; decision None means tied or no votes."""

    decision: str | None
    confidence: float | None
    """Share of the votes (or of the weight) for the decision, or the Dawid–Skene posterior."""


@dataclass(frozen=True)
class QueuePolicy:
    """When the committee's answer is not good enough to act on alone."""

    min_agreement: float = 0.75
    """Share of the votes the majority must have (3 of 4 passes, 2 of 4 does not)."""
    quorum: float = 0.75
    """Share of the run's models that must have given a verdict (3 of 4): two agreeing
    verdicts out of four asked are not a committee's answer. After a cascade or router run, the share
    of the models the strategy asked (fanout.stats.decisions.strategy_reasons)."""
    min_confidence: float = 0.8
    """Dawid–Skene posterior the consensus must reach."""


class Ballot(NamedTuple):
    """One model's say on an edit, as the thresholds read it."""

    shares: Mapping[str, float]
    """Stance -> part of the model's one vote (its samples' stances, or its verdict's whole)."""
    confidence: float | None
    """fanout.judging.policy.confidence of its record."""


@dataclass
class EditDecision:
    rcid: int
    stances: dict[str, str | None]
    """model -> stance (None = no verdict), for every model of the run."""
    majority: Vote
    weighted: Vote
    dawid_skene: Vote
    reasons: list[str] = field(default_factory=list)
    """Why a human should look; empty when the committee can act alone."""
    mean_confidence: float | None = None
    """Mean confidence of the models that gave one (None: no verdict)."""
    top_two: tuple[float, float] | None = None
    """Vote shares of the two leading stances (the second 0.0 when all agree); None without votes."""
    outcome: str = DECIDED
    """PAUSED, AUTO_PASSED or DECIDED."""
    why: str = ""
    """The reasons for a paused edit; for the others, what the confidence was measured against."""
    settlement: Settlement | None = None
    """What the run's strategy settled (a cascade or router run); None when every model was asked."""
    settlement_by: str | None = None
    """The name of that strategy."""
    set_aside: dict[str, str] = field(default_factory=dict)
    """model -> the rule its verdict broke, for each verdict given that casts no vote (--rule-violations abstain)."""

    @property
    def needs_human(self) -> bool:
        return bool(self.reasons)

    @property
    def decision(self) -> str | None:
        """The stance acted on: what the strategy settled, else the Dawid–Skene consensus of every model."""
        if self.settlement is not None:
            return stance(self.settlement.verdict)
        return self.dawid_skene.decision


LEAST_SURE_FIRST = ("least sure first: the models' mean confidence (the figure --pause and --autopass read; stated "
                    "with each verdict, or its samples' stability), lowest first, then the closest top two stances")
"""The one order of "least sure first" in every view (the report's queue, `fanout queue`, the review desk)."""


def least_sure_first(decisions: list[EditDecision]) -> list[EditDecision]:
    """The decisions in LEAST_SURE_FIRST order: no confidence first, then the lowest mean confidence, then the
    smallest gap between the top two stances' vote shares; ties keep their order."""
    def doubt(d: EditDecision) -> tuple[float, float]:
        gap = None if d.top_two is None else d.top_two[0] - d.top_two[1]
        return (-1.0 if d.mean_confidence is None else d.mean_confidence, -1.0 if gap is None else gap)

    return sorted(decisions, key=doubt)


def rule_predictions(decisions: list[EditDecision], rule: str) -> dict[int, str | None]:
    """rcid -> the stance a committee rule (COMMITTEE_RULES) decided, None for a tie or no votes."""
    return {d.rcid: getattr(d, rule).decision for d in decisions}


def majority_vote(stances: list[str]) -> Vote:
    """Plurality of the stances given; a tie for first place is no decision."""
    if not stances:
        return Vote(None, None)
    counts = Counter(stances).most_common()
    top = counts[0][1]
    share = top / len(stances)
    if len(counts) > 1 and counts[1][1] == top:
        return Vote(None, share)
    return Vote(counts[0][0], share)


def weighted_vote(votes: Mapping[str, str], weights: Mapping[str, float]) -> Vote:
    """Each model's vote counts its reliability; a tie in weight is no decision."""
    scores: dict[str, float] = {}
    for model, given in votes.items():
        scores[given] = scores.get(given, 0.0) + weights.get(model, 0.0)
    total = sum(scores.values())
    if total <= 0:
        return Vote(None, None)
    ranked = sorted(scores.items(), key=itemgetter(1), reverse=True)
    top = ranked[0][1]
    if len(ranked) > 1 and ranked[1][1] == top:
        return Vote(None, top / total)
    return Vote(ranked[0][0], top / total)


def queue_reasons(votes: int, models: int, majority: Vote, consensus: Vote, policy: QueuePolicy) -> list[str]:
    """Why an edit goes to a human, in words a patroller understands; empty = it does not."""
    if votes == 0:
        return ["no verdicts"]
    reasons = []
    needed = math.ceil(policy.quorum * models - 1e-9)
    if votes < needed:
        reasons.append(f"only {votes} of {models} verdicts (quorum {needed})")
    if majority.decision is None:
        reasons.append("tie")
    elif majority.confidence is not None and majority.confidence < policy.min_agreement:
        reasons.append(f"agreement {majority.confidence:.2f} < {policy.min_agreement:.2f}")
    if consensus.confidence is not None and consensus.confidence < policy.min_confidence:
        reasons.append(f"confidence {consensus.confidence:.2f} < {policy.min_confidence:.2f}")
    return reasons


def ballot(record: Judged, verdict_stance: str) -> Ballot:
    """The record's vote, split over its samples' stances (a run with --samples N); whole on its verdict's
    stance when it has no samples. Samples without a verdict split nothing."""
    samples = getattr(record, "samples", None) or []
    given = [s for s in (stance(sample.verdict) for sample in samples) if s is not None]
    if not given:
        return Ballot({verdict_stance: 1.0}, confidence(record))
    return Ballot({s: n / len(given) for s, n in Counter(given).items()}, confidence(record))


def top_two(ballots: Mapping[str, Ballot]) -> tuple[float, float] | None:
    """The two largest stance shares of the edit's votes (the second 0.0 when every vote is one stance)."""
    totals: dict[str, float] = {}
    for b in ballots.values():
        for s, part in b.shares.items():
            totals[s] = totals.get(s, 0.0) + part
    if not totals:
        return None
    ranked = sorted((part / len(ballots) for part in totals.values()), reverse=True) + [0.0]
    return ranked[0], ranked[1]


def mean_confidence(ballots: Mapping[str, Ballot]) -> float | None:
    known = [b.confidence for b in ballots.values() if b.confidence is not None]
    return sum(known) / len(known) if known else None


def threshold_reasons(sure: float | None, shares: tuple[float, float] | None, thresholds: Thresholds) -> list[str]:
    """Why the thresholds pause an edit (`sure`: its mean confidence); empty = they do not."""
    reasons = []
    if sure is not None and sure < thresholds.pause - _EPSILON:
        reasons.append(f"mean confidence {sure:.2f} < --pause {thresholds.pause:.2f}")
    if shares is not None and shares[0] - shares[1] < thresholds.delta - _EPSILON:
        reasons.append(f"top two {shares[0]:.2f} and {shares[1]:.2f} closer than --delta {thresholds.delta:.2f}")
    return reasons


def outcome(reasons: list[str], sure: float | None, thresholds: Thresholds) -> tuple[str, str]:
    """(PAUSED | AUTO_PASSED | DECIDED, why) for an edit with these pause reasons and mean confidence."""
    if reasons:
        return PAUSED, "; ".join(reasons)
    if sure is not None and sure >= thresholds.autopass - _EPSILON:
        return AUTO_PASSED, f"mean confidence {sure:.2f} >= --autopass {thresholds.autopass:.2f}"
    if sure is None:
        return DECIDED, "no confidence (none stated and no --samples 2 or more to measure one)"
    return DECIDED, f"mean confidence {sure:.2f} < --autopass {thresholds.autopass:.2f}"


def set_aside_text(set_aside: Mapping[str, str], names: Callable[[str], str] = str) -> str:
    """`set aside: olmo (verified-high without a verified source)`: the votes that were not counted, and why."""
    return "set aside: " + ", ".join(f"{names(m)} ({rule})" for m, rule in set_aside.items())


def strategy_reasons(settled: Settlement, stances: Mapping[str, str | None], set_aside: Mapping[str, str],
                     policy: QueuePolicy) -> list[str]:
    """Why an edit a cascade or router chose the models of goes to a human: the strategy did not settle it (or
    settled it without the support its rule asks for), too few of the models it asked answered, or a verdict it
    rests on is set aside. Models it never asked are no missing votes."""
    if not settled.settled or not settled.agreed:
        return [settled.reason]
    reasons = []
    answered = sum(stances.get(m) is not None or m in set_aside for m in settled.asked)
    needed = math.ceil(policy.quorum * len(settled.asked) - 1e-9)
    if answered < needed:
        reasons.append(f"only {answered} of {len(settled.asked)} asked models gave a verdict (quorum {needed})")
    resting = [m for m in settled.by if m in set_aside]
    if resting:
        reasons.append(f"the strategy's verdict rests on {', '.join(resting)}, whose vote is set aside: without it "
                       "the strategy's rule is not met")
    return reasons


def decide_edits(
    stances_by_edit: Mapping[int, Mapping[str, str | None]],
    models: list[str],
    *,
    weights: Callable[[int], Mapping[str, float]],
    consensus: DawidSkene,
    policy: QueuePolicy,
    ballots: Mapping[int, Mapping[str, Ballot]],
    thresholds: Thresholds,
    settlements: Mapping[int, tuple[str, Settlement]] | None = None,
    set_aside: Mapping[int, Mapping[str, str]] | None = None,
) -> list[EditDecision]:
    """Each rule's answer per edit, and what becomes of it. `weights` gives the vote weights for deciding
    one edit, so that weights fitted on labels can leave that edit's own label out; `ballots` holds the
    votes of the models whose stance the committee counts. Where the run's strategy chose the models
    (`settlements`, by edit: the strategy's name and settlement), its settlement is the decision and the thresholds read the records it rests on;
    `set_aside` names the verdicts that cast no vote and the rule each broke."""
    return [_decide_edit(rcid, {m: given.get(m) for m in models}, weights=weights(rcid), consensus=consensus,
                         policy=policy, ballots=ballots.get(rcid, {}), thresholds=thresholds,
                         settlement=(settlements or {}).get(rcid, (None, None)),
                         set_aside=dict((set_aside or {}).get(rcid, {})))
            for rcid, given in stances_by_edit.items()]


def _decide_edit(rcid: int, stances: dict[str, str | None], *, weights: Mapping[str, float], consensus: DawidSkene,
                 policy: QueuePolicy, ballots: Mapping[str, Ballot], thresholds: Thresholds,
                 settlement: tuple[str, Settlement] | tuple[None, None], set_aside: dict[str, str]) -> EditDecision:
    """One edit: each rule's answer, why a human should look (the strategy's reasons where it chose the models),
    the thresholds' reasons, and what becomes of it."""
    votes = {m: s for m, s in stances.items() if s is not None}
    majority = majority_vote(list(votes.values()))
    ds = Vote(*consensus.decision(rcid))
    decision = EditDecision(rcid, stances, majority, weighted_vote(votes, weights), ds)
    decision.set_aside = set_aside
    decision.settlement_by, decision.settlement = settlement
    if decision.settlement is not None:
        ballots = {m: b for m, b in ballots.items() if m in decision.settlement.by}
        reasons = strategy_reasons(decision.settlement, stances, decision.set_aside, policy)
    else:
        reasons = queue_reasons(len(votes), len(stances), majority, ds, policy)
    decision.mean_confidence, decision.top_two = mean_confidence(ballots), top_two(ballots)
    decision.reasons = reasons + threshold_reasons(decision.mean_confidence, decision.top_two, thresholds)
    decision.outcome, decision.why = outcome(decision.reasons, decision.mean_confidence, thresholds)
    _explain(decision)
    return decision


def _explain(decision: EditDecision) -> None:
    """Add to the edit's `why` what the strategy settled, and name the votes set aside there and in its reasons."""
    if decision.settlement is not None and decision.settlement.settled:
        decision.why = f"{decision.settlement.reason}; {decision.why}"
    if decision.set_aside:
        note = set_aside_text(decision.set_aside)
        decision.why = f"{decision.why}; {note}"
        if decision.reasons:
            decision.reasons.append(note)


def committee_stance(record: VerdictRecord, rule_violations: str) -> str | None:
    """The record's vote in the committee, under the stated rule-violation policy (--rule-violations)."""
    if record.rule_violations and rule_violations == "abstain":
        return None
    return stance(record.verdict)


def applied_policy(policy: QueuePolicy, consensus: DawidSkene) -> QueuePolicy:
    """The policy as applied: below MIN_EDITS answered edits Dawid–Skene's posterior queues nothing
    (--min-confidence is set aside, and a note says so), since a dozen edits cannot fit four confusion matrices."""
    if len(consensus.posteriors) >= MIN_EDITS:
        return policy
    return dataclasses.replace(policy, min_confidence=0.0)


class Weights(NamedTuple):
    """Each model's vote weight in the weighted vote, and where it comes from."""

    weights: dict[str, float]
    sources: dict[str, str]
    """model -> `labels` (its accuracy on them), `dawid_skene` (its reliability there) or `none`."""


def vote_weights(models: list[str], consensus: DawidSkene, model_scores: list[dict[str, Any]]) -> Weights:
    """Accuracy against labels where there is some; otherwise the Dawid–Skene reliability."""
    accuracy = {row["subject"]: row["accuracy"] for row in model_scores}
    weights: dict[str, float] = {}
    sources: dict[str, str] = {}
    for model in models:
        if accuracy.get(model) is not None:
            weights[model], sources[model] = accuracy[model], "labels"
        elif model in consensus.confusion:
            weights[model], sources[model] = consensus.reliability(model), "dawid_skene"
        else:
            weights[model], sources[model] = 0.0, "none"
    return Weights(weights, sources)


def held_out_weights(
    weights: Mapping[str, float],
    sources: Mapping[str, str],
    stances: Mapping[int, Mapping[str, str | None]],
    truth: Mapping[int, str],
) -> Callable[[int], Mapping[str, float]]:
    """Vote weights for deciding one edit: label accuracies fitted without that edit's label.

    Fitted on every label, the weighted vote would be scored on the labels it
    learnt from, and look better than it would on the next edits
    (leave-one-out keeps its score honest). Dawid–Skene weights use no labels.
    """
    right: dict[str, dict[int, int]] = {
        m: {r: int(s[m] == STANCE_OF_TRUTH[truth[r]]) for r, s in stances.items() if r in truth and s.get(m) is not None}
        for m, source in sources.items() if source == "labels"
    }

    def for_edit(rcid: int) -> Mapping[str, float]:
        held = dict(weights)
        for model, answers in right.items():
            if rcid in answers and len(answers) > 1:
                held[model] = (sum(answers.values()) - answers[rcid]) / (len(answers) - 1)
        return held

    return for_edit


def calibrated_ballots(ballots: Mapping[int, Mapping[str, Ballot]],
                       calibrated: Mapping[Key, float]) -> dict[int, dict[str, Ballot]]:
    """The ballots with each model's confidence replaced by its held-out calibrated one, where there is one."""
    return {rcid: {m: b._replace(confidence=calibrated[(rcid, m)]) if (rcid, m) in calibrated else b
                   for m, b in given.items()} for rcid, given in ballots.items()}


def say_calibrated(decisions: list[EditDecision], ballots: Mapping[int, Mapping[str, Ballot]],
                   calibrated: Mapping[Key, float]) -> None:
    """Name the calibrated confidence in the reasons of an edit whose thresholds read one."""
    for d in decisions:
        if any((d.rcid, m) in calibrated for m in ballots.get(d.rcid, {})):
            d.reasons = [r.replace("mean confidence", "mean calibrated confidence", 1) for r in d.reasons]
            d.why = d.why.replace("mean confidence", "mean calibrated confidence")
