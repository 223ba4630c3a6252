"""Snak values in their raw and readable forms, as edit summaries print them."""

from __future__ import annotations

from typing import Any

import pytest

from fanout.wikidata.values import snak_entity_ids, snak_label, snak_raw, summary_text

LABELS = {
    "Q5": "human", "Q11573": "metre", "Q174728": "centimetre", "Q11570": "kilogram", "Q111": "Mars",
    "L278335": "laufen (German, verb)", "L278335-F2": "läuft", "L278335-S1": "to run",
}
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
    (time("+1901-00-00T00:00:00Z", 7), "+1901-00-00T00:00:00Z", "20. century", "20. century"),
    (time("-0500-00-00T00:00:00Z", 9), "-0500-00-00T00:00:00Z", "500 BCE (Gregorian)", "500 BCE (Gregorian)"),
    # Wikibase names the calendar when the year would suggest the other one, or for dates in 1581-1929.
    (time("+1582-10-04T00:00:00Z", 11, JULIAN), "+1582-10-04T00:00:00Z", "4 October 1582 (Julian)",
     "4 October 1582 (Julian)"),
    (time("+1000-05-04T00:00:00Z", 11, JULIAN), "+1000-05-04T00:00:00Z", "4 May 1000", "4 May 1000"),
    (time("+1700-02-11T00:00:00Z", 11, JULIAN), "+1700-02-11T00:00:00Z", "11 February 1700 (Julian)",
     "11 February 1700 (Julian)"),
    (time("+1200-00-00T00:00:00Z", 9), "+1200-00-00T00:00:00Z", "1200 (Gregorian)", "1200 (Gregorian)"),
    (time("-13798000000-00-00T00:00:00Z", 3), "-13798000000-00-00T00:00:00Z", "13798 million years BCE",
     "13798 million years BCE"),
    (time("-4540000000-00-00T00:00:00Z", 0), "-4540000000-00-00T00:00:00Z", "5 billion years BCE",
     "5 billion years BCE"),
    (time("-30000-00-00T00:00:00Z", 5), "-30000-00-00T00:00:00Z", "30000 years BCE", "30000 years BCE"),
    (time("+2024-05-01T13:00:00Z", 12), "+2024-05-01T13:00:00Z", "+2024-05-01T13:00:00Z",
     "+2024-05-01T13:00:00Z"),
    (value_snak("quantity", {"amount": "+3837260", "unit": "1"}, "quantity"), "+3837260", "3,837,260", "3,837,260"),
    (value_snak("quantity", {"amount": "+180", "unit": "http://www.wikidata.org/entity/Q174728"}, "quantity"),
     "+180", "180 centimetre", "180 centimetre"),
    (value_snak("quantity", {"amount": "-1234.5", "unit": "http://www.wikidata.org/entity/Q11573"}, "quantity"),
     "-1234.5", "-1,234.5 metre", "-1,234.5 metre"),
    (value_snak("quantity", {"amount": "+115", "upperBound": "+116", "lowerBound": "+114",
                             "unit": "http://www.wikidata.org/entity/Q11573"}, "quantity"),
     "+115", "115±1 metre", "115±1 metre"),
    (value_snak("quantity", {"amount": "+307755", "unit": "1"}, "quantity"), "+307755", "307,755", "307,755"),
    # Uneven bounds: Wikibase prints the wider side as the margin (QuantityValue::getUncertaintyMargin).
    (value_snak("quantity", {"amount": "+3.8", "upperBound": "+4.2", "lowerBound": "+3.5",
                             "unit": "http://www.wikidata.org/entity/Q11570"}, "quantity"),
     "+3.8", "3.8±0.4 kilogram", "3.8±0.4 kilogram"),
    (value_snak("quantity", {"amount": "+12000.50", "upperBound": "+12000.50", "lowerBound": "+12000.50",
                             "unit": "1"}, "quantity"),
     "+12000.50", "12,000.5±0", "12,000.5±0"),
    (value_snak("globecoordinate", {"latitude": 52.205, "longitude": 0.119, "precision": 0.001,
                                    "globe": "http://www.wikidata.org/entity/Q2"}, "globe-coordinate"),
     "52.205,0.119", "52°12'18\"N, 0°7'8\"E", "52°12'18\"N, 0°7'8\"E"),
    (value_snak("globecoordinate", {"latitude": -4.5, "longitude": 137.4, "precision": 0.1,
                                    "globe": "http://www.wikidata.org/entity/Q111"}, "globe-coordinate"),
     "-4.5,137.4", "4°30'S, 137°24'E (on Mars)", "4°30'S, 137°24'E"),
    (value_snak("globecoordinate", {"latitude": 48.8584, "longitude": 2.2945, "precision": 1,
                                    "globe": "http://www.wikidata.org/entity/Q2"}, "globe-coordinate"),
     "48.8584,2.2945", "49°N, 2°E", "49°N, 2°E"),
    (value_snak("monolingualtext", {"text": "Douglas Adams", "language": "en"}, "monolingualtext"),
     "Douglas Adams", "Douglas Adams (en)", "Douglas Adams"),
    (value_snak("wikibase-entityid", {"entity-type": "lexeme", "numeric-id": 278335, "id": "L278335"},
                "wikibase-lexeme"), "L278335", "laufen (German, verb)", "[[Lexeme:L278335]]"),
    (value_snak("wikibase-entityid", {"entity-type": "form", "id": "L278335-F2"}, "wikibase-form"),
     "L278335-F2", "läuft", "[[Lexeme:L278335-F2]]"),
    (value_snak("wikibase-entityid", {"entity-type": "sense", "id": "L278335-S1"}, "wikibase-sense"),
     "L278335-S1", "to run", "[[Lexeme:L278335-S1]]"),
    (value_snak("wikibase-entityid", {"entity-type": "entity-schema", "id": "E10"}, "entity-schema"),
     "E10", "E10", "[[EntitySchema:E10]]"),
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
    by_raw = {c[1]: c[0] for c in CASES}
    assert snak_entity_ids(by_raw["Q5"]) == ["Q5"]
    assert snak_entity_ids(by_raw["+180"]) == ["Q174728"]
    assert snak_entity_ids(by_raw["+3837260"]) == []
    assert snak_entity_ids(by_raw["L278335-F2"]) == ["L278335-F2"]
    assert snak_entity_ids(by_raw["-4.5,137.4"]) == ["Q111"]  # a globe other than Earth is named
    assert snak_entity_ids(by_raw["48.8584,2.2945"]) == []
    assert snak_entity_ids({"snaktype": "novalue", "property": "P40"}) == []


def test_a_snak_whose_value_is_missing_names_no_entity() -> None:
    assert snak_entity_ids(value_snak("quantity", None, "quantity")) == []
    assert snak_entity_ids(value_snak("wikibase-entityid", None, "wikibase-item")) == []
