"""How a simulated model's provider caches prompts and bills the cached tokens (see fanout.sim.prompt_cache)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

CacheMode = Literal["explicit", "implicit", "none"]


@dataclass(frozen=True)
class CacheTerms:
    """How one provider caches prompts, and what a cached token costs next to an input token."""

    mode: CacheMode = "none"
    read_ratio: float = 1.0
    """A token read from the cache costs this much of the input price."""
    write_ratio: float = 1.0
    """A token written to the cache costs this much of the input price (explicit caching only)."""
    min_tokens: int = 0
    """Shorter prefixes are not cached."""
    unit_tokens: int = 1
    """Implicit caches read whole units of this many tokens."""


NO_CACHE = CacheTerms()
ANTHROPIC_HAIKU_4_5 = CacheTerms("explicit", read_ratio=0.1, write_ratio=1.25, min_tokens=4096)
DEEPSEEK = CacheTerms("implicit", read_ratio=0.1, unit_tokens=64)
