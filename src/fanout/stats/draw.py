"""Which items people see next: a stated share drawn at random, the rest the most uncertain.

Two needs pull apart. A patroller's time is best spent where the committee
is least sure; but a certificate (fanout.stats.certify) and an accuracy
estimate (fanout.stats.ppi) are valid only on human decisions drawn at
random, and the uncertain edits are the hard ones, so decisions on them
read low. The desk therefore mixes the two, and keeps which is which.

The random part is a seeded random order of the run's items: each item's
place is a hash of (seed, key), so the order is the same in every process,
needs no stored state, and an item arriving later (a live run) takes its
place without moving the others. `random_sample` is the longest run of items
at the front of that order that all have a human decision, however each
came to be decided: its members are picked by their place in the order
alone, never by their confidence or their label, so they are a uniform
random sample of the run. The one coupling: an item decided because it was
uncertain that sits just behind the sample's end extends it for free, so
such items are included at a rate (m + 1) / m times the others' at most,
for m random decisions; beside the intervals of m decisions that bias is
negligible.

`next_items` hands out the next items so that, over the whole desk session,
a share `random_share` of the decisions extends the random sample (the first
undecided item in the random order) and the rest go to the most uncertain
items not yet decided. The share is kept over the decisions already made,
not within one batch, so a desk asking one item at a time gets the stated
mix too. Deterministic: the same items, decisions and seed give the same picks.

Which estimator uses which decisions:
- the certificate and the PPI estimates use `random_sample` only;
- everything descriptive (each model's agreement with the people who
  decided, the human-decided edits counted as decided in the report and
  queue, calibration fitted on labels) uses every decision, random or not,
  and says it reads low because the hard edits are over-represented.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple

SEED = 20261201
"""The random order's seed when the desk is given none (the report's bootstrap has its own)."""
_SLACK = 1e-9
"""A share of 0.25 after 3 of 12 random decisions is met, not missed by a rounding hair."""


class Candidate(NamedTuple):
    """An item people could see next, and how unsure the verdicts on it are (higher: less sure)."""

    key: int
    uncertainty: float


class Pick(NamedTuple):
    """An item to show, and whether it was drawn at random (shown as such, so people decide it unhurried)."""

    key: int
    random: bool


def run_seed(*parts: str) -> int:
    """A run's own seed, from what names the run (its first start, its input's sha256): the same for the life of
    the run, so its random order never moves, and another for every other run."""
    digest = hashlib.blake2b("\x00".join(parts).encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big")


def rank(key: int, seed: int = SEED) -> int:
    """The item's place in the seeded random order: 64 bits of BLAKE2b over (seed, key)."""
    digest = hashlib.blake2b(f"{seed}:{key}".encode("ascii"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def random_order(keys: Iterable[int], seed: int = SEED) -> list[int]:
    """The items in the seeded random order (ties, which 64 bits make vanishingly rare, by key)."""
    return sorted(set(keys), key=lambda key: (rank(key, seed), key))


def random_sample(keys: Iterable[int], decided: Collection[int], seed: int = SEED) -> list[int]:
    """The decided items that form a uniform random sample: the front of the random order up to the first
    item without a decision."""
    sample = []
    for key in random_order(keys, seed):
        if key not in decided:
            break
        sample.append(key)
    return sample


def next_items(candidates: Sequence[Candidate], decided: Collection[int], *, count: int, random_share: float,
               seed: int = SEED) -> list[Pick]:
    """Up to `count` undecided items to show next, random draws and the most uncertain mixed so that the
    random ones stay at `random_share` of all decisions (from 0, only the most uncertain, to 1, only random)."""
    if not 0 <= random_share <= 1:
        raise ValueError(f"the random share is from 0 to 1 (got {random_share})")
    order = random_order((c.key for c in candidates), seed)
    by_doubt = [c.key for c in sorted(candidates, key=lambda c: (-c.uncertainty, c.key)) if c.key not in decided]
    taken: set[int] = set(decided) & set(order)
    picks: list[Pick] = []
    doubt = front = 0
    while len(picks) < count and len(taken) < len(order):
        while order[front] in taken:
            front += 1  # the random sample's end: its length is `front`, and order[front] is undecided
        while doubt < len(by_doubt) and by_doubt[doubt] in taken:
            doubt += 1
        if front < random_share * (len(taken) + 1) - _SLACK or doubt == len(by_doubt):
            pick = Pick(order[front], True)
        else:
            pick = Pick(by_doubt[doubt], False)
        picks.append(pick)
        taken.add(pick.key)
    return picks
