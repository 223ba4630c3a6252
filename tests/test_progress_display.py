"""What a user reads about a run: the progress line, the last lines of `fanout run`, `fanout status`, the live table.

Each count stands on its own: records without a verdict (incomplete,
invalid_json) are done, but they are not verdicts, and a run where many of
them ended so must not read as a clean one.
"""

from __future__ import annotations

import io
import itertools

import anyio

from fanout.cli.run import finish
from fanout.config import ModelSpec, RunSettings, package_data
from fanout.engine.runner import RunRequest, run
from fanout.records import VerdictRecord

SAMPLE = package_data("sample_snapshot.yaml")


def scripted_record(edit, model, status: str) -> VerdictRecord:
    return VerdictRecord(
        model=model.name, edit_rcid=edit.rcid, edit_revid=edit.revid, qid=edit.title,
        property=edit.parsed.property, diff_type=edit.diff_type, timestamp="2026-11-22T10:00:00Z",
        status=status, verdict="plausible" if status == "ok" else None, cost_usd=0.01,
        error="HTTP 502" if status == "error" else None,
    )


def run_with_statuses(run_dir, statuses: list[str], limit: int = 6) -> tuple[str, int]:
    """A run of m/a and m/b over `limit` edits whose records take `statuses` in turn; its output and exit code."""
    order = itertools.cycle(statuses)

    async def verdict(edit, model):
        return scripted_record(edit, model, next(order))

    out = io.StringIO()
    settings = RunSettings(models=(ModelSpec("m/a"), ModelSpec("m/b")), concurrency=1)
    request = RunRequest(SAMPLE, run_dir, settings, limit=limit, handle_signals=False, progress_interval_s=3600, out=out)
    report = anyio.run(lambda: run(request, verdict_fn=verdict))
    code = finish(report, request)
    return out.getvalue(), code


def test_the_progress_line_counts_verdicts_records_without_one_errors_and_timeouts_apart(tmp_path):
    # 12 pairs: 6 ok, 2 incomplete, 2 invalid_json, 1 timeout, 1 ok
    statuses = ["ok", "incomplete", "ok", "invalid_json", "ok", "timeout", "ok", "incomplete", "ok", "invalid_json", "ok", "ok"]
    output, _ = run_with_statuses(tmp_path, statuses)
    progress = [line for line in output.splitlines() if " done (" in line][-1]
    assert progress.split(" | ")[1:2] + progress.split(" | ")[-4:] == [
        "12/12 done (100%)", "verdicts 7", "no verdict 4", "errors 0", "timeouts 1",
    ]


def test_the_last_lines_of_a_run_say_what_share_ended_without_a_verdict(tmp_path):
    statuses = ["ok", "incomplete", "ok", "invalid_json", "ok", "ok"]  # 4 of 12 without a verdict
    output, code = run_with_statuses(tmp_path, statuses)
    assert code == 0
    assert output.splitlines()[-1] == (
        "Of the pairs done: 8 with a verdict, 4 without one (incomplete or invalid_json), 0 error(s), 0 timeout(s). "
        "33% of the pairs done ended without a verdict: they count as done; "
        "`--retry incomplete,invalid_json` runs them again."
    )


def test_a_clean_run_ends_with_its_counts_and_no_warning(tmp_path):
    output, code = run_with_statuses(tmp_path, ["ok"], limit=2)
    assert code == 0
    assert output.splitlines()[-1] == (
        "Of the pairs done: 4 with a verdict, 0 without one (incomplete or invalid_json), 0 error(s), 0 timeout(s)."
    )
