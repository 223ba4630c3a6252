"""Outcomes as they happen: a watched edit becomes `reverted` when the stream shows it undone.

`fanout outcomes` asks the wiki's history weeks later (fanout.wikidata.outcomes);
a watch learns the same from events as they arrive. Evidence, strongest first:

1. MediaWiki adds `mw-reverted` to the revision an undo, rollback or manual
   revert undid; the revision-tags-change stream says so when it happens.
2. The reverting revision gets `mw-rollback` or `mw-manual-revert` (its parent
   is the watched revision: the page is put back to before it), or `mw-undo`
   with the watched revision named in its summary.
3. Without the tag stream, the recentchange event of the revert: Wikibase's
   `/* undo:0||REVID|USER */` or `/* restore:0||REVID|USER */` autocomment, or
   a rollback's "Reverted edits by [[Special:Contributions/USER|USER]] ..."
   while the watched edit is still in that user's run at the top of the page.
4. A later edit that puts back the value the watched edit replaced (or removes
   the value it added), where the summaries print the value: same property, or
   same term language.

Each decision is a record in the shape `fanout outcomes` writes ({rcid, revid,
qid, outcome, evidence}), with `evidence.source: stream`, so the report reads
it as it reads an outcomes file: `reverted` counts as `incorrect`, with the
same bias (a revert can be for reasons other than the fact).

`revert_seen` is the pure decision for one event; `RevertWatch` keeps the
edits waiting for one (bounded in number and age) and the little page history
a rollback needs.
"""

from __future__ import annotations

import builtins
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fanout.wikidata.outcomes import REVERT_TAGS, REVERTED_TAG
from fanout.wikidata.stream_events import RecentChangeEvent, StreamEvent, TagChangeEvent

SOURCE = "stream"
WATCHED_MAX = 200_000
"""Edits a RevertWatch keeps at most by default (the oldest are forgotten first)."""
ROLLBACK_RE = re.compile(r"^Reverted edits by \[\[Special:Contrib(?:utions|s)/(?P<user>[^|\]]+)")
UNDO_TEXT_RE = re.compile(r"^(?:Undid|Undo) revision (?:\[\[Special:Diff/)?(?P<revid>\d+)")
SETTING_WORDS = ("create", "add", "set", "update")
STATEMENT_FAMILIES = frozenset({"statement", "qualifier", "reference", "rank"})


@dataclass(frozen=True)
class WatchedEdit:
    """What a revert is recognised by: the revision, its page and user, and the values it changed."""

    rcid: int
    revid: int
    title: str
    """The page: `Q42`, `Property:P31`, `Lexeme:L7`."""
    user: str | None = None
    parent_revid: int | None = None
    timestamp: int = 0
    family: str | None = None
    property: str | None = None
    language: str | None = None
    old_values: frozenset[str] = frozenset()
    """The value the edit replaced or removed, in every form a summary may print it."""
    new_values: frozenset[str] = frozenset()
    """The value it set or added, likewise."""

    @builtins.property  # the field `property` above hides the builtin inside this class
    def entity_id(self) -> str:
        return self.title.rpartition(":")[2]

    @classmethod
    def from_event(cls, event: RecentChangeEvent) -> WatchedEdit:
        """From the stream event alone: the summary gives the property, language and new value."""
        summary = event.summary
        new = frozenset(v for v in (summary.value_raw, summary.value_text) if v)
        removing = "remove" in (summary.operation or "")
        return cls(
            rcid=event.rcid, revid=event.revision_new or 0, title=event.title, user=event.user,
            parent_revid=event.revision_old, timestamp=event.timestamp, family=summary.family,
            property=summary.property, language=summary.language,
            old_values=new if removing else frozenset(), new_values=frozenset() if removing else new,
        )

    @classmethod
    def from_snapshot_edit(cls, edit: Mapping[str, Any], *, page_title: str | None = None) -> WatchedEdit:
        """From an enriched snapshot edit (fetch-edits --enrich): old and new values, raw and as labels."""
        parsed = edit.get("parsed_edit") or {}
        diff = edit.get("edit_diff") or {}
        action = str(diff.get("type") or "")
        values = {k: str(v) for k, v in parsed.items() if v is not None and "value" in k}
        old = {values.get("old_value_raw"), values.get("old_value_label")}
        new = {values.get("value_raw"), values.get("value_label")}
        if action.endswith("removed"):
            old, new = new, set()
        return cls(
            rcid=int(edit["rcid"]), revid=int(edit["revid"]), title=page_title or str(edit.get("title") or ""),
            user=edit.get("user"), parent_revid=edit.get("parent_revid"),
            property=parsed.get("property"), language=parsed.get("language"),
            family=_family_of(action), old_values=frozenset(v for v in old if v),
            new_values=frozenset(v for v in new if v),
        )


@dataclass(frozen=True)
class RevertSeen:
    via: str
    reverting_revid: int | None = None
    reverting_tags: tuple[str, ...] = ()
    reverting_user: str | None = None
    reverting_timestamp: str | None = None
    reverting_comment: str | None = None


def revert_seen(watched: WatchedEdit, event: StreamEvent) -> RevertSeen | None:
    """Whether `event`, which came after the watched edit, shows it reverted. Pure."""
    if isinstance(event, TagChangeEvent):
        return _by_tags(watched, event)
    if event.title != watched.title or (event.revision_new or 0) <= watched.revid:
        return None
    return _by_summary(watched, event) or _by_value(watched, event)


def _by_tags(watched: WatchedEdit, event: TagChangeEvent) -> RevertSeen | None:
    added = set(event.added_tags)
    if event.rev_id == watched.revid and REVERTED_TAG in added:
        return RevertSeen("mw-reverted tag added to the edit")
    if event.title != watched.title or event.rev_id <= watched.revid:
        return None
    direct = sorted(added & {"mw-rollback", "mw-manual-revert"})
    if direct and event.rev_parent_id == watched.revid:
        return _from_tag_event(f"{direct[0]} on the revision after the edit", event)
    if "mw-undo" in added and _undone_revid(event.comment) == watched.revid:
        return _from_tag_event("mw-undo of the edit", event)
    return None


def _by_summary(watched: WatchedEdit, event: RecentChangeEvent) -> RevertSeen | None:
    summary = event.summary
    target = summary.reverted_revid
    if summary.operation == "undo" and target == watched.revid:
        return _from_change("undo of the edit", event)
    if summary.operation == "restore" and target is not None and target < watched.revid <= (event.revision_old or 0):
        return _from_change("restore of a revision from before the edit", event)
    if event.revision_old == watched.revid and rollback_target(event.comment) == watched.user:
        return _from_change("rollback of the edit", event)
    return None


def _by_value(watched: WatchedEdit, event: RecentChangeEvent) -> RevertSeen | None:
    summary = event.summary
    if not _same_aspect(watched, event):
        return None
    printed = {v for v in (summary.value_raw, summary.value_text) if v}
    operation = summary.operation or ""
    if watched.old_values and printed & watched.old_values and any(w in operation for w in SETTING_WORDS):
        return _from_change("a later edit puts back the value the edit replaced", event)
    if not watched.old_values and printed & watched.new_values and "remove" in operation:
        return _from_change("a later edit removes the value the edit added", event)
    return None


def _same_aspect(watched: WatchedEdit, event: RecentChangeEvent) -> bool:
    summary = event.summary
    if watched.property is not None and summary.family in STATEMENT_FAMILIES:
        return summary.property == watched.property
    return watched.language is not None and summary.language == watched.language and summary.family == watched.family


def rollback_target(comment: str) -> str | None:
    """The user a rollback summary says it reverted (MediaWiki's `revertpage` message, as Wikidata shows it)."""
    found = ROLLBACK_RE.match(comment or "")
    return found.group("user").replace("_", " ") if found else None


def _undone_revid(comment: str) -> int | None:
    """The revision an undo summary names: Wikibase's autocomment or MediaWiki's `undo-summary`."""
    found = re.match(r"^/\*\s*undo:\d*\|\|(\d+)\|", comment or "") or UNDO_TEXT_RE.match(comment or "")
    return int(found.group(1)) if found else None


def _from_change(via: str, event: RecentChangeEvent) -> RevertSeen:
    return RevertSeen(via, event.revision_new, event.tags, event.user, event.iso_timestamp, event.comment)


def _from_tag_event(via: str, event: TagChangeEvent) -> RevertSeen:
    user = event.performer.user_text if event.performer else None
    return RevertSeen(via, event.rev_id, event.tags, user, event.rev_timestamp or None, event.comment)


def _family_of(diff_type: str) -> str | None:
    """`label_changed` -> label: the term family a snapshot's diff type names (statements have a property)."""
    head = diff_type.partition("_")[0]
    return head if head in ("label", "description", "alias", "sitelink") else None


def outcome_record(watched: WatchedEdit, revert: RevertSeen) -> dict[str, Any]:
    """The entry an outcomes file holds for the edit (fanout.workloads.patrol.outcomes_file), learnt from the stream."""
    evidence = {
        "via": revert.via,
        "reverting_revid": revert.reverting_revid,
        "reverting_tags": list(revert.reverting_tags),
        "reverting_user": revert.reverting_user,
        "reverting_timestamp": revert.reverting_timestamp,
        "reverting_comment": revert.reverting_comment,
        "source": SOURCE,
    }
    return {"rcid": watched.rcid, "revid": watched.revid, "qid": watched.entity_id, "outcome": "reverted",
            "evidence": evidence}


class RevertWatch:
    """The watched edits still waiting for an outcome; each `observe` returns the outcomes it settles.

    Bounded: at most `max_edits` edits, none older than `max_age_s` behind the
    newest event seen (reverts come after a median of about 14 hours, so the
    default keeps two weeks). Edits are found by page, so an event costs the
    few edits of its page, not all of them.
    """

    def __init__(self, *, max_edits: int = WATCHED_MAX, max_age_s: float = 14 * 86400.0) -> None:
        self._max_edits = max_edits
        self._max_age_s = max_age_s
        self._edits: OrderedDict[int, WatchedEdit] = OrderedDict()
        self._pages: dict[str, list[int]] = {}
        self._on_top: dict[int, bool] = {}
        """Per watched revid: whether only its own user has edited the page since (a rollback would undo it)."""
        self._newest = 0

    def __len__(self) -> int:
        return len(self._edits)

    def watch(self, edit: WatchedEdit) -> None:
        if edit.revid in self._edits:
            return
        self._edits[edit.revid] = edit
        self._pages.setdefault(edit.title, []).append(edit.revid)
        self._on_top[edit.revid] = True
        while len(self._edits) > self._max_edits:
            self._forget(next(iter(self._edits)))

    def observe(self, event: StreamEvent) -> list[dict[str, Any]]:
        """The outcome records `event` settles (each watched edit at most once)."""
        if isinstance(event, RecentChangeEvent):
            self._newest = max(self._newest, event.timestamp)
        settled = []
        for edit in self._concerned(event):
            revert = revert_seen(edit, event) or self._rolled_back(edit, event)
            if revert is not None:
                settled.append(outcome_record(edit, revert))
                self._forget(edit.revid)
            elif isinstance(event, RecentChangeEvent) and (event.revision_new or 0) > edit.revid \
                    and event.user != edit.user:
                self._on_top[edit.revid] = False
        self._expire()
        return settled

    def _concerned(self, event: StreamEvent) -> list[WatchedEdit]:
        revids = list(self._pages.get(event.title, ()))
        if isinstance(event, TagChangeEvent) and event.rev_id in self._edits and event.rev_id not in revids:
            revids.append(event.rev_id)
        return [self._edits[r] for r in revids]

    def _rolled_back(self, edit: WatchedEdit, event: StreamEvent) -> RevertSeen | None:
        """A rollback of the user's run at the top of the page, while the watched edit is still in it."""
        if not isinstance(event, RecentChangeEvent) or not self._on_top.get(edit.revid):
            return None
        if (event.revision_new or 0) > edit.revid and rollback_target(event.comment) == edit.user:
            return _from_change("rollback of the user's edits, the watched one among them", event)
        return None

    def _expire(self) -> None:
        oldest_kept = self._newest - self._max_age_s
        while self._edits:
            first = next(iter(self._edits.values()))
            if not first.timestamp or first.timestamp >= oldest_kept:
                return
            self._forget(first.revid)

    def _forget(self, revid: int) -> None:
        edit = self._edits.pop(revid, None)
        self._on_top.pop(revid, None)
        if edit is not None:
            page = [r for r in self._pages.get(edit.title, []) if r != revid]
            if page:
                self._pages[edit.title] = page
            else:
                self._pages.pop(edit.title, None)
