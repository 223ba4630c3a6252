"""Write tests/file_durations.json from a pytest JUnit report: the seconds each test file took.

    make test-durations      # after a `make test`, from .venv/junit.xml

tests/conftest.py hands the files to the workers heaviest first, from this
table, so that no long file is the last one started (xdist would otherwise
start files with many tests first, and the few long process and browser tests
last). A stale table costs only speed: a file it does not list starts last.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "tests" / "file_durations.json"


def file_seconds(report: Path) -> dict[str, float]:
    """Seconds per test file (setup, call and teardown of its tests), longest first."""
    seconds: Counter[str] = Counter()
    for case in ET.parse(report).iter("testcase"):
        module = case.get("classname", "").split(".")
        if len(module) >= 2:
            seconds["/".join(module[:2]) + ".py"] += float(case.get("time", 0))
    return {name: round(s, 1) for name, s in seconds.most_common()}


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_file():
        print("usage: scripts/test_durations.py JUNIT_XML  (make test writes .venv/junit.xml)", file=sys.stderr)
        return 2
    table = file_seconds(Path(argv[0]))
    TABLE.write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    print(f"{TABLE.name}: {len(table)} files, {sum(table.values()):.0f} s in all; longest "
          f"{next(iter(table), '-')} ({next(iter(table.values()), 0):.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
