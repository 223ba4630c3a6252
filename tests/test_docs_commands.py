"""Every `fanout ...` command the README and the manual show runs, so an example cannot go stale.

This module runs the commands of the pages that read `runs/exp1` (docs_commands.FIRST_RUN_PAGES) and tests the
machinery (tests/docs_commands.py: how commands, markers and example files are read, and checked);
test_docs_commands_own_runs.py runs every other page's commands. docs/development.md describes the convention
for writers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_commands import (
    COMMANDS_SHOWN,
    DOC_SIM,
    FIRST_RUN_PAGES,
    INLINE,
    NEEDS,
    PAGES_READ,
    TIMEOUT_S,
    Command,
    Workspace,
    against_sim,
    commands_of,
    flags_unknown,
    parse_only,
    read_page,
    run_shown,
    workspace,
)

pytestmark = pytest.mark.timeout(2 * TIMEOUT_S)

@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """The workspace of the pages that read runs/exp1: with that finished run, as getting-started.md makes it."""
    with workspace(tmp_path_factory.mktemp("docs"), first_run=True) as ready:
        yield ready


@pytest.mark.parametrize("command", commands_of(first_run=True), ids=lambda c: c.name)
def test_each_command_shown_runs_against_the_simulator_or_parses_when_it_needs_a_key(command, ws):
    assert run_shown(command, ws) is None


def test_the_two_modules_run_every_command_shown_once_and_only_this_one_has_runs_exp1():
    first, rest = commands_of(first_run=True), commands_of(first_run=False)
    assert sorted(first + rest, key=COMMANDS_SHOWN.index) == COMMANDS_SHOWN
    assert {c.page for c in first} == FIRST_RUN_PAGES
    assert [c.name for c in rest if not c.needs and any("runs/exp1" in word for word in c.argv)] == []


def test_the_readme_and_the_manual_show_commands_of_every_kind_and_example_files():
    shown = {c.argv[0] for c in COMMANDS_SHOWN if c.argv}
    assert {"run", "status", "report", "queue", "check", "tool", "sim", "fetch-edits", "outcomes"} <= shown
    assert sum(not c.needs for c in COMMANDS_SHOWN) >= 15
    files = {name for page in PAGES_READ.values() for name in page.files}
    assert {"policies.yaml", "gates.yaml", "limits.yaml", "search.yaml"} <= files


def test_commands_named_in_the_text_use_only_flags_their_command_has():
    named = [(name, m.group(1), m.group(2)) for name, page in PAGES_READ.items()
             for m in INLINE.finditer("\n".join(page.prose))]
    assert len(named) >= 20
    unknown = [(name, f"fanout {command}{rest}", flags_unknown(command, rest)) for name, command, rest in named]
    assert [u for u in unknown if u[2]] == []


def test_every_marker_names_a_known_need():
    assert all(c.needs <= NEEDS for c in COMMANDS_SHOWN), [c.name for c in COMMANDS_SHOWN if not c.needs <= NEEDS]


PAGE = '''Intro.

```sh
make demo
fanout run runs/snapshots/today.yaml --run-dir runs/a \\
    --concurrency 8   # a comment
fanout report runs/a --json - | jq .tables
```

<!-- needs: key, network -->
```sh
.venv/bin/fanout fetch-edits --limit 5 -o x.yaml
```

<!-- file: gates.yaml -->
```yaml
time: [deepseek/deepseek-v3.2]
```

<!-- exit: 2 -->
```sh
fanout status nowhere
```
'''


def test_commands_are_read_with_continuations_comments_pipes_markers_and_files():
    page = read_page(PAGE, "x.md")
    assert page.commands == [
        Command("x.md", 5, ("run", "runs/snapshots/today.yaml", "--run-dir", "runs/a", "--concurrency", "8")),
        Command("x.md", 7, ("report", "runs/a", "--json", "-")),
        Command("x.md", 12, ("fetch-edits", "--limit", "5", "-o", "x.yaml"), frozenset({"key", "network"})),
        Command("x.md", 22, ("status", "nowhere"), exit_code=2),
    ]
    assert page.files == {"gates.yaml": "time: [deepseek/deepseek-v3.2]\n"}


def test_an_inline_command_with_a_flag_its_command_lacks_is_found():
    assert flags_unknown("report", " runs/a --html --policy p.yaml") == []
    assert flags_unknown("report", " runs/a --htm") == ["--htm"]
    assert flags_unknown("frobnicate", "") == ["fanout frobnicate"]


def test_a_marked_command_with_a_flag_its_parser_does_not_know_fails():
    assert parse_only(("run", "today.yaml", "--run-dir", "runs/a")) is None
    assert parse_only(("run", "today.yaml", "--no-such-flag")) == "fanout run today.yaml --no-such-flag: refused by its parser"
    assert parse_only(("frobnicate",)) == "no such command: fanout frobnicate"


def test_an_unmarked_command_that_cannot_run_fails(ws):
    problem = run_shown(Command("x.md", 1, ("status", "runs/nowhere")), ws)
    assert problem is not None and problem.startswith("x.md:1: fanout status runs/nowhere exited 2, expected 0")
    assert run_shown(Command("x.md", 1, ("status", "runs/nowhere"), exit_code=2), ws) is None


def test_the_simulators_flags_are_added_only_where_missing():
    assert against_sim(("run", "s.yaml", "--base-url", f"{DOC_SIM}/api/v1"), "http://127.0.0.1:1") == [
        "run", "s.yaml", "--base-url", "http://127.0.0.1:1/api/v1", "--searxng-url", "http://127.0.0.1:1",
        "--allow-private-urls", "--fetch-delay", "0"]
    assert against_sim(("status", "runs/a"), "http://127.0.0.1:1") == ["status", "runs/a"]
