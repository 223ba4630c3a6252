"""The table that orders test files for the workers (tests/file_durations.json) names only files that exist."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import FILE_DURATIONS

ROOT = Path(__file__).resolve().parent.parent


def test_every_file_the_durations_table_names_exists_and_its_seconds_are_finite():
    table = json.loads(FILE_DURATIONS.read_text(encoding="utf-8"))
    gone = [name for name in table if not (ROOT / name).is_file()]
    assert gone == [], f"renamed or deleted test files in {FILE_DURATIONS.name}: {gone}; run make test-durations"
    assert all(isinstance(s, (int, float)) and 0 <= s < 3600 for s in table.values())
