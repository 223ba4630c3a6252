"""What the run cost, per model, and what more edits would cost at the same rates.

A cost of None is unknown, never zero: totals add the known costs and say how
many were unknown, and the per-verdict mean (and so the projection) is over
the verdicts whose cost is known.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

from fanout.records import VerdictRecord


@dataclass(frozen=True)
class ModelCost:
    model: str
    records: int
    cost_known: int
    cost_unknown: int
    total_cost_usd: float
    """Sum of the known costs."""
    mean_cost_usd: float | None
    """Per verdict, over verdicts whose cost is known."""
    prompt_tokens: int
    completion_tokens: int
    mean_prompt_tokens: float | None
    mean_completion_tokens: float | None
    projected_edits: int
    projected_cost_usd: float | None
    """One more verdict of this model for each of `projected_edits` edits."""

    def row(self) -> dict[str, object]:
        return asdict(self)


def model_costs(records: Iterable[VerdictRecord], models: list[str], project_edits: int) -> list[ModelCost]:
    by_model: dict[str, list[VerdictRecord]] = {m: [] for m in models}
    for record in records:
        by_model.setdefault(record.model, []).append(record)
    return [_model_cost(model, rows, project_edits) for model, rows in by_model.items()]


def _model_cost(model: str, records: list[VerdictRecord], project_edits: int) -> ModelCost:
    known = [r.cost_usd for r in records if r.cost_usd is not None]
    prompt = sum(r.token_usage.prompt_tokens for r in records)
    completion = sum(r.token_usage.completion_tokens for r in records)
    n = len(records)
    mean_cost = sum(known) / len(known) if known else None
    return ModelCost(
        model=model,
        records=n,
        cost_known=len(known),
        cost_unknown=n - len(known),
        total_cost_usd=sum(known),
        mean_cost_usd=mean_cost,
        prompt_tokens=prompt,
        completion_tokens=completion,
        mean_prompt_tokens=prompt / n if n else None,
        mean_completion_tokens=completion / n if n else None,
        projected_edits=project_edits,
        projected_cost_usd=mean_cost * project_edits if mean_cost is not None else None,
    )


def cost_totals(costs: list[ModelCost], project_edits: int) -> dict[str, object]:
    """The run's totals; the projection is None when any model's rate is unknown."""
    projected = [c.projected_cost_usd for c in costs]
    return {
        "total_cost_usd": sum(c.total_cost_usd for c in costs),
        "cost_unknown": sum(c.cost_unknown for c in costs),
        "prompt_tokens": sum(c.prompt_tokens for c in costs),
        "completion_tokens": sum(c.completion_tokens for c in costs),
        "projected_edits": project_edits,
        "projected_cost_usd": None if any(p is None for p in projected) else sum(p for p in projected if p is not None),
    }
