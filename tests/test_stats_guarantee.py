"""The committee against the people who decided (fanout.stats.judged_by_people): the auto-decision rule, its certificates
applied to the edits' outcomes, PPI++ accuracy per model and rule, and each model's kappa with the people."""

from __future__ import annotations

import pytest

from fanout.stats.certify import Checked, Judged, certify_rules
from fanout.stats.decisions import AUTO_PASSED, DECIDED, PAUSED, EditDecision, Vote
from fanout.stats.draw import run_seed
from fanout.stats.judged_by_people import (
    FEW_RANDOM,
    accuracy_rows,
    apply_certificates,
    certify_committee,
    committee_judgements,
    human_kappas,
)
from fanout.stats.ppi import accuracy_estimate


def edit(rcid: int, decision: str | None, sure: float | None, *, paused: bool = False,
         outcome: str = DECIDED, share: float = 1.0) -> EditDecision:
    vote = Vote(decision, share)
    d = EditDecision(rcid, {"m/a": decision, "m/b": decision}, vote, vote, vote, mean_confidence=sure, outcome=outcome)
    if paused:
        d.reasons, d.outcome, d.why = ["tie"], PAUSED, "tie"
    return d


def test_the_rule_decides_nothing_on_a_paused_edit_and_reads_the_mean_confidence() -> None:
    decisions = [edit(1, "accept", 0.9), edit(2, "reject", 0.7, paused=True), edit(3, None, None)]
    assert committee_judgements(decisions) == {1: Judged("accept", 0.9), 2: Judged(None, 0.7), 3: Judged(None, None)}


def run_of_sixty() -> tuple[list[EditDecision], dict[int, str]]:
    """50 accepts at 0.95 that people accept, 5 rejects at 0.99 (one person accepts), 5 paused edits people reject."""
    decisions = ([edit(r, "accept", 0.95) for r in range(1, 51)] + [edit(r, "reject", 0.99) for r in range(51, 56)]
                 + [edit(r, "accept", 0.5, paused=True) for r in range(56, 61)])
    human = {r: "accept" for r in range(1, 51)} | {r: "reject" for r in range(51, 55)} | {55: "accept"}
    human |= {r: "reject" for r in range(56, 61)}
    return decisions, human


def test_certificates_rest_on_the_random_sample_and_leave_paused_edits_out() -> None:
    decisions, human = run_of_sixty()
    certs = certify_committee(decisions, human, list(range(1, 61)), target_agreement=0.95, risk=0.1)
    expected = certify_rules([Checked("accept", 0.95, "accept")] * 50
                             + [Checked("reject", 0.99, "reject")] * 4 + [Checked("reject", 0.99, "accept")]
                             + [Checked(None, 0.5, "reject")] * 5,
                             list(committee_judgements(decisions).values()), target_agreement=0.95, risk=0.1)
    assert certs == expected
    accept, reject = certs["accept"], certs["reject"]
    assert (accept.threshold, accept.rests_on, accept.decided_alone, accept.coverage) == (0.95, 50, 50, 50 / 60)
    assert (reject.threshold, reject.decisions, reject.more_needed) == (None, 5, None)  # 1 of 5 disagree: 0.8 < 0.95
    # Fewer random decisions than the first test needs: nothing certified, and how many more would be
    few = certify_committee(decisions, human, list(range(1, 31)), target_agreement=0.95, risk=0.1)
    assert (few["accept"].threshold, few["accept"].decisions, few["accept"].more_needed) == (None, 30, 15)


def test_a_certified_rule_replaces_autopass_and_one_not_certified_decides_nothing_alone() -> None:
    decisions, human = run_of_sixty()
    decisions += [edit(61, "accept", 0.9), edit(62, "reject", 0.995, outcome=AUTO_PASSED)]
    certs = certify_committee(decisions, human, list(range(1, 61)), target_agreement=0.95, risk=0.1)
    apply_certificates(decisions, certs)
    by = {d.rcid: d for d in decisions}
    assert (by[1].outcome, by[1].why) == (AUTO_PASSED, "auto-accept certified at confidence >= 0.95: mean confidence "
                                                       "0.95 (95 % agreement at risk 0.1, on 50 human decisions)")
    assert (by[61].outcome, by[61].why) == (DECIDED, "mean confidence 0.90 < 0.95, the threshold certified for "
                                                     "auto-accept")
    assert (by[62].outcome, by[62].why) == (DECIDED, "auto-reject is not certified, so nothing is decided by it alone")
    assert (by[56].outcome, by[56].why) == (PAUSED, "tie")
    assert sum(d.outcome == AUTO_PASSED for d in decisions) == 50


def test_accuracy_rows_estimate_each_model_and_rule_on_the_random_sample_only() -> None:
    decisions = [edit(r, "accept" if r % 3 else "reject", 0.8, share=0.75 if r % 2 else 1.0) for r in range(1, 41)]
    stances = {d.rcid: {"m/a": d.decision, "m/b": "accept" if d.rcid % 4 else "unsure"} for d in decisions}
    human = {r: "accept" if r % 5 else "reject" for r in range(1, 41)}
    sample = list(range(1, 21))  # edits 21..40 decided too, not at random: their decisions are left out
    rows = {r.subject: r for r in accuracy_rows(["m/a", "m/b"], stances, decisions, human, sample)}
    assert list(rows) == ["m/a", "m/b", "majority", "weighted", "dawid_skene"]
    b = rows["m/b"]
    y = [1.0 if stances[r]["m/b"] == human[r] else 0.0 for r in sample]
    yhat = [1.0 if stances[r]["m/b"] == decisions[r - 1].decision else 0.0 for r in sample]
    rest = [1.0 if stances[r]["m/b"] == decisions[r - 1].decision else 0.0 for r in range(21, 41)]
    assert b.estimate == accuracy_estimate(y, yhat, rest)
    assert (b.estimate.labelled, b.estimate.unlabelled, b.few, b.kind) == (20, 20, True, "model")
    majority = rows["majority"]
    assert majority.estimate == accuracy_estimate(
        [1.0 if decisions[r - 1].decision == human[r] else 0.0 for r in sample],
        [0.75 if r % 2 else 1.0 for r in sample], [0.75 if r % 2 else 1.0 for r in range(21, 41)])
    assert (majority.proxy, majority.kind) == ("its vote share", "committee")
    assert FEW_RANDOM == 50


def test_each_models_kappa_with_the_people_counts_every_decision_it_answered() -> None:
    stances = {1: {"m/a": "accept", "m/b": "accept"}, 2: {"m/a": "reject", "m/b": "accept"},
               3: {"m/a": "accept", "m/b": None}, 4: {"m/a": "unsure", "m/b": "reject"}}
    human = {1: "accept", 2: "reject", 3: "accept", 4: "reject"}
    a, b = human_kappas(["m/a", "m/b"], stances, human)
    # m/a: 3 of 4 alike; p_o = 0.75, p_e = (2*2 + 1*2 + 1*0) / 16 = 0.375: kappa 0.6
    assert (a.n, a.agree, a.kappa) == (4, 3, pytest.approx(0.6))
    # m/b on 1, 2, 4: 2 alike; p_o = 2/3, p_e = (2*1 + 1*2) / 9: kappa (6/9 - 4/9) / (5/9) = 0.4
    assert (b.n, b.agree, b.kappa) == (3, 2, pytest.approx(0.4))


def test_a_runs_seed_is_fixed_by_what_names_it() -> None:
    assert run_seed("2026-12-01T18:57:15Z", "s" * 64) == run_seed("2026-12-01T18:57:15Z", "s" * 64)
    assert run_seed("2026-12-01T18:57:15Z", "s" * 64) != run_seed("2026-12-01T18:57:16Z", "s" * 64)
    assert run_seed("a", "b") == 4123842419
