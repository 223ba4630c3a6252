"""Wikibase snak values as the snapshot stores them: a raw form and a readable label.

The raw form is what a program compares (`Q5`, `+1952-03-11T00:00:00Z`,
`+3837260`); the label is what a person or a model reads (`human`,
`11 March 1952`, `3,837,260`). Labels follow Wikibase's own English rendering
closely, because edit summaries print values that way and the summary parser
uses them to find where the user's own comment starts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

ENTITY_URI_RE = re.compile(r"^https?://www\.wikidata\.org/entity/([QPL][1-9][0-9]*)$")
JULIAN_CALENDAR = "Q1985786"
MONTHS = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
SPECIAL_SNAKS = {"somevalue": "unknown value", "novalue": "no value"}


def snak_raw(snak: Mapping[str, Any] | None) -> str | None:
    """The comparable form of a snak's value; `somevalue`/`novalue` for the special snaks."""
    if not snak:
        return None
    snaktype = snak.get("snaktype", "value")
    if snaktype != "value":
        return _text(snaktype)
    datavalue = snak.get("datavalue") or {}
    return datavalue_raw(datavalue.get("type"), datavalue.get("value"))


def datavalue_raw(kind: str | None, value: Any) -> str | None:
    if value is None:
        return None
    if kind == "wikibase-entityid":
        return _entity_id(value)
    if kind == "time":
        return _text(value.get("time"))
    if kind == "quantity":
        return _text(value.get("amount"))
    if kind == "monolingualtext":
        return _text(value.get("text"))
    if kind == "globecoordinate":
        return f"{_plain_number(value.get('latitude'))},{_plain_number(value.get('longitude'))}"
    return value if isinstance(value, str) else str(value)


def snak_entity_ids(snak: Mapping[str, Any] | None) -> list[str]:
    """Entities a snak's value names (an item value, a quantity's unit), for label lookup."""
    if not snak or snak.get("snaktype", "value") != "value":
        return []
    datavalue = snak.get("datavalue") or {}
    value = datavalue.get("value")
    if datavalue.get("type") == "wikibase-entityid":
        entity = _entity_id(value)
        return [entity] if entity else []
    if datavalue.get("type") == "quantity" and isinstance(value, Mapping):
        unit = unit_id(value.get("unit"))
        return [unit] if unit else []
    return []


def snak_label(snak: Mapping[str, Any] | None, labels: Mapping[str, str]) -> str | None:
    """The value as a reader sees it; entity labels come from `labels` (id -> English label)."""
    if not snak:
        return None
    snaktype = snak.get("snaktype", "value")
    if snaktype != "value":
        return SPECIAL_SNAKS.get(snaktype, _text(snaktype))
    datavalue = snak.get("datavalue") or {}
    kind, value = datavalue.get("type"), datavalue.get("value")
    if value is None:
        return None
    if kind == "wikibase-entityid":
        entity = _entity_id(value)
        return labels.get(entity or "", entity)
    if kind == "time":
        return format_time(value)
    if kind == "quantity":
        return format_quantity(value, labels)
    if kind == "globecoordinate":
        return format_coordinate(value.get("latitude"), value.get("longitude"))
    return datavalue_raw(kind, value)


def summary_text(snak: Mapping[str, Any] | None, labels: Mapping[str, str]) -> str | None:
    """How an edit summary prints this value: items as `[[Q5]]`, everything else as its label."""
    if not snak:
        return None
    datavalue = snak.get("datavalue") or {}
    if snak.get("snaktype", "value") == "value" and datavalue.get("type") == "wikibase-entityid":
        entity = _entity_id(datavalue.get("value"))
        if entity and entity.startswith("P"):
            return f"[[Property:{entity}]]"
        if entity and entity.startswith("L"):
            return f"[[Lexeme:{entity}]]"
        return f"[[{entity}]]" if entity else None
    return snak_label(snak, labels)


def format_time(value: Mapping[str, Any]) -> str | None:
    """`+1952-03-11T00:00:00Z` at day precision -> `11 March 1952`; coarser precisions drop parts."""
    match = re.match(r"^([+-])(\d+)-(\d\d)-(\d\d)", str(value.get("time", "")))
    if not match:
        return value.get("time")
    sign, year_text, month, day = match.groups()
    year = int(year_text)
    precision = int(value.get("precision", 11))
    era = " BCE" if sign == "-" else ""
    if precision >= 11 and int(month) and int(day):
        text = f"{int(day)} {MONTHS[int(month) - 1]} {year}{era}"
    elif precision == 10 and int(month):
        text = f"{MONTHS[int(month) - 1]} {year}{era}"
    elif precision == 9 or precision >= 10:
        text = f"{year}{era}"
    elif precision == 8:
        text = f"{year - year % 10}s{era}"
    elif precision == 7:
        text = f"{_ordinal((year - 1) // 100 + 1)} century{era}"
    elif precision == 6:
        text = f"{_ordinal((year - 1) // 1000 + 1)} millennium{era}"
    else:
        text = f"{year}{era}"
    if str(value.get("calendarmodel", "")).endswith(JULIAN_CALENDAR) and precision >= 10:
        text += " Julian"
    return text


def format_quantity(value: Mapping[str, Any], labels: Mapping[str, str]) -> str | None:
    """`+3837260` -> `3,837,260`; a unit is appended by its label (`180 centimetre`)."""
    amount = _group_thousands(str(value.get("amount", "")))
    unit = unit_id(value.get("unit"))
    if unit is None:
        return amount
    return f"{amount} {labels.get(unit, unit)}"


def format_coordinate(latitude: Any, longitude: Any) -> str | None:
    """Degrees, minutes and seconds, the way Wikibase prints a globe coordinate."""
    try:
        lat, lon = float(latitude), float(longitude)
    except (TypeError, ValueError):
        return None
    return f"{_dms(lat, 'N', 'S')}, {_dms(lon, 'E', 'W')}"


def unit_id(unit: Any) -> str | None:
    """The unit's QID from its concept URI; None for the dimensionless unit `1`."""
    if not isinstance(unit, str) or unit == "1":
        return None
    match = ENTITY_URI_RE.match(unit)
    return match.group(1) if match else None


def _entity_id(value: Any) -> str | None:
    if isinstance(value, Mapping):
        if value.get("id"):
            return str(value["id"])
        kind, number = value.get("entity-type"), value.get("numeric-id")
        prefix = {"item": "Q", "property": "P", "lexeme": "L"}.get(str(kind))
        return f"{prefix}{number}" if prefix and number is not None else None
    return str(value) if value is not None else None


def _text(found: Any) -> str | None:
    """A JSON field that Wikibase always sends as a string, typed as one (None stays None)."""
    return found if found is None or isinstance(found, str) else str(found)


def _group_thousands(amount: str) -> str:
    text = amount.lstrip("+")
    try:
        number = Decimal(text)
    except InvalidOperation:
        return text
    sign = "-" if number < 0 else ""
    whole, _, fraction = text.lstrip("-").partition(".")
    grouped = f"{int(whole):,}" if whole.isdigit() else whole
    return f"{sign}{grouped}.{fraction}" if fraction else f"{sign}{grouped}"


def _plain_number(number: Any) -> str:
    try:
        return format(Decimal(str(number)).normalize(), "f")
    except (InvalidOperation, ValueError):
        return str(number)


def _dms(degrees: float, positive: str, negative: str) -> str:
    hemisphere = positive if degrees >= 0 else negative
    total_seconds = round(abs(degrees) * 3600)
    d, rest = divmod(total_seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{d}°{m}′{s}″{hemisphere}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
