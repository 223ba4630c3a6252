"""How sure a reader may be of a figure: intervals and a paired test.

A report of 12 or 300 edits is a sample. An accuracy of 0.92 on 12 edits and
a kappa of 0.38 on 8 mean little without their spread, so every headline
figure carries a 95 % interval, and "best model" is claimed only when a
paired test tells it from the runner-up.

- Accuracy: the Wilson score interval (good coverage at small n and at rates
  near 0 or 1, where the normal approximation fails).
- Kappa and alpha: a percentile bootstrap over edits, seeded so that the same
  run gives the same report. Edits are resampled as wholes, because the
  verdicts on one edit are not independent of each other.
- Two models on the same labelled edits: McNemar's exact test on the edits
  where exactly one of them is right (the others say nothing about which is
  better).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from functools import lru_cache
from typing import TypeVar, cast

Z95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95 % interval."""

RESAMPLES = 1000
SEED = 20261123
DISTINGUISHABLE_P = 0.05

Pattern = TypeVar("Pattern", bound=Hashable)
Interval = tuple[float, float]


def wilson_interval(successes: int, n: int, z: float = Z95) -> Interval | None:
    """The Wilson score interval for a proportion; None without trials."""
    if n == 0:
        return None
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denominator = 1 + z * z / n
    return max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator)


def paired_difference_interval(both: int, only_first: int, only_second: int, neither: int,
                               z: float = Z95) -> Interval | None:
    """The 95 % interval of (second's share right) - (first's share right) on the same items: Newcombe's
    hybrid score interval for paired proportions (Stat. Med. 17, 1998, 2635-2650; method 10), from the two
    Wilson intervals and the correlation of the pairs, as Altman et al. work it (Statistics with Confidence,
    2000, table 6.2: 14, 5, 0, 22 gives 0.122 [0.011, 0.226] for first - second). None without items."""
    n = both + only_first + only_second + neither
    if n == 0:
        return None
    first, second = (both + only_first) / n, (both + only_second) / n
    low1, high1 = wilson_interval(both + only_first, n, z) or (0.0, 1.0)
    low2, high2 = wilson_interval(both + only_second, n, z) or (0.0, 1.0)
    phi = _paired_phi(both, only_first, only_second, neither)
    difference = first - second
    below = math.sqrt(max(0.0, (first - low1) ** 2 - 2 * phi * (first - low1) * (high2 - second) + (high2 - second) ** 2))
    above = math.sqrt(max(0.0, (second - low2) ** 2 - 2 * phi * (second - low2) * (high1 - first) + (high1 - first) ** 2))
    return max(-1.0, -(difference + above)), min(1.0, -(difference - below))


def _paired_phi(a: int, b: int, c: int, d: int) -> float:
    """The correlation of the pairs, continuity-corrected as Newcombe's method 10 has it: (ad - bc - n/2) when
    ad - bc exceeds n/2, ad - bc when negative, else 0; over the root of the margins' product."""
    n, margins = a + b + c + d, (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        return 0.0
    cross = a * d - b * c
    corrected = cross - n / 2 if cross > n / 2 else min(cross, 0)
    return corrected / math.sqrt(margins)


def mcnemar_exact_p(only_first: int, only_second: int) -> float:
    """Two-sided exact McNemar p: under no difference, each discordant edit is a fair coin."""
    n = only_first + only_second
    if n == 0:
        return 1.0
    k = min(only_first, only_second)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / (1 << n)
    return min(1.0, 2 * tail)


class Bootstrap:
    """Resamples of a run's edits, drawn once and shared by every statistic of a report.

    Each statistic reads, per edit, its pattern (what the edit's verdicts
    were; None when the edit is outside the statistic, e.g. one model gave
    no verdict) and turns a Counter of patterns into a value. Drawing the
    resamples once makes the intervals of one report consistent with each
    other, and keeps their cost at one pass over the edits per statistic
    and resample.
    """

    def __init__(self, edits: int, *, resamples: int = RESAMPLES, seed: int = SEED) -> None:
        self.edits = edits
        self.draws = _draws(edits, resamples, seed) if edits else ()

    def interval(
        self, patterns: Sequence[Pattern | None], statistic: Callable[[Counter[Pattern]], float | None]
    ) -> Interval | None:
        """The 2.5th and 97.5th percentiles of the statistic over the resamples.

        Resamples where it is undefined are left out; None when fewer than half
        are defined or fewer than two edits are in the statistic's scope.
        The statistic is a pure function of its Counter's counts (not of their
        order: the statistics here sum integers and fractions exactly), so it is
        worked out once per distinct set of counts: on the 12-edit demo run a
        pair's three-way kappa meets 140 to 360 among its 1,000 resamples (a run
        of 40 edits meets a new one in nearly every resample).
        """
        if len(patterns) != self.edits:
            raise ValueError(f"{len(patterns)} patterns for a bootstrap over {self.edits} edits")
        if not self.draws or sum(p is not None for p in patterns) < 2:  # no resamples asked (the review desk)
            return None
        ids: dict[Pattern, int] = {}  # each distinct pattern's number, from 1; 0 stands for None (out of scope)
        numbered = [0 if p is None else ids.setdefault(p, len(ids) + 1) for p in patterns]
        distinct = [cast("Pattern", None), *ids]
        known: dict[tuple[int, ...], float | None] = {}
        values = []
        for draw in self.draws:
            drawn = sorted(map(numbered.__getitem__, draw))
            key = tuple(drawn[drawn.count(0):])  # the resample's counts of each pattern, whatever its order
            if key not in known:
                known[key] = statistic(Counter(map(distinct.__getitem__, key)))
            value = known[key]
            if value is not None:
                values.append(value)
        values.sort()
        if len(values) < len(self.draws) / 2:
            return None
        return _percentile(values, 0.025), _percentile(values, 0.975)


@lru_cache(maxsize=2)
def _draws(edits: int, resamples: int, seed: int) -> tuple[tuple[int, ...], ...]:
    """The resamples of `edits` edits on `seed`: the same every time they are asked for, so a process that builds
    many reports of one run (`fanout watch`, a test session) draws them once; two sizes kept, to bound memory."""
    rng = random.Random(seed)
    return tuple(tuple(rng.choices(range(edits), k=edits)) for _ in range(resamples))


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
