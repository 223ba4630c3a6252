"""Every cent counted: spend holds retried and cut-off attempts, and says what is estimated or unknown.

Invariant 9. The log keeps every attempt of a pair (a retried `error` is
superseded, not erased), and an attempt cut off before it was logged leaves
its calls in an in-flight file that the next start settles into
abandoned.jsonl; progress, `fanout status`, the report and --max-cost all add
them up. The end-to-end test kills a real `fanout run` with SIGKILL and holds
the run's accounting against the simulator's own tally of what it charged.
"""

from __future__ import annotations

import io
import json
import math
import signal
import sys
from pathlib import Path

import anyio
import pytest

from fanout.workloads.patrol.workload import PATROL
from fanout.report.build import build_report
from fanout.report.terminal import render_summary
from fanout.cli import main
from fanout.base.validate import package_data
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.engine.progress import Tally
from fanout.engine.runner import RunRequest, run
from fanout.engine.status import read_status, render_status
from fanout.llm.reply import ChatResult
from fanout.base.records import VerdictRecord
from fanout.sim import SimConfig, profile_from_dict, running_simulator
from fanout.llm.cost import Pricing
from fanout.store.attempts import AttemptFile, read_abandoned, settle_abandoned
from fanout.store.checkpoint import CheckpointWriter, log_path, read_index
from fanout.store.layout import INDEX_NAME, INFLIGHT_DIR

from warm import WarmInterpreter

SAMPLE = package_data("sample_snapshot.yaml")
LOCAL = ["--base-url", "http://127.0.0.1:9/v1", "--searxng-url", "http://127.0.0.1:9"]


def record(rcid: int, model: str, status: str, cost: float | None, source: str | None = None) -> VerdictRecord:
    return VerdictRecord(model=model, edit_rcid=rcid, edit_revid=rcid + 1, qid="Q1", property="P1", diff_type="x",
                         timestamp="2026-11-22T10:00:00Z", status=status,  # type: ignore[arg-type]
                         verdict="plausible" if status == "ok" else None, cost_usd=cost, cost_source=source)


def write_log(run_dir: Path, records: list[VerdictRecord]) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    with CheckpointWriter(run_dir, read_index(log_path(run_dir))) as writer:
        for r in records:
            writer.append(r)


LOGGED = [
    record(1, "m/a", "error", 0.25, "reported"),
    record(1, "m/a", "ok", 0.5, "reported"),  # the retry: the error above was paid for too
    record(2, "m/a", "ok", 0.125, "estimated"),
    record(3, "m/a", "ok", None, "unknown"),
    record(4, "m/a", "timeout", 0.0625, "unknown"),  # a partial figure: a call was cut off by the timeout
]


@pytest.mark.parametrize("saved_index", [True, False])
def test_spend_counts_every_logged_attempt_and_says_what_is_estimated_or_unknown(tmp_path, saved_index):
    write_log(tmp_path, LOGGED)
    if not saved_index:
        (tmp_path / INDEX_NAME).unlink()
    index = read_index(log_path(tmp_path))
    assert (index.spent_usd, index.estimated_usd, index.unknown_cost_lines) == (0.9375, 0.125, 2)
    tally = Tally.from_index(index, total=4, models=["m/a"])
    assert tally.spend_text() == "$0.9375 ($0.1250 of it estimated; + unknown cost of 2 attempt(s))"
    assert render_status(read_status(tmp_path))[0] == (
        f"{tmp_path}: 4/4 pairs done (100%), spend $0.9375 ($0.1250 of it estimated; + unknown cost of 2 attempt(s))")


def test_the_report_counts_superseded_and_cut_off_attempts_and_names_estimates(tmp_path):
    write_log(tmp_path, LOGGED)
    (tmp_path / "abandoned.jsonl").write_text(json.dumps({
        "edit_rcid": 5, "model": "m/a", "attempt": "5-x.jsonl@1", "calls": 2, "cut_off": 0, "cost_usd": 0.03125,
        "cost_source": "reported", "response_ids": ["gen-1", "gen-2"], "settled_at": "2026-11-22T11:00:00Z"}) + "\n")
    report = build_report(tmp_path)
    totals = report.totals
    assert (totals["total_cost_usd"], totals["earlier_attempts"], totals["earlier_cost_usd"]) == (0.96875, 2, 0.28125)
    assert (totals["estimated_cost_usd"], totals["cost_unknown"]) == (0.125, 1)
    assert "\n".join([
        "The total includes $0.2812 for 2 earlier attempt(s) that were retried or cut off by a stop: they were paid for too.",
        "$0.1250 of the total is estimated from tokens and prices; the endpoint reported no cost for those calls.",
        "1 attempt(s) have no known cost; the total adds the known ones.",
    ]) in render_summary(report)


def scripted(run_dir: Path, limit: int, *, fail_b: bool, max_cost: float | None = None) -> tuple[str, list, str | None]:
    """A session of m/a and m/b over the first `limit` edits, each verdict costing 0.25; m/b fails when told to."""
    ran = []

    async def verdict(edit, model):
        ran.append((edit.rcid, model.name))
        failed = fail_b and model.name == "m/b"
        return record(edit.rcid, model.name, "error" if failed else "ok", 0.25, "reported")

    out = io.StringIO()
    settings = RunSettings(models=(ModelSpec("m/a"), ModelSpec("m/b")), max_cost_usd=max_cost)
    request = RunRequest(SAMPLE, run_dir, settings, limit=limit, handle_signals=False, progress_interval_s=3600, out=out,
                         workload=PATROL)
    report = anyio.run(lambda: run(request, verdict_fn=verdict))
    assert report is not None
    return out.getvalue(), ran, report.outcome.stop_reason


def test_a_resumed_run_and_its_spend_cap_count_the_attempts_a_retry_superseded(tmp_path, capsys):
    scripted(tmp_path, 2, fail_b=True)  # 4 verdicts, m/b's two are errors: $1.00
    retried, _, _ = scripted(tmp_path, 2, fail_b=False)  # the two errors run again: $0.50 more
    assert retried.splitlines()[-1].endswith("| 4/4 done (100%) | 0 in flight | " + retried.splitlines()[-1].split(" | ")[3]
                                             + " | ETA 0s | $1.5000 | verdicts 4 | no verdict 0 | errors 0 | timeouts 0")
    _, ran, stop_reason = scripted(tmp_path, 3, fail_b=False, max_cost=1.4)
    assert (ran, stop_reason) == ([], "Spend cap $1.4 already reached ($1.5000 recorded)")
    assert main(["status", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"{tmp_path}: 4/6 pairs done (67%), spend $1.5000"


def answered(response_id: str, cost: float | None, prompt: int = 0, completion: int = 0) -> ChatResult:
    return ChatResult(content="x", cost_usd=cost, response_id=response_id, prompt_tokens=prompt,
                      completion_tokens=completion)


def cut_off_attempt(run_dir: Path, rcid: int, model: str, calls: list[ChatResult | None], log_bytes: int = 0) -> None:
    """The in-flight file a killed verdict leaves: each call answered, or (None) still out at the kill."""
    (run_dir / INFLIGHT_DIR).mkdir(parents=True, exist_ok=True)
    attempt = AttemptFile(run_dir, rcid, model, log_bytes)
    for call in calls:
        attempt.sent()
        if call is not None:
            attempt.answered(call)
    attempt.close()


async def test_settling_prices_each_cut_off_call_as_well_as_it_can_and_says_what_is_unknown(tmp_path):
    looked_up: list[str] = []

    async def generation_cost(response_id: str) -> float | None:
        looked_up.append(response_id)
        return {"gen-2": 0.0042}.get(response_id)

    cut_off_attempt(tmp_path, 1, "m/a", [answered("gen-1", 0.001), answered("gen-2", None)])
    cut_off_attempt(tmp_path, 2, "m/priced", [answered("gen-3", None, prompt=1000, completion=100)])
    cut_off_attempt(tmp_path, 3, "m/a", [answered("gen-4", 0.002), None])
    cut_off_attempt(tmp_path, 4, "m/a", [])  # killed before its first call: nothing to pay for
    pricing = Pricing({"m/priced": ModelSpec("m/priced", input_price=1.0, output_price=2.0)}, generation_cost)
    settled = await settle_abandoned(tmp_path, read_index(log_path(tmp_path)), pricing)

    assert [(a.edit_rcid, a.calls, a.cut_off, a.cost_usd, a.cost_source, a.response_ids) for a in settled] == [
        (1, 2, 0, 0.001 + 0.0042, "generation", ["gen-1", "gen-2"]),
        (2, 1, 0, (1000 * 1.0 + 100 * 2.0) / 1e6, "estimated", ["gen-3"]),
        (3, 2, 1, 0.002, "unknown", ["gen-4"]),
    ]
    assert looked_up == ["gen-2", "gen-3"]
    assert read_abandoned(tmp_path) == settled
    assert list((tmp_path / INFLIGHT_DIR).iterdir()) == []


async def test_an_attempt_is_settled_once_and_not_at_all_when_its_record_reached_the_log(tmp_path):
    write_log(tmp_path, [record(1, "m/a", "ok", 0.5)])
    cut_off_attempt(tmp_path, 1, "m/a", [answered("gen-1", 0.5)], log_bytes=0)  # logged; killed before the file went
    cut_off_attempt(tmp_path, 2, "m/a", [answered("gen-2", 0.25)])
    second = next(p for p in (tmp_path / INFLIGHT_DIR).iterdir() if p.name.startswith("2-"))
    kept = second.read_bytes()
    index = read_index(log_path(tmp_path))
    first = await settle_abandoned(tmp_path, index, Pricing())
    second.write_bytes(kept)  # as if killed after abandoned.jsonl got its line, before the file was removed
    again = await settle_abandoned(tmp_path, index, Pricing())
    assert [(a.edit_rcid, a.cost_usd) for a in first] == [(2, 0.25)]
    assert again == [] and len(read_abandoned(tmp_path)) == 1


def sim_cost_of(sim, ids: list[str]) -> float:
    return sum(sim.state.generations[i][1]["total_cost"] for i in ids)


def inflight_answers(run_dir: Path) -> int:
    folder = run_dir / INFLIGHT_DIR
    return sum(p.read_bytes().count(b'"e":"answered"') for p in folder.glob("*.jsonl")) if folder.exists() else 0


@pytest.mark.timeout(300)
async def test_attempts_killed_in_flight_are_paid_for_and_the_next_start_counts_them(tmp_path):
    """Both starts are processes of their own, forked from a warm interpreter (tests/warm.py) to spare their imports."""
    profile = profile_from_dict({"defaults": {"latency": {"median_s": 0.3, "p95_s": 0.6}}})
    run_dir = tmp_path / "run"
    with WarmInterpreter() as warm:
        async with running_simulator(SimConfig(seed=7, profile=profile)) as sim:
            cmd = [sys.executable, "-m", "fanout", "run", str(SAMPLE), "--run-dir", str(run_dir), "--limit", "4",
                   "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls",
                   "--fetch-delay", "0", "--concurrency", "4"]
            process = warm.start(cmd)
            while inflight_answers(run_dir) < 3:  # calls answered and paid for, their verdicts not logged
                assert process.returncode is None, "the run ended before it could be killed"
                await anyio.sleep(0.01)
            process.send_signal(signal.SIGKILL)
            assert await process.wait() == -signal.SIGKILL
            sim.state.latency_scale = 0.0  # the kill has landed: the resume need not be slow
            code, output = await warm.run(cmd, tmp_path / "resumed.txt")
            charged = sim.stats()["cost_usd"]["total"]
            abandoned = read_abandoned(run_dir)
            assert [sim_cost_of(sim, a.response_ids) for a in abandoned] == [a.cost_usd or 0.0 for a in abandoned]
            largest_call = max(g["total_cost"] for _, g in sim.state.generations.values())

    assert code == 0, output
    assert abandoned and sum(len(a.response_ids) for a in abandoned) >= 3
    assert f"{len(abandoned)} attempt(s) cut off when the run last stopped cost $" in output
    logged = sum(json.loads(line)["cost_usd"] or 0.0 for line in log_path(run_dir).read_text().splitlines())
    counted = logged + sum(a.cost_usd or 0.0 for a in abandoned)
    # A call answered in the instant of the kill, before the client read it, is charged and flagged as cut off.
    cut_off = sum(a.cut_off for a in abandoned)
    assert counted <= charged + 1e-12 and charged - counted <= cut_off * largest_call + 1e-12
    status = read_status(run_dir)
    assert math.isclose(status.tally.spent_usd, counted, rel_tol=1e-9)
    assert list((run_dir / INFLIGHT_DIR).iterdir()) == []


def test_max_cost_refuses_a_model_whose_cost_may_go_unreported_and_that_has_no_price(tmp_path, capsys):
    run_dir = tmp_path / "run"
    code = main(["run", str(SAMPLE), "--run-dir", str(run_dir), *LOCAL, "--models", "m/x", "--max-cost", "1"])
    assert code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "fanout run: error: --max-cost cannot cap spending on m/x: http://127.0.0.1:9/v1 may not report what a call "
        "costs, and no price is known to estimate it with. Give the prices in a --limits file "
        "(m/x: {input_price: 0.2, output_price: 0.6}, USD per million tokens) or leave out --max-cost.")
    assert not run_dir.exists()


def test_max_cost_accepts_the_same_model_once_it_has_prices(tmp_path, capsys):
    limits = tmp_path / "limits.yaml"
    limits.write_text("m/x: {input_price: 0.2, output_price: 0.6}\n")
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), *LOCAL, "--models", "m/x", "--max-cost", "1",
                 "--limits", str(limits)])
    error = capsys.readouterr().err.splitlines()[-1]
    # It got past the cost check to the next one, SearXNG, where nothing listens.
    assert (code, "cannot cap spending" in error, "http://127.0.0.1:9" in error) == (2, False, True)


def test_status_names_attempts_whose_cost_waits_for_the_next_start(tmp_path):
    write_log(tmp_path, [record(1, "m/a", "ok", 0.5)])
    cut_off_attempt(tmp_path, 2, "m/a", [answered("gen-1", 0.25), None])
    assert render_status(read_status(tmp_path))[:3] == [
        f"{tmp_path}: 1/1 pairs done (100%), spend $0.5000",
        "of them: 1 with a verdict, 0 without one (incomplete or invalid_json), 0 error(s), 0 timeout(s)",
        "not running; 1 attempt(s) were cut off when it last stopped: their cost is settled on the next start",
    ]


def test_a_verdict_that_raises_unexpectedly_is_logged_with_what_its_answered_calls_cost(tmp_path, monkeypatch, capsys):
    """A bug after calls were answered: logging its `error` record discards the in-flight file, so the record
    itself must carry their cost, or spend and --max-cost never count what was paid."""
    import fanout.engine.clients

    async def calls_then_a_bug(edit, model, *, watcher, **_):
        for cost in (0.25, 0.125):
            watcher.sent()
            watcher.answered(answered(f"gen-{edit.rcid}-{cost}", cost))
        raise RuntimeError("a bug after two answered calls")

    monkeypatch.setattr(fanout.engine.clients, "run_verdict", calls_then_a_bug)
    with anyio.from_thread.start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(running_simulator(SimConfig(seed=11))) as sim:
            code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path), "--base-url", sim.api_base,
                         "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0",
                         "--limit", "1", "--models", "m/a"])
    records = [json.loads(line) for line in log_path(tmp_path).read_text().splitlines()]
    assert [(r["status"], r["cost_usd"], r["cost_source"]) for r in records] == [("error", 0.375, "reported")], (
        code, capsys.readouterr())
    assert records[0]["error"] == "verdict failed: RuntimeError: a bug after two answered calls"
    assert not list((tmp_path / INFLIGHT_DIR).iterdir())
