"""Certified auto-decisions (fanout.stats.certify) and the exact binomial tails under them (fanout.stats.binomial).

Table-driven cases small enough to check by hand (at A = 0.8, D = 0.2 a first
test needs 8 decisions: 0.8^8 = 0.168 <= 0.2 < 0.8^7 = 0.210), then the
properties: nothing is certified on fewer decisions than can pass, and for a
fixed start a lower target or a higher risk never certifies less.
"""

from __future__ import annotations

import math
import random

import pytest

from fanout.stats.binomial import tail, upper_bound
from fanout.stats.certify import (
    GRID,
    Certificate,
    Checked,
    Judged,
    Step,
    certify,
    certify_rules,
    decisions_to_certify,
    fixed_sequence,
    min_decisions,
)


def ten_accepts(*disagreeing: float) -> list[Checked]:
    """Ten auto-accept candidates a person decided, at confidence 0.99, 0.98 ... 0.90; the person rejects
    those whose confidence is listed."""
    return [Checked("accept", c, "reject" if c in disagreeing else "accept")
            for c in (round(0.99 - i / 100, 2) for i in range(10))]


def run_of(checked: list[Checked]) -> list[Judged]:
    """The checked items plus twelve nobody decided: five accepts at 0.95, five at 0.5, two rejects at 0.99."""
    return ([Judged(c.stance, c.confidence) for c in checked] + [Judged("accept", 0.95)] * 5
            + [Judged("accept", 0.5)] * 5 + [Judged("reject", 0.99)] * 2)


# --- binomial -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "n", "p", "expected"), [
    (0, 8, 0.2, 0.8 ** 8),
    (1, 9, 0.2, 0.8 ** 9 + 9 * 0.2 * 0.8 ** 8),  # 0.436207616
    (2, 4, 0.5, 11 / 16),
    (0, 45, 0.05, 0.95 ** 45),
    (3, 3, 0.7, 1.0),
    (0, 5, 0.0, 1.0),
    (2, 5, 1.0, 0.0),
])
def test_binomial_tail_by_hand(k: int, n: int, p: float, expected: float) -> None:
    assert tail(k, n, p) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_binomial_tail_of_a_large_count_neither_overflows_nor_underflows() -> None:
    # 500 of 10 000 at p = 0.05 is the mean: a little over half the mass is at or below it
    assert 0.5 < tail(500, 10_000, 0.05) < 0.52
    assert tail(0, 10_000, 0.05) == pytest.approx(math.exp(10_000 * math.log(0.95)), rel=1e-9)


def test_clopper_pearson_upper_bound_with_no_disagreement_is_one_minus_risk_to_the_1_over_n() -> None:
    assert upper_bound(0, 10, 0.2) == pytest.approx(1 - 0.2 ** 0.1, rel=1e-12)
    assert upper_bound(0, 45, 0.1) == pytest.approx(1 - 0.1 ** (1 / 45), rel=1e-12)


def test_clopper_pearson_upper_bound_is_where_the_tail_falls_to_the_risk() -> None:
    bound = upper_bound(3, 50, 0.1)
    assert tail(3, 50, bound) == pytest.approx(0.1, abs=1e-12)
    assert upper_bound(5, 5, 0.1) == 1.0


@pytest.mark.parametrize(("k", "n"), [(-1, 3), (4, 3), (0, -1)])
def test_impossible_counts_are_refused(k: int, n: int) -> None:
    with pytest.raises(ValueError, match="0 <= k <= n"):
        tail(k, n, 0.5)


# --- the fewest decisions ------------------------------------------------------------------------------


@pytest.mark.parametrize(("agreement", "risk", "fewest"), [
    (0.95, 0.1, 45),  # 0.95^45 = 0.0994, 0.95^44 = 0.1046
    (0.9, 0.1, 22),   # 0.9^22 = 0.0985, 0.9^21 = 0.1094
    (0.8, 0.2, 8),
    (0.99, 0.05, 299),
])
def test_fewest_decisions_that_can_certify(agreement: float, risk: float, fewest: int) -> None:
    assert min_decisions(agreement, risk) == fewest
    assert tail(0, fewest, 1 - agreement) <= risk < tail(0, fewest - 1, 1 - agreement)


@pytest.mark.parametrize(("agreement", "risk"), [(1.0, 0.1), (0.0, 0.1), (0.95, 0.0), (0.95, 1.0)])
def test_levels_outside_0_and_1_are_refused(agreement: float, risk: float) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        certify([], [], stance="accept", target_agreement=agreement, risk=risk)


# --- the sequence, by hand -------------------------------------------------------------------------------


def test_all_agreeing_certifies_the_lowest_decided_confidence() -> None:
    checked = ten_accepts()
    cert = certify(checked, run_of(checked), stance="accept", target_agreement=0.8, risk=0.2)
    assert cert.steps == (
        Step(0.92, 8, 0, pytest.approx(0.8 ** 8), True),
        Step(0.91, 9, 0, pytest.approx(0.8 ** 9), True),
        Step(0.90, 10, 0, pytest.approx(0.8 ** 10), True),  # the lowest decided confidence: the sequence ends
    )
    assert (cert.threshold, cert.rests_on, cert.disagreements, cert.decisions) == (0.90, 10, 0, 10)
    assert (cert.decided_alone, cert.coverage) == (15, 15 / 22)  # the ten, and the five unseen at 0.95
    assert cert.agreement_bound == pytest.approx(0.2 ** 0.1, rel=1e-12)  # 0.851
    assert (cert.observed_agreement, cert.more_needed, cert.certified, cert.rule) == (1.0, 0, True, "auto-accept")
    assert cert.why == ("auto-accept certified at confidence >= 0.90: 10 human decisions, 0 disagreeing; "
                        "80 % agreement at risk 0.2")


def test_a_disagreement_low_in_the_sequence_stops_it_there() -> None:
    checked = ten_accepts(0.91)
    cert = certify(checked, run_of(checked), stance="accept", target_agreement=0.8, risk=0.2)
    assert [(s.threshold, s.decisions, s.disagreements, s.passed) for s in cert.steps] == [
        (0.92, 8, 0, True), (0.91, 9, 1, False)]
    assert cert.steps[1].p_value == pytest.approx(0.436207616, rel=1e-12)
    assert (cert.threshold, cert.rests_on, cert.decided_alone) == (0.92, 8, 13)  # 8 decided + 5 at 0.95


def test_a_disagreement_among_the_most_confident_certifies_nothing() -> None:
    checked = ten_accepts(0.99)
    cert = certify(checked, run_of(checked), stance="accept", target_agreement=0.8, risk=0.2)
    assert [(s.threshold, s.decisions, s.disagreements, s.passed) for s in cert.steps] == [(0.92, 8, 1, False)]
    assert cert.steps[0].p_value == pytest.approx(0.8 ** 8 + 8 * 0.2 * 0.8 ** 7, rel=1e-12)
    assert (cert.threshold, cert.coverage, cert.decided_alone, cert.rests_on, cert.agreement_bound) == (
        None, 0.0, 0, 0, None)
    assert cert.observed_agreement == 0.9
    assert cert.why.startswith("auto-accept not certified: at confidence >= 0.92, 1 of 8 human decisions "
                               "disagree, too many for 80 % agreement at risk 0.2; about ")


def test_a_person_unsure_of_an_accepted_edit_disagrees_with_it() -> None:
    checked = [c._replace(human="unsure") if c.confidence == 0.99 else c for c in ten_accepts()]
    cert = certify(checked, run_of(checked), stance="accept", target_agreement=0.8, risk=0.2)
    assert cert.threshold is None
    assert cert.steps[0].disagreements == 1


def test_fewer_decisions_than_can_pass_is_too_few_to_certify() -> None:
    checked = ten_accepts()[:7]
    cert = certify(checked, run_of(checked), stance="accept", target_agreement=0.8, risk=0.2)
    assert (cert.steps, cert.threshold, cert.decisions) == ((), None, 7)
    assert cert.why.startswith("too few decisions to certify auto-accept: 7 random human decisions of its edits, "
                               "at least 8 needed even if all agree (80 % agreement at risk 0.2); about ")


def test_no_decision_at_all_certifies_nothing_and_projects_nothing() -> None:
    cert = certify([], [Judged("accept", 0.99)] * 100, stance="accept", target_agreement=0.95, risk=0.1)
    assert cert == Certificate(
        stance="accept", target_agreement=0.95, risk=0.1, threshold=None, coverage=0.0, decided_alone=0,
        rests_on=0, disagreements=0, agreement_bound=None, decisions=0, observed_agreement=None, more_needed=None,
        steps=(), why="too few decisions to certify auto-accept: 0 random human decisions of its edits, at least 45 "
                      "needed even if all agree (95 % agreement at risk 0.1)")


def test_items_without_a_stance_or_a_confidence_are_never_decided_alone() -> None:
    checked = ten_accepts()
    every = run_of(checked) + [Judged("accept", None), Judged(None, 0.99)]
    cert = certify(checked, every, stance="accept", target_agreement=0.8, risk=0.2)
    assert (cert.decided_alone, cert.coverage) == (15, 15 / 24)


def test_rules_are_certified_separately() -> None:
    accepts = ten_accepts()
    rejects = [Checked("reject", 0.97, "reject")] * 3
    certs = certify_rules(accepts + rejects, run_of(accepts), target_agreement=0.8, risk=0.2)
    assert set(certs) == {"accept", "reject"}
    assert certs["accept"].threshold == 0.90
    assert (certs["reject"].threshold, certs["reject"].decisions, certs["reject"].rule) == (None, 3, "auto-reject")


def test_a_grid_must_descend() -> None:
    with pytest.raises(ValueError, match="from the highest down"):
        fixed_sequence(ten_accepts(), target_agreement=0.8, risk=0.2, grid=(0.5, 0.9))


# --- how many more decisions ----------------------------------------------------------------------------


def smallest_passing(n: int, k: int, agreement: float, risk: float) -> int:
    """The fewest decisions at the rate k / n (rounded up) that pass: a plain scan."""
    m = n
    while tail(math.ceil(k * m / n - 1e-9), m, 1 - agreement) > risk:
        m += 1
    return m


def test_more_needed_projects_the_failed_first_test_at_its_own_rate() -> None:
    checked = ten_accepts(0.99)  # first test 0.92: 1 of 8 disagree; 8 of the 10 decisions are above it
    more = decisions_to_certify(checked, 10, target_agreement=0.8, risk=0.2)
    assert more is not None
    needed = 8 + more * 8 / 10
    exact = smallest_passing(8, 1, 0.8, 0.2)
    assert exact <= math.ceil(needed) <= exact + 3  # bisection over a saw-toothed p-value lands near the fewest
    assert tail(math.ceil(math.ceil(needed) / 8 - 1e-9), math.ceil(needed), 0.2) <= 0.2


def test_more_needed_before_any_test_counts_the_share_of_decisions_the_rule_gets() -> None:
    checked = ten_accepts()[:5]  # all agree, 5 of 20 random decisions: a quarter of new ones land here
    more = decisions_to_certify(checked, 20, target_agreement=0.8, risk=0.2)
    assert more == (8 - 5) * 4  # at a perfect rate 8 suffice


def test_no_projection_when_the_agreement_seen_is_not_above_the_target() -> None:
    checked = ten_accepts(0.99, 0.98, 0.97)  # first test: 3 of 8 disagree, 37.5 % > 20 %
    assert decisions_to_certify(checked, 10, target_agreement=0.8, risk=0.2) is None
    assert decisions_to_certify([], 0, target_agreement=0.8, risk=0.2) is None


# --- properties -------------------------------------------------------------------------------------------


def random_rule(rng: random.Random, n: int) -> list[Checked]:
    """n decided accepts with confidences on the grid, agreeing with a probability that grows with them."""
    items = []
    for _ in range(n):
        confidence = round(rng.uniform(0.5, 1.0), 2)
        human = "accept" if rng.random() < 0.75 + 0.25 * confidence else "reject"
        items.append(Checked("accept", confidence, human))
    return items


def _height(threshold: float | None) -> float:
    return math.inf if threshold is None else threshold


@pytest.mark.parametrize("seed", range(40))
def test_for_a_fixed_start_a_lower_target_or_a_higher_risk_never_certifies_less(seed: int) -> None:
    rng = random.Random(seed)
    checked = random_rule(rng, rng.choice((60, 120, 250)))
    every = [Judged(c.stance, c.confidence) for c in checked]
    start = min_decisions(0.95, 0.05)

    def threshold(agreement: float, risk: float) -> float:
        cert = certify(checked, every, stance="accept", target_agreement=agreement, risk=risk, start=start)
        return _height(cert.threshold)

    targets = (0.97, 0.95, 0.93, 0.9, 0.85)
    for risk in (0.05, 0.1, 0.2):
        heights = [threshold(a, risk) for a in targets]
        assert heights == sorted(heights, reverse=True)
    for agreement in targets:
        heights = [threshold(agreement, r) for r in (0.05, 0.1, 0.2, 0.3)]
        assert heights == sorted(heights, reverse=True)


@pytest.mark.parametrize("seed", range(20))
def test_nothing_is_certified_on_fewer_decisions_than_can_pass(seed: int) -> None:
    rng = random.Random(1000 + seed)
    agreement, risk = rng.choice(((0.95, 0.1), (0.9, 0.05), (0.8, 0.2)))
    fewest = min_decisions(agreement, risk)
    checked = [Checked("accept", rng.choice(GRID), "accept") for _ in range(fewest - 1)]
    cert = certify(checked, [Judged("accept", 1.0)] * 10, stance="accept", target_agreement=agreement, risk=risk)
    assert cert.threshold is None and cert.steps == ()
    full = checked + [Checked("accept", 1.0, "accept")]
    assert certify(full, [Judged("accept", 1.0)], stance="accept", target_agreement=agreement,
                   risk=risk).threshold is not None


def test_every_step_passed_rests_on_a_bound_at_or_above_the_target() -> None:
    checked = random_rule(random.Random(7), 400)
    for step in fixed_sequence(checked, target_agreement=0.9, risk=0.1):
        assert step.passed == (upper_bound(step.disagreements, step.decisions, 0.1) <= 0.1 + 1e-12)
