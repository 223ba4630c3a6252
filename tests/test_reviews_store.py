"""reviews.jsonl: a reviewer's decisions appended like the checkpoint (fanout.store.reviews)."""

from __future__ import annotations

import dataclasses

import json
import os
from pathlib import Path

import pytest

from fanout.base.errors import ConfigError
from fanout.store import reviews
from fanout.store.layout import LOG_NAME, REVIEWS_NAME, RUN_FILES, run_file
from fanout.store.outputs import refuse_run_file
from fanout.store.reviews import NOTE_CAP, Review, append_review, read_reviews


def run_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / LOG_NAME).write_text("", encoding="utf-8")
    return folder


def test_a_changed_decision_is_one_more_line_and_the_latest_stands(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    append_review(folder, Review(1, "accept", "", "ana", "2026-11-27T00:00:01Z"))
    append_review(folder, Review(2, "unsure", "no source", "ana", "2026-11-27T00:00:02Z"))
    append_review(folder, Review(1, "reject", "wrong year", "bo", "2026-11-27T00:00:03Z"))
    lines = (folder / "reviews.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"rcid": 1, "decision": "accept", "note": "", "reviewer": "ana", "time": "2026-11-27T00:00:01Z"},
        {"rcid": 2, "decision": "unsure", "note": "no source", "reviewer": "ana", "time": "2026-11-27T00:00:02Z"},
        {"rcid": 1, "decision": "reject", "note": "wrong year", "reviewer": "bo", "time": "2026-11-27T00:00:03Z"},
    ]
    log = read_reviews(folder)
    assert [(r.rcid, r.decision) for r in log.history] == [(1, "accept"), (2, "unsure"), (1, "reject")]
    assert {rcid: r.decision for rcid, r in log.latest.items()} == {1: "reject", 2: "unsure"}
    assert log.truth() == {1: "incorrect"}  # unsure is no truth
    assert log.reviewers == ["ana", "bo"]


def test_a_torn_last_line_is_set_aside_and_cut_before_the_next_append(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    append_review(folder, Review(1, "accept", "", "ana", "2026-11-27T00:00:01Z"))
    with (folder / "reviews.jsonl").open("ab") as fh:
        fh.write(b'{"rcid": 2, "decis')  # a crash mid-write
    assert read_reviews(folder).skipped == 1 and len(read_reviews(folder).history) == 1
    append_review(folder, Review(3, "reject", "", "ana", "2026-11-27T00:00:05Z"))
    assert (folder / "reviews.torn-1.jsonl").read_bytes() == b'{"rcid": 2, "decis'
    log = read_reviews(folder)
    assert [r.rcid for r in log.history] == [1, 3] and log.skipped == 0


def test_a_bad_decision_or_an_oversized_note_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    with pytest.raises(ValueError, match="decision must be one of accept, reject, unsure, got 'maybe'"):
        append_review(folder, Review(1, "maybe"))
    with pytest.raises(ValueError, match=f"note is {NOTE_CAP + 1} characters; at most {NOTE_CAP}"):
        append_review(folder, Review(1, "accept", "x" * (NOTE_CAP + 1)))
    assert not (folder / "reviews.jsonl").exists()


def test_a_symlinked_reviews_file_is_not_followed_out_of_the_run(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("keep\n", encoding="utf-8")
    (folder / "reviews.jsonl").symlink_to(outside)
    with pytest.raises(OSError):
        append_review(folder, Review(1, "accept"))
    assert outside.read_text(encoding="utf-8") == "keep\n"


def test_lines_that_are_not_decisions_are_skipped_and_counted(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    (folder / "reviews.jsonl").write_text(
        '{"rcid": 5, "decision": "accept", "note": "", "reviewer": "", "time": "t"}\n'
        '[1, 2]\n{"rcid": "5", "decision": "accept", "note": "", "reviewer": "", "time": "t"}\n'
        '{"rcid": 6, "decision": "yes", "note": "", "reviewer": "", "time": "t"}\n\n', encoding="utf-8")
    log = read_reviews(folder)
    assert [r.rcid for r in log.history] == [5] and log.skipped == 3


def test_a_reviews_file_over_the_read_cap_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = run_dir(tmp_path)
    append_review(folder, Review(1, "accept"))
    declared = run_file(REVIEWS_NAME)
    monkeypatch.setitem(RUN_FILES, REVIEWS_NAME, dataclasses.replace(declared, bounds=declared.bounds._replace(max_bytes=10)))
    with pytest.raises(ConfigError, match="reviews.jsonl has 94 bytes, more than the 10 it may have; is it a "
                       "reviews file of `fanout review`\\?$"):
        read_reviews(folder)


@pytest.mark.timeout(20)  # without the fix the open waits for a writer that never comes
def test_a_fifo_at_the_reviews_file_is_one_clear_error_not_a_hang(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    os.mkfifo(folder / "reviews.jsonl")
    with pytest.raises(ConfigError) as caught:
        read_reviews(folder)
    assert str(caught.value) == (f"the run's reviews.jsonl {folder / 'reviews.jsonl'} is a named pipe (FIFO), not a "
                                 "regular file, so it may never end; fanout writes only regular files there; move it "
                                 "out of the run directory")


def test_a_line_nested_deeper_than_the_parser_can_go_is_skipped_and_counted(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    append_review(folder, Review(1, "accept"))
    with (folder / "reviews.jsonl").open("ab") as fh:
        fh.write(b"[" * 200_000 + b"\n")
    append_review(folder, Review(2, "reject"))
    log = read_reviews(folder)
    assert [(r.rcid, r.decision) for r in log.history] == [(1, "accept"), (2, "reject")] and log.skipped == 1


def test_no_output_option_can_write_over_the_reviews_or_their_torn_tails(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    for name in ("reviews.jsonl", "reviews.torn-1.jsonl"):
        with pytest.raises(ConfigError, match=f"--export {folder / name} would write over the run's {name}"):
            refuse_run_file(folder / name, "--export")
    refuse_run_file(folder / "reviews.yaml", "--export")  # an export of the decisions beside them is fine


def test_an_undo_is_one_more_line_and_the_decision_before_it_stands_again(tmp_path: Path) -> None:
    folder = run_dir(tmp_path)
    append_review(folder, Review(1, "accept", "", "ana", "2026-11-27T00:00:01Z", drawn="random"))
    append_review(folder, Review(1, "reject", "", "ana", "2026-11-27T00:00:02Z", drawn="chosen"))
    append_review(folder, Review(2, "unsure", "", "ana", "2026-11-27T00:00:03Z"))
    append_review(folder, Review(1, "undo", "", "ana", "2026-11-27T00:00:04Z", undoes="2026-11-27T00:00:02Z"))
    append_review(folder, Review(2, "undo", "", "ana", "2026-11-27T00:00:05Z", undoes="2026-11-27T00:00:03Z"))
    lines = [json.loads(line) for line in (folder / "reviews.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0] == {"rcid": 1, "decision": "accept", "note": "", "reviewer": "ana", "time": "2026-11-27T00:00:01Z",
                        "drawn": "random"}
    assert "drawn" not in lines[2] and "undoes" not in lines[2]  # optional fields: left out when empty
    assert lines[3] == {"rcid": 1, "decision": "undo", "note": "", "reviewer": "ana", "time": "2026-11-27T00:00:04Z",
                        "undoes": "2026-11-27T00:00:02Z"}
    log = read_reviews(folder)
    assert {rcid: (r.decision, r.drawn) for rcid, r in log.latest.items()} == {1: ("accept", "random")}
    assert len(log.history) == 5 and [r.decision for r in log.decisions] == ["accept", "reject", "unsure"]
    assert log.truth() == {1: "correct"} and log.skipped == 0


@pytest.mark.parametrize("line", [
    b'{"rcid": 1, "decision": "accept", "note": "", "reviewer": "", "time": "t", "drawn": "lucky"}',
    b'{"rcid": 1, "decision": "undo", "note": "", "reviewer": "", "time": "t", "undoes": 5}',
])
def test_an_optional_field_of_the_wrong_kind_makes_the_line_skipped(tmp_path: Path, line: bytes) -> None:
    folder = run_dir(tmp_path)
    (folder / "reviews.jsonl").write_bytes(line + b"\n")
    assert read_reviews(folder).skipped == 1 and read_reviews(folder).history == []
