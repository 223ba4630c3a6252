"""Intervals and the paired test, against values from reference implementations and by hand."""

from __future__ import annotations

import pytest

from fanout.stats.agreement import weighted_kappa
from fanout.stats.uncertainty import Bootstrap, mcnemar_exact_p, wilson_interval


def test_wilson_interval_matches_statsmodels_on_the_demos_best_accuracy() -> None:
    # 11 of 12 right: statsmodels' proportion_confint(11, 12, method="wilson") = (0.6461, 0.9851).
    low, high = wilson_interval(11, 12)  # type: ignore[misc]
    assert (round(low, 4), round(high, 4)) == (0.6461, 0.9851)
    assert wilson_interval(0, 5) == (0.0, pytest.approx(0.43448, abs=1e-5))
    assert wilson_interval(0, 0) is None


def test_mcnemar_exact_p_is_a_two_sided_binomial_test_on_the_discordant_edits() -> None:
    assert mcnemar_exact_p(1, 1) == 1.0
    assert mcnemar_exact_p(0, 6) == 2 / 64
    assert mcnemar_exact_p(2, 9) == 2 * (1 + 11 + 55) / 2048
    assert mcnemar_exact_p(0, 0) == 1.0


def test_bootstrap_intervals_are_reproducible_and_bracket_the_estimate() -> None:
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15  # kappa 0.4
    first = Bootstrap(len(pairs)).interval(pairs, weighted_kappa)
    assert first == Bootstrap(len(pairs)).interval(pairs, weighted_kappa)
    assert first is not None and first[0] < 0.4 < first[1]
    assert first != Bootstrap(len(pairs), seed=1).interval(pairs, weighted_kappa)


def test_edits_outside_a_statistic_are_resampled_but_not_counted() -> None:
    perfect = [("a", "a"), ("b", "b")] * 10 + [None] * 5
    assert Bootstrap(len(perfect)).interval(perfect, weighted_kappa) == (1.0, 1.0)
    assert Bootstrap(3).interval([("a", "a"), None, None], weighted_kappa) is None


def test_a_statistic_undefined_in_most_resamples_has_no_interval() -> None:
    # Defined only when the one rare edit is left out: about (30/31)^31 = 36 % of resamples.
    units = [("rare",)] + [("common",)] * 30
    assert Bootstrap(len(units)).interval(units, lambda c: None if c[("rare",)] else 1.0) is None
    assert Bootstrap(len(units)).interval(units, lambda c: 1.0 if c[("rare",)] else None) == (1.0, 1.0)


def test_patterns_must_cover_the_bootstrapped_edits() -> None:
    with pytest.raises(ValueError, match="2 patterns for a bootstrap over 3 edits"):
        Bootstrap(3).interval([("a", "a"), ("b", "b")], weighted_kappa)


def test_the_paired_difference_interval_matches_altmans_worked_example() -> None:
    from fanout.stats.uncertainty import paired_difference_interval

    # Altman et al., Statistics with Confidence (2000), table 6.2: 14 both, 5 first only, 0 second only, 22 neither;
    # first - second = 5/41 = 0.122, 95 % interval 0.011 to 0.226 by Newcombe's method
    low, high = paired_difference_interval(14, 5, 0, 22) or (0.0, 0.0)
    assert (round(-high, 3), round(-low, 3)) == (0.011, 0.226)  # this function gives second - first
    assert paired_difference_interval(14, 0, 5, 22) == pytest.approx((0.01148324138303325, 0.2264926843512112))
    assert paired_difference_interval(0, 0, 0, 0) is None
    low, high = paired_difference_interval(3, 0, 0, 0) or (0.0, 0.0)
    assert low < 0 < high and low == -high  # three alike: no difference seen, and little known
