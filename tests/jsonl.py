"""Reading a JSON-lines file that a live process may be appending to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def whole_lines(path: Path) -> list[dict[str, Any]]:
    """The file's whole lines, none if it is not there yet: a test polling a running command may read while it
    writes the next line (a long line arrives in more than one write), and a line without its newline is not
    there yet."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    return [json.loads(line) for line in text[:text.rfind("\n") + 1].splitlines() if line.strip()]
