"""Certified auto-decisions: a confidence threshold under which a rule decides alone, with a guarantee.

The question a patroller asks: if fanout accepts edits on its own whenever
the committee accepts at confidence >= t, how often will a person disagree?
Given items people decided (each with the rule's stance, its confidence and
the person's stance), a target agreement A and a risk D, `certify` chooses t
so that, with probability at least 1 - D over the human decisions drawn,
the items the rule decides alone (its stance, confidence >= t) agree with
people at rate at least A. This is the guarantee of "Trust or Escalate"
(Jung, Brahman and Choi, ICLR 2025: selective evaluation with a provable
human-agreement guarantee), and the procedure is theirs:

- Fixed-sequence testing over thresholds. For each threshold t on a grid
  fixed in advance (GRID: 1.00, 0.99, ... 0.00), the hypothesis "the rule's
  disagreement rate at confidence >= t is above 1 - A" is tested, highest t
  first; the sequence stops at the first test that fails, and the lowest t
  that passed is certified. Because the order is fixed before any label is
  seen, each test may spend the whole risk D: no correction for the many
  thresholds is needed (Bauer 1991; Angelopoulos et al. 2021, Learn then
  Test), unlike taking the best of many tested thresholds.
- The test is the paper's exact binomial one: with k disagreements among the
  n decided items at or above t, the p-value is P(Binomial(n, 1 - A) <= k)
  (fanout.stats.binomial.tail), and the test passes when it is at most D.
  That is the same as the paper's check that the Clopper–Pearson upper bound
  on the disagreement rate is at most 1 - A, without its root finding. Two
  things of the paper's code are not copied: it returns its highest
  threshold even when that fails (an uncertified threshold), and it tests
  only thresholds with 30 or more calibration items. Here a failed first
  test certifies nothing, and the grid starts at the first threshold with
  at least `min_decisions(A, D)` decided items (45 at A = 0.95, D = 0.1), the
  fewest that can pass even when all agree: a threshold with fewer could
  only fail and end the sequence. It ends at the first threshold at or below
  the lowest confidence people decided at: lower ones rest on the same
  decisions. Start and end depend on the confidences of the decided items,
  never on whether people agreed, so the tests stay valid. For a fixed
  start, a lower A or a higher D certifies the same threshold or a lower
  one; with the default start, they also let the sequence start higher
  (fewer decisions suffice for a first test), where a disagreement among the
  most confident decisions can stop it sooner.

Conformal risk control (Angelopoulos et al. 2022) was the alternative. It
bounds the expected disagreement, E[rate] <= 1 - A, averaged over draws of
the human decisions; a patroller's question is about this run's threshold
("agree at least 95 % of the time, and be wrong about that at most 1 time in
10"), which is the high-probability form that fixed-sequence testing gives.

What the guarantee needs, and what it does not give:
- The decided items are a uniform random sample of the run's items (or at
  least drawn independently of whether people would agree, given the
  confidence): fanout.stats.draw.random_sample gives them. Edits people saw
  because the committee was unsure are the low-confidence ones and are left
  out of the certificate.
- A person's `unsure` counts as disagreeing with a rule that accepts or
  rejects: an item a person would not decide is not one fanout should decide
  alone.
- Each certificate (auto-accept, auto-reject) holds with probability
  1 - D on its own; both at once with probability at least 1 - 2 D (pass
  D / 2 to each for a joint 1 - D). Items decided alone by both rules
  together then agree at rate at least A as well, being a mixture of the two.
- Items with no stance or no confidence are never decided alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from fanout.judging.scales import ACCEPT, REJECT
from fanout.stats.binomial import tail, upper_bound

GRID: tuple[float, ...] = tuple(round(1 - step / 100, 2) for step in range(101))
"""Thresholds in the order they are tested: 1.00, 0.99, ... 0.00, fixed before any decision is read."""
EPSILON = 1e-9
"""A mean confidence computed as 0.9499999999 meets a threshold of 0.95 (as fanout.judging thresholds do)."""
MAX_PROJECTED = 100_000
"""Decisions beyond which a projection gives up: at an observed agreement this close to A, no run has enough."""
RULES: Mapping[str, str] = {ACCEPT: "auto-accept", REJECT: "auto-reject"}
"""The decision rules certified by default: the stance a rule decides alone, and its name."""


class Judged(NamedTuple):
    """A rule's decision on one item of the run: its stance (None: no decision) and its confidence."""

    stance: str | None
    confidence: float | None


class Checked(NamedTuple):
    """An item a person decided: the rule's stance and confidence on it, and the person's stance."""

    stance: str | None
    confidence: float | None
    human: str
    """accept | unsure | reject: what the person decided."""

    @property
    def agrees(self) -> bool:
        return self.stance == self.human


class Step(NamedTuple):
    """One test of the sequence."""

    threshold: float
    decisions: int
    """Decided items of the rule with confidence >= threshold."""
    disagreements: int
    p_value: float
    passed: bool


@dataclass(frozen=True)
class Certificate:
    """What one rule may decide alone, and on what it rests."""

    stance: str
    """The stance the rule decides alone (accept for auto-accept)."""
    target_agreement: float
    risk: float
    threshold: float | None
    """The certified confidence threshold; None: nothing is certified, so the rule decides nothing alone."""
    coverage: float
    """Share of all the run's items the rule decides alone at the threshold (0.0 when none is certified)."""
    decided_alone: int
    """How many items that is."""
    rests_on: int
    """Human decisions of the rule's items at or above the threshold: what the certificate rests on."""
    disagreements: int
    """How many of those the person decided otherwise."""
    agreement_bound: float | None
    """Agreement the certificate vouches for at level 1 - risk (1 - the Clopper–Pearson upper bound)."""
    decisions: int
    """Human decisions of the rule's items at any confidence."""
    observed_agreement: float | None
    """Share of those that agree; None without any."""
    more_needed: int | None
    """More random human decisions that would certify a threshold if they agreed as often as those so far
    (0 when certified; None when no amount would: no decision yet, or agreement below the target everywhere)."""
    steps: tuple[Step, ...]
    """The tests made, in order: the last one failed unless the grid ran out."""
    why: str

    @property
    def certified(self) -> bool:
        return self.threshold is not None

    @property
    def rule(self) -> str:
        return RULES.get(self.stance, f"auto-{self.stance}")


def min_decisions(target_agreement: float, risk: float) -> int:
    """The fewest decisions that can certify anything: n with A ** n <= D (all n agreeing), 45 at 0.95 and 0.1."""
    _check_levels(target_agreement, risk)
    n = max(1, math.ceil(math.log(risk) / math.log(target_agreement)) - 1)
    while tail(0, n, 1 - target_agreement) > risk:
        n += 1
    return n


def _check_levels(target_agreement: float, risk: float) -> None:
    if not 0 < target_agreement < 1:
        raise ValueError(f"a target agreement is strictly between 0 and 1 (got {target_agreement})")
    if not 0 < risk < 1:
        raise ValueError(f"a risk is strictly between 0 and 1 (got {risk})")


def _at_or_above(confidence: float | None, threshold: float) -> bool:
    return confidence is not None and confidence >= threshold - EPSILON


def _counts(checked: Sequence[Checked], threshold: float) -> tuple[int, int]:
    """(decisions, disagreements) among the checked items at or above the threshold."""
    above = [c for c in checked if _at_or_above(c.confidence, threshold)]
    return len(above), sum(not c.agrees for c in above)


def fixed_sequence(checked: Sequence[Checked], *, target_agreement: float, risk: float,
                  grid: Sequence[float] = GRID, start: int | None = None) -> tuple[Step, ...]:
    """The fixed-sequence tests on one rule's checked items, highest threshold first, up to the first failure.

    Thresholds with fewer than `start` decisions (default: min_decisions) are not tested: they could only
    fail. The sequence also ends at the first threshold at or below every decided item's confidence: a
    lower one would rest on the same decisions while deciding more items no person has seen the like of.
    `grid` must descend; it and `start` must be chosen without looking at whether people agreed."""
    _check_levels(target_agreement, risk)
    if any(later > earlier for earlier, later in zip(grid, grid[1:])):
        raise ValueError("the thresholds of a fixed sequence are tested from the highest down")
    start = min_decisions(target_agreement, risk) if start is None else start
    known = [c.confidence for c in checked if c.confidence is not None]
    steps: list[Step] = []
    for threshold in grid:
        n, k = _counts(checked, threshold)
        if n < max(start, 1):
            continue
        p_value = tail(k, n, 1 - target_agreement)
        steps.append(Step(threshold, n, k, p_value, p_value <= risk))
        if p_value > risk or threshold <= min(known) + EPSILON:
            break  # a failure ends the sequence; below every decided item, lower thresholds add no evidence
    return tuple(steps)


def certify(checked: Sequence[Checked], every: Sequence[Judged], *, stance: str, target_agreement: float,
            risk: float, grid: Sequence[float] = GRID, start: int | None = None) -> Certificate:
    """The certificate of the rule that decides `stance` alone.

    `checked`: the items people decided, drawn at random from the run (fanout.stats.draw.random_sample);
    `every`: the rule's decision on every item of the run, for the coverage (the checked ones included)."""
    mine = [c for c in checked if c.stance == stance and c.confidence is not None]
    steps = fixed_sequence(mine, target_agreement=target_agreement, risk=risk, grid=grid, start=start)
    passed = [s for s in steps if s.passed]
    last = passed[-1] if passed else None
    alone = 0 if last is None else sum(j.stance == stance and _at_or_above(j.confidence, last.threshold) for j in every)
    agreeing = sum(c.agrees for c in mine)
    more = 0 if last is not None else decisions_to_certify(mine, len(checked), target_agreement=target_agreement,
                                                          risk=risk, grid=grid, start=start)
    return Certificate(
        stance=stance, target_agreement=target_agreement, risk=risk,
        threshold=None if last is None else last.threshold,
        coverage=alone / len(every) if every else 0.0, decided_alone=alone,
        rests_on=0 if last is None else last.decisions, disagreements=0 if last is None else last.disagreements,
        agreement_bound=None if last is None else 1 - upper_bound(last.disagreements, last.decisions, risk),
        decisions=len(mine), observed_agreement=agreeing / len(mine) if mine else None,
        more_needed=more, steps=steps, why=_why(stance, steps, len(mine), target_agreement, risk, more),
    )


def certify_rules(checked: Sequence[Checked], every: Sequence[Judged], *, target_agreement: float, risk: float,
                  stances: Iterable[str] = tuple(RULES)) -> dict[str, Certificate]:
    """A certificate per rule (auto-accept and auto-reject by default), each at the given risk on its own."""
    return {s: certify(checked, every, stance=s, target_agreement=target_agreement, risk=risk) for s in stances}


def decisions_to_certify(mine: Sequence[Checked], decided: int, *, target_agreement: float, risk: float,
                         grid: Sequence[float] = GRID, start: int | None = None) -> int | None:
    """How many more random human decisions (of any rule; `decided` so far) would certify this rule if they
    agreed as often as those so far. The rule's decisions above a threshold t (n of them, k disagreeing)
    are a share n / decided of the random decisions: n grows in that proportion at the rate k / n.

    While the sequence has a first test (a threshold with enough decisions), that test must pass first: the
    projection is its own. Before that, it is the fewest over the grid's thresholds. A projection, not a
    promise: tests below the first must pass too, new thresholds enter the sequence above it as decisions
    come in, and the next decisions will not agree exactly as often. 0 when the first test passes now;
    None when there is no decision to project from or the agreement seen is not above the target."""
    if decided == 0:
        return None
    steps = fixed_sequence(mine, target_agreement=target_agreement, risk=risk, grid=grid, start=start)
    if steps:
        return 0 if steps[0].passed else _more_at(steps[0].decisions, steps[0].disagreements, decided,
                                                   target_agreement, risk)
    projected = [_more_at(*_counts(mine, threshold), decided, target_agreement, risk) for threshold in grid]
    known = [more for more in projected if more is not None]
    return min(known) if known else None


def _more_at(n: int, k: int, decided: int, target_agreement: float, risk: float) -> int | None:
    """More random decisions until n decisions at the rate k / n pass the test; None when they never would."""
    if n == 0 or k / n >= 1 - target_agreement:
        return None
    needed = _needed_at_rate(n, k, target_agreement, risk)
    return None if needed is None else math.ceil((needed - n) * decided / n)


def _needed_at_rate(n: int, k: int, target_agreement: float, risk: float) -> int | None:
    """The fewest decisions, at k / n disagreeing (rounded up), that pass the test; found by doubling, then
    bisection (the p-value falls with the count, up to the steps of the rounding)."""
    def passes(count: int) -> bool:
        return tail(math.ceil(k * count / n - EPSILON), count, 1 - target_agreement) <= risk

    if passes(n):
        return n
    low, high = n, 2 * n
    while not passes(high):
        if high >= MAX_PROJECTED:
            return None
        low, high = high, min(2 * high, MAX_PROJECTED)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if passes(middle) else (middle, high)
    return high


def _why(stance: str, steps: Sequence[Step], decisions: int, target_agreement: float, risk: float,
         more: int | None) -> str:
    """The certificate in one line, in a patroller's words."""
    rule = RULES.get(stance, f"auto-{stance}")
    passed = [s for s in steps if s.passed]
    level = f"{_percent(target_agreement)} agreement at risk {risk:g}"
    if passed:
        last = passed[-1]
        return (f"{rule} certified at confidence >= {last.threshold:.2f}: {last.decisions} human decisions, "
                f"{last.disagreements} disagreeing; {level}")
    ahead = ("" if more is None
             else f"; about {more} more random decisions to certify {rule} at {_percent(target_agreement)}")
    if not steps:
        fewest = min_decisions(target_agreement, risk)
        return (f"too few decisions to certify {rule}: {decisions} random human decisions of its edits, at least "
                f"{fewest} needed even if all agree ({level}){ahead}")
    first = steps[0]
    return (f"{rule} not certified: at confidence >= {first.threshold:.2f}, {first.disagreements} of "
            f"{first.decisions} human decisions disagree, too many for {level}{ahead}")


def _percent(share: float) -> str:
    """0.95 as `95 %`, 0.975 as `97.5 %`."""
    return f"{round(share * 100, 6):g} %"
