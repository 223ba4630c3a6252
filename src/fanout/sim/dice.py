"""Seeded randomness keyed by what a draw is about, not by call order.

Requests arrive in whatever order concurrency gives them; drawing from one
shared generator would make answers depend on that order. Each draw instead
gets its own generator, derived from the seed and the names of the things it
concerns (model, rcid, turn, attempt), so the same seed gives the same answer
for the same question however the run is scheduled.
"""

from __future__ import annotations

import hashlib
import math
import random


def dice(*parts: object) -> random.Random:
    """A generator fixed by `parts` (seed first, then what the draw concerns)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def lognormal_seconds(rng: random.Random, median_s: float, p95_s: float) -> float:
    """A latency drawn from the lognormal fixed by its median and 95th percentile."""
    if median_s <= 0:
        return 0.0
    p95_s = max(p95_s, median_s)
    sigma = math.log(p95_s / median_s) / 1.6448536269514722
    return rng.lognormvariate(math.log(median_s), sigma)


def short_hash(text: str, length: int = 8) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]
