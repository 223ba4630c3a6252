"""Snak values in their raw and readable forms, as edit summaries print them."""

from __future__ import annotations

from typing import Any

import pytest

from fanout.wikidata.values import snak_entity_ids, snak_label, snak_raw, summary_text

LABELS = {"Q5": "human", "Q11573": "metre", "Q174728": "centimetre"}
JULIAN = "http://www.wikidata.org/entity/Q1985786"
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"


def value_snak(kind: str, value: Any, datatype: str) -> dict[str, Any]:
    return {"snaktype": "value", "property": "P1", "datavalue": {"value": value, "type": kind}, "datatype": datatype}


def time(text: str, precision: int, calendar: str = GREGORIAN) -> dict[str, Any]:
    return value_snak("time", {"time": text, "timezone": 0, "before": 0, "after": 0, "precision": precision,
                               "calendarmodel": calendar}, "time")


CASES = [
    (value_snak("wikibase-entityid", {"entity-type": "item", "numeric-id": 5, "id": "Q5"}, "wikibase-item"),
     "Q5", "human", "[[Q5]]"),
    (value_snak("wikibase-entityid", {"entity-type": "item", "numeric-id": 77}, "wikibase-item"),
     "Q77", "Q77", "[[Q77]]"),
    (time("+1952-03-11T00:00:00Z", 11), "+1952-03-11T00:00:00Z", "11 March 1952", "11 March 1952"),
    (time("+1952-03-00T00:00:00Z", 10), "+1952-03-00T00:00:00Z", "March 1952", "March 1952"),
    (time("+1952-00-00T00:00:00Z", 9), "+1952-00-00T00:00:00Z", "1952", "1952"),
    (time("+1950-00-00T00:00:00Z", 8), "+1950-00-00T00:00:00Z", "1950s", "1950s"),
    (time("+1901-00-00T00:00:00Z", 7), "+1901-00-00T00:00:00Z", "20th century", "20th century"),
    (time("-0500-00-00T00:00:00Z", 9), "-0500-00-00T00:00:00Z", "500 BCE", "500 BCE"),
    (time("+1582-10-04T00:00:00Z", 11, JULIAN), "+1582-10-04T00:00:00Z", "4 October 1582 Julian",
     "4 October 1582 Julian"),
    (value_snak("quantity", {"amount": "+3837260", "unit": "1"}, "quantity"), "+3837260", "3,837,260", "3,837,260"),
    (value_snak("quantity", {"amount": "+180", "unit": "http://www.wikidata.org/entity/Q174728"}, "quantity"),
     "+180", "180 centimetre", "180 centimetre"),
    (value_snak("quantity", {"amount": "-1234.5", "unit": "http://www.wikidata.org/entity/Q11573"}, "quantity"),
     "-1234.5", "-1,234.5 metre", "-1,234.5 metre"),
    (value_snak("globecoordinate", {"latitude": 52.205, "longitude": 0.119, "precision": 0.001,
                                    "globe": "http://www.wikidata.org/entity/Q2"}, "globe-coordinate"),
     "52.205,0.119", "52°12′18″N, 0°7′8″E", "52°12′18″N, 0°7′8″E"),
    (value_snak("monolingualtext", {"text": "Douglas Adams", "language": "en"}, "monolingualtext"),
     "Douglas Adams", "Douglas Adams", "Douglas Adams"),
    (value_snak("string", "nm0000158", "external-id"), "nm0000158", "nm0000158", "nm0000158"),
    ({"snaktype": "somevalue", "property": "P570"}, "somevalue", "unknown value", "unknown value"),
    ({"snaktype": "novalue", "property": "P40"}, "novalue", "no value", "no value"),
]


@pytest.mark.parametrize(("snak", "raw", "label", "printed"), CASES, ids=[c[1] or "none" for c in CASES])
def test_a_value_has_a_raw_form_a_label_and_the_form_an_edit_summary_prints(
    snak: dict[str, Any], raw: str, label: str, printed: str
) -> None:
    assert (snak_raw(snak), snak_label(snak, LABELS), summary_text(snak, LABELS)) == (raw, label, printed)


def test_the_entities_a_value_names_are_its_item_or_its_unit() -> None:
    assert snak_entity_ids(CASES[0][0]) == ["Q5"]
    assert snak_entity_ids(CASES[10][0]) == ["Q174728"]
    assert snak_entity_ids(CASES[9][0]) == []
    assert snak_entity_ids({"snaktype": "novalue", "property": "P40"}) == []


def test_a_snak_whose_value_is_missing_names_no_entity() -> None:
    assert snak_entity_ids(value_snak("quantity", None, "quantity")) == []
    assert snak_entity_ids(value_snak("wikibase-entityid", None, "wikibase-item")) == []
