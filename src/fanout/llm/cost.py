"""Where a cost figure came from, and what tokens cost at a model's listed prices.

Every chat call's cost has a source, best first:

    reported     the endpoint put it in the response (`usage.cost`, OpenRouter)
    byok         a bring-your-own-key call on OpenRouter: its fee (`usage.cost`, often 0) plus what the
                 user's own provider account was charged (`usage.cost_details.upstream_inference_cost`)
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

CostSource = Literal["reported", "byok", "generation", "estimated", "unknown"]
COST_SOURCES: tuple[CostSource, ...] = ("reported", "byok", "generation", "estimated", "unknown")
"""Best first: `weakest` picks the latest of these."""
PER_MILLION = 1_000_000


def weakest(sources: Iterable[CostSource]) -> CostSource | None:
    """The least trustworthy source among `sources` (None when there are none)."""
    ranks = [COST_SOURCES.index(s) for s in sources]
    return COST_SOURCES[max(ranks)] if ranks else None


def is_priced(model: ModelSpec) -> bool:
    """Whether tokens of this model can be turned into an estimated cost."""
    return model.input_price is not None and model.output_price is not None


def estimate_cost(
    model: ModelSpec, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0, cache_write_tokens: int = 0
) -> float | None:
    """USD for a call's tokens at the model's prices; None when it has none.

    `cached_tokens` were read from the provider's cache and `cache_write_tokens`
    written to it; both are part of prompt_tokens, as OpenRouter counts them.
    Reads are priced at `cached_input_price` and writes at `cache_write_price`
    when the model has them, else at the full input price: for reads an
    estimate that errs high, so a spending cap errs safe; for writes (1.25x
    input on Anthropic) one that errs low, unless the price is known (the
    table has Claude Haiku's; the listing's `input_cache_write` fills it in).
    """
    if model.input_price is None or model.output_price is None:
        return None
    cached = min(max(cached_tokens, 0), prompt_tokens) if model.cached_input_price is not None else 0
    written = min(max(cache_write_tokens, 0), prompt_tokens - cached) if model.cache_write_price is not None else 0
    prompt_cost = (prompt_tokens - cached - written) * model.input_price + cached * (model.cached_input_price or 0.0)
    prompt_cost += written * (model.cache_write_price or 0.0)
    return (prompt_cost + completion_tokens * model.output_price) / PER_MILLION


def cache_savings(model: ModelSpec | None, cached_tokens: int, cache_write_tokens: int) -> float | None:
    """USD the provider's cache saved: these tokens at the full input price, less what they cost at the cache prices.

    Negative when the writes cost more than the reads saved. None when a
    price it needs is unknown (`model` None: no prices at all); 0 when nothing
    was read from or written to a cache.
    """
    if not cached_tokens and not cache_write_tokens:
        return 0.0
    if model is None:
        return None
    read_price = model.cached_input_price if cached_tokens else 0.0
    write_price = model.cache_write_price if cache_write_tokens else 0.0
    if model.input_price is None or read_price is None or write_price is None:
        return None
    full = (cached_tokens + cache_write_tokens) * model.input_price
    return (full - cached_tokens * read_price - cache_write_tokens * write_price) / PER_MILLION
