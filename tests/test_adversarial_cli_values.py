"""Issue 27's second adversarial pass: numeric flags at the edges of what argparse accepts.

Each value here got past argparse's `type=` and ended in a traceback or a
simulator that never answers; each must be one line and exit 2, or work.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
import pytest

from fanout.cli import main
from fanout.config import package_data
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.records import VerdictRecord


async def failing_verdict(edit, model):  # type: ignore[no-untyped-def]
    return VerdictRecord(
        model=model.name, edit_rcid=edit.rcid, edit_revid=edit.revid, qid=edit.title,
        property=edit.parsed.property, diff_type=edit.diff_type,
        timestamp="2026-11-27T01:00:00Z", status="error", error="HTTP 502 from the endpoint", cost_usd=0.0,
    )


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    snapshot = tmp_path / "today.yaml"
    shutil.copyfile(package_data("sample_snapshot.yaml"), snapshot)
    run_dir = tmp_path / "run"
    settings = RunSettings(models=(ModelSpec("m/a"), ModelSpec("m/b")))
    request = RunRequest(snapshot, run_dir, settings, limit=2, handle_signals=False, progress_interval_s=3600)
    anyio.run(lambda: run(request, verdict_fn=failing_verdict))
    return run_dir


def test_status_errors_beyond_a_machine_size_shows_every_error(run_dir, capsys) -> None:
    # --errors 10**22 ended in "OverflowError: Python int too large to convert to C ssize_t".
    capsys.readouterr()
    assert main(["status", str(run_dir), "--errors", str(10**22)]) == 0
    out = capsys.readouterr().out
    assert out.count("HTTP 502 from the endpoint") == 4


@pytest.mark.parametrize(("value", "shown"), [("nan", "nan"), ("inf", "inf"), ("1e400", "inf")])
def test_sim_latency_scale_that_is_not_finite_is_refused(tmp_path, capsys, value, shown) -> None:
    # NaN passed the `< 0` check and inf made every simulated reply wait forever.
    out = tmp_path / "labels.yaml"
    assert main(["sim", "--latency-scale", value, "--labels-out", str(out), "--labels-only"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"fanout sim: error: --latency-scale must be a finite number of 0 or more (got {shown})")
    assert not out.exists()


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_sim_port_out_of_range_is_one_line(capsys, port) -> None:
    # --port 99999 ended in "OverflowError: bind(): port must be 0-65535." from the socket.
    assert main(["sim", "--port", port, "--profile", "clean"]) == 2
    assert capsys.readouterr().err.strip() == f"fanout sim: error: --port must be between 0 and 65535 (got {port})"
