"""No function in src/fanout is longer than 60 lines (issue 31): a longer one is split into named steps.

Measured from its `def` line to its last line, docstring and comments included (decorators are not),
with the standard library's parser, so the check needs no tool of its own. Cyclomatic complexity
(radon's blocks rated C or worse, at most 1.5 per 1,000 lines) is tests/test_complexity.py's.
"""

from __future__ import annotations

import ast
from pathlib import Path

import fanout

PACKAGE = Path(fanout.__file__).parent
MAX_LINES = 60


def function_lengths(source: str) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function and method in `source`, nested ones too."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                found.append((name, child.lineno, (child.end_lineno or child.lineno) - child.lineno + 1))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_no_function_in_the_package_is_longer_than_60_lines() -> None:
    too_long = [
        f"{path.relative_to(PACKAGE)}:{line} {name} ({length} lines)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, line, length in function_lengths(path.read_text(encoding="utf-8"))
        if length > MAX_LINES
    ]
    assert too_long == []


def test_lengths_count_from_the_def_to_the_last_line_for_methods_and_nested_functions() -> None:
    source = (
        "@decorator\n"
        "def outer():\n"
        "    '''Doc.'''\n"
        "    def inner():\n"
        "        return 1\n"
        "    return inner\n"
        "\n"
        "class Box:\n"
        "    async def open(self):\n"
        "        pass\n"
    )
    assert function_lengths(source) == [("outer", 2, 5), ("outer.inner", 4, 2), ("Box.open", 9, 2)]
