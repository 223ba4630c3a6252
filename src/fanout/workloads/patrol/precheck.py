"""Before a model investigates: what exactly to ask, and what already looks wrong.

`make_verification_question` turns an edit into one precise question about
exactly what changed, because a model asked "is this item right?" wanders,
while one asked "was 11 March 1852 the date of birth?" searches for that.

`check_ontological_consistency` finds contradictions a model should not have
to discover with a web search: dates that contradict each other or the edit's
own timestamp, values of the wrong kind for their property, and people given
properties only places or works have. The rules live in tables below so that
adding one is a one-line change.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from fanout.workloads.patrol.edit_fields import EditFields

QID_RE = re.compile(r"Q[1-9][0-9]*")
"""An item id: a value of this shape names an item, not a literal."""

HUMAN = "Q5"
BIRTH, DEATH = "P569", "P570"
MAX_LIFESPAN_YEARS = 122
"""Jeanne Calment, the oldest verified human, lived 122 years."""

# --- property kinds: what a value of each property must look like ---------------------

TIME, ITEM, QUANTITY, URL, COORDINATE = "time", "item", "quantity", "url", "coordinate"

PROPERTY_KINDS: dict[str, str] = {
    **dict.fromkeys(("P569", "P570", "P571", "P576", "P577", "P580", "P582", "P585", "P813"), TIME),
    **dict.fromkeys(
        ("P17", "P19", "P20", "P21", "P22", "P25", "P26", "P27", "P30", "P31", "P36", "P39", "P40",
         "P50", "P57", "P69", "P106", "P108", "P123", "P131", "P136", "P166", "P248", "P279",
         "P463", "P495", "P735", "P734", "P800"),
        ITEM,
    ),
    **dict.fromkeys(("P1082", "P1120", "P2044", "P2046", "P2048"), QUANTITY),
    **dict.fromkeys(("P854", "P856", "P973"), URL),
    "P625": COORDINATE,
}

KIND_WORDS = {
    TIME: "a date",
    ITEM: "an item (a QID like Q5)",
    QUANTITY: "a number",
    URL: "an http(s) URL",
    COORDINATE: "coordinates (latitude,longitude)",
}


class IdFormat(NamedTuple):
    """An external identifier's shape, with an example a reader recognises."""

    pattern: re.Pattern[str]
    example: str


EXTERNAL_ID_FORMATS: dict[str, IdFormat] = {
    "P214": IdFormat(re.compile(r"[1-9][0-9]{1,21}"), "113230702"),  # VIAF
    "P213": IdFormat(re.compile(r"0000 000[0-4] [0-9]{4} [0-9]{3}[0-9X]"), "0000 0000 8045 6315"),  # ISNI
    "P227": IdFormat(re.compile(r"(1[0123]?\d{7}[0-9X]|[47]\d{6}-\d|[1-9]\d{0,7}-[0-9X]|3\d{7}[0-9X])"), "119033364"),  # GND
    "P244": IdFormat(re.compile(r"(n|nb|nr|no|ns|sh|gf|sj)([4-9][0-9]|00|20[0-2][0-9])[0-9]{6}"), "n80076765"),  # LoC
    "P345": IdFormat(re.compile(r"(nm|tt|ch|co|ev|ni)[0-9]{7,8}"), "nm0010930"),  # IMDb
    "P496": IdFormat(re.compile(r"0000-000[1-3]-[0-9]{4}-[0-9]{3}[0-9X]"), "0000-0002-1825-0097"),  # ORCID
}

# --- properties a human cannot have -------------------------------------------------------


class NotForPeople(NamedTuple):
    """A property that belongs to places or works, never to a person."""

    label: str
    belongs_to: str


NOT_FOR_PEOPLE: dict[str, NotForPeople] = {
    "P17": NotForPeople("country", "places and organisations"),
    "P36": NotForPeople("capital", "places"),
    "P50": NotForPeople("author", "written works"),
    "P57": NotForPeople("director", "films and shows"),
    "P123": NotForPeople("publisher", "published works"),
    "P131": NotForPeople("located in the administrative territorial entity", "places"),
    "P577": NotForPeople("publication date", "published works"),
    "P625": NotForPeople("coordinate location", "places"),
    "P1082": NotForPeople("population", "places"),
    "P2046": NotForPeople("area", "places"),
}

# --- reading an edit ---------------------------------------------------------------------

ADDED_OR_CHANGED = ("value_added", "value_changed")


ENTITY_KIND_PREFIXES = {"P": "the property ", "L": "the lexeme "}
"""How a question names a non-item entity, so a model does not check a property or a lexeme as if it were an item."""


def subject(edit: EditFields) -> str:
    """`Douglas Adams (Q42)`, or the bare QID for an item without an English label; `the property ...` for P ids."""
    label = edit.item.label_en
    named = f"{label} ({edit.title})" if label else edit.title
    return ENTITY_KIND_PREFIXES.get(edit.title[:1], "") + named


def show_value(raw: Any, label: Any) -> str:
    """A value as a reader wants it: `Cambridge (Q350)`, `11 March 1952`, `nm0000158`."""
    if label in (None, "") or str(label) == str(raw):
        return str(raw)
    if isinstance(raw, str) and QID_RE.fullmatch(raw):
        return f"{label} ({raw})"
    return str(label)


def show_property(pid: str | None, label: str | None) -> str:
    if pid is None:
        return label or "(no property)"
    return f"{label} ({pid})" if label else pid


# --- the verification question ----------------------------------------------------------


def make_verification_question(edit: EditFields) -> str:
    """One question about exactly what this edit changed."""
    diff_type = edit.diff_type
    kind = diff_type.split("_", 1)[0]
    if edit.is_term_edit:
        return _term_question(edit, kind, diff_type)
    if kind == "qualifier":
        return _qualifier_question(edit, diff_type)
    if kind == "reference":
        return _reference_question(edit, diff_type)
    if kind == "rank":
        return _rank_question(edit)
    return _value_question(edit, diff_type)


def _claim_phrase(edit: EditFields) -> str:
    p = edit.parsed
    value = show_value(p.value_raw, p.value_label)
    return f"{subject(edit)} has {show_property(p.property, p.property_label)} {value}"


def _old_value(edit: EditFields) -> str | None:
    fields = edit.parsed.fields
    raw = fields.get("old_value_raw", edit.diff.get("old"))
    if raw is None:
        return None
    return show_value(raw, fields.get("old_value_label"))


def _value_question(edit: EditFields, diff_type: str) -> str:
    if diff_type == "value_removed":
        return f"Was it right to remove the claim that {_claim_phrase(edit)}?"
    old = _old_value(edit)
    if diff_type == "value_changed" and old is not None:
        return f"Is it correct that {_claim_phrase(edit)}, as this edit changed it from {old}?"
    return f"Is it correct that {_claim_phrase(edit)}?"


def _qualifier_question(edit: EditFields, diff_type: str) -> str:
    p = edit.parsed.fields
    qualifier = show_property(p.get("qualifier_property"), p.get("qualifier_property_label"))
    value = show_value(p.get("qualifier_value_raw", edit.diff.get("new")), p.get("qualifier_value_label"))
    if diff_type == "qualifier_removed":
        value = show_value(edit.diff.get("old"), p.get("qualifier_value_label"))
        return f"Was it right to remove {qualifier} {value} from the statement that {_claim_phrase(edit)}?"
    return f"Is it correct that {qualifier} is {value} for the statement that {_claim_phrase(edit)}?"


def _reference_question(edit: EditFields, diff_type: str) -> str:
    p = edit.parsed.fields
    diff = edit.diff
    removed = diff_type == "reference_removed"
    ref = p.get("reference_value", diff.get("old") if removed else diff.get("new"))
    ref_text = str(ref)
    if not ref_text.startswith(("http://", "https://")):
        ref_text = f"the reference {show_property(p.get('reference_property'), p.get('reference_property_label'))} {ref}"
    if removed:
        return f"Was it right to remove {ref_text} as a reference for the statement that {_claim_phrase(edit)}?"
    return f"Does {ref_text} support the statement that {_claim_phrase(edit)}?"


def _rank_question(edit: EditFields) -> str:
    diff = edit.diff
    return (
        f"Was it right to change the rank of the statement that {_claim_phrase(edit)} "
        f"from {diff.get('old')} to {diff.get('new')}?"
    )


def _term_question(edit: EditFields, kind: str, diff_type: str) -> str:
    term = _term_name(kind, edit.parsed.fields.get("language") or edit.diff.get("language"))
    old, new = edit.diff.get("old"), edit.parsed.value_raw
    about = _about(edit)
    if diff_type.endswith("_removed") or new is None:
        return f'Was it right to remove the {term} "{old}" from {about}?'
    if old:
        return f'Is "{new}" a correct {term} for {about}, replacing "{old}"?'
    return f'Is "{new}" a correct {term} for {about}?'


def _term_name(kind: str, language: Any) -> str:
    """`English label`, `'de' description`, `dewiki sitelink`, or a whole form or sense by its kind alone."""
    if kind == "sitelink":
        return f"{language} sitelink"
    if kind in ("form", "sense") and language is None:
        return kind  # a whole form or sense added or removed: its text carries its languages
    return f"{'English' if (language or 'en') == 'en' else repr(language)} {kind}"


def _about(edit: EditFields) -> str:
    """The entity by its id (`Property:P31`, `Lexeme:L7`), with its English description when it has one."""
    description = edit.item.description_en
    named = ENTITY_KIND_PREFIXES.get(edit.title[:1], "") + edit.title
    return f'{named} (described as "{description}")' if description else named


# --- ontological consistency ------------------------------------------------------------


class WikiDate(NamedTuple):
    """A Wikidata time as (year, month, day); 0 means not given (year precision)."""

    year: int
    month: int
    day: int

    def precedes(self, other: WikiDate) -> bool:
        """Strictly earlier at the precision both share, so `1952` never precedes `1952-03-11`."""
        depth = 3 if self.day and other.day else 2 if self.month and other.month else 1
        return self[:depth] < other[:depth]

    def years_until(self, later: WikiDate) -> int:
        """Whole years from self to later; birthdays count only when both days are known."""
        years = later.year - self.year
        if self.month and later.month and (later.month, later.day) < (self.month, self.day):
            years -= 1
        return years


_TIME_RE = re.compile(r"([+-]?)([0-9]{1,16})-([0-9]{2})-([0-9]{2})(T[0-9:]{8}Z)?(/[0-9]{1,2})?")


def parse_time(value: Any) -> WikiDate | None:
    """`+1952-03-11T00:00:00Z` (or `1952-03-11`) -> WikiDate; anything else -> None."""
    if not isinstance(value, str):
        return None
    m = _TIME_RE.fullmatch(value.strip())
    if m is None:
        return None
    year = int(m.group(2)) * (-1 if m.group(1) == "-" else 1)
    return WikiDate(year, int(m.group(3)), int(m.group(4)))


def check_ontological_consistency(edit: EditFields) -> list[str]:
    """Warnings from the item's own claims and the edited value; [] when nothing is off."""
    return [*_kind_warnings(edit), *_people_warnings(edit), *_date_warnings(edit)]


def _edited_values(edit: EditFields) -> list[tuple[str, Any, str]]:
    """(property, new raw value, readable property) for each value this edit puts in."""
    p = edit.parsed.fields
    diff_type = edit.diff_type
    out: list[tuple[str, Any, str]] = []
    if diff_type in ADDED_OR_CHANGED and edit.parsed.property:
        pid = edit.parsed.property
        out.append((pid, edit.parsed.value_raw, show_property(pid, edit.parsed.property_label)))
    if diff_type in ("qualifier_added", "qualifier_changed") and p.get("qualifier_property"):
        qp = p["qualifier_property"]
        out.append((qp, p.get("qualifier_value_raw"), show_property(qp, p.get("qualifier_property_label"))))
    if diff_type in ("reference_added", "reference_changed") and p.get("reference_property"):
        rp = p["reference_property"]
        out.append((rp, p.get("reference_value"), show_property(rp, p.get("reference_property_label"))))
    return out


def _kind_warnings(edit: EditFields) -> list[str]:
    warnings = []
    for pid, raw, shown in _edited_values(edit):
        problem = _kind_problem(pid, raw)
        if problem is not None:
            warnings.append(f"{shown} expects {problem}, but the new value is {raw!r}")
    return warnings


def _kind_problem(pid: str, raw: Any) -> str | None:
    """What the value should have been, or None when it fits."""
    id_format = EXTERNAL_ID_FORMATS.get(pid)
    if id_format is not None:
        ok = isinstance(raw, (str, int)) and id_format.pattern.fullmatch(str(raw)) is not None
        return None if ok else f"an identifier like {id_format.example}"
    kind = PROPERTY_KINDS.get(pid)
    if kind is None or _fits(kind, raw):
        return None
    return KIND_WORDS[kind]


def _fits(kind: str, raw: Any) -> bool:
    text = str(raw).strip()
    if kind == TIME:
        return parse_time(raw) is not None
    if kind == ITEM:
        return QID_RE.fullmatch(text) is not None
    if kind == QUANTITY:
        return re.fullmatch(r"[+-]?[0-9]+(\.[0-9]+)?", text.replace(",", "")) is not None
    if kind == URL:
        return text.startswith(("http://", "https://"))
    return re.fullmatch(r"[+-]?[0-9.]+\s*,\s*[+-]?[0-9.]+", text) is not None  # COORDINATE


def _is_human(edit: EditFields) -> bool:
    return any(c.get("value") == HUMAN for c in edit.item.claims.get("P31") or [])


def _people_warnings(edit: EditFields) -> list[str]:
    claims = edit.item.claims
    makes_human = edit.parsed.property == "P31" and edit.parsed.value_raw == HUMAN
    warnings = []
    if _is_human(edit) and not makes_human:
        for pid, _raw, shown in _edited_values(edit):
            rule = NOT_FOR_PEOPLE.get(pid)
            if rule is not None:
                warnings.append(
                    f"{subject(edit)} is a human (P31 = Q5), but {shown} is a property of {rule.belongs_to}, not people"
                )
    if makes_human and edit.diff_type in ADDED_OR_CHANGED:
        for pid, rule in NOT_FOR_PEOPLE.items():
            if claims.get(pid):
                warnings.append(
                    f"this edit makes {subject(edit)} a human (Q5), but the item has "
                    f"{rule.label} ({pid}), a property of {rule.belongs_to}"
                )
    return warnings


class _DatedClaim(NamedTuple):
    date: WikiDate
    shown: str


def _life_date(edit: EditFields, pid: str) -> _DatedClaim | None:
    """The edited value when this edit sets pid, else the item's first value for pid."""
    p = edit.parsed
    raw: Any
    label: Any
    if p.property == pid and edit.diff_type in ADDED_OR_CHANGED:
        raw, label = p.value_raw, p.value_label
    else:
        first = next(iter(edit.item.claims.get(pid) or []), None)
        if first is None:
            return None
        raw, label = first.get("value"), first.get("label")
    date = parse_time(raw)
    return None if date is None else _DatedClaim(date, show_value(raw, label))


def _date_warnings(edit: EditFields) -> list[str]:
    birth, death = _life_date(edit, BIRTH), _life_date(edit, DEATH)
    edited_on = parse_time(edit.timestamp[:10])
    warnings = []
    for name, dated in (("birth", birth), ("death", death)):
        if dated and edited_on and edited_on.precedes(dated.date):
            warnings.append(f"date of {name} {dated.shown} is after the edit itself ({edit.timestamp[:10]})")
    if birth and death:
        warnings += _lifespan_warnings(birth, death)
    return warnings


def _lifespan_warnings(birth: _DatedClaim, death: _DatedClaim) -> list[str]:
    """A death before the birth, or a life longer than any verified human's."""
    if death.date.precedes(birth.date):
        return [f"date of death {death.shown} is before date of birth {birth.shown}"]
    years = birth.date.years_until(death.date)
    if years > MAX_LIFESPAN_YEARS:
        return [f"a lifespan of {years} years ({birth.shown} to {death.shown}) is longer than "
                f"the oldest verified human age ({MAX_LIFESPAN_YEARS} years)"]
    return []
