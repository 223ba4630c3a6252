"""How far the models agree, beyond what chance would give.

Every statistic reads a Counter of patterns (a pair of verdicts, or the
verdicts one edit received), so the seeded bootstrap in
fanout.stats.uncertainty can recount resampled edits cheaply. Sums are
kept in integers and divided once at the end, so hand-computed textbook
values come out exactly.

Missing verdicts: a record without a verdict (timeout, invalid JSON, error)
is a missing rating, not a category. Cohen's kappa uses the edits both models
answered. Fleiss' kappa uses every edit with at least two verdicts, each with
its own number of raters: an edit's observed agreement is the share of its
agreeing rater pairs, and chance agreement comes from all verdicts pooled
(the usual generalisation for unequal counts). Krippendorff's alpha handles
missing values by design.

The six verdicts are ordered (verified-high down to incorrect), and so are
the three stances (accept, unsure, reject). Beside the nominal statistics,
which count any disagreement as total, the ordinal ones weigh a disagreement
by its distance on the scale: quadratic-weighted kappa for a pair, ordinal
alpha for all models.

Undefined values: when every rating falls in one category, chance agreement
is 1 and kappa and alpha are 0/0. They are None, shown as undefined, not as a
perfect 1.0: one shared edit on which two models agree says nothing about
agreement beyond chance. With no overlapping ratings at all they are None too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from functools import lru_cache, partial
from itertools import combinations
from typing import Any, TypeVar

from fanout.judging.scales import STANCES, stance
from fanout.stats.uncertainty import Bootstrap
from fanout.base.records import VERDICTS

Label = Hashable
Item = TypeVar("Item", bound=Hashable)
Ratings = Mapping[Item, Mapping[str, str | None]]
"""item -> model -> verdict (None or absent = missing)."""
Distance = Callable[[Label, Label], int]
"""A squared disagreement between two categories; 0 for equal ones."""


def nominal(a: Label, b: Label) -> int:
    return int(a != b)


class Quadratic:
    """Squared distance in steps of an ordered scale (Cohen's quadratic weights), with the ranks in sight so that
    a kappa's chance disagreement is worked out from sums over each margin alone."""

    def __init__(self, order: Sequence[Label]) -> None:
        self.rank = {c: i for i, c in enumerate(order)}

    def __call__(self, a: Label, b: Label) -> int:
        return (self.rank[a] - self.rank[b]) ** 2


def quadratic(order: Sequence[Label]) -> Distance:
    """Squared distance in steps of an ordered scale (Cohen's quadratic weights)."""
    return Quadratic(order)


def cohen_kappa(pairs: Sequence[tuple[Label, Label]], distance: Distance = nominal) -> float | None:
    """Cohen's kappa for two raters over items both rated (weighted when given a distance)."""
    return weighted_kappa(Counter(pairs), distance)


def weighted_kappa(pairs: Counter[tuple[Label, Label]], distance: Distance = nominal) -> float | None:
    """1 - observed / chance disagreement; with 0/1 distance, Cohen's (p_o - p_e) / (1 - p_e)."""
    n = sum(pairs.values())
    first: dict[Label, int] = {}
    second: dict[Label, int] = {}
    for (a, b), count in pairs.items():
        first[a] = first.get(a, 0) + count
        second[b] = second.get(b, 0) + count
    observed = sum(count * distance(a, b) for (a, b), count in pairs.items())
    chance = _chance_disagreement(first, second, n, distance)
    if n == 0 or chance == 0:
        return None
    return (chance - n * observed) / chance  # ints: true division rounds the exact ratio once, as Fraction would


def _chance_disagreement(first: Mapping[Label, int], second: Mapping[Label, int], n: int, distance: Distance) -> int:
    """The sum over all pairs of the two margins' counts times their distance; for the two distances of the
    report, as the same integer from sums over each margin alone (the bootstrap works it out a thousand times)."""
    if distance is nominal:
        return n * n - sum(count * second.get(a, 0) for a, count in first.items())
    if isinstance(distance, Quadratic):
        rank = distance.rank
        ranks = [(sum(c * rank[a] for a, c in m.items()), sum(c * rank[a] ** 2 for a, c in m.items()))
                 for m in (first, second)]
        return n * (ranks[0][1] + ranks[1][1]) - 2 * ranks[0][0] * ranks[1][0]
    return sum(first[a] * second[b] * distance(a, b) for a in first for b in second)


def fleiss_kappa(items: Iterable[Mapping[Label, int]]) -> float | None:
    """Fleiss' kappa from per-item category counts; items with fewer than two ratings are skipped."""
    return fleiss_kappa_of(Counter(_unit(Counter(counts).elements()) for counts in items))


def fleiss_kappa_of(units: Counter[tuple[Label, ...]]) -> float | None:
    rated = {unit: count for unit, count in units.items() if len(unit) >= 2}
    items = sum(rated.values())
    if not items:
        return None
    agreeing_by_size: Counter[int] = Counter()  # raters -> agreeing rater pairs, summed
    totals: Counter[Label] = Counter()
    for unit, count in rated.items():
        values = Counter(unit)
        agreeing_by_size[len(unit)] += count * sum(c * (c - 1) for c in values.values())
        for value, c in values.items():
            totals[value] += count * c
    observed = sum((Fraction(s, m * (m - 1)) for m, s in agreeing_by_size.items()), Fraction(0)) / items
    n = sum(totals.values())
    expected = Fraction(sum(c * c for c in totals.values()), n * n)
    if expected == 1:
        return None
    return float((observed - expected) / (1 - expected))


def krippendorff_alpha(units: Iterable[Sequence[Label | None]], order: Sequence[Label] | None = None) -> float | None:
    """Krippendorff's alpha; None entries are missing values. Ordinal when given the scale's order."""
    return krippendorff_alpha_of(Counter(_unit(u) for u in units), order)


def krippendorff_alpha_of(units: Counter[tuple[Label, ...]], order: Sequence[Label] | None = None) -> float | None:
    """alpha = 1 - (n - 1) D_o / D_e over pairable values (units with two or more values).

    D_o sums each unit's pairwise distances over (its size - 1); D_e sums the
    distances of all pairs of values pooled. Ordinal distances follow
    Krippendorff: the values lying between two categories, counted from the
    pooled totals (doubled here so that they stay integers; alpha is a ratio).
    """
    pairable = {unit: count for unit, count in units.items() if len(unit) >= 2}
    totals = _pooled(pairable)
    n = sum(totals.values())
    if n == 0:
        return None
    distance = nominal if order is None else _ordinal_distance(order, totals)
    if order is None:
        expected = n * n - sum(c * c for c in totals.values())
    else:
        expected = sum(totals[a] * totals[b] * distance(a, b) for a in totals for b in totals)
    if expected == 0:
        return None
    # sum(within / (size - 1)) over a common denominator: the exact ratio, rounded once by the true division
    within = _within_by_size(pairable, distance)
    common = math.lcm(*(m - 1 for m in within))
    observed = sum(s * (common // (m - 1)) for m, s in within.items())
    return (expected * common - (n - 1) * observed) / (expected * common)


def _pooled(units: Mapping[tuple[Label, ...], int]) -> Counter[Label]:
    """How often each value occurs over all the units."""
    totals: Counter[Label] = Counter()
    for unit, count in units.items():
        for value in unit:
            totals[value] += count
    return totals


def _within_by_size(units: Mapping[tuple[Label, ...], int], distance: Distance) -> Counter[int]:
    """Unit size -> the sum of the pairwise distances within the units of that size."""
    within: Counter[int] = Counter()
    for unit, count in units.items():
        values = _counts(unit)
        if distance is nominal:
            pairs = len(unit) ** 2 - sum(c * c for _, c in values)
        else:
            pairs = sum(x * y * distance(a, b) for a, x in values for b, y in values)
        within[len(unit)] += count * pairs
    return within


@lru_cache(maxsize=4096)
def _counts(unit: tuple[Label, ...]) -> tuple[tuple[Label, int], ...]:
    """How often each value occurs in a unit: the same few units recur in every resample of the bootstrap."""
    return tuple(Counter(unit).items())


def _ordinal_distance(order: Sequence[Label], totals: Mapping[Label, int]) -> Distance:
    rank = {c: i for i, c in enumerate(order)}
    cumulative = [0]
    for category in order:
        cumulative.append(cumulative[-1] + totals.get(category, 0))

    def distance(a: Label, b: Label) -> int:
        low, high = sorted((rank[a], rank[b]))
        between = cumulative[high + 1] - cumulative[low]
        return (2 * between - totals.get(a, 0) - totals.get(b, 0)) ** 2

    return distance


def _unit(values: Iterable[Label | None]) -> tuple[Label, ...]:
    """One edit's verdicts, missing ones dropped, in a canonical order so equal edits count together."""
    return tuple(sorted((v for v in values if v is not None), key=repr))


def verdict_distribution(ratings: Ratings[Item], models: list[str]) -> list[dict[str, object]]:
    """Per model: how often each verdict, each stance, and no verdict at all."""
    rows = []
    for model in models:
        given = [r[model] for r in ratings.values() if model in r]
        counts = Counter(given)
        row: dict[str, object] = {"model": model, "records": len(given)}
        row.update({v: counts.get(v, 0) for v in VERDICTS})
        row["missing"] = sum(v is None for v in given)
        stances = Counter(stance(v) for v in given if v is not None)
        row.update({s: stances.get(s, 0) for s in ("accept", "unsure", "reject")})
        rows.append(row)
    return rows


def pairwise_agreement(
    ratings: Ratings[Item], models: list[str], bootstrap: Bootstrap | None = None
) -> list[dict[str, object]]:
    """Per pair of models, over edits both answered: agreement rates and kappas with 95 % intervals."""
    bootstrap = bootstrap or Bootstrap(len(ratings))
    return [_pair_row(ratings, a, b, bootstrap) for a, b in combinations(models, 2)]


def _pair_row(ratings: Ratings[Item], a: str, b: str, bootstrap: Bootstrap) -> dict[str, object]:
    both = [_both(r, a, b) for r in ratings.values()]
    three = [(stance(p[0]), stance(p[1])) if p is not None else None for p in both]
    return {
        "model_a": a,
        "model_b": b,
        "n": sum(p is not None for p in both),
        "exact_agreement": _agreed(both),
        "three_way_agreement": _agreed(three),
        **_with_interval("kappa", both, weighted_kappa, bootstrap),
        **_with_interval("kappa_quadratic", both, partial(weighted_kappa, distance=quadratic(VERDICTS)), bootstrap),
        **_with_interval("kappa_three_way", three, weighted_kappa, bootstrap),
    }


def _both(ratings: Mapping[str, str | None], a: str, b: str) -> tuple[str, str] | None:
    """The two models' verdicts on an edit, None unless both gave one."""
    x, y = ratings.get(a), ratings.get(b)
    return (x, y) if x is not None and y is not None else None


def _agreed(pairs: Sequence[tuple[str | None, str | None] | None]) -> float | None:
    """The share of the pairs (edits both answered) that are alike."""
    return _share(sum(p is not None and p[0] == p[1] for p in pairs), sum(p is not None for p in pairs))


def model_agreement(
    ratings: Ratings[Item], models: list[str], bootstrap: Bootstrap | None = None
) -> list[dict[str, object]]:
    """Per model, its mean Cohen's kappa (exact verdicts) with each other model, with a 95 % interval.

    The interval is the bootstrap's over the same resampled edits as the pairwise
    table, for the mean itself: the pairs' own intervals overlap and cannot be
    averaged into one.
    """
    bootstrap = bootstrap or Bootstrap(len(ratings))
    patterns = [tuple(r.get(m) for m in models) for r in ratings.values()]
    rows = []
    for i, model in enumerate(models):
        scoped = [p if p[i] is not None and sum(v is not None for v in p) > 1 else None for p in patterns]
        rows.append({"model": model, "others": len(models) - 1,
                     **_with_interval("mean_kappa", scoped, partial(_mean_kappa, i), bootstrap)})
    return rows


def _mean_kappa(index: int, patterns: Counter[tuple[Label | None, ...]]) -> float | None:
    """The mean over the other models of the kappa between model `index` and each; None if none is defined."""
    width = len(next(iter(patterns), ()))
    kappas = []
    for other in range(width):
        if other == index:
            continue
        kappa = _nominal_kappa((p[index], p[other], count) for p, count in patterns.items())
        if kappa is not None:
            kappas.append(kappa)
    return sum(kappas) / len(kappas) if kappas else None


def _nominal_kappa(pairs: Iterable[tuple[Label | None, Label | None, int]]) -> float | None:
    """weighted_kappa's nominal kappa over the pairs with both verdicts, from the same integers, without
    gathering them into a Counter first (the bootstrap of each model's mean kappa works this out ~10,000 times)."""
    n = agreeing = 0
    first: dict[Label, int] = {}
    second: dict[Label, int] = {}
    for a, b, count in pairs:
        if a is None or b is None:
            continue
        n += count
        agreeing += count * (a == b)
        first[a] = first.get(a, 0) + count
        second[b] = second.get(b, 0) + count
    chance = n * n - sum(count * second.get(a, 0) for a, count in first.items())
    if n == 0 or chance == 0:
        return None
    return (chance - n * (n - agreeing)) / chance


def overall_agreement(
    ratings: Ratings[Item], models: list[str], bootstrap: Bootstrap | None = None
) -> list[dict[str, object]]:
    """Across all models, on the exact and the three-way scale, nominal and ordinal."""
    bootstrap = bootstrap or Bootstrap(len(ratings))
    return [_scale_row(ratings, models, scale, convert, order, bootstrap)
            for scale, convert, order in (("exact", _same, VERDICTS), ("three_way", stance, STANCES))]


def _scale_row(ratings: Ratings[Item], models: list[str], scale: str, convert: Callable[[str | None], str | None],
               order: Sequence[str], bootstrap: Bootstrap) -> dict[str, object]:
    units = [_unit(convert(r.get(m)) for m in models) for r in ratings.values()]
    multi = [u for u in units if len(u) >= 2]
    complete = [u for u in units if len(u) == len(models)]
    pairable = [u if len(u) >= 2 else None for u in units]
    alpha_ordinal = partial(krippendorff_alpha_of, order=order)
    return {
        "scale": scale,
        "edits": len(multi),
        "unanimous": _unanimous(multi),
        "complete_edits": len(complete),
        "unanimous_complete": _unanimous(complete),
        "fleiss_kappa": fleiss_kappa_of(Counter(multi)),
        **_with_interval("krippendorff_alpha", pairable, krippendorff_alpha_of, bootstrap),
        **_with_interval("krippendorff_alpha_ordinal", pairable, alpha_ordinal, bootstrap),
    }


def most_agreeable(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The model with the highest mean kappa with the others (rows of model_agreement); None below three models
    (two share one kappa)."""
    defined = [r for r in rows if r["mean_kappa"] is not None]
    return max(defined, key=lambda r: r["mean_kappa"])["model"] if len(defined) > 2 else None


def _with_interval(
    name: str,
    patterns: Sequence[Any],
    statistic: Callable[[Counter[Any]], float | None],
    bootstrap: Bootstrap,
) -> dict[str, object]:
    """The statistic on all edits in scope, and its bootstrap interval, as three flat columns."""
    counts = Counter(p for p in patterns if p is not None)
    interval = bootstrap.interval(patterns, statistic)
    return {
        name: statistic(counts),
        f"{name}_low": interval[0] if interval else None,
        f"{name}_high": interval[1] if interval else None,
    }


def _unanimous(units: Sequence[tuple[Label, ...]]) -> float | None:
    """The share of the edits whose verdicts are all one."""
    return _share(sum(len(set(u)) == 1 for u in units), len(units))


def _same(verdict: str | None) -> str | None:
    return verdict


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
