"""The processes a benchmark measures: `fanout sim` and `fanout run`, started as a user starts them.

Everything is measured from outside the engine: wall time from spawn to exit,
CPU seconds and peak RSS of the `fanout run` process from the kernel
(os.wait4), the simulator's own tally (/stats) for what was served and how
much latency it simulated, and the time of the first chat request as the
simulator saw it. The only thing the engine reports itself is its event-loop
lag, through the opt-in FANOUT_LOOP_LAG_LOG file.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

FANOUT = [sys.executable, "-m", "fanout"]
LAG_ENV = "FANOUT_LOOP_LAG_LOG"
PROFILE = Path(__file__).with_name("sim_profile.yaml")


def child_env(**extra: str) -> dict[str, str]:
    """The environment a user's shell gives: bytecode caching on (some sandboxes turn it off, which would
    add the compilation of every fanout module to each start-up measured here)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Simulator:
    """`fanout sim` on a free loopback port for the length of a `with` block."""

    def __init__(self, *, profile: str = str(PROFILE), latency_scale: float = 1.0, faults: tuple[str, ...] = (), seed: int = 7):
        self.args = ["--profile", profile, "--latency-scale", repr(latency_scale), "--seed", str(seed)]
        for fault in faults:
            self.args += ["--fault", fault]
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._http = httpx.Client(timeout=10.0)

    @property
    def api(self) -> str:
        return f"{self.base}/api/v1"

    def __enter__(self) -> Simulator:
        self.proc = subprocess.Popen(
            [*FANOUT, "sim", "--port", str(self.port), *self.args],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=child_env(),
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"fanout sim exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            try:
                self.stats()
                return self
            except httpx.HTTPError:
                time.sleep(0.05)
        raise RuntimeError("fanout sim did not come up within 30 s")

    def stats(self) -> dict[str, Any]:
        return self._http.get(f"{self.base}/stats").json()

    def cpu_s(self) -> float | None:
        """CPU seconds the simulator has used so far (it shares the machine's cores with the engine)."""
        if self.proc is None:
            return None
        try:
            return proc_cpu_s(self.proc.pid)
        except OSError:
            return None

    def chat_requests(self) -> int:
        return int(self.stats()["requests"].get("chat_completions", 0))

    def __exit__(self, *exc: object) -> None:
        self._http.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class CpuWait:
    """How long a process was ready to run but waited for a CPU (Linux), sampled until it exits.

    On a shared machine a run's wall time says as much about the other tenants
    as about fanout: the kernel counts, per thread, the time it spent runnable
    on a run queue (/proc/PID/task/TID/schedstat, second field), and the
    system's CPU pressure (/proc/pressure/cpu, `some`) the share of time any
    task waited. Each thread's last sample is kept, so threads that end early
    still count. The main thread's CPU time (the event loop's) comes from the
    same file, and the CPU of the worker processes it waited for from
    /proc/PID/stat, so a caller can split the process's CPU three ways: the
    loop, the other threads (file writes, the tool cache: the rest), the
    workers. Nothing is measured where these files do not exist.
    """

    def __init__(self, pid: int, interval_s: float = 0.5) -> None:
        self._pid, self._interval_s = pid, interval_s
        self._threads: dict[str, tuple[int, int]] = {}
        self._stop = threading.Event()
        self._pressure_at_start = _cpu_pressure_us()
        self._started = time.perf_counter()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self._interval_s):
            self._sample()

    def _sample(self) -> None:
        for stat in Path(f"/proc/{self._pid}/task").glob("*/schedstat"):
            try:
                on_cpu, waiting = (int(x) for x in stat.read_text().split()[:2])
            except (OSError, ValueError):
                continue
            self._threads[stat.parent.name] = (on_cpu, waiting)

    def stop(self) -> dict[str, Any]:
        """The totals (call it just before reaping the process, while its /proc entry still exists)."""
        self._stop.set()
        self._thread.join(timeout=5)
        self._sample()  # the main thread's last figures: an exited process not yet reaped still has them
        wall_s = time.perf_counter() - self._started
        on_cpu = sum(t[0] for t in self._threads.values()) / 1e9
        loop_thread = self._threads.get(str(self._pid), (0, 0))[0] / 1e9
        waiting = sum(t[1] for t in self._threads.values()) / 1e9
        pressure = _cpu_pressure_us()
        return {
            "runqueue_wait_s": round(waiting, 1),
            "runqueue_wait_share": round(waiting / (waiting + on_cpu), 3) if waiting + on_cpu else None,
            "machine_cpu_pressure": (round((pressure - self._pressure_at_start) / 1e6 / wall_s, 3)
                                     if pressure is not None and self._pressure_at_start is not None else None),
            "loop_thread_cpu_s": round(loop_thread, 2) if self._threads else None,
            "worker_processes_cpu_s": self._children_cpu_s(),
        }

    def _children_cpu_s(self) -> float | None:
        """CPU seconds of the children the process waited for (cutime + cstime), while it is not yet reaped."""
        try:
            return round(proc_cpu_s(self._pid, children=True), 2)
        except (OSError, ValueError):
            return None


def proc_cpu_s(pid: int, *, children: bool = False) -> float:
    """CPU seconds of process `pid` from /proc/PID/stat (utime + stime), or of the children it waited for
    (cutime + cstime); OSError once the process is gone."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # after the command's name
    first = 13 if children else 11
    return (int(fields[first]) + int(fields[first + 1])) / os.sysconf("SC_CLK_TCK")


def cpu_ms_per_verdict(before_s: float | None, after_s: float | None, verdicts: int) -> float | None:
    """CPU ms a verdict between two readings of a process's CPU (Simulator.cpu_s); None when either is unknown."""
    return None if before_s is None or after_s is None else round((after_s - before_s) / verdicts * 1000, 2)


def file_create_cpu_us(folder: Path, files: int = 200) -> float:
    """CPU (kernel time included) to create one new file in `folder`, in µs: a reference beside the simulator's.

    Each verdict leaves one new file in its run folder (its view, written to a temp file and renamed), and what
    allocating it costs belongs to the filesystem, not to fanout. On the VM of the 2026-12-02 runs it moved by
    folder and within minutes on one ext4 disk: 830 µs of CPU under /tmp and 16 µs under /var/tmp, then ten
    minutes later 220 µs under both and 15 µs under /work. A file created and removed in turn, as each
    verdict's in-flight attempt file is, cost 28 µs under both /tmp and /var/tmp."""
    with tempfile.TemporaryDirectory(dir=folder, prefix=".create-cost-") as tmp:
        started = time.thread_time()
        for name in range(files):
            os.close(os.open(os.path.join(tmp, str(name)), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        return (time.thread_time() - started) / files * 1e6


def _cpu_pressure_us() -> int | None:
    """Microseconds in which some task waited for a CPU, since boot (PSI), or None without PSI."""
    try:
        first = Path("/proc/pressure/cpu").read_text().splitlines()[0]
        return int(first.rsplit("total=", 1)[1])
    except (OSError, IndexError, ValueError):
        return None


@dataclass
class RunMeasure:
    """One `fanout run` process, as the kernel and the simulator saw it."""

    wall_s: float
    user_s: float
    sys_s: float
    max_rss_mb: float
    returncode: int
    output_tail: list[str]
    first_request_s: float | None = None
    lag: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_s(self) -> float:
        return self.user_s + self.sys_s


class FirstRequestWatch:
    """Polls the simulator until its chat-request count moves; records when, relative to `t0`."""

    def __init__(self, sim: Simulator, t0: float) -> None:
        self._sim, self._t0 = sim, t0
        self._before = sim.chat_requests()
        self.seen_s: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _poll(self) -> None:
        with httpx.Client(timeout=5.0) as http:
            while not self._stop.is_set():
                count = http.get(f"{self._sim.base}/stats").json()["requests"].get("chat_completions", 0)
                if count > self._before:
                    self.seen_s = time.perf_counter() - self._t0
                    return
                time.sleep(0.002)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def run_fanout(
    snapshot: Path,
    run_dir: Path,
    sim: Simulator,
    *extra: str,
    watch_first_request: bool = False,
) -> RunMeasure:
    """Run `fanout run` to completion against `sim`; measure it from outside."""
    cmd = [
        *FANOUT, "run", str(snapshot), "--run-dir", str(run_dir),
        "--base-url", sim.api, "--searxng-url", sim.base, "--allow-private-urls", "--fetch-delay", "0", *extra,
    ]
    with tempfile.TemporaryDirectory(prefix="fanout-bench-") as tmp:
        lag_path = Path(tmp) / "lag.json"
        out_path = Path(tmp) / "out.txt"
        env = child_env(**{LAG_ENV: str(lag_path)})
        with out_path.open("wb") as out:
            t0 = time.perf_counter()
            watch = FirstRequestWatch(sim, t0) if watch_first_request else None
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
            cpu_wait = CpuWait(proc.pid)
            if watch is not None:
                watch.start()
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: its /proc entry stays
            waited = cpu_wait.stop()
            _pid, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
            proc.returncode = os.waitstatus_to_exitcode(status)
        if watch is not None:
            watch.stop()
        lag = json.loads(lag_path.read_text()) if lag_path.exists() else None
        tail = out_path.read_text(errors="replace").splitlines()[-6:]
    return RunMeasure(
        wall_s=wall, user_s=usage.ru_utime, sys_s=usage.ru_stime, max_rss_mb=usage.ru_maxrss / 1024,
        returncode=proc.returncode, output_tail=tail,
        first_request_s=watch.seen_s if watch is not None else None, lag=lag, extra=waited,
    )


def require_success(measure: RunMeasure, what: str) -> None:
    if measure.returncode != 0:
        raise RuntimeError(f"{what}: fanout run exited {measure.returncode}:\n" + "\n".join(measure.output_tail))


def epoch(iso: str) -> float:
    """A log's timestamp (ISO 8601, Z for UTC) as seconds since the epoch."""
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def log_records(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The run's log, a record at a time: a caller keeps what it needs, so the bench's own memory stays small,
    and a child it starts next does not count it in its peak RSS (the kernel counts the parent's pages until
    exec)."""
    with (run_dir / "checkpoint.jsonl").open("rb") as lines:
        for line in lines:
            yield json.loads(line)


def log_statuses(run_dir: Path) -> dict[str, int]:
    """Status counts over the latest record per pair, read from the log as the report would."""
    latest: dict[tuple[int, str], str] = {}
    for record in log_records(run_dir):
        latest[(record["edit_rcid"], record["model"])] = record["status"]
    counts: dict[str, int] = {}
    for status in latest.values():
        counts[status] = counts.get(status, 0) + 1
    return counts
