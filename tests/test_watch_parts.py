"""The watch's parts on their own: its queue's overflow rules, its journal read back, its edits file read as a
snapshot, the report's labels from the stream and its prefilter table, the simulator's pages for live edits."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from fanout.base.errors import ConfigError
from fanout.report.truth import STREAM_SOURCE, Labels, stream_outcomes, with_stream_outcomes
from fanout.sim import SimConfig, WorldSettings
from fanout.sim.state import SimState
from fanout.sim.corpus import load_corpus
from fanout.sim.models import SIM_MODELS
from fanout.store.layout import PREFILTER_NAME, STREAM_OUTCOMES_NAME, WATCH_EDITS_NAME, WATCH_JOURNAL_NAME
from fanout.wikidata.autocomment import parse_summary
from fanout.wikidata.stream_events import RECENTCHANGE, EventMeta, RecentChangeEvent, StreamPosition
from fanout.workloads.patrol.live.journal import Journal, event_entry, event_of, resume
from fanout.workloads.patrol.live.queue import EditQueue
from fanout.workloads.patrol.workload import PATROL
from edits import edit_data

pytestmark = pytest.mark.timeout(60)


def event(rcid: int, title: str = "Q42") -> RecentChangeEvent:
    comment = "/* wbsetclaim-update:2||1 */ [[Property:P569]]: 11 March 1952"
    return RecentChangeEvent(meta=EventMeta(id=f"e{rcid}", dt="2026-12-01T10:00:00.000Z", stream=RECENTCHANGE),
                             rcid=rcid, type="edit", wiki="wikidatawiki", namespace=0, title=title, user="203.0.113.7",
                             timestamp=1796124000 + rcid, comment=comment, revision_old=rcid * 10,
                             revision_new=rcid * 10 + 1, tags=("new editor changing statement",),
                             summary=parse_summary(comment))


# --- the queue ---------------------------------------------------------------------------------


def test_a_full_queue_dropping_the_oldest_keeps_the_newest_edits():
    queue = EditQueue(3, "drop-oldest")
    dropped = [queue.push(event(n)) for n in range(1, 6)]
    assert [d.rcid if d else None for d in dropped] == [None, None, None, 1, 2]
    assert queue.oldest() is not None and queue.oldest().rcid == 3 and len(queue) == 3


def test_a_full_queue_sampling_keeps_a_uniform_sample_of_the_backlog():
    kept = {n: 0 for n in range(1, 21)}
    for seed in range(2000):
        queue = EditQueue(5, "sample", rng=random.Random(seed))
        for n in range(1, 21):
            queue.push(event(n))
        while queue.oldest() is not None:
            kept[queue._edits.popitem(last=False)[1].rcid] += 1
    shares = [kept[n] / 2000 for n in range(1, 21)]
    assert all(0.2 < share < 0.3 for share in shares)  # 5 of 20: a quarter each, early or late


async def test_taking_from_a_closed_empty_queue_ends_and_a_put_back_edit_is_first_in_line():
    queue = EditQueue(3, "drop-oldest")
    queue.push(event(1))
    queue.push(event(2))
    first = await queue.take()
    assert first is not None and first.rcid == 1
    queue.put_back(first)
    queue.close()
    assert [e.rcid for e in [await queue.take(), await queue.take()] if e] == [1, 2]
    assert await queue.take() is None


# --- the journal -------------------------------------------------------------------------------


def test_an_events_entry_gives_back_the_event_the_filters_and_the_enricher_read():
    original = event(7)
    back = event_of(json.loads(json.dumps(event_entry(original))))
    assert (back.rcid, back.title, back.user, back.revision_old, back.revision_new, back.tags, back.summary.family,
            back.summary.property) == (7, "Q42", "203.0.113.7", 70, 71, ("new editor changing statement",),
                                       "statement", "P569")


async def test_the_journal_read_back_waits_only_the_edits_nothing_was_decided_about(tmp_path):
    journal = Journal(tmp_path)
    position = StreamPosition('[{"topic":"t","partition":0,"timestamp":5}]', (("t", 0, 41),), "2026-12-01T10:00:00Z")
    await journal.accepted([event(1), event(2), event(3), event(4)], position)
    journal.decided(1, "judged")
    journal.decided(2, "dropped", why="queue full")
    journal.decided(3, "prefiltered", score=0.02)
    journal.close()
    with (tmp_path / WATCH_JOURNAL_NAME).open("ab") as fh:
        fh.write(b'{"judged": 4')  # a crash mid-write: torn, so edit 4 still waits
    state = resume(tmp_path)
    assert state.position == position and list(state.waiting) == [4] and state.accepted == {1, 2, 3, 4}
    assert dict(state.counts) == {"accepted": 4, "judged": 1, "dropped: queue full": 1, "prefiltered": 1}
    reopened = Journal(tmp_path)
    assert reopened.torn is not None and reopened.torn.read_bytes() == b'{"judged": 4'
    reopened.close()


async def test_a_restart_builds_the_events_of_the_undecided_and_of_the_newest_edits_the_revert_watch_keeps(
        tmp_path, monkeypatch):
    monkeypatch.setattr("fanout.workloads.patrol.live.journal.RECENT_EDITS", 3)
    journal = Journal(tmp_path)
    position = StreamPosition('[{"topic":"t","partition":0,"timestamp":5}]', (("t", 0, 41),), "2026-12-01T10:00:00Z")
    await journal.accepted([event(n) for n in range(1, 9)], position)
    for n in (2, 3, 4, 5, 6, 8):
        journal.decided(n, "judged")
    journal.close()
    state = resume(tmp_path, settled={7})
    assert list(state.waiting) == [1, 7] and state.accepted == set(range(1, 9))
    assert list(state.events) == [5, 6, 8]  # the newest three not seen reverted (7 was), oldest first
    as_journalled = {n: event_of(event_entry(event(n))) for n in (1, 8)}  # its meta is the journal's
    assert state.events[8] == as_journalled[8] and state.events[8].summary == event(8).summary
    assert state.waiting[1] == as_journalled[1] and state.waiting[1].summary.property == "P569"
    assert state.first_made == event(1).timestamp and state.position == position


def test_an_accepted_line_whose_event_is_not_an_object_is_skipped_and_counted(tmp_path):
    (tmp_path / WATCH_JOURNAL_NAME).write_text(json.dumps({"accepted": 1, "event": event_entry(event(1))}) + "\n"
                                               + json.dumps({"accepted": 2, "event": [2]}) + "\n")
    state = resume(tmp_path)
    assert state.accepted == {1} and list(state.waiting) == [1] and state.skipped_lines == 1


# --- the edits file, opened as a snapshot -------------------------------------------------------


def test_the_watchs_edits_file_opens_as_a_snapshot_and_a_torn_last_line_is_not_read(tmp_path):
    path = tmp_path / WATCH_EDITS_NAME
    lines = [json.dumps(edit_data(101)), json.dumps(edit_data(102)), json.dumps(edit_data(103))[:40]]
    path.write_text("\n".join(lines))
    with PATROL.open(path) as source:
        assert [e.key for e in source.items] == [101, 102]


def test_a_line_of_the_edits_file_that_is_no_edit_is_one_clear_error(tmp_path):
    path = tmp_path / WATCH_EDITS_NAME
    path.write_text(json.dumps(edit_data(101)) + "\n" + json.dumps({**edit_data(102), "revid": "x"}) + "\n")
    with pytest.raises(ConfigError, match=r"edit #2 \(rcid 102\): field revid must be an integer"):
        PATROL.open(path)


# --- the report: labels from the stream, the prefilter table ------------------------------------


def write_lines(path: Path, entries: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries))


def test_stream_outcomes_beside_a_labels_file_keep_the_files_truth_and_name_each_labels_source(tmp_path):
    write_lines(tmp_path / STREAM_OUTCOMES_NAME, [
        {"rcid": 1, "revid": 11, "qid": "Q1", "outcome": "reverted", "evidence": {"source": "stream"}},
        {"rcid": 2, "revid": 12, "qid": "Q2", "outcome": "reverted", "evidence": {"source": "stream"}}])
    stream = stream_outcomes(tmp_path)
    assert stream is not None and stream.truth == {1: "incorrect", 2: "incorrect"}
    stated = Labels(tmp_path / "labels.yaml", "labels", {2: "correct", 3: "incorrect"})
    merged = with_stream_outcomes(stated, stream)
    assert merged is not None and merged.truth == {1: "incorrect", 2: "correct", 3: "incorrect"}
    assert merged.sources == {1: STREAM_SOURCE, 2: "labels.yaml", 3: "labels.yaml"}
    assert merged.kind == "labels + stream outcomes"
    assert with_stream_outcomes(stated, None) is stated and stream_outcomes(tmp_path / "none") is None


# --- the simulator's pages for the live world ----------------------------------------------------


def test_each_live_edit_has_a_page_that_supports_a_good_edit_and_contradicts_vandalism():
    state = SimState(seed=3, profile=SimConfig().profile, latency_scale=0.0, models=SIM_MODELS,
                     corpus=load_corpus(), require_auth=False, clock=lambda: 0.0,
                     world_settings=WorldSettings(rate=10.0), wall_clock=lambda: 1_800_000_000.0)
    state.world.skip(5)
    edits = [r for r in state.world.revisions if r.change is not None]
    assert len(edits) == 50
    for revision in edits:
        facts = state.corpus.edits[revision.rcid]
        assert facts.truth == revision.truth and facts.qid == revision.qid
        stances = {page.stance(revision.rcid) for page in state.corpus.pages.values()} - {"offtopic"}
        assert {"correct": "supports", "incorrect": "contradicts"}[revision.truth] in stances
        found = state.corpus.search(f"{facts.label} {facts.description}", 100)
        assert any(hit.page.stance(revision.rcid) != "offtopic" for hit in found)  # a search by name finds it
    assert len(load_corpus().edits) == 12  # the bundled corpus, shared and cached, is left as it was


async def test_the_prefilter_table_counts_by_score_what_went_past_the_jury_and_what_the_stream_showed(tmp_path):
    from io import StringIO

    from fanout.engine.runner import RunRequest, run
    from fanout.engine.settings import RunSettings
    from fanout.llm.models import ModelSpec
    from fanout.report import build_report
    from fanout.research.record import new_record

    snapshot = tmp_path / "edits.jsonl"
    write_lines(snapshot, [edit_data(101), edit_data(102)])

    async def verdict(item, model):  # type: ignore[no-untyped-def]
        return new_record(item, model.name, "ok", verdict="incorrect" if item.key == 102 else "verified-high",
                          cost_usd=0.01, sources=[{"url": "https://example.org/a", "supports_claim": True,
                                                   "provenance": "verified"}])

    run_dir = tmp_path / "run"
    settings = RunSettings(models=(ModelSpec("m/a"), ModelSpec("m/b")), concurrency=2)
    await run(RunRequest(snapshot, run_dir, settings, handle_signals=False, out=StringIO(), progress_interval_s=3600,
                         workload=PATROL), verdict_fn=verdict)
    write_lines(run_dir / PREFILTER_NAME, [
        {"rcid": 100, "revid": 1, "qid": "Q1", "score": 0.03, "threshold": 0.1, "passed": False, "reason": None},
        {"rcid": 101, "revid": 2, "qid": "Q2", "score": 0.35, "threshold": 0.1, "passed": True, "reason": None},
        {"rcid": 102, "revid": 3, "qid": "Q3", "score": 0.91, "threshold": 0.1, "passed": True, "reason": None},
        {"rcid": 103, "revid": 4, "qid": "Q4", "score": None, "threshold": 0.1, "passed": True, "reason": "HTTP 503"}])
    write_lines(run_dir / STREAM_OUTCOMES_NAME, [
        {"rcid": 100, "revid": 1, "qid": "Q1", "outcome": "reverted", "evidence": {"source": "stream"}}])
    rows = {r["band"]: r for r in build_report(run_dir).table("prefilter")}
    assert list(rows) == ["0.0-0.1", "0.3-0.4", "0.9-1.0", "not scored"]
    assert (rows["0.0-0.1"]["prefiltered"], rows["0.0-0.1"]["reverted_prefiltered"], rows["0.0-0.1"]["judged"]) == (1, 1, 0)
    assert (rows["0.3-0.4"]["judged"], rows["0.3-0.4"]["jury_accept"]) == (1, 1)
    assert (rows["0.9-1.0"]["judged"], rows["0.9-1.0"]["jury_reject"]) == (1, 1)
    assert (rows["not scored"]["scored"], rows["not scored"]["judged"]) == (1, 0)  # not in the log yet
