"""What each edit changed, as a reader wants to see it: the item, the property's label, old → new.

The report, the queue and the review desk show every item through the
workload's `describe` (fanout.base.item.Change); this is SIFT-Patrol's.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import quote

from fanout.base.item import Change, Editor
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.precheck import show_property, show_value

WIKIDATA_INDEX = "https://www.wikidata.org/w/index.php"
NEW_EDITOR_TAG = "new editor"
"""How Wikidata's AbuseFilter tags a new account's statement edits ("new editor changing statement", ...)."""
EDIT_COUNT_FIELDS = ("user_edit_count", "user_editcount")
"""Where a snapshot entry may carry the editor's edit count (EventStreams' name, the API's)."""


def describe(edit: Edit) -> Change:
    """The edit in words: what was edited, the value before and after, or the part of a statement it changed."""
    p, diff = edit.parsed, edit.diff
    editor, history_url, undo_url = _people_side(edit)
    old_raw = p.fields.get("old_value_raw", diff.get("old"))
    old = None if old_raw is None else show_value(old_raw, p.fields.get("old_value_label"))
    new = show_value(p.value_raw, p.value_label) if p.value_raw is not None else None
    if edit.is_term_edit:
        language = p.fields.get("language") or diff.get("language") or "en"
        what = f"{edit.diff_type.split('_', 1)[0]} ({language})"
        return Change(edit.item.label_en, what, _text(old_raw), _text(p.value_raw), None,
                      edit.question(), edit.parent_revid, edit.aspect, editor=editor, history_url=history_url,
                      undo_url=undo_url)
    what = show_property(p.property, p.property_label)
    if edit.diff_type == "value_removed":
        old, new = new, None
    detail = _detail(edit)
    if detail is not None:
        old = None
    return Change(edit.item.label_en, what, old, new, detail, edit.question(), edit.parent_revid, edit.aspect,
                  editor=editor, history_url=history_url, undo_url=undo_url)


def _people_side(edit: Edit) -> tuple[Editor, str, str | None]:
    """Who made the edit, the item's history and the edit's undo link on Wikidata (against the parent revision;
    none without one)."""
    title = quote(edit.title, safe=":")
    undo = (None if edit.parent_revid is None
            else f"{WIKIDATA_INDEX}?title={title}&action=edit&undoafter={int(edit.parent_revid)}&undo={int(edit.revid)}")
    return editor_of(edit), f"{WIKIDATA_INDEX}?title={title}&action=history", undo


def editor_of(edit: Edit) -> Editor:
    """The editor as the snapshot has it: anonymous for an IP address or a temporary account (`~2025-...`)."""
    name = edit.user
    anonymous = name is not None and (_is_address(name) or name.startswith("~"))
    count = next((c for f in EDIT_COUNT_FIELDS if isinstance(c := edit.source.get(f), int) and not isinstance(c, bool)),
                 None)
    return Editor(name, anonymous, any(t.startswith(NEW_EDITOR_TAG) for t in edit.tags), count)


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _detail(edit: Edit) -> str | None:
    """The part of a statement that a qualifier, reference or rank edit changed."""
    f, diff, kind = edit.parsed.fields, edit.diff, edit.diff_type
    if kind.startswith("qualifier_"):
        qualifier = show_property(f.get("qualifier_property"), f.get("qualifier_property_label"))
        value = show_value(f.get("qualifier_value_raw", diff.get("new")), f.get("qualifier_value_label"))
        return f"{kind.replace('_', ' ')}: {qualifier} = {value}"
    if kind.startswith("reference_"):
        ref = show_property(f.get("reference_property"), f.get("reference_property_label"))
        value = f.get("reference_value", diff.get("old") if kind == "reference_removed" else diff.get("new"))
        return f"{kind.replace('_', ' ')}: {ref} = {value}"
    if kind.startswith("rank_"):
        return f"{kind.replace('_', ' ')}: {diff.get('old')} → {diff.get('new')}"
    return None


def _text(value: object) -> str | None:
    return None if value is None else str(value)
