"""A reader that closes our output early (`fanout report --json - | head`) ends the command quietly with exit 0.

The pipe's read end is closed before the command writes a byte, so its first write fails with EPIPE whatever
the size of the output: no timing, no luck with pipe buffers. Each command is a real process (its exit, the
flush of stdout at interpreter exit included), forked from a warm interpreter that imported fanout once (warm).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import warm
from test_report_support import run_from_table


def run_into_closed_pipe(*argv: str) -> tuple[int, str]:
    """The exit status of `python -m fanout ARGV` writing into a pipe nobody reads, and its stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    err_read, err_write = os.pipe()
    try:
        process = warm.start([*warm.FANOUT, *argv], stdout=write_end, stderr=err_write)
    finally:
        os.close(write_end)
        os.close(err_write)
    with os.fdopen(err_read, "rb") as err:
        stderr = err.read().decode()
    return process.wait_blocking(), stderr


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    table = {rcid: ("plausible", "incorrect", "unverifiable") for rcid in range(1, 6)}  # any size: nothing is read
    return run_from_table(tmp_path_factory.mktemp("pipe") / "run", table)


@pytest.mark.parametrize("argv", [("report", "{run}", "--json", "-"), ("report", "{run}"), ("status", "{run}"),
                                  ("queue", "{run}"), ("queue", "{run}", "--json", "-"), ("queue", "{run}", "--csv")])
def test_a_closed_pipe_ends_the_command_quietly_with_exit_0(run_dir: Path, argv: tuple[str, ...]) -> None:
    assert run_into_closed_pipe(*(a.format(run=run_dir) for a in argv)) == (0, "")
