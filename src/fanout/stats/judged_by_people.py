"""The committee's decisions against the people who decided: certificates, prediction-powered accuracy, kappa.

fanout.stats.certify, .ppi and .draw hold the statistics; this module says
what they are applied to in a run, so the report, the queue and the desk all
read one answer.

- The auto-decision rule (`committee_judgements`): on an edit nothing paused
  (fanout.stats.decisions: no queue reason, no --pause or --delta), the
  committee's decision (what it acts on: its strategy's settlement, else the
  Dawid–Skene consensus) at the models' mean confidence, the figure --pause
  and --autopass read. A paused edit is decided by the rule by nobody: a
  person sees it anyway, so the certificate neither counts it nor covers it,
  and the edits decided alone are exactly those the certificate is about.
- `certify_committee` certifies auto-accept and auto-reject on the random
  sample of human decisions (fanout.stats.draw.random_sample) only;
  `apply_certificates` then replaces --autopass: an edit is auto-decided when
  its stance's rule is certified and its mean confidence reaches the
  certified threshold, and by nothing else. A rule not certified decides
  nothing alone.
- `accuracy_rows`: each model's and each committee rule's accuracy by PPI++
  (fanout.stats.ppi) from the random sample plus every verdict. The proxy of a
  model is whether its stance is the committee's decision (0.5 where the
  committee decided nothing); of a rule, its own confidence (the majority's
  vote share, the weighted vote's weight share, Dawid–Skene's posterior).
  Intervals on fewer than FEW_RANDOM random decisions are flagged: the
  statistics bench found normal intervals cover less than 95 % there.
- `human_kappas`: each model's agreement with the people who decided (every
  decision, random or not: a description of the decisions so far, not an
  estimate for the run).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fanout.stats.agreement import cohen_kappa
from fanout.stats.certify import EPSILON, Certificate, Checked, Judged, certify_rules
from fanout.stats.decisions import AUTO_PASSED, COMMITTEE_RULES, DECIDED, EditDecision, Vote
from fanout.stats.ppi import AccuracyEstimate, accuracy_estimate

FEW_RANDOM = 50
"""Random human decisions below which an accuracy interval is flagged: at n = 20 the bench's PPI intervals
covered the true accuracy 81–88 % of the time, not 95 % (docs/decisions.md)."""
NO_DECISION_PROXY = 0.5
"""A model's proxy on an edit the committee decided nothing on: as likely right as wrong."""


def committee_judgements(decisions: Sequence[EditDecision]) -> dict[int, Judged]:
    """rcid -> the auto-decision rule's stance (None on a paused edit or without a decision) and confidence."""
    return {d.rcid: Judged(None if d.needs_human else d.decision, d.mean_confidence) for d in decisions}


def certify_committee(decisions: Sequence[EditDecision], human: Mapping[int, str], sample: Sequence[int], *,
                      target_agreement: float, risk: float) -> dict[str, Certificate]:
    """Auto-accept's and auto-reject's certificates from the random sample's human decisions (`human`: rcid ->
    accept | unsure | reject; `sample`: the rcids of the random sample, each with a decision in `human`)."""
    judged = committee_judgements(decisions)
    checked = [Checked(judged[k].stance, judged[k].confidence, human[k]) for k in sample if k in judged]
    return certify_rules(checked, list(judged.values()), target_agreement=target_agreement, risk=risk)


def apply_certificates(decisions: Sequence[EditDecision], certificates: Mapping[str, Certificate]) -> None:
    """Each edit nothing paused is auto-decided when its stance's rule is certified and its mean confidence
    reaches the certified threshold; otherwise the committee's decision stands (--autopass is not read)."""
    for d in decisions:
        if d.needs_human:
            continue
        cert = certificates.get(d.decision or "")
        sure = d.mean_confidence
        if cert is not None and cert.threshold is not None and sure is not None and sure >= cert.threshold - EPSILON:
            d.outcome, d.why = AUTO_PASSED, (f"{cert.rule} certified at confidence >= {cert.threshold:.2f}: mean "
                                             f"confidence {sure:.2f} ({cert_terms(cert)})")
        else:
            d.outcome, d.why = DECIDED, _not_alone(cert, sure, d.decision)


def cert_terms(cert: Certificate) -> str:
    """`95 % agreement at risk 0.1, on 52 human decisions`."""
    return (f"{percent(cert.target_agreement)} agreement at risk {cert.risk:g}, on {cert.rests_on} human "
            f"decision{'s' * (cert.rests_on != 1)}")


def _not_alone(cert: Certificate | None, sure: float | None, stance: str | None) -> str:
    if stance is None:
        return "no decision to act on alone"
    if cert is None:
        return f"no rule decides {stance} alone"
    if cert.threshold is None:
        return f"{cert.rule} is not certified, so nothing is decided by it alone"
    shown = "no confidence" if sure is None else f"mean confidence {sure:.2f}"
    return f"{shown} < {cert.threshold:.2f}, the threshold certified for {cert.rule}"


def percent(share: float) -> str:
    """0.95 as `95 %`, 0.975 as `97.5 %`."""
    return f"{round(share * 100, 6):g} %"


@dataclass(frozen=True)
class AccuracyRow:
    """One subject's accuracy over the run, labels only and prediction-powered, and what it rests on."""

    subject: str
    kind: str
    """`model` or `committee` (a committee rule)."""
    proxy: str
    """What predicts its correctness on the edits nobody decided at random."""
    estimate: AccuracyEstimate

    @property
    def few(self) -> bool:
        """Whether the interval rests on fewer than FEW_RANDOM random decisions (and so may cover less)."""
        return self.estimate.labelled < FEW_RANDOM


def accuracy_rows(models: Sequence[str], model_stances: Mapping[int, Mapping[str, str | None]],
                  decisions: Sequence[EditDecision], human: Mapping[int, str],
                  sample: Sequence[int]) -> list[AccuracyRow]:
    """Each model (its verdict's stance as given, `model_stances`: rcid -> model -> stance) and each committee
    rule, estimated on the random sample's human decisions plus every edit's proxy."""
    decided = {d.rcid: d.decision for d in decisions}
    rows = [AccuracyRow(m, "model", "agrees with the committee's decision",
                        _estimate({r: s.get(m) for r, s in model_stances.items()},
                                  {r: _agrees(s.get(m), decided.get(r)) for r, s in model_stances.items()},
                                  human, sample))
            for m in models]
    for rule in COMMITTEE_RULES:
        votes: dict[int, Vote] = {d.rcid: getattr(d, rule) for d in decisions}
        proxy = {r: NO_DECISION_PROXY if v.confidence is None else v.confidence for r, v in votes.items()}
        rows.append(AccuracyRow(rule, "committee", RULE_PROXY[rule],
                                _estimate({r: v.decision for r, v in votes.items()}, proxy, human, sample)))
    return rows


RULE_PROXY = {"majority": "its vote share", "weighted": "its weight share", "dawid_skene": "its posterior"}


def _agrees(given: str | None, decision: str | None) -> float:
    if decision is None:
        return NO_DECISION_PROXY
    return 1.0 if given == decision else 0.0


def _estimate(stances: Mapping[int, str | None], proxy: Mapping[int, float], human: Mapping[int, str],
              sample: Sequence[int]) -> AccuracyEstimate:
    """Y on the sampled edits the subject answered, the proxy there and on every other edit it answered."""
    answered = {r for r, s in stances.items() if s is not None}
    drawn = [r for r in sample if r in answered and r in human]
    rest = [proxy[r] for r in answered - set(drawn)]
    y = [1.0 if stances[r] == human[r] else 0.0 for r in drawn]
    return accuracy_estimate(y, [proxy[r] for r in drawn], rest)


@dataclass(frozen=True)
class HumanKappa:
    """A model against the people who decided: the edits both decided, how many alike, Cohen's kappa."""

    model: str
    n: int
    agree: int
    kappa: float | None


def human_kappas(models: Sequence[str], model_stances: Mapping[int, Mapping[str, str | None]],
                 human: Mapping[int, str]) -> list[HumanKappa]:
    """Each model's stance against every human decision that stands (accept, unsure or reject)."""
    rows = []
    for m in models:
        pairs = [(given, human[r]) for r, s in model_stances.items() if r in human and (given := s.get(m)) is not None]
        rows.append(HumanKappa(m, len(pairs), sum(a == b for a, b in pairs), cohen_kappa(pairs) if pairs else None))
    return rows
