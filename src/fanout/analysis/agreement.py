"""How far the models agree, beyond what chance would give.

Statistics are computed on exact fractions and turned into floats at the end,
so hand-computed textbook values come out exactly.

Missing verdicts: a record without a verdict (timeout, invalid JSON, error)
is a missing rating, not a category. Cohen's kappa uses the edits both models
answered; Fleiss' kappa uses every edit with at least two verdicts, each with
its own number of raters (the usual generalisation for unequal counts);
Krippendorff's alpha handles missing values by design.

Convention when there is no variation at all (every rating in one category):
chance agreement is 1, so kappa and alpha are 0/0. We report 1.0, perfect
agreement, because the raters did agree on everything and a NaN in a table
reads like a failure. With no overlapping ratings at all the value is None.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from itertools import combinations
from typing import TypeVar

from fanout.analysis.scales import stance
from fanout.records import VERDICTS

Label = Hashable
Item = TypeVar("Item", bound=Hashable)
Ratings = Mapping[Item, Mapping[str, str | None]]
"""item -> model -> verdict (None or absent = missing)."""


def cohen_kappa(pairs: Sequence[tuple[Label, Label]]) -> float | None:
    """Cohen's kappa for two raters over items both rated."""
    n = len(pairs)
    if n == 0:
        return None
    observed = Fraction(sum(a == b for a, b in pairs), n)
    first = Counter(a for a, _ in pairs)
    second = Counter(b for _, b in pairs)
    expected = Fraction(sum(first[c] * second[c] for c in first), n * n)
    return _chance_corrected(observed, expected)


def fleiss_kappa(items: Iterable[Mapping[Label, int]]) -> float | None:
    """Fleiss' kappa from per-item category counts; items with fewer than two ratings are skipped."""
    rated = [counts for counts in items if sum(counts.values()) >= 2]
    if not rated:
        return None
    agreement = Fraction(0)
    totals: Counter[Label] = Counter()
    for counts in rated:
        m = sum(counts.values())
        agreement += Fraction(sum(c * (c - 1) for c in counts.values()), m * (m - 1))
        totals.update(counts)
    observed = agreement / len(rated)
    n = sum(totals.values())
    expected = sum((Fraction(c, n) ** 2 for c in totals.values()), Fraction(0))
    return _chance_corrected(observed, expected)


def krippendorff_alpha_nominal(units: Iterable[Sequence[Label | None]]) -> float | None:
    """Krippendorff's alpha for nominal data; None entries are missing values.

    alpha = 1 - (n - 1) * (n - sum_c o_cc) / (n^2 - sum_c n_c^2), from the
    coincidence matrix o over pairable values (units with two or more values).
    """
    matched = Fraction(0)  # sum over c of o_cc
    totals: Counter[Label] = Counter()
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        counts = Counter(values)
        matched += Fraction(sum(c * (c - 1) for c in counts.values()), m - 1)
        totals.update(counts)
    n = sum(totals.values())
    if n == 0:
        return None
    disagreement_expected = n * n - sum(c * c for c in totals.values())
    if disagreement_expected == 0:
        return 1.0
    return float(1 - Fraction(n - 1) * (n - matched) / disagreement_expected)


def _chance_corrected(observed: Fraction, expected: Fraction) -> float:
    if expected == 1:
        return 1.0
    return float((observed - expected) / (1 - expected))


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


def pairwise_agreement(ratings: Ratings[Item], models: list[str]) -> list[dict[str, object]]:
    """Per pair of models, over edits both answered: agreement rates and Cohen's kappa."""
    rows = []
    for a, b in combinations(models, 2):
        pairs = [(r[a], r[b]) for r in ratings.values() if r.get(a) is not None and r.get(b) is not None]
        three = [(stance(x), stance(y)) for x, y in pairs]
        rows.append({
            "model_a": a,
            "model_b": b,
            "n": len(pairs),
            "exact_agreement": _share(sum(x == y for x, y in pairs), len(pairs)),
            "three_way_agreement": _share(sum(x == y for x, y in three), len(three)),
            "kappa": cohen_kappa(pairs),
            "kappa_three_way": cohen_kappa(three),
        })
    return rows


def overall_agreement(ratings: Ratings[Item], models: list[str]) -> list[dict[str, object]]:
    """Across all models, on the exact and the three-way scale."""
    rows = []
    for scale, convert in (("exact", _same), ("three_way", stance)):
        units = [[convert(r.get(m)) for m in models] for r in ratings.values()]
        multi = [[v for v in u if v is not None] for u in units]
        multi = [u for u in multi if len(u) >= 2]
        rows.append({
            "scale": scale,
            "edits": len(multi),
            "unanimous": _share(sum(len(set(u)) == 1 for u in multi), len(multi)),
            "fleiss_kappa": fleiss_kappa(Counter(u) for u in multi),
            "krippendorff_alpha": krippendorff_alpha_nominal(units),
        })
    return rows


def _same(verdict: str | None) -> str | None:
    return verdict


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None
