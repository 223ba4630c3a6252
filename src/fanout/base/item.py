"""The seam: the item under verification, and the workload that makes items.

fanout runs one evidence-based verification task across many LLMs; what the
task is about is a workload's business. The engine (which pair runs when),
judging (which models an item asks), the store (the run's files), the
research (a model investigating one item, then judging it) and the
statistics see an `Item` and nothing more: its key, its kind, the fields of
a record it fills, its aspect for the router, the question it asks and the
text a model reads about it. A `Workload` opens its input as a sequence of
items, gives the prompt its models follow, and describes an item for people
(the report, the queue, the review desk), so none of those needs code of a
workload of its own. Workloads register by name in fanout.workloads;
SIFT-Patrol (fanout.workloads.patrol: is this Wikidata edit correct?) is
the default.

The records' field names are the first workload's: an item's key is written
as a record's `edit_rcid`, and `record_keys` fills `edit_revid`, `qid`,
`property`, `diff_type` and `edit_timestamp` with what they mean for its
kind. So run directories made before the seam read as they always did, and
a run writes the same bytes it wrote before.

This module stands below everything that uses it: types and one helper, no
workload, no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol, TypedDict, TypeVar, runtime_checkable

DEFAULT_WORKLOAD = "patrol"
"""The workload of a run whose manifest names none: SIFT-Patrol, the first (fanout.workloads registers it)."""
DEFAULT_GATE = "*"
"""The router's gate key that every aspect falls back to (fanout.judging.policy)."""


class Aspect(NamedTuple):
    """What kind of item this is, for the router's gates: for an edit, the property's datatype and the change type.

    Here, below the items that have one, because an item states its own aspect
    and judging routes by it without knowing the item's workload.
    """

    datatype: str
    change: str

    def __str__(self) -> str:
        return f"{self.datatype}/{self.change}"

    def keys(self) -> tuple[str, ...]:
        """Gate keys from the most specific to the default."""
        return (str(self), self.datatype, self.change, DEFAULT_GATE)


class RecordKeys(TypedDict):
    """The fields of a VerdictRecord that say which item it is about (fanout.research.record.new_record).

    Named as SIFT-Patrol's edits first filled them; another workload fills
    them with its own meanings (a claim: its key, its text's number, the
    text's id, ...; fanout.workloads.claims.claim lists them), so the record,
    the log and every reader of them stay as they are.
    """

    edit_rcid: int
    """The item's key."""
    edit_revid: int
    qid: str
    property: str | None
    diff_type: str | None
    edit_timestamp: str | None


class Item(Protocol):
    """One thing under verification, as everything but its own workload sees it.

    Read-only (properties): items are values that the engine hands to many
    verdicts at once, and an edit is a NamedTuple.
    """

    @property
    def key(self) -> int:
        """Unique in the run: with the model it keys the checkpoint (written as the record's `edit_rcid`)."""
        ...

    @property
    def kind(self) -> str:
        """The workload's item kind, like `wikidata-edit`."""
        ...

    @property
    def aspect(self) -> Aspect:
        """The router's gate key (`time/value_changed` for an edit of a date)."""
        ...

    @property
    def label_key(self) -> int:
        """What a labels file names this item by (`rcid:` for an edit): the truth the report scores it against."""
        ...

    def record_keys(self) -> RecordKeys:
        """The fields of a record about this item that identify it."""
        ...

    def question(self) -> str:
        """The verification question it asks, in one sentence."""
        ...

    def context(self) -> str:
        """What a model reads about it: the user message that opens an investigation. The same text for every
        model, so a pure function of the item."""
        ...

    def prefetched_urls(self) -> list[str]:
        """The pages whose text `context()` hands over: a verdict may cite them as read (fanout.base.provenance)."""
        ...


ItemT = TypeVar("ItemT", bound=Item)


@runtime_checkable
class KeyedItems(Protocol):
    """A sequence of items that knows their keys without building them (fanout.workloads.patrol.edit_spool)."""

    @property
    def item_keys(self) -> Sequence[int]: ...


def item_keys(items: Sequence[Item]) -> Sequence[int]:
    """Every item's key, in order: from the sequence's own index when it keeps one, so a million-item spool is
    not read to schedule it."""
    if isinstance(items, KeyedItems):
        return items.item_keys
    return [item.key for item in items]


class ItemSource(Protocol[ItemT]):
    """A workload's input, opened: its items and what pins them. Close it (or leave its `with`) when done."""

    @property
    def sha256(self) -> str:
        """Of the input's bytes: the manifest pins it, so a resume cannot mix inputs."""
        ...

    @property
    def items(self) -> Sequence[ItemT]:
        """The validated items, in the input's order (the run's edit-major order)."""
        ...

    def keep_in(self, run_dir: Path) -> None:
        """Keep what makes a resume fast (a parsed copy of the input) in the run directory, or nothing."""
        ...

    def __enter__(self) -> ItemSource[ItemT]: ...

    def __exit__(self, *exc: object) -> None: ...


class LiveItems(Protocol):
    """A workload's input that grows while the run goes on (`fanout watch`: edits as Wikidata receives them).

    The engine takes items one at a time, when its admission limits allow
    (fanout.engine.intake), and runs each through the same schedule, verdicts
    and log as a snapshot's; it says when an item is finished (every pair it
    asked is logged with a result), so the source can remember it as judged
    and a restart hands it over again only if it is not. An item whose key is
    in the log already is judged already: a source hands over none such but
    the ones it must finish.
    """

    async def next_item(self) -> Item | None:
        """The next item to judge, waiting for one if need be; None once the source has ended. Cancelling it
        loses nothing: an item not handed over is handed over again after a restart."""
        ...

    def finished(self, key: int) -> None:
        """Every pair the run asked of the item is logged with a result (none with a status --retry runs again)."""
        ...

    @property
    def items_total(self) -> int:
        """Items handed over so far, over every session of the run: what the run's totals count."""
        ...


@dataclass(frozen=True)
class Prompt:
    """What a workload tells its models: the system prompt, the hash that pins it, and its words for its items.

    The research (fanout.research) asks every item the same way: the system
    prompt, the item's context, the tools, then the verdict request; only
    these words are the workload's.
    """

    text: str
    """The system prompt."""
    sha256: str
    """Of the prompt file's bytes: in the run's manifest, because runs compare only under one prompt."""
    item_noun: str
    """What the fixed requests call an item: `Give your final verdict on this edit`."""
    method: str
    """The system prompt's name in a record's transcript, which shows its hash instead of its text: `SIFT`."""


class Editor(NamedTuple):
    """Who made an item, as far as the input says: patrollers work per editor as much as per edit."""

    name: str | None
    """A user name or an IP address; None when the input hides it (revision deletion)."""
    anonymous: bool
    """An IP address or a temporary account, not a registered user."""
    new: bool
    """Tagged as a new editor's edit (Wikidata's "new editor changing statement" filters)."""
    edit_count: int | None = None
    """The editor's edit count, where the input has it; None when it does not."""


class Change(NamedTuple):
    """One item in words, as the report, the queue and the review desk show it; None where it has no such part.

    A workload's `describe` makes it; what the fields hold is said for an edit, the first workload's item.
    """

    item_label: str | None
    """The item's title for people: an edit's item's English label, like `Douglas Adams`."""
    what: str
    """What was edited: `date of birth (P569)`, or `label (en)` for a term edit."""
    old: str | None
    """The value before the edit (a removed value, for a removal)."""
    new: str | None
    """The value after it; for a qualifier, reference or rank edit, the statement's value."""
    detail: str | None
    """The qualifier, reference or rank that was changed, for those kinds of edit."""
    question: str
    """The verification question every model was asked."""
    parent_revid: int | None = None
    """The revision before the edit, when the snapshot says: the diff then compares exactly these two."""
    aspect: Aspect | None = None
    """The item's aspect for a router's gates."""
    link: str | None = None
    """The page a reader opens to check the item by hand, when the workload names one: the source a claim's
    text came from. None for an edit: the report links its Wikidata diff from the record's revision."""
    link_text: str | None = None
    """What `link` is, in a word or two for the link's text (`source`)."""
    editor: Editor | None = None
    """Who made it, when the input says."""
    history_url: str | None = None
    """Where people see the item's history (a Wikidata item's revision history)."""
    undo_url: str | None = None
    """Where people take the change back (a Wikidata edit's undo), when the input names what it replaced."""


class Workload(Protocol[ItemT]):
    """A kind of verification task: where its items come from, what its models are told, how people see an item.

    Registered by name in fanout.workloads; the command line and the report
    pick one from there and hand it to the engine, which never imports one.
    """

    @property
    def name(self) -> str:
        """The registry's key, and the manifest's `workload` (a manifest without one is the default's)."""
        ...

    @property
    def item_noun(self) -> str:
        """What people call one item (`edit`)."""
        ...

    def prompt(self) -> Prompt:
        """The prompt its models follow (read when a run starts: its sha256 goes into the manifest)."""
        ...

    def open(self, path: Path, *, cache_dir: Path | None = None) -> ItemSource[ItemT]:
        """The input at `path`, validated (a ConfigError names the first problem); `cache_dir` is the run
        directory, where a copy kept by an earlier start may save reading the input again."""
        ...

    def describe(self, item: ItemT) -> Change:
        """The item in words, for the report, the queue and the review desk."""
        ...
