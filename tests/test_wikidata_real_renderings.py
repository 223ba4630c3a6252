"""Values rendered as Wikibase renders them, checked against the formatters' own test tables.

The tables are the PHP test files of Wikibase (MwTimeIsoFormatterTest) and
its DataValues libraries (QuantityFormatterTest, LatLongFormatterTest), kept
unchanged under tests/fixtures/wikidata-real/ and read here, so every English
case their authors pinned is a case fanout must print the same way.
"""

from __future__ import annotations

import ast
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from fanout.wikidata.values import format_coordinate, format_quantity, format_time, snak_label, summary_text

REAL = Path(__file__).parent / "fixtures" / "wikidata-real"
PRECISIONS = {
    "YEAR1G": 0, "YEAR100M": 1, "YEAR10M": 2, "YEAR1M": 3, "YEAR100K": 4, "YEAR10K": 5, "YEAR1K": 6,
    "YEAR100": 7, "YEAR10": 8, "YEAR": 9, "MONTH": 10, "DAY": 11, "HOUR": 12, "MINUTE": 13, "SECOND": 14,
}
GREGORIAN = "http://www.wikidata.org/entity/Q1985727"
JULIAN = "http://www.wikidata.org/entity/Q1985786"


def _php_string(text: str) -> str:
    return str(ast.literal_eval(text))


def _number(expression: str) -> float:
    """A PHP arithmetic literal such as `1 / 3600`, `1 - 2 / 60` or `'0.1'`, evaluated exactly."""
    return float(_exact(ast.parse(expression.strip().strip("'"), mode="eval").body))


def _exact(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return Fraction(str(node.value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_exact(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Div, ast.Mult)):
        left, right = _exact(node.left), _exact(node.right)
        operations = {ast.Add: left + right, ast.Sub: left - right, ast.Mult: left * right}
        return operations.get(type(node.op), left / right if right else Fraction(0))
    raise ValueError(f"not a PHP number: {ast.dump(node)}")


def time_cases() -> list[tuple[str, int, str]]:
    source = (REAL / "wikibase-MwTimeIsoFormatterTest.php").read_text()
    table = source[source.index("$tests = ["): source.index("foreach ( $tests")]
    pattern = re.compile(
        r"\[\s*('[^']*'),\s*TimeValue::PRECISION_(\w+),\s*(?:('[^']*'),\s*)?(?:('[a-z-]+'),\s*)?\]"
    )
    cases = []
    for match in pattern.finditer(table):
        timestamp, precision = _php_string(match.group(1)), PRECISIONS[match.group(2)]
        expected = _php_string(match.group(3)) if match.group(3) else timestamp
        language = _php_string(match.group(4)) if match.group(4) else "en"
        if language == "en":
            cases.append((timestamp, precision, expected))
    return cases


TIME_CASES = time_cases()


def test_the_time_table_is_read_whole() -> None:
    # 104 English cases in Wikibase's table at the recorded commit; a parse that lost some would pass silently.
    assert len(TIME_CASES) == 104


@pytest.mark.parametrize(("timestamp", "precision", "expected"), TIME_CASES)
def test_a_time_reads_as_wikibases_own_formatter_prints_it(timestamp: str, precision: int, expected: str) -> None:
    # MwTimeIsoFormatter alone never names the calendar; a calendar the year expects is never named either.
    calendar = JULIAN if _year(timestamp) <= 1582 else GREGORIAN
    assert format_time({"time": timestamp, "precision": precision, "calendarmodel": calendar}) == expected


def _year(timestamp: str) -> int:
    match = re.match(r"^[-+]?\d+", timestamp)
    assert match
    return int(match.group(0))


def quantity_cases() -> list[tuple[str, str, str | None, str | None, str]]:
    """The cases formatted with Wikibase's options (margin shown, default rounding): no third argument or $withMargin."""
    source = (REAL / "datavalues-number-QuantityFormatterTest.php").read_text()
    table = source[source.index("function validProvider"): source.index("function testFormatWithFormatString")]
    pattern = re.compile(
        r"(Unbounded)?QuantityValue::newFromNumber\(\s*('[^']*'),\s*('[^']*')(?:,\s*('[^']*'),\s*('[^']*'))?\s*\),"
        r"\s*('[^']*')\s*(?:,\s*(\$\w+)\s*)?\]"
    )
    cases = []
    for match in pattern.finditer(table):
        if match.group(7) not in (None, "$withMargin"):
            continue
        upper = _php_string(match.group(4)) if match.group(4) else None
        lower = _php_string(match.group(5)) if match.group(5) else None
        cases.append((_php_string(match.group(2)), _php_string(match.group(3)), upper, lower,
                      _php_string(match.group(6))))
    return cases


QUANTITY_CASES = quantity_cases()


def test_the_quantity_table_is_read_whole() -> None:
    assert len(QUANTITY_CASES) == 25


@pytest.mark.parametrize(("amount", "unit", "upper", "lower", "expected"), QUANTITY_CASES)
def test_a_quantity_reads_as_wikibases_quantity_formatter_prints_it(
    amount: str, unit: str, upper: str | None, lower: str | None, expected: str
) -> None:
    value: dict[str, Any] = {"amount": amount, "unit": unit}
    if upper is not None:
        value.update(upperBound=upper, lowerBound=lower)
    # The library's test localizer groups no digits; Wikidata's (MediaWiki's formatNum) puts commas in thousands.
    assert (format_quantity(value, {}) or "").replace(",", "") == expected


def coordinate_cases() -> list[tuple[float, float, float, str]]:
    """The degree-minute-second table, in Wikibase's options: no spaces inside a coordinate, N/S/E/W for signs."""
    source = (REAL / "datavalues-geo-LatLongFormatterTest.php").read_text()
    table = source[source.index("function decimalMinuteSecondNotationProvider"):]
    table = table[: table.index("@dataProvider")]
    pattern = re.compile(r"new LatLongValue\(\s*([^,]+),\s*([^)]+?)\s*\),\s*([^,\n]+),\s*('(?:[^'\\]|\\.)*')")
    cases = []
    for match in pattern.finditer(table):
        latitude, longitude = _php_string(match.group(4)).split(", ")
        expected = f"{_directional(latitude, 'N', 'S')}, {_directional(longitude, 'E', 'W')}"
        cases.append((_number(match.group(1)), _number(match.group(2)), _number(match.group(3)), expected))
    return cases


def _directional(part: str, positive: str, negative: str) -> str:
    part = part.replace(" ", "")
    return f"{part[1:]}{negative}" if part.startswith("-") else f"{part}{positive}"


COORDINATE_CASES = coordinate_cases()


def test_the_coordinate_table_is_read_whole() -> None:
    assert len(COORDINATE_CASES) == 28


@pytest.mark.parametrize(("latitude", "longitude", "precision", "expected"), COORDINATE_CASES)
def test_a_coordinate_reads_as_wikibases_lat_long_formatter_prints_it(
    latitude: float, longitude: float, precision: float, expected: str
) -> None:
    assert format_coordinate(latitude, longitude, precision) == expected
