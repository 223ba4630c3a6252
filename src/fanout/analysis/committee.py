"""Committee decisions per edit, and which edits need a human.

Every rule decides on the three-way stance scale (accept / unsure / reject),
the scale a patroller acts on. A tie is no decision: the committee is split,
and a split committee hands the edit to a human rather than guessing (seed
003: ties and low confidence pause for a person).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import itemgetter

from fanout.analysis.dawid_skene import DawidSkene


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
    verdicts out of four asked are not a committee's answer."""
    min_confidence: float = 0.8
    """Dawid–Skene posterior the consensus must reach."""


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

    @property
    def needs_human(self) -> bool:
        return bool(self.reasons)


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


def decide_edits(
    stances_by_edit: Mapping[int, Mapping[str, str | None]],
    models: list[str],
    *,
    weights: Callable[[int], Mapping[str, float]],
    consensus: DawidSkene,
    policy: QueuePolicy,
) -> list[EditDecision]:
    """Each rule's answer per edit. `weights` gives the vote weights for deciding one edit,
    so that weights fitted on labels can leave that edit's own label out."""
    decisions = []
    for rcid, given in stances_by_edit.items():
        stances = {m: given.get(m) for m in models}
        votes = {m: s for m, s in stances.items() if s is not None}
        majority = majority_vote(list(votes.values()))
        ds = Vote(*consensus.decision(rcid))
        decision = EditDecision(rcid, stances, majority, weighted_vote(votes, weights(rcid)), ds)
        decision.reasons = queue_reasons(len(votes), len(models), majority, ds, policy)
        decisions.append(decision)
    return decisions
