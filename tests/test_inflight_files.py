"""In-flight files are read as untrusted, and nothing outside the run directory is written or deleted through a link.

Issue 27 §6 and §7: a symlinked inflight/ made a start delete files outside
the run directory; an in-flight file that was a link to /dev/zero grew a start
to 6.5 GB; a damaged header ("edit_rcid": "abc", "log_bytes": "x", null) ended
it in a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fanout.base.errors import ConfigError
from fanout.cli import main
from fanout.llm.cost import Pricing
from fanout.store.attempts import INFLIGHT_MAX_BYTES, AttemptFile, settle_abandoned, unsettled_attempts
from fanout.store.checkpoint import CheckpointWriter, log_path, read_index
from fanout.store.layout import INFLIGHT_DIR, VERDICT_DIR

from test_cost_accounting import answered, cut_off_attempt
from simulated import serving_simulator
from test_run_resilience import run_command, sim_config

def outside_folder(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A folder outside the run, holding files whose names look like in-flight files and views."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    files = {"1-0123456789abcdef.jsonl": b"not fanout's\n", "notes.yaml": b"mine: true\n"}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return folder, files


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


async def settle(run_dir: Path) -> tuple[list, list[str]]:
    warnings: list[str] = []
    settled = await settle_abandoned(run_dir, read_index(log_path(run_dir)), Pricing(), warn=warnings.append)
    return settled, warnings


async def test_a_symlinked_inflight_folder_is_refused_and_nothing_outside_the_run_is_deleted(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    folder, files = outside_folder(tmp_path)
    (run_dir / INFLIGHT_DIR).symlink_to(folder)

    with pytest.raises(ConfigError) as refused:
        await settle(run_dir)

    assert str(refused.value) == (
        f"{run_dir / INFLIGHT_DIR} is a symbolic link; fanout writes and deletes the run's files only inside the run "
        "directory: replace the link with a folder (move what it points to there)"
    )
    assert contents(folder) == files


def test_fanout_run_on_a_directory_with_a_symlinked_inflight_folder_exits_2_in_one_line(tmp_path, capfd):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    folder, files = outside_folder(tmp_path)
    (run_dir / INFLIGHT_DIR).symlink_to(folder)
    with serving_simulator(sim_config()) as sim:
        python, dash_m, fanout, *argv = run_command(sim, run_dir, "--limit", "1")
        code = main(argv)  # what `python -m fanout` runs and exits with, in this process
    output = "".join(capfd.readouterr())

    assert (code, output) == (2, (
        f"fanout run: error: {run_dir / INFLIGHT_DIR} is a symbolic link; fanout writes and deletes the run's files "
        "only inside the run directory: replace the link with a folder (move what it points to there)\n"
    ))
    assert contents(folder) == files
    assert not log_path(run_dir).exists()


def test_a_symlinked_verdicts_folder_is_refused_before_any_view_is_written_or_deleted(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    folder, files = outside_folder(tmp_path)
    (run_dir / VERDICT_DIR).symlink_to(folder)

    with pytest.raises(ConfigError, match="verdicts is a symbolic link"):
        CheckpointWriter(run_dir, read_index(log_path(run_dir)))

    assert contents(folder) == files


async def test_an_inflight_file_that_links_to_dev_zero_or_is_a_fifo_is_left_alone_with_one_warning_each(tmp_path):
    inflight = tmp_path / INFLIGHT_DIR
    inflight.mkdir()
    (inflight / "1-aaaaaaaaaaaaaaaa.jsonl").symlink_to("/dev/zero")
    os.mkfifo(inflight / "2-bbbbbbbbbbbbbbbb.jsonl")  # opening it to read would wait for a writer forever
    cut_off_attempt(tmp_path, 3, "m/a", [answered("gen-1", 0.25)])

    settled, warnings = await settle(tmp_path)

    assert [(a.edit_rcid, a.cost_usd) for a in settled] == [(3, 0.25)]
    assert warnings == [
        f"{inflight / name}: not a regular file (a link, a device or a FIFO); not settled, left in place"
        for name in ("1-aaaaaaaaaaaaaaaa.jsonl", "2-bbbbbbbbbbbbbbbb.jsonl")
    ]
    assert sorted(p.name for p in inflight.iterdir()) == ["1-aaaaaaaaaaaaaaaa.jsonl", "2-bbbbbbbbbbbbbbbb.jsonl"]
    assert unsettled_attempts(tmp_path) == {}


async def test_an_inflight_file_larger_than_any_attempt_writes_is_read_no_further_and_left_alone(tmp_path):
    inflight = tmp_path / INFLIGHT_DIR
    inflight.mkdir()
    header = json.dumps({"edit_rcid": 1, "model": "m/a", "log_bytes": 0, "started_ns": 1}).encode() + b"\n"
    (inflight / "1-aaaaaaaaaaaaaaaa.jsonl").write_bytes(header + b'{"e":"sent"}\n' * (INFLIGHT_MAX_BYTES // 13 + 1))

    settled, warnings = await settle(tmp_path)

    assert settled == []
    assert warnings == [f"{inflight / '1-aaaaaaaaaaaaaaaa.jsonl'}: larger than 1 MB, more than any attempt writes; "
                        "not settled, left in place"]


@pytest.mark.parametrize(("header", "problem"), [
    (b'{"edit_rcid": "abc", "model": "m/a", "log_bytes": 0, "started_ns": 1}', "edit_rcid is 'abc', not a whole number"),
    (b'{"edit_rcid": 1, "model": "m/a", "log_bytes": "x", "started_ns": 1}', "log_bytes is 'x', not a whole number"),
    (b"null", "null is not an attempt's header"),
    (b'{"edit_rcid": null, "model": "m/a", "log_bytes": 0}', "edit_rcid is None, not a whole number"),
    (b'{"edit_rcid": 1, "model": 7, "log_bytes": 0}', "model is 7, not text"),
    (b'{"edit_rcid": 1, "model": "m/a", "log_bytes": 0, "started_ns": true}', "started_ns is True, not a whole number"),
    (b"{torn", "'{torn' is not an attempt's header"),
    (b"[" * 5000, "'" + "[" * 36 + "... is not an attempt's header"),
])
async def test_a_damaged_inflight_header_is_skipped_with_one_warning_and_the_others_are_settled(tmp_path, header, problem):
    inflight = tmp_path / INFLIGHT_DIR
    inflight.mkdir()
    damaged = inflight / "1-aaaaaaaaaaaaaaaa.jsonl"
    damaged.write_bytes(header + b'\n{"e":"sent"}\n{"e":"answered","id":"gen-9","cost":0.5}\n')
    cut_off_attempt(tmp_path, 2, "m/a", [answered("gen-1", 0.25)])

    assert unsettled_attempts(tmp_path) == {"m/a": 1}  # status counts the good one and does not fail
    settled, warnings = await settle(tmp_path)

    assert [(a.edit_rcid, a.cost_usd) for a in settled] == [(2, 0.25)]
    assert warnings == [f"{damaged}: damaged header ({problem}); not settled, left in place"]
    assert damaged.exists()


async def test_an_inflight_file_cut_before_its_header_line_ended_is_removed_silently(tmp_path):
    """The process died while writing the header: it had sent nothing, so there is nothing to settle or warn of."""
    inflight = tmp_path / INFLIGHT_DIR
    inflight.mkdir()
    (inflight / "1-aaaaaaaaaaaaaaaa.jsonl").write_bytes(b'{"edit_rcid": 1, "mod')

    assert await settle(tmp_path) == ([], [])
    assert list(inflight.iterdir()) == []


def test_an_attempt_file_never_writes_through_a_link_left_in_its_place(tmp_path):
    run_dir = tmp_path / "run"
    (run_dir / INFLIGHT_DIR).mkdir(parents=True)
    outside = tmp_path / "precious.txt"
    outside.write_bytes(b"keep me\n")
    attempt = AttemptFile(run_dir, 1, "m/a", 0)
    path = next((run_dir / INFLIGHT_DIR).iterdir())
    attempt.close()
    path.unlink()
    path.symlink_to(outside)

    attempt = AttemptFile(run_dir, 1, "m/a", 0)
    attempt.sent()
    attempt.close()

    assert outside.read_bytes() == b"keep me\n"
    assert not path.is_symlink() and path.read_bytes().endswith(b'{"e":"sent"}\n')


def test_a_torn_log_tail_is_never_set_aside_through_a_dangling_link(tmp_path):
    from fanout.store.checkpoint import repair_torn_tail

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    stolen = tmp_path / "elsewhere.jsonl"
    (run_dir / "checkpoint.torn-1.jsonl").symlink_to(stolen)  # dangling: .exists() says False
    log_path(run_dir).write_bytes(b'{"a": 1}\n{"half')

    assert repair_torn_tail(log_path(run_dir)) == run_dir / "checkpoint.torn-2.jsonl"
    assert (run_dir / "checkpoint.torn-2.jsonl").read_bytes() == b'{"half'
    assert not os.path.lexists(stolen) and log_path(run_dir).read_bytes() == b'{"a": 1}\n'


def test_a_torn_review_is_never_set_aside_through_a_dangling_link(tmp_path):
    from fanout.store.reviews import Review, append_review

    stolen = tmp_path / "elsewhere.jsonl"
    (tmp_path / "reviews.torn-1.jsonl").symlink_to(stolen)
    (tmp_path / "reviews.jsonl").write_bytes(b'{"rcid": 2, "decis')
    append_review(tmp_path, Review(3, "reject", "", "ana", "2026-11-27T00:00:05Z"))

    assert not os.path.lexists(stolen)
    assert (tmp_path / "reviews.torn-2.jsonl").read_bytes() == b'{"rcid": 2, "decis'


async def test_a_settled_attempt_is_never_appended_through_a_linked_abandoned_file(tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_bytes(b"keep me\n")
    run_dir = tmp_path / "run"
    cut_off_attempt(run_dir, 1, "m/a", [answered("gen-1", 0.25)])
    (run_dir / "abandoned.jsonl").symlink_to(outside)

    with pytest.raises(ConfigError, match="abandoned.jsonl .* is a symbolic link"):  # refused when read, in one line
        await settle(run_dir)
    assert outside.read_bytes() == b"keep me\n"


def test_the_checkpoint_writer_never_appends_through_a_linked_log(tmp_path):
    from fanout.store.checkpoint import LogIndex

    outside = tmp_path / "precious.txt"
    outside.write_bytes(b"keep me\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    log_path(run_dir).symlink_to(outside)

    with pytest.raises(OSError):
        CheckpointWriter(run_dir, LogIndex())
    assert outside.read_bytes() == b"keep me\n"
