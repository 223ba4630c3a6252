"""Invariant 8: one process owns a run directory at a time, through an OS lock that dies with its holder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest

from fanout.cli import main
from fanout.base.validate import package_data
from fanout.sim import running_simulator
from fanout.store.run_lock import lock_holder

from test_cli_run import LOCAL, one_line_error, scripted_run
from test_run_resilience import (assert_one_record_and_one_matching_view_per_pair, pairs_of, run_command,
                                 log_lines, sim_config, wait_for_lines)
from warm import WarmInterpreter

SAMPLE = package_data("sample_snapshot.yaml")
pytestmark = pytest.mark.timeout(60)

HOLDER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from fanout.store.run_lock import hold_run_lock
    with hold_run_lock(Path(sys.argv[1])):
        print("locked", flush=True)
        sys.stdin.read()
""")


@contextmanager
def holder_of(run_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process that owns `run_dir`, as a running `fanout run` would, from the moment it says so."""
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(run_dir)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as holder:
        try:
            assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
            yield holder
        finally:
            holder.kill()


def files_of(run_dir: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}


def test_a_second_run_on_a_directory_in_use_exits_2_at_once_naming_the_holder_and_writes_nothing(tmp_path, capsys):
    run_dir = tmp_path / "run"
    scripted_run(SAMPLE, run_dir)
    with holder_of(run_dir) as holder:
        before = files_of(run_dir)
        capsys.readouterr()
        code = main(["run", str(SAMPLE), "--run-dir", str(run_dir), *LOCAL, "--models", "m/a", "m/b", "--limit", "3"])
        assert code == 2
        assert one_line_error(capsys) == (
            f"fanout run: error: {run_dir} is in use by another `fanout run` (PID {holder.pid}); "
            "wait for it to finish or stop it, or pass another --run-dir"
        )
        assert files_of(run_dir) == before


def test_status_and_report_read_a_run_whose_directory_is_locked(tmp_path, capsys):
    run_dir = tmp_path / "run"
    scripted_run(SAMPLE, run_dir)
    with holder_of(run_dir):
        capsys.readouterr()
        assert main(["status", str(run_dir)]) == 0
        assert capsys.readouterr().out.startswith(f"{run_dir}: 4/4 pairs done (100%)")
        assert main(["report", str(run_dir), "-q", "--json"]) == 0
        assert capsys.readouterr().out == f"wrote {run_dir / 'report.json'}\n"


def test_the_lock_of_a_killed_run_never_blocks_the_resume(tmp_path):
    run_dir = tmp_path / "run"
    with holder_of(run_dir) as holder:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()
    assert (run_dir / "run.lock").read_text() == f"{holder.pid}\n"  # the file stays; the lock went with its process
    scripted_run(SAMPLE, run_dir, limit=3)
    assert len((run_dir / "checkpoint.jsonl").read_text().splitlines()) == 6
    assert (run_dir / "run.lock").read_text() == f"{os.getpid()}\n"


@pytest.mark.timeout(300)  # two `fanout run` processes: past the module's 60 s at a load average of 16 on 2 CPUs
async def test_deleting_run_lock_while_a_run_works_lets_no_second_run_in_and_no_pair_is_logged_twice(tmp_path):
    """Finding 2 of issue 27: with the lock on the file `run.lock`, deleting it admitted a second run (7 of 8 pairs
    logged twice). The lock is on the directory now: the second start is refused in one line naming the first.
    Both are processes of their own, forked from a warm interpreter (tests/warm.py) to spare two starts' imports."""
    run_dir = tmp_path / "run"
    with WarmInterpreter() as warm:
        async with running_simulator(sim_config(latency={"median_s": 0.3, "p95_s": 0.6})) as sim:
            cmd = run_command(sim, run_dir, "--limit", "3", "--concurrency", "2")
            first = warm.start(cmd)
            await wait_for_lines(run_dir, 1, first)
            (run_dir / "run.lock").unlink()
            assert lock_holder(run_dir) == first.pid  # what `fanout status` asks, answered without the file
            code, output = await warm.run(cmd, tmp_path / "second.txt")
            assert (code, output) == (2, f"fanout run: error: {run_dir} is in use by another `fanout run` "
                                         f"(PID {first.pid}); wait for it to finish or stop it, or pass another --run-dir\n")
            assert len(log_lines(run_dir)) < 12, "the first run ended before the second start: the test proves nothing"
            sim.state.latency_scale = 0.0  # refused: the first run need not finish slowly
            assert await first.wait() == 0  # a failure above: the first run is killed as the warm interpreter ends
    assert_one_record_and_one_matching_view_per_pair(run_dir, pairs_of(3))


def tree(folder: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


@pytest.mark.parametrize(("make", "run_dir_of", "message"), [
    (lambda tmp: (tmp / "a-file").write_text("mine\n"), lambda tmp: str(tmp / "a-file"),
     "--run-dir {tmp}/a-file is a file, not a folder; pass a folder (it is made if missing)"),
    (lambda tmp: (tmp / "gone").symlink_to(tmp / "nowhere"), lambda tmp: str(tmp / "gone"),
     "--run-dir {tmp}/gone is a broken link, not a folder; pass a folder (it is made if missing)"),
    (None, lambda tmp: "/dev/null", "--run-dir /dev/null is a device, not a folder; pass a folder (it is made if missing)"),
    (None, lambda tmp: "/proc/self",
     "--run-dir /proc/self cannot be written (/proc/self is read-only for this user); pass a folder you can write"),
    (None, lambda tmp: "/proc/self/fdinfo/run",
     "--run-dir /proc/self/fdinfo/run cannot hold a run (No such file or directory: /proc/self/fdinfo/run); "
     "pass a folder you can write"),
    (None, lambda tmp: "", "--run-dir is empty; name a folder (--run-dir . for the current one)"),
], ids=["file", "broken-link", "dev-null", "proc-self", "inside-proc", "empty"])
def test_an_unusable_run_directory_is_refused_in_one_line_with_exit_2_and_nothing_written(
        tmp_path, monkeypatch, capsys, make, run_dir_of, message):
    """Issue 27 §7: each gave a traceback, and `--run-dir ""` silently ran in the current folder."""
    if make is not None:
        make(tmp_path)
    monkeypatch.chdir(tmp_path)  # where `--run-dir ""` used to write
    before = tree(tmp_path)

    code = main(["run", str(SAMPLE), "--run-dir", run_dir_of(tmp_path), *LOCAL, "--models", "m/a", "--limit", "1"])

    assert code == 2
    assert one_line_error(capsys) == "fanout run: error: " + message.format(tmp=tmp_path)
    assert tree(tmp_path) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder (chmod binds other users only)")
def test_a_read_only_run_directory_is_refused_in_one_line_with_exit_2_and_nothing_written(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        code = main(["run", str(SAMPLE), "--run-dir", str(locked / "run"), *LOCAL, "--models", "m/a", "--limit", "1"])
        assert code == 2
        assert one_line_error(capsys) == (f"fanout run: error: --run-dir {locked}/run cannot be written ({locked} is "
                                          "read-only for this user); pass a folder you can write")
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o755)


def test_the_lock_holder_is_found_by_device_and_inode_not_by_inode_alone(tmp_path, monkeypatch):
    """/proc/locks names a file `MAJOR:MINOR:INODE` (hex device numbers): the same inode on another file system
    is another directory, whose holder must not be named as this run's."""
    from fanout.store import run_lock

    info = tmp_path.stat()
    here = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    elsewhere = f"{os.major(info.st_dev) + 1:02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    table = tmp_path / "locks"
    monkeypatch.setattr(run_lock, "KERNEL_LOCKS", table)
    table.write_text(f"1: FLOCK  ADVISORY  WRITE 4242 {elsewhere} 0 EOF\n")
    assert lock_holder(tmp_path) is None
    table.write_text(f"1: FLOCK  ADVISORY  WRITE 4242 {elsewhere} 0 EOF\n2: FLOCK  ADVISORY  WRITE 5151 {here} 0 EOF\n")
    assert lock_holder(tmp_path) == 5151
