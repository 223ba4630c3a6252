"""`fanout watch` against the simulator's live stream (issue 35, part 8): latency, keeping up, CPU, RSS.

    make bench ARGS="--only watch scale"

`watch` runs the real `fanout watch` (a subprocess, measured from outside as
harness.run_fanout measures `fanout run`) on `fanout sim --stream-rate R`,
every edit kept (all kinds, bots too), until N edits are judged:

- edit-to-verdict latency: per edit, its last record's time less the time
  the edit was made (both to the second, as the log and the stream give
  them), at 1 and at 10 edits a second;
- keeping up: the edits judged a second against the stream's rate, and what
  was still waiting in the queue;
- per verdict: the engine's CPU (the `fanout watch` process, enrichment and
  the stream included; split by harness.CpuWait into its event loop's thread,
  its other threads and its extraction workers), the simulator's CPU over the
  same minutes (on the same cores: how fast the machine ran), the simulated
  latency it served against the time each verdict took (`verdict
  efficiency`: 1.0 when the engine adds nothing), the event loop's lag (p99,
  from FANOUT_LOOP_LAG_LOG) and peak RSS.

`scale` is the same engine on a snapshot (`fanout run`, bench/scenarios.py's
efficiency): 5,120 verdicts at --concurrency 1280 with verdicts of about
30 s, which is what 10 edits a second x 4 models needs in flight.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import (FANOUT, LAG_ENV, PROFILE, CpuWait, Simulator, child_env, cpu_ms_per_verdict, epoch,
                     file_create_cpu_us, log_records)

from fanout.llm.models import DEFAULT_MODELS

MODELS = len(DEFAULT_MODELS)
SECONDS_PER_VERDICT_AT_SCALE_1 = 5.5
"""The bench profile's simulated latency per verdict at --latency-scale 1 (bench/scenarios.py calibrates it)."""


class StreamSimulator(Simulator):
    """`fanout sim` with its live stream at `rate` edits a second (no reverts during the run)."""

    def __init__(self, rate: int, latency_scale: float) -> None:
        super().__init__(profile=str(PROFILE), latency_scale=latency_scale)
        self.args += ["--stream-rate", str(rate), "--revert-delay", "86400"]


def watch(root: Path, *, rate: int, edits: int, concurrency: int, verdict_s: float = 30.0) -> dict[str, Any]:
    """`fanout watch` judging `edits` edits of a stream of `rate` edits a second, verdicts of about `verdict_s`."""
    scale = verdict_s / SECONDS_PER_VERDICT_AT_SCALE_1
    run_dir = root / f"watch-{rate}"
    create_us = file_create_cpu_us(root)
    with StreamSimulator(rate, scale) as sim:
        cmd = [*FANOUT, "watch", "--run-dir", str(run_dir), "--base-url", sim.api, "--searxng-url", sim.base,
               "--allow-private-urls", "--fetch-delay", "0", "--stream-url", f"{sim.base}/v2/stream",
               "--api-url", f"{sim.base}/wikidata/w/api.php", "--operations", "statements,terms,sitelinks",
               "--include-bots", "--concurrency", str(concurrency), "--max-edits", str(edits),
               "--enrich-workers", "16", "--api-concurrency", "16", "--queue-size", str(10 * edits)]
        sim_cpu_before = sim.cpu_s()
        measured = _measured(cmd)
        sim_cpu_after = sim.cpu_s()
        served = sum(sim.stats().get("latency_s", {}).values())
    figures = _figures(run_dir, served, measured, rate)
    figures["simulator_cpu_ms_per_verdict"] = cpu_ms_per_verdict(sim_cpu_before, sim_cpu_after, figures["verdicts"])
    return {"rate": rate, "edits": edits, "concurrency": concurrency, "latency_scale": round(scale, 3),
            **measured, **figures, "file_create_cpu_us": round(create_us)}


def _measured(cmd: list[str]) -> dict[str, Any]:
    """Wall time, CPU and peak RSS of the process from the kernel, and its loop lag from the probe."""
    with tempfile.TemporaryDirectory(prefix="fanout-bench-") as tmp:
        lag_path, out_path = Path(tmp) / "lag.json", Path(tmp) / "out.txt"
        with out_path.open("wb") as out:
            started = time.perf_counter()
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=child_env(**{LAG_ENV: str(lag_path)}))
            cpu_wait = CpuWait(proc.pid)
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: its /proc entry stays
            waited = cpu_wait.stop()
            _pid, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(f"fanout watch exited {code}:\n" + out_path.read_text(errors="replace")[-2000:])
        lag = json.loads(lag_path.read_text()) if lag_path.exists() else {}
    return {"wall_s": round(wall, 1), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "max_rss_mb": round(usage.ru_maxrss / 1024, 1), "lag_p99_ms": lag.get("p99_lag_ms"),
            "lag_max_ms": lag.get("max_lag_ms"), **waited}


def _slim(record: dict[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("edit_rcid", "timestamp", "edit_timestamp", "duration_s", "status")}


def _figures(run_dir: Path, served_s: float, measured: dict[str, Any], rate: int) -> dict[str, Any]:
    records = [_slim(record) for record in log_records(run_dir)]
    verdicts = len(records)
    last: dict[int, float] = {}
    made: dict[int, float] = {}
    for r in records:
        last[r["edit_rcid"]] = max(last.get(r["edit_rcid"], 0.0), epoch(r["timestamp"]))
        made[r["edit_rcid"]] = epoch(r["edit_timestamp"])
    in_order = [last[k] - made[k] for k in sorted(made, key=made.__getitem__)]
    latencies = sorted(in_order)
    tenth = max(len(in_order) // 10, 1)
    durations = [r["duration_s"] for r in records if r.get("duration_s")]
    return {
        "verdicts": verdicts,
        "statuses": dict(sorted({s: sum(r["status"] == s for r in records) for s in {r["status"] for r in records}}.items())),
        "latency_p50_s": statistics.median(latencies),
        "latency_p95_s": latencies[min(len(latencies) - 1, math.ceil(0.95 * len(latencies)) - 1)],
        "latency_first_tenth_s": round(statistics.fmean(in_order[:tenth]), 1),
        "latency_last_tenth_s": round(statistics.fmean(in_order[-tenth:]), 1),  # as the first when it keeps up
        "stream_rate": rate,
        "served_latency_per_verdict_s": round(served_s / verdicts, 2),
        "mean_verdict_s": round(statistics.fmean(durations), 2),
        "verdict_efficiency": round(served_s / verdicts / statistics.fmean(durations), 3),
        "cpu_ms_per_verdict": round(measured["cpu_s"] / verdicts * 1000, 2),
    }
