"""Every `fanout ...` command the README and the manual show runs: the pages that make their own runs.

The commands of every page but those that read `runs/exp1` (docs_commands.FIRST_RUN_PAGES, run by
test_docs_commands.py), in document order, in a workspace of their own without that run; a module apart so that
pytest-xdist can run the two halves on two workers (tests/docs_commands.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from docs_commands import TIMEOUT_S, Workspace, commands_of, run_shown, workspace

pytestmark = pytest.mark.timeout(2 * TIMEOUT_S)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """The workspace of the pages that make their own runs: the sample, the truth, the example files, a simulator."""
    with workspace(tmp_path_factory.mktemp("docs"), first_run=False) as ready:
        yield ready


@pytest.mark.parametrize("command", commands_of(first_run=False), ids=lambda c: c.name)
def test_each_command_shown_runs_against_the_simulator_or_parses_when_it_needs_a_key(command, ws):
    assert run_shown(command, ws) is None
