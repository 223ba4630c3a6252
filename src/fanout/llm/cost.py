"""Where a cost figure came from, and what tokens cost at a model's listed prices.

Every chat call's cost has a source, best first:

    reported     the endpoint put it in the response (`usage.cost`, OpenRouter)
    generation   OpenRouter's /generation endpoint, asked afterwards by response id
    estimated    tokens x the model's prices (the table, --limits or the listing)
    unknown      none of these: no cost reported and no price to estimate with

A verdict's (or any sum's) source is the weakest of its parts: one estimated
call makes the whole figure estimated, one unknown call makes it incomplete.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from fanout.config import ModelSpec

CostSource = Literal["reported", "generation", "estimated", "unknown"]
COST_SOURCES: tuple[CostSource, ...] = ("reported", "generation", "estimated", "unknown")
"""Best first: `weakest` picks the latest of these."""
PER_MILLION = 1_000_000


def weakest(sources: Iterable[CostSource]) -> CostSource | None:
    """The least trustworthy source among `sources` (None when there are none)."""
    ranks = [COST_SOURCES.index(s) for s in sources]
    return COST_SOURCES[max(ranks)] if ranks else None


def is_priced(model: ModelSpec) -> bool:
    """Whether tokens of this model can be turned into an estimated cost."""
    return model.input_price is not None and model.output_price is not None


def estimate_cost(model: ModelSpec, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float | None:
    """USD for these tokens at the model's prices; None when it has none.

    Prompt tokens the response reports as read from the provider's cache are
    priced at `cached_input_price` when the model has one, else at the full
    input price (an estimate that errs high, so a spending cap errs safe).
    """
    if model.input_price is None or model.output_price is None:
        return None
    cached = min(max(cached_tokens, 0), prompt_tokens) if model.cached_input_price is not None else 0
    prompt_cost = (prompt_tokens - cached) * model.input_price + cached * (model.cached_input_price or 0.0)
    return (prompt_cost + completion_tokens * model.output_price) / PER_MILLION
