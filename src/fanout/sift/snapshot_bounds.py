"""How much a snapshot may hold, checked while its YAML is read, before anything is built from it.

The limits are fanout.bounded.SNAPSHOT_BOUNDS, which every file fanout reads
is held to in its own kind (see fanout.bounded for why each exists):

    MAX_SNAPSHOT_BYTES  1 GiB        a 100 000-edit snapshot is about 30 MB,
                                     `make bench`'s biggest about 300 MB
    MAX_NESTING         50 levels    of lists and mappings; an edit's claims
                                     with qualifiers reach 10
    MAX_TEXT_CHARS      100 000      characters in one value or key; Wikidata
                                     keeps at most 1 500, fetch-edits at most
                                     15 000 of a reference page
    MAX_REPEATED        10 000 000   nodes and characters that aliases repeat,
                                     over the whole file

The readers (fanout.sift.snapshot) check each node as the parser hands it
over, so a bomb is refused a few hundred bytes in, and raise OverLimit,
which they turn into a ConfigError naming the file.
"""

from __future__ import annotations

from fanout.bounded import (
    SNAPSHOT_BOUNDS,
    STR_TAG,
    AliasBudget,
    OverLimit,
    Parts,
    alias_loop,
    node_parts,
    too_deep,
    too_long,
    value_parts,
)

MAX_SNAPSHOT_BYTES = SNAPSHOT_BOUNDS.max_bytes
MAX_NESTING = SNAPSHOT_BOUNDS.max_nesting
MAX_TEXT_CHARS = SNAPSHOT_BOUNDS.max_text
MAX_REPEATED = SNAPSHOT_BOUNDS.max_repeated

__all__ = [
    "MAX_NESTING",
    "MAX_REPEATED",
    "MAX_SNAPSHOT_BYTES",
    "MAX_TEXT_CHARS",
    "STR_TAG",
    "AliasBudget",
    "OverLimit",
    "Parts",
    "alias_loop",
    "node_parts",
    "too_deep",
    "too_long",
    "value_parts",
]
