"""One Wikidata edit's fields, as snapshot validation hands them on: typed, and never changed afterwards.

The fields are what the snapshot says of the edit; fanout.workloads.patrol.edit
makes them SIFT-Patrol's item (`Edit`, with the question and the context built
from them). The question's and the context's builders
(fanout.workloads.patrol.precheck and .edit_context) read these fields, so they
sit between the two: this module needs neither, and the item needs both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Self

from fanout.judging.policy import is_term_diff

Scalar = str | int | float
"""A value as the snapshot writes it: a QID, a Wikidata time or quantity string, a number."""

class ParsedEdit(NamedTuple):
    """What the edit changed, from its summary and the entity diff (the snapshot's parsed_edit)."""

    operation: str
    """The summary's operation, like wbsetclaim-update."""
    property: str | None
    """The statement's property, like P569; None for label, description, alias and sitelink edits."""
    property_label: str | None
    """The property's English label, like `date of birth`."""
    value_raw: Scalar | None
    """The new value (the removed one, for a removal), as Wikidata writes it."""
    value_label: Scalar | None
    """That value as a reader knows it (`11 March 1852`, `Cambridge`), or None."""
    fields: Mapping[str, Any]
    """The whole parsed_edit mapping, for its optional keys (old_value_raw, qualifier_*, reference_*,
    language, ...). A key given as null is not a missing one: a missing old value is looked for in
    the diff instead, a null one is not."""


class EditedItem(NamedTuple):
    """The edited Wikidata item as of the edit's revision (after the edit)."""

    label_en: str | None
    """Its English label; None when it has none."""
    description_en: str | None
    """Its English description; None when it has none."""
    claims: Mapping[str, Sequence[Mapping[str, Any]]]
    """Property id -> its values, each a mapping with `value`, and optionally `label` and `qualifiers`."""


class Reference(NamedTuple):
    """A page the edit cites, fetched when the snapshot was made."""

    url: str
    """An http(s) URL."""
    text: str
    """The page's text."""


class EditFields(NamedTuple):
    """A validated edit's fields (fanout.workloads.patrol.edit.Edit is the item made of them)."""

    rcid: int
    """The recent-changes id: unique in a snapshot, and with the model the checkpoint's key."""
    revid: int
    """The revision the edit made."""
    parent_revid: int | None
    """The revision before it; None when the snapshot does not say."""
    title: str
    """The item's QID, like Q42: the record's `qid`."""
    user: str | None
    """Who made the edit: a user name, or an IP address; None when revision deletion hides it."""
    timestamp: str
    """When the edit was made, ISO 8601 UTC like 2026-02-19T08:02:14Z."""
    tags: tuple[str, ...]
    """The edit's change tags."""
    comment: str | None
    """The edit summary as Wikidata shows it; None when the snapshot has none."""
    parsed: ParsedEdit
    """What changed: operation, property, value."""
    diff_type: str
    """The kind of change (edit_diff.type), like value_changed, qualifier_added or label_changed."""
    diff: Mapping[str, Any]
    """The whole edit_diff mapping: type, old, new, and what the kind of change adds (language, ...)."""
    item: EditedItem
    """The Wikidata item after the edit."""
    references: tuple[Reference, ...]
    """The prefetched references; () when there are none."""
    source: Mapping[str, Any]
    """The validated edit exactly as the snapshot holds it: what the spool writes back to disk."""

    @classmethod
    def from_validated(cls, data: Mapping[str, Any]) -> Self:
        """The edit of a mapping that passed fanout.workloads.patrol.snapshot's checks (which this does not repeat)."""
        parsed, diff, item = data["parsed_edit"], data["edit_diff"], data["item"]
        return cls(
            rcid=data["rcid"],
            revid=data["revid"],
            parent_revid=data.get("parent_revid"),
            title=data["title"],
            user=data["user"],
            timestamp=data["timestamp"],
            tags=tuple(data["tags"]),
            comment=data.get("comment"),
            parsed=ParsedEdit(parsed["operation"], parsed["property"], parsed["property_label"],
                              parsed["value_raw"], parsed["value_label"], parsed),
            diff_type=diff["type"],
            diff=diff,
            item=EditedItem(item["label_en"], item.get("description_en"), item["claims"]),
            references=_references(data.get("prefetched_references")),
            source=data,
        )

    @property
    def is_term_edit(self) -> bool:
        """True for label, description, alias and sitelink edits (no statement involved)."""
        return is_term_diff(self.diff_type)


def _references(listed: Sequence[Mapping[str, str]] | None) -> tuple[Reference, ...]:
    """Most edits have none: those skip building a generator (the spool makes an Edit per verdict)."""
    return tuple(Reference(r["url"], r["text"]) for r in listed) if listed else ()
