"""Scoring stances against ground truth, for a model or a committee rule alike.

All rates are over the edits the subject answered among those with a label;
`labelled` and `answered` are reported next to them so coverage stays visible
(a model that times out on hard edits would otherwise look better than it is).
"Reject" is the positive class for precision and recall: flagging a bad edit
is the job.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from fanout.analysis.scales import REJECT, STANCE_OF_TRUTH


def score(
    subject: str,
    kind: str,
    predictions: Mapping[int, str | None],
    truth: Mapping[int, str],
    costs: Mapping[int, float],
) -> dict[str, object]:
    """One score row. predictions: rcid -> stance; truth: rcid -> correct/incorrect/unverifiable;
    costs: rcid -> USD spent on that edit by this subject (known costs only)."""
    labelled = [rcid for rcid in predictions if rcid in truth]
    answered = [rcid for rcid in labelled if predictions[rcid] is not None]
    correct = sum(predictions[r] == STANCE_OF_TRUTH[truth[r]] for r in answered)
    flagged = [r for r in answered if predictions[r] == REJECT]
    bad = [r for r in answered if truth[r] == "incorrect"]
    caught = sum(truth[r] == "incorrect" for r in flagged)
    cost = sum(costs.get(r, 0.0) for r in labelled)
    return {
        "subject": subject,
        "kind": kind,
        "labelled": len(labelled),
        "answered": len(answered),
        "correct": correct,
        "accuracy": _ratio(correct, len(answered)),
        "reject_precision": _ratio(caught, len(flagged)),
        "reject_recall": _ratio(caught, len(bad)),
        "cost_usd": cost,
        "cost_per_correct_usd": cost / correct if correct else None,
    }


def confusion_rows(
    subject: str, predictions: Mapping[int, str | None], truth: Mapping[int, str]
) -> list[dict[str, object]]:
    """Counts of (truth, stance) pairs, long format; a missing answer is stance None."""
    counts = Counter((truth[r], p) for r, p in predictions.items() if r in truth)
    return [
        {"subject": subject, "truth": t, "stance": s, "count": n}
        for (t, s), n in sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1] or ""))
    ]


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None
