"""fanout sim: an offline stand-in for OpenRouter, SearXNG and the web.

For tests and demos only. Its "models" are seeded rules that search a small
bundled corpus and lean their verdicts in set directions; they are not
language models, and their verdicts say nothing about the real ones.

    async with running_simulator(SimConfig(seed=7)) as sim:
        client = AsyncOpenAI(base_url=sim.api_base, api_key="any", max_retries=0)
        ...                                   # searxng_url=sim.searxng_url, --allow-private-urls
        sim.stats()                           # the simulator's own tally
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from fanout.sim.app import NOTICE, WIKI_API_PATH, build_app
from fanout.sim.corpus import PUBMED_PREFIX, Corpus, load_corpus
from fanout.sim.faults import FaultProfile, load_profile, profile_from_dict, with_overrides
from fanout.sim.models import SIM_MODELS, SimModel
from fanout.sim.search_apis import ARXIV_PATH, EUTILS_PATH, SERPAPI_PATH
from fanout.sim.state import SimState
from fanout.sim.revertrisk import PATH as REVERTRISK_PATH
from fanout.sim.wikidata_api import API_PATH as WIKIDATA_API_PATH
from fanout.sim.wikidata_world import WorldSettings

__all__ = [
    "NOTICE",
    "SIM_MODELS",
    "FaultProfile",
    "SimConfig",
    "SimHandle",
    "SimModel",
    "WorldSettings",
    "load_corpus",
    "load_profile",
    "profile_from_dict",
    "running_simulator",
    "with_overrides",
]


@dataclass(frozen=True)
class SimConfig:
    seed: int = 0
    profile: FaultProfile = field(default_factory=FaultProfile)
    """Faults and latency; the default is none of either (fast tests)."""
    latency_scale: float | None = None
    """Overrides the profile's latency_scale when set."""
    models: tuple[SimModel, ...] = SIM_MODELS
    corpus: Corpus | None = None
    """None = the bundled corpus, built from the sample snapshot and its truth."""
    require_auth: bool = False
    """Refuse chat and generation requests without a Bearer token (/key always requires one)."""
    clock: Callable[[], float] = time.monotonic
    """Drives the rpm window and the /generation delay; tests pass a fake one."""
    valid_keys: frozenset[str] | None = None
    """Accept only these Bearer tokens on chat, generation and /key (None: any); a refused key is
    answered 401 with the key echoed back, so redaction tests have something to catch."""
    world: WorldSettings = field(default_factory=WorldSettings)
    """The simulated Wikidata's edits: rate, vandal share, reverts and their delay."""
    wall_clock: Callable[[], float] = time.time
    """The simulated Wikidata's clock (epoch seconds)."""


@dataclass(frozen=True)
class SimHandle:
    """A running simulator: where to point the client, and its tally."""

    base_url: str
    state: SimState

    @property
    def api_base(self) -> str:
        return self.base_url + "/api/v1"

    @property
    def searxng_url(self) -> str:
        return self.base_url

    @property
    def wikipedia_api_url(self) -> str:
        """The Wikipedia-style search API over the same pages: `endpoints: {wikipedia: this}` in a search config."""
        return self.base_url + WIKI_API_PATH

    @property
    def pubmed_url(self) -> str:
        """The PubMed-style E-utilities over the same pages: `endpoints: {pubmed: this}` in a search config."""
        return self.base_url + EUTILS_PATH

    @property
    def pubmed_article_url(self) -> str:
        """Where its articles are served: `provider_settings: {pubmed: {article_url: this}}`."""
        return self.base_url + PUBMED_PREFIX + "{pmid}/"

    @property
    def serpapi_url(self) -> str:
        """The SerpAPI-style search over the same pages: `endpoints: {serpapi: this}` (any SERPAPI_API_KEY)."""
        return self.base_url + SERPAPI_PATH

    @property
    def arxiv_url(self) -> str:
        """The arXiv-style export API over the preprints only it holds: `endpoints: {arxiv: this}`."""
        return self.base_url + ARXIV_PATH

    def claims_search_config(self) -> dict[str, object]:
        """A search config for the sample texts' claims: SearXNG, PubMed and arXiv stand-ins asked together
        (some of the claims are settled only by the literature)."""
        return {"providers": ["searxng", "pubmed", "arxiv"], "mode": "aggregate",
                "endpoints": {"pubmed": self.pubmed_url, "arxiv": self.arxiv_url},
                "provider_settings": {"pubmed": {"article_url": self.pubmed_article_url, "request_gap": 0},
                                      "arxiv": {"request_gap": 0}}}

    @property
    def stream_url(self) -> str:
        """EventStreams' base: `{this}/recentchange,mediawiki.revision-tags-change` is the live stream."""
        return self.base_url + "/v2/stream"

    @property
    def wikidata_api_url(self) -> str:
        """The simulated Wikidata's api.php (`--api-url` for fetch-edits and outcomes); EntityData is beside it."""
        return self.base_url + WIKIDATA_API_PATH

    @property
    def revertrisk_url(self) -> str:
        return self.base_url + REVERTRISK_PATH

    def stats(self) -> dict[str, Any]:
        return self.state.stats.snapshot()

    def labels(self) -> list[dict[str, Any]]:
        return self.state.corpus.labels()


def make_state(config: SimConfig) -> SimState:
    return SimState(
        seed=config.seed,
        profile=config.profile,
        latency_scale=config.profile.latency_scale if config.latency_scale is None else config.latency_scale,
        models=config.models,
        corpus=config.corpus or load_corpus(),
        require_auth=config.require_auth,
        clock=config.clock,
        valid_keys=config.valid_keys,
        world_settings=config.world,
        wall_clock=config.wall_clock,
    )


@asynccontextmanager
async def running_simulator(
    config: SimConfig | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[SimHandle]:
    """Serve the simulator in this event loop on host:port (0 = any free port) until the block ends."""
    state = make_state(config or SimConfig())
    # handler_cancellation: a client that gives up (timeout, Ctrl-C) cancels its request here too,
    # so a stalled answer it never received is never counted in the tally.
    runner = web.AppRunner(build_app(state), handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound_host, bound_port = runner.addresses[0][:2]
        yield SimHandle(base_url=f"http://{_url_host(bound_host)}:{bound_port}", state=state)
    finally:
        await runner.cleanup()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
