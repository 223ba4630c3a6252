"""Committee rules and the human queue."""

from __future__ import annotations

from fanout.analysis.committee import (
    QueuePolicy,
    Vote,
    decide_edits,
    majority_vote,
    queue_reasons,
    weighted_vote,
)
from fanout.analysis.dawid_skene import dawid_skene
from fanout.judging.scales import STANCES


def test_majority_vote_picks_the_plurality_and_reports_its_share() -> None:
    assert majority_vote(["accept", "accept", "reject", "unsure"]) == Vote("accept", 0.5)


def test_a_tie_for_first_place_is_no_decision() -> None:
    assert majority_vote(["accept", "reject"]) == Vote(None, 0.5)
    assert majority_vote(["accept", "accept", "reject", "reject"]) == Vote(None, 0.5)


def test_no_votes_give_no_decision_and_no_confidence() -> None:
    assert majority_vote([]) == Vote(None, None)


def test_weighted_vote_lets_one_reliable_model_outvote_two_weak_ones() -> None:
    votes = {"strong": "reject", "weak1": "accept", "weak2": "accept"}
    weights = {"strong": 0.9, "weak1": 0.4, "weak2": 0.4}
    decision = weighted_vote(votes, weights)
    assert decision.decision == "reject"
    assert decision.confidence == 0.9 / 1.7


def test_weighted_vote_ties_in_weight_are_no_decision() -> None:
    assert weighted_vote({"a": "accept", "b": "reject"}, {"a": 0.5, "b": 0.5}).decision is None


def test_queue_reasons_name_each_threshold_that_failed() -> None:
    policy = QueuePolicy(min_agreement=0.75, min_confidence=0.8)
    assert queue_reasons(4, 4, Vote("accept", 0.75), Vote("accept", 0.95), policy) == []
    assert queue_reasons(4, 4, Vote("accept", 0.5), Vote("accept", 0.7), policy) == [
        "agreement 0.50 < 0.75",
        "confidence 0.70 < 0.80",
    ]
    assert queue_reasons(3, 4, Vote(None, 0.5), Vote("reject", 0.9), policy) == ["tie"]
    assert queue_reasons(1, 4, Vote("accept", 1.0), Vote("accept", 0.9), policy) == ["only 1 of 4 verdicts (quorum 3)"]
    assert queue_reasons(0, 4, Vote(None, None), Vote(None, None), policy) == ["no verdicts"]


def test_decide_edits_queues_split_edits_and_passes_unanimous_ones() -> None:
    stances = {
        1: {"a": "accept", "b": "accept", "c": "accept"},
        2: {"a": "accept", "b": "reject", "c": None},
        3: {"a": "reject", "b": "reject", "c": "reject"},
    }
    consensus = dawid_skene(stances, STANCES)
    decisions = decide_edits(stances, ["a", "b", "c"], weights=lambda rcid: {"a": 1, "b": 1, "c": 1},
                             consensus=consensus, policy=QueuePolicy())
    by_rcid = {d.rcid: d for d in decisions}
    assert by_rcid[1].majority == Vote("accept", 1.0) and not by_rcid[1].needs_human
    assert by_rcid[3].dawid_skene.decision == "reject" and not by_rcid[3].needs_human
    assert by_rcid[2].majority.decision is None
    assert by_rcid[2].needs_human and "tie" in by_rcid[2].reasons
    assert by_rcid[2].stances == {"a": "accept", "b": "reject", "c": None}


def test_two_agreeing_verdicts_of_four_do_not_reach_the_quorum() -> None:
    # Both answers agree (share 1.0), but half the committee said nothing: a human looks.
    policy = QueuePolicy()
    assert queue_reasons(2, 4, Vote("accept", 1.0), Vote("accept", 0.95), policy) == ["only 2 of 4 verdicts (quorum 3)"]
    assert queue_reasons(3, 4, Vote("accept", 1.0), Vote("accept", 0.95), policy) == []
    assert queue_reasons(1, 1, Vote("accept", 1.0), Vote("accept", 0.95), policy) == []
    assert queue_reasons(2, 3, Vote("accept", 1.0), Vote("accept", 0.95), policy) == ["only 2 of 3 verdicts (quorum 3)"]
    assert queue_reasons(2, 3, Vote("accept", 1.0), Vote("accept", 0.95), QueuePolicy(quorum=0.5)) == []
