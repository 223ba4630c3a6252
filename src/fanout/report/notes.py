"""The sentences that qualify a report's figures, by what they qualify (fanout.report.document.NOTE_TOPICS).

A note is said where its figures are shown: the terminal lists them all at
the end, the page beside the table each one is about. What the cost total
holds is said beside the cost table (fanout.stats.spend.cost_notes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fanout.report.basis import Basis
from fanout.report.document import NOTE_TOPICS, human_source
from fanout.stats.dawid_skene import MIN_EDITS, PRIOR, PRIOR_DIAGONAL, DawidSkene
from fanout.stats.judged_by_people import FEW_RANDOM

FEW_EDITS = 30
"""Below this many edits the statistics are shown with a warning that they are rough."""


def report_notes(basis: Basis) -> dict[str, list[str]]:
    """Every note of the report, by topic, in the order the topics and their figures come."""
    notes: dict[str, list[str]] = {topic: [] for topic in NOTE_TOPICS}
    notes["sample"] = sample_notes(basis)
    notes["accuracy"] = accuracy_notes(basis)
    notes["committee"] = dawid_skene_notes(basis.consensus) + rule_notes(basis) + calibration_notes(basis)
    notes["replay"] = basis.replay.notes
    notes["edits"] = basis.described.notes
    notes["human"] = human_notes(human_source(basis.reviews, basis.run.run_dir, basis.by_edit))
    notes["guarantee"] = guarantee_notes(basis)
    return notes


def sample_notes(basis: Basis) -> list[str]:
    """What the whole report rests on: shared evidence or a team's, and too few edits."""
    run, notes = basis.run, []
    missing, mixed = run.missing_evidence(), run.mixed_evidence()
    if run.evidence.get("mode") == "shared" and not missing and not mixed:
        notes.append(
            f"Shared evidence: {run.evidence.get('investigator')} investigated each edit once and every model gave "
            "its verdict over that same evidence, so these verdicts measure judging, not research "
            "(an --evidence own run of the same snapshot measures both).")
    if missing:
        notes.append(f"{sum(map(len, missing.values()))} verdict(s) of {len(missing)} edit(s) cite evidence that "
                     f"evidence.jsonl does not hold (lost or deleted; edits {_some(missing)}): what they judged "
                     "cannot be shown or checked.")
    if mixed:
        notes.append(f"{len(mixed)} edit(s) were judged on more than one investigation (edits {_some(mixed)}): "
                     "their models did not all read the same evidence.")
    if run.evidence.get("mode") == "team":
        workers = ", ".join(run.evidence.get("workers") or [])
        notes.append(
            f"Research team: {run.evidence.get('planner')} planned each edit's research and {workers} researched it "
            "at the same time; every model gave its verdict over the team's pooled evidence, so these verdicts "
            "measure judging, and the team tables credit each worker with the sources the judges cited."
            + (f" {run.evidence.get('aggregator')}'s summary of the workers' notes was shown to the judges after "
               "the evidence, so their verdicts may lean on one model's reading." if run.evidence.get("aggregator")
               else ""))
    if len(run.edits) < FEW_EDITS:
        notes.append(f"Only {len(run.edits)} edits: agreement statistics and Dawid–Skene estimates are rough.")
    return notes


def _some(rcids: object, shown: int = 5) -> str:
    listed = sorted(rcids)  # type: ignore[call-overload]
    return ", ".join(map(str, listed[:shown])) + (f" and {len(listed) - shown} more" if len(listed) > shown else "")


def accuracy_notes(basis: Basis) -> list[str]:
    """Where the labels come from and what the scores against them count."""
    labels = basis.labels
    notes = [] if basis.found_labels is None else [
        f"Labels from {basis.found_labels}, found in the run directory (no --labels given)."]
    if labels is None:
        return notes
    notes += labels.notes
    notes.append(
        "Each model's accuracy and McNemar's test score the verdict as the model gave it, a vote set aside "
        "by --rule-violations included (that setting changes only the committee): McNemar compares a pair on "
        "the labelled edits both answered, a subset of each one's answered edits, and shows both counts.")
    if "labels" in basis.weights.sources.values():
        notes.append(
            "The weighted vote weighs each model by its accuracy on the labels; each edit is decided "
            "with weights fitted on the other edits (leave-one-out), so its score is out of sample."
        )
    unlabelled = sum(e.rcid not in labels.truth for e in basis.run.edits)
    if unlabelled:
        notes.append(f"{unlabelled} of {len(basis.run.edits)} edits have no label and are not scored.")
    return notes


def dawid_skene_notes(consensus: DawidSkene) -> list[str]:
    """Its prior, how sure its posteriors are, whether it queues, and whether it converged."""
    notes = []
    posteriors = [max(posterior.values()) for posterior in consensus.posteriors.values()]
    if posteriors:
        answered, low, high = len(posteriors), min(posteriors), max(posteriors)
        prior = (f"Dawid–Skene is fitted with a prior on each model's confusion matrix (a pseudo-count of "
                 f"{PRIOR:g} on every cell and {PRIOR_DIAGONAL:g} more on the diagonal); its posterior for the "
                 f"decided stance ranges {low:.2f}–{high:.2f} over the {answered} answered edits.")
        if answered < MIN_EDITS:
            prior += (f" Below {MIN_EDITS} answered edits it is shown but queues nothing: --min-confidence "
                      f"is set aside ({answered} here).")
        notes.append(prior)
    if not consensus.converged:
        notes.append(f"Dawid–Skene stopped after {consensus.iterations} iterations without converging.")
    return notes


def rule_notes(basis: Basis) -> list[str]:
    """How many verdicts broke the prompt's rules, and what the committee did with them."""
    broken = sum(bool(r.rule_violations) for r in basis.run.records)
    if not broken:
        return []
    treated = ("cast no committee vote (--rule-violations abstain)" if basis.options.rule_violations == "abstain"
               else "vote in the committee like any other (--rule-violations count)")
    return [f"{broken} verdict(s) are verified-high/verified-low without a verified source, against the "
            f"prompt's rule; they {treated}."]


CALIBRATION = (
    "Calibration: a verdict's confidence is read as the chance that its stance is the label's; ECE "
    "sums |mean confidence - accuracy| over 10 equal-width bins ([0, 0.1) ... [0.9, 1.0]), each "
    "weighted by its share of the verdicts; Brier is the mean of (confidence - right)^2. Calibrated: "
    "through the model's isotonic map fitted on its other labelled edits (held out edit by edit, like "
    "the weighted vote).")


def calibration_notes(basis: Basis) -> list[str]:
    """What the calibration figures are, and which confidence the thresholds read."""
    if basis.labels is None:
        return []
    options, models = basis.options, basis.run.models
    mapped, fitted = sorted({m for _, m in basis.applied}), sorted({m for _, m in basis.calibrated})
    if mapped:
        read = (f"The thresholds read calibrated confidence for {len(mapped)} of {len(models)} model(s) "
                f"(those with at least {options.calibrate_from} labelled verdicts with a confidence).")
    elif not options.calibrate:
        read = "The thresholds read the confidence as stated (or measured by --samples): --no-calibrate."
    elif fitted:
        read = (f"The thresholds read the confidence as stated (or measured by --samples): a model needs "
                f"{options.calibrate_from} labelled verdicts with a confidence before they read its calibrated "
                "one; the calibrated figures are shown for comparison.")
    else:
        read = ("Too few labelled verdicts with a confidence to fit a calibration map; the thresholds read "
                "the confidence as stated (or measured by --samples).")
    return [CALIBRATION, read]


def human_notes(source: Mapping[str, Any]) -> list[str]:
    """What qualifies the scores against human decisions."""
    if not source["edits_decided"]:
        return []
    notes = [f"Human decisions ({source['path']}): {source['edits_decided']} of {source['edits']} edits decided, "
             f"{source['accept']} accept (scored as correct), {source['reject']} reject (incorrect), "
             f"{source['unsure']} unsure (not scored); the latest decision of each edit stands. Reviewers mostly "
             "see the paused, harder edits, so accuracy against them reads lower than over all edits."]
    if source["skipped_lines"]:
        notes.append(f"{source['skipped_lines']} line(s) of reviews.jsonl are not decisions and were skipped.")
    return notes


def guarantee_notes(basis: Basis) -> list[str]:
    """What the certificates and the accuracy from few labels rest on, and where to read them as rough."""
    people = basis.people
    if people.source is None:
        return []
    notes = ["Certificates and prediction-powered accuracy use only the random sample: the decided front of the "
             "run's seeded random order (every edit there decided, however it came to be). Edits people saw because "
             "the committee was unsure are the hard ones and would bias both."]
    if people.source == "labels":
        notes.append(f"No decision in reviews.jsonl: the labels file {people.path} stands in for people's decisions "
                     "(correct = accept, incorrect = reject, unverifiable = unsure).")
    rows = basis.accuracy_from_few
    if rows:
        notes.append("PPI++ (Angelopoulos, Duchi and Zrnic 2023) corrects a proxy known for every edit with the random "
                     "decisions: for a model, whether it agrees with the committee's decision; for a committee rule, its "
                     "own confidence. Narrower: 1 − PPI++ width / labels-only width; worth: the labels-only decisions "
                     "that would give PPI++'s width.")
    if any(r.few for r in rows):
        notes.append(f"* Fewer than {FEW_RANDOM} random human decisions: normal intervals (labels only, PPI and "
                     "PPI++ alike) cover the true accuracy less often than 95 % there (81–88 % at 20 decisions in "
                     "the statistics bench, docs/decisions.md); read them as rough.")
    return notes
