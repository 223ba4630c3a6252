"""What the run cost, per model, and what more edits would cost at the same rates.

A cost of None is unknown, never zero: totals add the known costs and say how
many were unknown, and the per-verdict mean (and so the projection) is over
the verdicts whose cost is known. Every attempt that was paid for counts in
the total: the verdicts kept, and the earlier attempts of their pairs (an
`error` retried on resume, an attempt cut off by a kill and settled on the
next start). The part of the total estimated from tokens and prices is
stated apart.

Prompt caching, per model over the verdicts kept: the hit rate (prompt tokens
read from the provider's cache, of all prompt tokens) and what the cache
saved (the tokens read and written at the full input price, less what they
cost at the cache prices). The savings are worked out by whoever knows the
prices (the report: fanout.llm.cost.cache_savings over the run's own prices,
its manifest's, else the table's) and handed in as `CacheSaved`; a model
without them has its savings unknown (None), never guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, replace
from typing import Any, NamedTuple

from fanout.base.records import VerdictRecord

CacheSaved = Callable[[str, int, int], float | None]
"""(model, cached tokens, cache-write tokens) -> USD the cache saved at the model's prices, None when unknown."""


def unpriced(model: str, cached_tokens: int, cache_write_tokens: int) -> float | None:
    """Savings without prices: nothing when nothing touched a cache, else unknown."""
    return 0.0 if not cached_tokens and not cache_write_tokens else None


class AttemptCost(NamedTuple):
    """An attempt the report does not show as a verdict, but which was paid for."""

    model: str
    cost_usd: float | None
    cost_source: str | None


@dataclass(frozen=True)
class ModelCost:
    model: str
    records: int
    cost_known: int
    cost_unknown: int
    total_cost_usd: float
    """Sum of the known costs of every attempt: the verdicts and the earlier attempts."""
    mean_cost_usd: float | None
    """Per verdict, over verdicts whose cost is known."""
    prompt_tokens: int
    completion_tokens: int
    mean_prompt_tokens: float | None
    mean_completion_tokens: float | None
    projected_edits: int
    projected_cost_usd: float | None
    """One more verdict of this model for each of `projected_edits` edits."""
    earlier_attempts: int = 0
    """Attempts before the verdicts kept: retried, or cut off by a stop."""
    earlier_cost_usd: float = 0.0
    """Their known cost (in total_cost_usd)."""
    earlier_cost_unknown: int = 0
    estimated_cost_usd: float = 0.0
    """The part of total_cost_usd estimated from tokens and prices, not reported by the endpoint."""
    investigations: int = 0
    """Under --evidence shared, the edits' investigations this model made (every judge reads them)."""
    investigation_cost_usd: float = 0.0
    """Their known cost: the edits' evidence, apart from this model's verdicts (not in total_cost_usd)."""
    cached_tokens: int = 0
    """Of prompt_tokens, those read from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Of prompt_tokens, those written to the provider's prompt cache (where it reports them)."""
    cache_hit_rate: float | None = None
    """cached_tokens / prompt_tokens; None without prompt tokens."""
    cache_saved_usd: float | None = 0.0
    """What the cache saved at the model's prices (negative if writes cost more); None when they are unknown."""

    def row(self) -> dict[str, object]:
        return asdict(self)


def model_costs(
    records: Iterable[VerdictRecord], models: list[str], project_edits: int, earlier: Iterable[AttemptCost] = (),
    cache_saved: CacheSaved = unpriced, investigations: Iterable[AttemptCost] = (),
) -> list[ModelCost]:
    """Each model's costs; `cache_saved` prices what its prompt cache saved. `investigations` (shared evidence)
    are shown apart, under the model that investigated."""
    by_model: dict[str, list[VerdictRecord]] = {m: [] for m in models}
    for record in records:
        by_model.setdefault(record.model, []).append(record)
    earlier_by_model: dict[str, list[AttemptCost]] = {}
    for attempt in earlier:
        by_model.setdefault(attempt.model, [])
        earlier_by_model.setdefault(attempt.model, []).append(attempt)
    investigated: dict[str, list[AttemptCost]] = {}
    for investigation in investigations:
        by_model.setdefault(investigation.model, [])
        investigated.setdefault(investigation.model, []).append(investigation)
    costs = [_model_cost(model, rows, project_edits, earlier_by_model.get(model, []), cache_saved)
             for model, rows in by_model.items()]
    return [replace(c, investigations=len(investigated.get(c.model, [])),
                    investigation_cost_usd=sum(i.cost_usd or 0.0 for i in investigated.get(c.model, [])))
            for c in costs]


def _model_cost(
    model: str, records: list[VerdictRecord], project_edits: int, earlier: list[AttemptCost], cache_saved: CacheSaved
) -> ModelCost:
    known = [r.cost_usd for r in records if r.cost_usd is not None]
    earlier_known = [a.cost_usd for a in earlier if a.cost_usd is not None]
    attempts = [AttemptCost(r.model, r.cost_usd, r.cost_source) for r in records] + earlier
    tokens = _tokens(records)
    n = len(records)
    mean_cost = _per(sum(known), len(known))
    return ModelCost(
        model=model,
        records=n,
        cost_known=len(known),
        cost_unknown=n - len(known),
        total_cost_usd=sum(known) + sum(earlier_known),
        mean_cost_usd=mean_cost,
        prompt_tokens=tokens.prompt,
        completion_tokens=tokens.completion,
        mean_prompt_tokens=_per(tokens.prompt, n),
        mean_completion_tokens=_per(tokens.completion, n),
        projected_edits=project_edits,
        projected_cost_usd=_times(mean_cost, project_edits),
        earlier_attempts=len(earlier),
        earlier_cost_usd=sum(earlier_known),
        earlier_cost_unknown=sum(_unknown(a) for a in earlier),
        estimated_cost_usd=_estimated(attempts),
        cached_tokens=tokens.cached,
        cache_write_tokens=tokens.written,
        cache_hit_rate=_per(tokens.cached, tokens.prompt),
        cache_saved_usd=cache_saved(model, tokens.cached, tokens.written),
    )


class Tokens(NamedTuple):
    prompt: int
    completion: int
    cached: int
    """Of the prompt tokens, those read from the provider's prompt cache."""
    written: int
    """Of the prompt tokens, those written to it."""


def _tokens(records: list[VerdictRecord]) -> Tokens:
    usage = [r.token_usage for r in records]
    return Tokens(sum(u.prompt_tokens for u in usage), sum(u.completion_tokens for u in usage),
                  sum(u.cached_tokens for u in usage), sum(u.cache_write_tokens for u in usage))


def _times(mean: float | None, n: int) -> float | None:
    return mean * n if mean is not None else None


def _estimated(attempts: list[AttemptCost]) -> float:
    """The part of the attempts' cost estimated from tokens and prices."""
    return sum(a.cost_usd or 0.0 for a in attempts if a.cost_source == "estimated")


def _per(total: float, n: int) -> float | None:
    """A mean or a rate: None when there is nothing to divide by."""
    return total / n if n else None


def _unknown(attempt: AttemptCost) -> bool:
    """Unknown in whole (no figure) or in part (a figure that leaves some calls out)."""
    return attempt.cost_usd is None or attempt.cost_source == "unknown"


TOTALS = ("total_cost_usd", "cost_unknown", "earlier_attempts", "earlier_cost_usd", "earlier_cost_unknown",
          "estimated_cost_usd", "prompt_tokens", "completion_tokens", "cached_tokens", "cache_write_tokens",
          "cache_hit_rate", "cache_saved_usd", "projected_edits", "projected_cost_usd", "investigations",
          "investigation_cost_usd")
"""The figures of the run's totals (`report --json`'s totals); a mean per verdict has no total."""


SUMMED = ("records", "cost_known", "cost_unknown", "total_cost_usd", "prompt_tokens", "completion_tokens",
          "earlier_attempts", "earlier_cost_usd", "earlier_cost_unknown", "estimated_cost_usd", "cached_tokens",
          "cache_write_tokens", "investigations", "investigation_cost_usd")
"""The figures of the totals row that are the models' figures added up."""


def total_cost(costs: list[ModelCost], project_edits: int) -> ModelCost:
    """The run's costs as one row, `total`, under the models' rows; the projection is None when any model's rate
    is unknown, and so are the savings when any model's are."""
    sums: dict[str, Any] = {name: sum(getattr(c, name) for c in costs) for name in SUMMED}
    return ModelCost(
        model="total",
        mean_cost_usd=None,
        mean_prompt_tokens=None,
        mean_completion_tokens=None,
        projected_edits=project_edits,
        projected_cost_usd=_sum_known([c.projected_cost_usd for c in costs]),
        cache_hit_rate=_per(sums["cached_tokens"], sums["prompt_tokens"]),
        cache_saved_usd=_sum_known([c.cache_saved_usd for c in costs]),
        **sums,
    )


def _sum_known(values: list[float | None]) -> float | None:
    """The sum, or None when any of the values is unknown."""
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def cost_totals(costs: list[ModelCost], project_edits: int) -> dict[str, object]:
    """The run's totals; the projection is None when any model's rate is unknown."""
    total = total_cost(costs, project_edits).row()
    return {name: total[name] for name in TOTALS}


def cost_notes(costs: list[ModelCost], evidence: str = "shared investigation(s)", preparations: int = 0) -> list[str]:
    """Sentences that say what the total holds: earlier attempts, estimates, and costs nobody knows; `evidence`
    names what the investigation column counts (a research team's: its steps), `preparations` how many of them
    are a workload's preparation step (texts split into claims)."""
    notes = [_earlier_note(costs), _investigation_note(costs, evidence, preparations)]
    return [note for note in notes + [say(costs) for say in (_estimate_note, _unknown_note, _savings_note)] if note]


def _earlier_note(costs: list[ModelCost]) -> str:
    earlier = sum(c.earlier_attempts for c in costs)
    if not earlier:
        return ""
    return (f"The total includes ${sum(c.earlier_cost_usd for c in costs):.4f} for {earlier} earlier "
            "attempt(s) that were retried or cut off by a stop: they were paid for too.")


def _investigation_note(costs: list[ModelCost], evidence: str, preparations: int = 0) -> str:
    investigations = sum(c.investigations for c in costs)
    if not investigations:
        return ""
    spent = sum(c.investigation_cost_usd for c in costs)
    shared = investigations - preparations
    what = " and ".join(part for part in (
        f"{shared} {evidence}" if shared else "",
        f"{preparations} extraction(s) of claims from texts" if preparations else "") if part)
    return (f"The {what} cost ${spent:.4f}, shown apart from the verdicts "
            f"(column investigation); with them the run cost ${spent + sum(c.total_cost_usd for c in costs):.4f}.")


def _estimate_note(costs: list[ModelCost]) -> str:
    estimated = sum(c.estimated_cost_usd for c in costs)
    if not estimated:
        return ""
    return (f"${estimated:.4f} of the total is estimated from tokens and prices; the endpoint reported "
            "no cost for those calls.")


def _unknown_note(costs: list[ModelCost]) -> str:
    unknown = sum(c.cost_unknown + c.earlier_cost_unknown for c in costs)
    return f"{unknown} attempt(s) have no known cost; the total adds the known ones." if unknown else ""


def _savings_note(costs: list[ModelCost]) -> str:
    if not any(c.cache_saved_usd is None for c in costs):
        return ""
    return ("Cache savings are unknown for models without input and cache prices in the price table "
            "or --limits (cached_input_price, cache_write_price).")


def uses_cache(costs: Iterable[ModelCost]) -> bool:
    """Whether any model read from or wrote to a prompt cache: the cost tables show the cache columns only then."""
    return any(c.cached_tokens or c.cache_write_tokens for c in costs)


def cheapest_model(costs: list[ModelCost]) -> str | None:
    """The model whose verdicts cost least on average (over those whose cost is known)."""
    known = [c for c in costs if c.mean_cost_usd is not None]
    return min(known, key=lambda c: c.mean_cost_usd or 0.0).model if known else None
