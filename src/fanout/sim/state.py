"""What every handler of the simulator shares: its seed, faults, models, corpus, world and tallies.

It sits below the handlers' modules (fanout.sim.app, fanout.sim.search_apis),
which each read it from the app under `STATE`, as fanout.sim.world_state does
for the simulated Wikidata's handlers.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from fanout.sim.corpus import Corpus
from fanout.sim.dice import dice, lognormal_seconds
from fanout.sim.eventstream import StreamControl
from fanout.sim.faults import FaultProfile, Latency, RpmLimiter, TokenBucket
from fanout.sim.models import SimModel
from fanout.sim.prompt_cache import PromptCache
from fanout.sim.stats import SimStats
from fanout.sim.wikidata_world import World, WorldSettings
from fanout.sim.world_pages import WorldPages


@dataclass
class SimState:
    """Everything the handlers share; one per running simulator."""

    seed: int
    profile: FaultProfile
    latency_scale: float
    models: tuple[SimModel, ...]
    corpus: Corpus
    require_auth: bool
    clock: Callable[[], float]
    valid_keys: frozenset[str] | None = None
    """Only these Bearer tokens are accepted (a token becomes required); None accepts any."""
    world_settings: WorldSettings = field(default_factory=WorldSettings)
    wall_clock: Callable[[], float] = time.time
    """The simulated Wikidata's clock (epoch seconds): its edits are made at wall-clock times."""
    stats: SimStats = field(default_factory=SimStats)
    limiter: RpmLimiter = field(init=False)
    bucket: TokenBucket = field(init=False)
    prompt_cache: PromptCache = field(init=False)
    """The providers' prompt caches, per conversation (fanout.sim.prompt_cache)."""
    world: World = field(init=False)
    """The simulated Wikidata: its edits, reverts and stream (fanout.sim.wikidata_world)."""
    stream_control: StreamControl = field(init=False)
    attempts: Counter[tuple[Any, ...]] = field(default_factory=Counter)
    generations: dict[str, tuple[float, dict[str, Any]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.limiter = RpmLimiter(self.clock)
        self.bucket = TokenBucket(self.clock)
        self.prompt_cache = PromptCache(self.clock)
        self.world = World(self.seed, self.world_settings, self.wall_clock)
        self.stream_control = StreamControl()
        self.corpus = self.corpus.growing(WorldPages(self.world))  # pages for the live edits, as they are made

    def next_attempt(self, *key: Any) -> int:
        """How many times this exact request was answered before: retries get fresh fault draws (a rate
        limit's refusal is not counted, see app.chat_completions)."""
        attempt = self.attempts[key]
        self.attempts[key] += 1
        return attempt

    def latency(self, latency: Latency, *key: Any) -> float:
        return lognormal_seconds(dice(self.seed, "latency", *key), latency.median_s, latency.p95_s) * self.latency_scale


STATE = web.AppKey("sim_state", SimState)
