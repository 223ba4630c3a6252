"""A live source through the engine: the same schedule, verdicts and log as a snapshot, items judged once.

The source and the verdicts are scripted (the subject is the engine around
them); a source that must wait waits on an event the test sets, so nothing
depends on wall-clock speed. The admission limits are checked against a
clock the test moves.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from io import StringIO
from pathlib import Path

import anyio
import pytest

from fanout.base.errors import ConfigError
from fanout.base.item import Item
from fanout.base.records import VerdictRecord
from fanout.engine.intake import Admission, AdmissionLimits, GrowingItems
from fanout.engine.live import LiveContext, LiveRequest, run_live
from fanout.engine.orchestrator import ProgressSink, StopControl, orchestrate
from fanout.engine.runner import RunRequest
from fanout.engine.settings import RunSettings
from fanout.judging.cascade import CascadeStrategy
from fanout.llm.models import ModelSpec
from fanout.research.record import new_record
from fanout.store.checkpoint import CheckpointWriter, iter_log, log_path, read_index
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.workload import PATROL
from edits import make_edit

pytestmark = pytest.mark.timeout(60)
MODELS = tuple(ModelSpec(name) for name in ("m/a", "m/b", "m/c"))


def edits(first: int, n: int) -> list[Edit]:
    return [make_edit(1000 + i, revid=5000 + i, title=f"Q{i + 1}") for i in range(first, first + n)]


class Recorder:
    """A live source handing over its items, then ending (or waiting for ever, or failing); it notes each finish."""

    def __init__(self, items: list[Edit], *, ends: bool = True, fails: Exception | None = None) -> None:
        self.items = list(items)
        self.ends = ends
        self.fails = fails
        self.finished_keys: list[int] = []
        self.handed = 0
        self.waiting = anyio.Event()

    @property
    def items_total(self) -> int:
        return self.handed

    async def next_item(self) -> Item | None:
        if self.items:
            self.handed += 1
            return self.items.pop(0)
        if self.fails is not None:
            raise self.fails
        if self.ends:
            return None
        self.waiting.set()
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    def finished(self, key: int) -> None:
        self.finished_keys.append(key)


async def verdict(item: Item, model: ModelSpec) -> VerdictRecord:
    await anyio.sleep(0)
    return new_record(item, model.name, "ok", verdict="plausible", cost_usd=0.01)


def settings(**overrides: object) -> RunSettings:
    return dataclasses.replace(RunSettings(models=MODELS, concurrency=8, max_lead=10, grace_s=5.0), **overrides)


async def judge(run_dir: Path, source: Recorder, **overrides: object) -> tuple[list[VerdictRecord], StopControl]:
    writer = CheckpointWriter(run_dir, read_index(log_path(run_dir)))
    control = StopControl(on_message=lambda message: None)
    try:
        await orchestrate(GrowingItems(), settings(**overrides), writer, verdict, control=control, live=source)
    finally:
        writer.close()
    return list(iter_log(log_path(run_dir))), control


async def test_a_live_sources_items_are_judged_once_by_every_model_and_the_source_hears_each_finished(tmp_path):
    source = Recorder(edits(0, 5))
    records, _ = await judge(tmp_path, source)
    assert Counter((r.edit_rcid, r.model) for r in records) == {(1000 + i, m.name): 1 for i in range(5) for m in MODELS}
    assert sorted(source.finished_keys) == [1000 + i for i in range(5)]


async def test_an_item_handed_over_again_after_a_restart_runs_only_its_missing_pairs(tmp_path):
    await judge(tmp_path, Recorder(edits(0, 2)))
    again = Recorder([*edits(1, 1), *edits(2, 1)])  # edit 1 was judged before the stop; edit 2 is new
    records, _ = await judge(tmp_path, again)
    assert Counter(r.edit_rcid for r in records) == {1000: 3, 1001: 3, 1002: 3}
    assert sorted(again.finished_keys) == [1001, 1002]


async def test_an_item_with_a_record_that_retry_runs_again_is_not_finished_so_a_restart_hands_it_over(tmp_path):
    async def failing(item: Item, model: ModelSpec) -> VerdictRecord:
        status = "error" if model.name == "m/b" and item.key == 1001 else "ok"
        return new_record(item, model.name, status, verdict="plausible" if status == "ok" else None, cost_usd=0.0)

    source = Recorder(edits(0, 2))
    writer = CheckpointWriter(tmp_path, read_index(log_path(tmp_path)))
    await orchestrate(GrowingItems(), settings(), writer, failing, live=source)
    writer.close()
    assert source.finished_keys == [1000]
    again = Recorder(edits(1, 1))
    records, _ = await judge(tmp_path, again)
    assert [(r.edit_rcid, r.model, r.status) for r in records][-1] == (1001, "m/b", "ok")
    assert again.finished_keys == [1001]


class Logged(ProgressSink):
    def __init__(self) -> None:
        self.count = 0
        self.changed = anyio.Event()

    def recorded(self, record: VerdictRecord, previous: object = None) -> None:
        self.count += 1
        self.changed.set()
        self.changed = anyio.Event()


async def test_the_first_stop_request_closes_the_intake_and_an_item_not_finished_is_not_said_to_be(tmp_path):
    source = Recorder(edits(0, 2), ends=False)
    control = StopControl(on_message=lambda message: None)
    logged = Logged()
    writer = CheckpointWriter(tmp_path, read_index(log_path(tmp_path)))

    async def stop_once_the_first_item_is_logged() -> None:
        await source.waiting.wait()  # the source was asked for a third item: it has none, and waits
        while logged.count < 3:
            await logged.changed.wait()
        control.request("Interrupted (SIGINT)", grace_s=5.0)

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_once_the_first_item_is_logged)
        outcome = await orchestrate(GrowingItems(), settings(concurrency=1), writer, verdict, control=control,
                                    progress=logged, live=source)
    writer.close()
    assert (outcome.items_in, outcome.cancelled) == (2, False)
    assert 3 <= outcome.recorded < 6 and source.finished_keys == [1000]  # edit 1001 goes on after a restart
    again = Recorder(edits(1, 1))
    records, _ = await judge(tmp_path, again)
    assert Counter((r.edit_rcid, r.model) for r in records) == {(1000 + i, m.name): 1 for i in range(2) for m in MODELS}
    assert again.finished_keys == [1001]


async def test_a_source_that_fails_for_good_ends_the_run_once_the_items_it_handed_over_are_judged(tmp_path):
    source = Recorder(edits(0, 1), fails=ConfigError("stream.example refused the stream: HTTP 403"))
    writer = CheckpointWriter(tmp_path, read_index(log_path(tmp_path)))
    said: list[str] = []
    outcome = await orchestrate(GrowingItems(), settings(), writer, verdict, live=source,
                                control=StopControl(on_message=said.append))
    writer.close()
    assert outcome.source_failed == "stream.example refused the stream: HTTP 403"
    assert said == ["The live source stopped: stream.example refused the stream: HTTP 403; the items it handed over "
                    "are judged, then the run ends."]
    assert (outcome.recorded, source.finished_keys) == (3, [1000])


async def test_the_items_of_a_finished_item_are_forgotten(tmp_path):
    items = GrowingItems()
    source = Recorder(edits(0, 4))
    writer = CheckpointWriter(tmp_path, read_index(log_path(tmp_path)))
    await orchestrate(items, settings(), writer, verdict, live=source)
    writer.close()
    assert (len(items), items.held) == (4, 0)


async def test_a_cascade_over_a_live_source_asks_each_item_its_next_step_and_resumes_an_item_mid_cascade(tmp_path):
    cheap, dear = ModelSpec("m/cheap", None, 0.1, 0.1), ModelSpec("m/dear", None, 9.0, 9.0)

    async def unsure_first(item: Item, model: ModelSpec) -> VerdictRecord:
        verdict_text = "unverifiable" if model.name == "m/cheap" else "verified-high"
        return new_record(item, model.name, "ok", verdict=verdict_text, cost_usd=0.01, stability=1.0)

    request = LiveRequest(RunRequest(tmp_path / "items.jsonl", tmp_path, RunSettings(
        models=(dear, cheap), concurrency=4, strategy=CascadeStrategy()), handle_signals=False, out=StringIO(),
        progress_interval_s=3600, workload=PATROL), source_pin="test:live")

    def opener(items: list[Edit]):  # type: ignore[no-untyped-def]
        @asynccontextmanager
        async def open_source(context: LiveContext) -> AsyncIterator[Recorder]:
            yield Recorder(items)
        return open_source

    report = await run_live(request, opener(edits(0, 2)), verdict_fn=unsure_first)
    assert Counter((r.edit_rcid, r.model) for r in iter_log(log_path(tmp_path))) == {
        (1000, "m/cheap"): 1, (1000, "m/dear"): 1, (1001, "m/cheap"): 1, (1001, "m/dear"): 1}
    assert report.tracker is not None and report.tracker.escalations == 2
    again = await run_live(request, opener(edits(1, 2)), verdict_fn=unsure_first)
    assert again.outcome.recorded == 2  # edit 1 is settled already: only edit 2's two steps run
    assert again.manifest.edits == 2 and again.manifest.snapshot_sha256 == "test:live"


# --- the admission limits, on a clock the test moves -------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_at_most_n_items_come_in_in_any_minute():
    clock = Clock()
    admission = Admission(AdmissionLimits(per_minute=2), clock=clock)
    for index in range(2):
        assert admission.hold() is None
        admission.admitted(index)
        clock.now += 10
    assert admission.hold() == ("--max-edits-per-minute 2", 40.0)
    clock.now += 40
    assert admission.hold() is None


def test_the_hours_spend_and_the_estimate_of_the_items_in_progress_stay_under_the_cap():
    clock = Clock()
    admission = Admission(AdmissionLimits(cost_per_hour_usd=1.0), clock=clock)
    admission.admitted(0)
    assert admission.hold() == ("--max-cost-per-hour 1", 3600.0)  # nothing to estimate from: one at a time
    admission.spent(0, 0.4)
    admission.finished(0)
    assert admission.hold() is None  # 0.4 spent + 0.4 estimated for the next
    admission.admitted(1)
    clock.now += 600
    assert admission.hold() == ("--max-cost-per-hour 1", 3000.0)  # 0.4 + 0.4 ahead + 0.4 for the next
    clock.now += 3000
    assert admission.hold() is None  # the first item's spend is an hour old
    assert admission.estimate_usd() == pytest.approx(0.4)


async def test_admission_waits_until_a_finished_item_makes_room():
    admission = Admission(AdmissionLimits(cost_per_hour_usd=1.0))
    admission.admitted(0)
    let_in = anyio.Event()

    async def next_item() -> None:
        await admission.wait()
        let_in.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(next_item)
        await anyio.wait_all_tasks_blocked()
        assert not let_in.is_set() and admission.holding == "--max-cost-per-hour 1"
        admission.spent(0, 0.1)
        admission.finished(0)
        await let_in.wait()
    assert admission.holding is None
