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

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fanout.llm.models import ModelSpec

CostSource = Literal["reported", "byok", "generation", "estimated", "unknown"]
COST_SOURCES: tuple[CostSource, ...] = ("reported", "byok", "generation", "estimated", "unknown")
"""Best first: `weakest` picks the latest of these."""
PER_MILLION = 1_000_000
GenerationCost = Callable[[str], Awaitable[float | None]]
"""OpenRouter's /generation lookup: a response id in, its cost (or None) out."""


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


async def call_cost(model: ModelSpec, reported: float | None, response_id: str | None, tokens: Sequence[int],
                    generation_cost: GenerationCost | None) -> tuple[float | None, CostSource]:
    """One call's cost, in the one order every cost in fanout follows: reported, /generation, estimated, unknown.

    `tokens` are prompt, completion, cached and cache-write tokens (see estimate_cost).
    """
    if reported is not None:
        return reported, "reported"
    if generation_cost is not None and response_id:
        looked_up = await generation_cost(response_id)
        if looked_up is not None:
            return looked_up, "generation"
    estimate = estimate_cost(model, *tokens)
    return (estimate, "estimated") if estimate is not None else (None, "unknown")


@dataclass(frozen=True)
class Pricing:
    """How calls are priced after the fact (an attempt cut off by a kill): each model's spec (its prices),
    and OpenRouter's /generation lookup when the endpoint is OpenRouter."""

    models: Mapping[str, ModelSpec] = field(default_factory=dict)
    generation_cost: GenerationCost | None = None

    async def attempt_cost(self, model: str, answered: Sequence[Mapping[str, Any]],
                           cut_off: int) -> tuple[float | None, CostSource]:
        """The answered calls' known cost and its weakest source; a call cut off makes the source unknown. An
        attempt written down under a role (`m (investigation)`, `m (preparation)`) is priced as its model."""
        spec = self.models.get(model) or self.models.get(model.split(" (", 1)[0]) or ModelSpec(model)
        priced = [await self._call_cost(spec, call) for call in answered]
        sources: list[CostSource] = [source for _, source in priced] + ["unknown"] * cut_off
        known = [cost for cost, _ in priced if cost is not None]
        return (sum(known) if known else None), weakest(sources) or "unknown"

    async def _call_cost(self, spec: ModelSpec, call: Mapping[str, Any]) -> tuple[float | None, CostSource]:
        """One call as an in-flight file wrote it down: its reported cost, response id and token counts."""
        tokens = [int(call.get(k) or 0) for k in ("prompt", "completion", "cached", "written")]
        return await call_cost(spec, _number(call.get("cost")), str(call.get("id") or "") or None, tokens,
                               self.generation_cost)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
