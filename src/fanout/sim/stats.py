"""The simulator's own tally, so an end-to-end check can compare the client's books with it.

Costs are summed with math.fsum: the total is the exactly rounded sum of the
costs returned, whatever order they arrived in, so a client that adds up the
same numbers gets the same total.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any

from fanout.sim.prompt_cache import CacheUse


class SimStats:
    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self.completions: Counter[str] = Counter()
        self.by_conversation: Counter[str] = Counter()
        """Completions billed per conversation (Conversation.key): how often one question was paid for."""
        self.faults: Counter[str] = Counter()
        self._costs: dict[str, list[float]] = defaultdict(list)
        self._pair_costs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        self._tokens: dict[str, Counter[str]] = defaultdict(Counter)
        self._latency: dict[str, list[float]] = defaultdict(list)
        self._rate_events: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"admitted": [], "refused": []})
        self._started = 0.0
        self._roles: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))

    def rate_limit_event(self, model: str, at: float, *, admitted: bool) -> None:
        """When a rate-limited model's request was admitted or refused: `make bench` measures from these how
        fast a client follows a limit that changes. Times count from the first such request."""
        if not self._rate_events:
            self._started = at
        self._rate_events[model]["admitted" if admitted else "refused"].append(round(at - self._started, 4))

    def request(self, endpoint: str) -> None:
        self.requests[endpoint] += 1

    def waited(self, endpoint: str, seconds: float) -> None:
        """Simulated latency served (stalls excluded): `make bench` builds its ideal wall time from it."""
        self._latency[endpoint].append(seconds)

    def fault(self, kind: str) -> None:
        self.faults[kind] += 1

    def completion(self, model: str, conversation: str, prompt_tokens: int, completion_tokens: int, cost: float,
                   cache: CacheUse = CacheUse()) -> None:
        """A chat completion answered with usage (and so billed), faulty content or not."""
        self.completions[model] += 1
        self.by_conversation[conversation] += 1
        self._costs[model].append(cost)
        self._pair_costs[conversation][model].append(cost)
        self._tokens[model].update(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                                   cached_tokens=cache.read, cache_write_tokens=cache.written)

    def role_call(self, conversation: str, model: str, role: str) -> None:
        """A billed completion by what it was for (investigate, verdict, plan, review, worker-1, aggregate...)."""
        self._roles[conversation][model][role] += 1

    def total_cost(self) -> float:
        return math.fsum(c for costs in self._costs.values() for c in costs)

    def snapshot(self) -> dict[str, Any]:
        return {
            "requests": dict(sorted(self.requests.items())),
            "completions": dict(sorted(self.completions.items())),
            "cost_usd": {
                "total": self.total_cost(),
                "by_model": {m: math.fsum(c) for m, c in sorted(self._costs.items())},
                "by_edit": {
                    edit: {m: math.fsum(c) for m, c in sorted(models.items())}
                    for edit, models in sorted(self._pair_costs.items())
                },
            },
            "tokens": {m: dict(t) for m, t in sorted(self._tokens.items())},
            "faults": dict(sorted(self.faults.items())),
            "latency_s": {endpoint: math.fsum(waits) for endpoint, waits in sorted(self._latency.items())},
            "rate_limit_events": {m: dict(events) for m, events in sorted(self._rate_events.items())},
            "calls_by_role": {edit: {m: dict(roles) for m, roles in sorted(models.items())}
                              for edit, models in sorted(self._roles.items())},
        }
