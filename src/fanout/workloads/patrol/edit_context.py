"""The phase-A user message: everything a model is told about one edit.

Every model gets the same text for the same edit, so the output is a pure
function of the edit (no clocks, no sets, stable ordering). Big items are
trimmed to the claims that bear on the edit: a well-known item has hundreds
of statements, and a 65K-token model should spend its context on evidence
from the web, not on the item's identifiers.

The message carries the lines `rcid: <rcid>` and `qid: <QID>` so that the
offline simulator can tell which edit it is being asked about.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fanout.workloads.patrol.edit_fields import EditFields
from fanout.workloads.patrol.precheck import (
    check_ontological_consistency,
    make_verification_question,
    show_property,
    show_value,
)

MAX_CLAIM_PROPERTIES = 15
"""Above this many properties, show only the edited property's group and P31."""
MAX_VALUES_PER_PROPERTY = 10
MAX_REFERENCES = 3
MAX_REFERENCE_CHARS = 2_000

PROPERTY_GROUPS: tuple[frozenset[str], ...] = (
    frozenset({"P31", "P279", "P21", "P735", "P734"}),  # what and who it is
    frozenset({"P569", "P570", "P19", "P20", "P509", "P1196", "P119"}),  # birth, death, burial
    frozenset({"P27", "P19", "P103", "P1412", "P172"}),  # citizenship and origin
    frozenset({"P106", "P39", "P108", "P69", "P101", "P463", "P166", "P800"}),  # career
    frozenset({"P22", "P25", "P26", "P40", "P3373"}),  # family
    frozenset({"P17", "P131", "P36", "P30", "P625", "P1082", "P2046", "P2044"}),  # place
    frozenset({"P50", "P57", "P123", "P136", "P495", "P577", "P1476"}),  # works
)
TERM_EDIT_GROUP = frozenset({"P31", "P279", "P21", "P569", "P570", "P106", "P17"})
"""For label, description and alias edits: what tells a reader which thing the item is."""

PROPERTY_LABELS: dict[str, str] = {
    "P17": "country", "P19": "place of birth", "P20": "place of death", "P21": "sex or gender",
    "P22": "father", "P25": "mother", "P26": "spouse", "P27": "country of citizenship",
    "P30": "continent", "P31": "instance of", "P36": "capital", "P39": "position held",
    "P40": "child", "P50": "author", "P57": "director", "P69": "educated at", "P106": "occupation",
    "P108": "employer", "P123": "publisher", "P131": "located in the administrative territorial entity",
    "P136": "genre", "P166": "award received", "P213": "ISNI", "P214": "VIAF ID", "P227": "GND ID",
    "P244": "Library of Congress authority ID", "P279": "subclass of", "P345": "IMDb ID",
    "P463": "member of", "P495": "country of origin", "P496": "ORCID iD", "P569": "date of birth",
    "P570": "date of death", "P571": "inception", "P577": "publication date", "P580": "start time",
    "P582": "end time", "P585": "point in time", "P625": "coordinate location", "P734": "family name",
    "P735": "given name", "P800": "notable work", "P854": "reference URL", "P856": "official website",
    "P1082": "population", "P2044": "elevation above sea level", "P2046": "area",
}


def build_edit_context(edit: EditFields) -> str:
    """The user message that opens a model's investigation of this edit."""
    sections = [
        f"Verification question: {make_verification_question(edit)}",
        "\n".join(["The edit", *_edit_lines(edit)]),
        "\n".join(_claim_section(edit)),
    ]
    references = _reference_section(edit)
    if references:
        sections.append("\n".join(references))
    sections.append("\n".join(_warning_section(edit)))
    sections.append(
        "Investigate the verification question with web_search and web_fetch, "
        "following the SIFT method, before you conclude."
    )
    return "\n\n".join(sections) + "\n"


# --- the edit itself ---------------------------------------------------------------------


def _edit_lines(edit: EditFields) -> list[str]:
    p = edit.parsed
    lines = [f"rcid: {edit.rcid}", _entity_line(edit.title)]
    parent = edit.parent_revid
    lines.append(f"revid: {edit.revid}" + (f" (parent {parent})" if parent is not None else ""))
    lines.append(f"item label: {edit.item.label_en or '(no English label)'}")
    lines.append(f"item description: {edit.item.description_en or '(none)'}")
    lines.append(f"change: {edit.diff_type} ({p.operation})")
    if p.property:
        lines.append(f"property: {show_property(p.property, p.property_label)}")
    lines.extend(_value_lines(edit))
    hidden = edit.source.get("hidden") or ()
    lines.append(f"user: {edit.user}" if edit.user is not None else f"user: {HIDDEN_TEXT}")
    lines.append(f"timestamp: {edit.timestamp}")
    lines.append(f"tags: {', '.join(edit.tags) if edit.tags else '(none)'}")
    comment = HIDDEN_TEXT if "commenthidden" in hidden else edit.comment or "(none)"
    lines.append(f"comment: {comment}")
    return lines


HIDDEN_TEXT = "(hidden by revision deletion)"
ENTITY_KINDS = {"P": "property", "L": "lexeme"}


def _entity_line(entity_id: str) -> str:
    """Items keep their `qid:` line; a property or lexeme edit says what it is, as its checks differ."""
    kind = ENTITY_KINDS.get(entity_id[:1])
    return f"entity: {entity_id} (a {kind}, not an item)" if kind else f"qid: {entity_id}"


def _value_lines(edit: EditFields) -> list[str]:
    p = edit.parsed.fields
    diff = edit.diff
    diff_type = edit.diff_type
    value = show_value(edit.parsed.value_raw, edit.parsed.value_label)
    old_raw = p.get("old_value_raw", diff.get("old"))
    old = None if old_raw is None else show_value(old_raw, p.get("old_value_label"))
    if edit.is_term_edit:
        kind = diff_type.split("_", 1)[0]
        language = p.get("language") or diff.get("language") or "en"
        new = edit.parsed.value_raw
        return [f"old {kind} ({language}): {_quoted(old)}", f"new {kind} ({language}): {_quoted(new)}"]
    if diff_type == "value_removed":
        return [f"removed value: {value}"]
    part = _claim_part_line(edit)
    if part is not None:
        return [f"statement value: {value}", part]
    if old is not None:
        return [f"old value: {old}", f"new value: {value}"]
    return [f"new value: {value}"]


def _claim_part_line(edit: EditFields) -> str | None:
    """The qualifier, rank or reference an edit of part of a statement changed; None for its value."""
    p, diff, diff_type = edit.parsed.fields, edit.diff, edit.diff_type
    if diff_type.startswith("qualifier_"):
        qualifier = show_property(p.get("qualifier_property"), p.get("qualifier_property_label"))
        qvalue = show_value(p.get("qualifier_value_raw", diff.get("new")), p.get("qualifier_value_label"))
        return f"qualifier: {qualifier} {qvalue}"
    if diff_type.startswith("rank_"):
        return f"rank: {diff.get('old')} -> {diff.get('new')}"
    if diff_type.startswith("reference_"):
        ref_property = show_property(p.get("reference_property"), p.get("reference_property_label"))
        ref = p.get("reference_value", diff.get("new") if diff_type != "reference_removed" else diff.get("old"))
        return f"reference: {ref_property} {ref}"
    return None


def _quoted(text: Any) -> str:
    return "(none)" if text in (None, "") else f'"{text}"'


# --- the item's claims --------------------------------------------------------------------


def _claim_section(edit: EditFields) -> list[str]:
    claims = edit.item.claims
    shown = _properties_to_show(edit, list(claims))
    header = "Item claims at this revision (after the edit)"
    if len(shown) < len(claims):
        header += f"; {len(shown)} of {len(claims)} properties: P31 and those related to the edit"
    lines = [header]
    for pid in shown:
        lines.append(f"{_property_name(edit, pid)}: {_claim_values(claims[pid])}")
    if not shown:
        lines.append("(no claims)")
    return lines


def _properties_to_show(edit: EditFields, pids: list[str]) -> list[str]:
    ordered = sorted(pids, key=lambda pid: (pid != "P31", int(pid[1:])))
    if len(ordered) <= MAX_CLAIM_PROPERTIES:
        return ordered
    keep = {"P31"} | _group_of(edit.parsed.property)
    return [pid for pid in ordered if pid in keep]


def _group_of(pid: str | None) -> frozenset[str]:
    if pid is None:
        return TERM_EDIT_GROUP
    groups = [group for group in PROPERTY_GROUPS if pid in group]
    return frozenset({pid}).union(*groups)


def _property_name(edit: EditFields, pid: str) -> str:
    p = edit.parsed
    label = p.property_label if pid == p.property else PROPERTY_LABELS.get(pid)
    return show_property(pid, label)


def _claim_values(values: Sequence[Mapping[str, Any]]) -> str:
    shown = [_claim_value(v) for v in values[:MAX_VALUES_PER_PROPERTY]]
    extra = len(values) - len(shown)
    if extra > 0:
        shown.append(f"... and {extra} more")
    return "; ".join(shown) if shown else "(no values)"


def _claim_value(claim: Mapping[str, Any]) -> str:
    text = show_value(claim.get("value"), claim.get("label"))
    qualifiers = claim.get("qualifiers") or {}
    if not isinstance(qualifiers, Mapping) or not qualifiers:
        return text
    parts = [
        f"{show_property(qpid, PROPERTY_LABELS.get(qpid))} {show_value(q.get('value'), q.get('label'))}"
        for qpid, qvalues in qualifiers.items()
        for q in (qvalues or [])
        if isinstance(q, Mapping)
    ]
    return f"{text} [{', '.join(parts)}]" if parts else text


# --- prefetched references and warnings ---------------------------------------------------


def shown_reference_urls(edit: EditFields) -> list[str]:
    """The references whose text the prompt hands over: the verdict may cite them as read."""
    return [ref.url for ref in edit.references[:MAX_REFERENCES]]


def _reference_section(edit: EditFields) -> list[str]:
    references = edit.references
    if not references:
        return []
    lines = ["References attached to the edit (text fetched in advance; check it yourself)"]
    for n, ref in enumerate(references[:MAX_REFERENCES], start=1):
        lines.append(f"[{n}] {ref.url}")
        lines.append(_truncate(ref.text.strip(), MAX_REFERENCE_CHARS))
    if len(references) > MAX_REFERENCES:
        lines.append(f"({len(references) - MAX_REFERENCES} more references not shown)")
    return lines


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... truncated: {len(text) - limit} more characters]"


def _warning_section(edit: EditFields) -> list[str]:
    warnings = check_ontological_consistency(edit)
    lines = ["Consistency warnings (from the item's own claims)"]
    lines.extend(f"- {w}" for w in warnings)
    return lines if warnings else [*lines, "(none found)"]
