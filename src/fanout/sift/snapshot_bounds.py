"""How much a snapshot may hold, checked while its YAML is read, before anything is built from it.

YAML says a lot in few bytes. An alias (`*name`) stands for the whole node its
anchor (`&name`) names, so 16 KB of aliases nested in each other stand for
10^10 nodes (a "billion laughs"): nothing is copied while loading, but
json.dumps, or anything else that walks an edit, writes every one out. A list
100 000 levels deep overflows the stack of every recursive reader (libyaml's
own composer crashes the process). And one 50 MB label is sent to the model
in every request. So a snapshot must stay within limits that no real one
comes near:

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

from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

from yaml.nodes import MappingNode, SequenceNode

MAX_SNAPSHOT_BYTES = 1 << 30
MAX_NESTING = 50
MAX_TEXT_CHARS = 100_000
MAX_REPEATED = 10_000_000
STR_TAG = "tag:yaml.org,2002:str"


class OverLimit(Exception):
    """The snapshot goes past a limit; the message reads on from "snapshot PATH " and names the fix."""


def _where(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def too_long(chars: int, mark: Any) -> OverLimit:
    return OverLimit(
        f"has a value of {chars:,} characters at {_where(mark)}, more than the {MAX_TEXT_CHARS:,} one may have; "
        "shorten it (Wikidata's own values have at most 1,500)"
    )


def too_deep(mark: Any) -> OverLimit:
    return OverLimit(
        f"nests lists and mappings more than {MAX_NESTING} levels deep at {_where(mark)}; an edit needs about 10, "
        "so look for unclosed brackets or stray indentation there"
    )


def alias_loop(mark: Any) -> OverLimit:
    return OverLimit(
        f"has an alias at {_where(mark)} inside the very node it names, a loop no snapshot can hold; remove that alias"
    )


Parts = Callable[[Any], tuple[int, Iterable[Any] | None]]
"""A node's own weight (1, plus its length for a string) and its children (None: a scalar)."""


def value_parts(value: Any) -> tuple[int, Iterable[Any] | None]:
    """Parts of a value as built (the event reader's dicts, lists and scalars)."""
    if isinstance(value, dict):
        return 1, chain.from_iterable(value.items())
    if isinstance(value, list):
        return 1, value
    return (1 + len(value) if isinstance(value, str) else 1), None


def node_parts(node: Any) -> tuple[int, Iterable[Any] | None]:
    """Parts of a composed node (PyYAML's node graph): weighed as value_parts weighs what it becomes."""
    if isinstance(node, MappingNode):
        return 1, chain.from_iterable(node.value)
    if isinstance(node, SequenceNode):
        return 1, node.value
    return (1 + len(node.value) if node.tag == STR_TAG else 1), None


class AliasBudget:
    """What the aliases of one file repeat, so far; each use is charged the full size of the node it names.

    A node's size and height are measured the first time an alias names it and
    remembered (by identity, holding the node, so no id is ever reused), so a
    chain of aliases naming aliases costs one walk of what is written, not of
    what it stands for.
    """

    def __init__(self, parts: Parts) -> None:
        self._parts = parts
        self._known: dict[int, tuple[Any, int, int]] = {}
        self.repeated = 0

    def charge(self, target: Any, level: int, mark: Any) -> None:
        """An alias for `target`, met inside a collection at nesting `level` (0: at the top)."""
        size, height = self._measure(target)
        if level + height > MAX_NESTING:
            raise too_deep(mark)
        self.repeated += size
        if self.repeated > MAX_REPEATED:
            raise OverLimit(
                f"repeats more than {MAX_REPEATED:,} nodes and characters through YAML aliases (*name) "
                f"by {_where(mark)}; a snapshot needs few aliases, so write the repeated parts out in full instead"
            )

    def _measure(self, node: Any) -> tuple[int, int]:
        """Size (weights of every node it stands for) and height (collections nested in it, itself included)."""
        known = self._known.get(id(node))
        if known is not None:
            return known[1], known[2]
        weight, children = self._parts(node)
        if children is None:
            return weight, 0
        size, height = weight, 0
        for child in children:
            child_size, child_height = self._measure(child)
            size += child_size
            height = max(height, child_height)
        self._known[id(node)] = (node, size, height + 1)
        return size, height + 1
