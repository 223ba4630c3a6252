"""Agreement statistics against values worked out by hand on small tables."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from fanout.stats.agreement import (
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    krippendorff_alpha_of,
    nominal,
    model_agreement,
    overall_agreement,
    quadratic,
    pairwise_agreement,
    verdict_distribution,
    weighted_kappa,
)


def test_cohen_kappa_of_the_classic_two_by_two_table_is_0_4() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = 0.7, p_e = 0.5, kappa = 0.4
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert cohen_kappa(pairs) == float(Fraction(2, 5))


def test_cohen_kappa_is_zero_when_agreement_is_exactly_chance() -> None:
    pairs = [("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")]
    assert cohen_kappa(pairs) == 0.0


def test_cohen_kappa_is_negative_when_raters_systematically_disagree() -> None:
    assert cohen_kappa([("a", "b"), ("b", "a")]) == -1.0


def test_raters_who_always_give_the_same_single_answer_have_undefined_kappa_and_alpha() -> None:
    # Chance agreement is 1: 0/0. One shared edit on which two models agree says nothing beyond chance.
    assert cohen_kappa([("a", "a")] * 5) is None
    assert cohen_kappa([("a", "a")]) is None
    assert fleiss_kappa([Counter({"a": 3})] * 4) is None
    assert krippendorff_alpha([["a", "a", "a"]] * 4) is None


def test_no_overlapping_ratings_give_none_not_a_number() -> None:
    assert cohen_kappa([]) is None
    assert fleiss_kappa([Counter({"a": 1})]) is None
    assert krippendorff_alpha([["a", None], [None, "b"]]) is None


def test_fleiss_kappa_of_the_textbook_fourteen_rater_table() -> None:
    # Fleiss (1971) as reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories.
    # P-bar = 172/455, P-e = 417/1960, kappa = 4211/20059 (0.210).
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    items = [Counter({c: n for c, n in enumerate(row) if n}) for row in table]
    assert fleiss_kappa(items) == float(Fraction(4211, 20059))


def test_fleiss_kappa_skips_items_with_a_single_rating() -> None:
    two_raters = [Counter({"a": 2}), Counter({"a": 1, "b": 1}), Counter({"b": 2})]
    assert fleiss_kappa(two_raters + [Counter({"b": 1})]) == fleiss_kappa(two_raters)
    # P-bar = 2/3, p_a = p_b = 1/2, P-e = 1/2 -> kappa = 1/3
    assert fleiss_kappa(two_raters) == float(Fraction(1, 3))


def test_krippendorff_alpha_with_missing_data_matches_krippendorffs_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units,
    # missing values; nominal alpha = 0.743. By hand: n = 40, sum o_cc = 32,
    # n_c = 9, 13, 10, 5, 3 -> alpha = 1 - 39 * 8 / (1600 - 384) = 113/152.
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
    c = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
    assert krippendorff_alpha(list(zip(a, b, c, d))) == float(Fraction(113, 152))


def test_krippendorff_alpha_ordinal_matches_the_published_value_of_the_same_example() -> None:
    # Same data; Krippendorff (2011) gives ordinal alpha = 0.815 (interval 0.849, nominal 0.743).
    a = [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None]
    b = [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3]
    c = [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None]
    d = [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None]
    alpha = krippendorff_alpha(list(zip(a, b, c, d)), order=[1, 2, 3, 4, 5])
    assert alpha is not None and round(alpha, 3) == 0.815


def test_quadratic_kappa_weighs_a_disagreement_by_its_squared_distance_on_the_scale() -> None:
    # x < y < z. Observed distance 1 + 1 = 2 over 4 items; chance: rows x2 y1 z1, columns x1 y1 z2,
    # sum of row * column * distance^2 = 26 -> kappa_w = 1 - 4 * 2 / 26 = 9/13.
    pairs = [("x", "x"), ("x", "y"), ("y", "z"), ("z", "z")]
    assert cohen_kappa(pairs, quadratic(["x", "y", "z"])) == float(Fraction(9, 13))
    # Nominal: p_o = 1/2, p_e = (2*1 + 1*1 + 1*2)/16 = 5/16 -> kappa = (3/16)/(11/16) = 3/11.
    assert cohen_kappa(pairs) == float(Fraction(3, 11))


def test_pairwise_agreement_leaves_out_edits_where_either_model_gave_no_verdict() -> None:
    ratings = {
        1: {"m1": "verified-high", "m2": "plausible"},  # same stance, different verdict
        2: {"m1": "incorrect", "m2": "incorrect"},
        3: {"m1": None, "m2": "incorrect"},  # m1 timed out: missing, not a category
        4: {"m1": "suspect"},  # m2 never ran
    }
    [row] = pairwise_agreement(ratings, ["m1", "m2"])
    assert row["n"] == 2
    assert row["exact_agreement"] == 0.5
    assert row["three_way_agreement"] == 1.0
    # exact: p_o = 1/2, p_e = (1*0 + 1*0 + 1*1)/4 = 1/4 -> kappa = 1/3
    assert row["kappa"] == float(Fraction(1, 3))
    assert row["kappa_three_way"] == 1.0


def test_overall_agreement_counts_edits_with_two_or_more_verdicts_and_unanimity() -> None:
    ratings = {
        1: {"a": "plausible", "b": "plausible", "c": "verified-low"},
        2: {"a": "incorrect", "b": "suspect", "c": None},
        3: {"a": "unverifiable", "b": None, "c": None},
    }
    exact, three = overall_agreement(ratings, ["a", "b", "c"])
    assert (exact["scale"], exact["edits"], exact["unanimous"]) == ("exact", 2, 0.0)
    assert (three["scale"], three["edits"], three["unanimous"]) == ("three_way", 2, 1.0)
    assert three["fleiss_kappa"] == 1.0
    assert three["krippendorff_alpha"] == 1.0
    # Only edit 1 has a verdict from every model, and it is not unanimous on the exact scale.
    assert (exact["complete_edits"], exact["unanimous_complete"]) == (1, 0.0)
    assert (three["complete_edits"], three["unanimous_complete"]) == (1, 1.0)


def test_verdict_distribution_counts_verdicts_stances_and_missing() -> None:
    ratings = {1: {"a": "plausible"}, 2: {"a": "suspect"}, 3: {"a": None}, 4: {"a": "plausible"}}
    [row] = verdict_distribution(ratings, ["a"])
    assert row["records"] == 4
    assert (row["plausible"], row["suspect"], row["incorrect"], row["missing"]) == (2, 1, 0, 1)
    assert (row["accept"], row["unsure"], row["reject"]) == (2, 0, 1)


def test_model_agreement_is_each_model_s_mean_kappa_with_the_others_and_its_bootstrap_interval() -> None:
    # a and b agree on every edit (kappa 1); c agrees with each exactly at chance (kappa 0).
    # Edit 5: c gave no verdict, so it counts for the pair a-b only; edit 6: only a answered, so it counts for none.
    columns = {"a": "yynnyy", "b": "yynny-", "c": "ynyn--"}
    ratings = {i: {m: (v[i] if v[i] != "-" else None) for m, v in columns.items()} for i in range(6)}
    rows = model_agreement(ratings, ["a", "b", "c"])
    assert [(r["model"], r["others"], r["mean_kappa"]) for r in rows] == [("a", 2, 0.5), ("b", 2, 0.5), ("c", 2, 0.0)]
    for row in rows:
        assert row["mean_kappa_low"] <= row["mean_kappa"] <= row["mean_kappa_high"]


SCALE = ("a", "b", "c", "d")


@given(st.lists(st.tuples(st.sampled_from(SCALE), st.sampled_from(SCALE)), max_size=60))
def test_weighted_kappa_is_the_exact_ratio_rounded_once(pairs: list[tuple[str, str]]) -> None:
    """Kappa is 1 - n * observed / chance over integers: the float is that exact ratio rounded once."""
    distance = quadratic(SCALE)
    table = Counter(pairs)
    n = len(pairs)
    observed = sum(distance(a, b) for a, b in pairs)
    chance = sum(sum(x == a for x, _ in pairs) * sum(y == b for _, y in pairs) * distance(a, b)
                 for a in SCALE for b in SCALE)
    expected = None if n == 0 or chance == 0 else float(1 - Fraction(n * observed, chance))
    assert weighted_kappa(table, distance) == expected


@given(st.lists(st.tuples(st.sampled_from(SCALE), st.sampled_from(SCALE)), max_size=60))
def test_nominal_kappa_counts_disagreements_as_any_distance_of_one_would(pairs: list[tuple[str, str]]) -> None:
    """Nominal kappa takes a shortcut (chance = n * n less the alike pairs); it is the general sum's float."""
    n = len(pairs)
    observed = sum(a != b for a, b in pairs)
    chance = sum(sum(x == a for x, _ in pairs) * sum(y == b for _, y in pairs) * (a != b)
                 for a in SCALE for b in SCALE)
    expected = None if n == 0 or chance == 0 else float(1 - Fraction(n * observed, chance))
    assert weighted_kappa(Counter(pairs), nominal) == expected


@given(st.lists(st.lists(st.sampled_from(SCALE), max_size=5).map(lambda u: tuple(sorted(u))), max_size=30),
       st.booleans())
def test_alpha_is_krippendorffs_exact_ratio_rounded_once(units: list[tuple[str, ...]], ordinal: bool) -> None:
    """Alpha = 1 - (n - 1) D_o / D_e, worked out here in Fractions as Krippendorff writes it, then rounded once."""
    pairable = [u for u in units if len(u) >= 2]
    totals = Counter(v for u in pairable for v in u)
    n = sum(totals.values())

    def distance(a: str, b: str) -> int:
        if not ordinal:
            return int(a != b)
        low, high = sorted((SCALE.index(a), SCALE.index(b)))
        between = sum(totals[c] for c in SCALE[low:high + 1])
        return (2 * between - totals[a] - totals[b]) ** 2

    expected_disagreement = sum(totals[a] * totals[b] * distance(a, b) for a in totals for b in totals)
    observed = sum((Fraction(sum(distance(a, b) for a in u for b in u), len(u) - 1) for u in pairable), Fraction(0))
    expected = (None if n == 0 or expected_disagreement == 0
                else float(1 - (n - 1) * observed / expected_disagreement))
    assert krippendorff_alpha_of(Counter(units), SCALE if ordinal else None) == expected
