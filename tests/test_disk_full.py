"""A full disk stops a run cleanly: what is finished stays, nothing half-written is left, the same command resumes.

The disk is a real one: a small tmpfs mounted in a user and mount namespace
(`unshare -rm`, no root needed where unprivileged namespaces are allowed), so
ENOSPC comes from the kernel exactly as on a full disk. `fanout run` runs in
that namespace against the simulator on 127.0.0.1, which the namespace shares.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from fanout.base.validate import package_data
from fanout.sim import SimConfig, running_simulator

from test_run_resilience import ALL_PAIRS, assert_one_record_and_one_matching_view_per_pair
from warm import PRELOAD

SAMPLE = package_data("sample_snapshot.yaml")
LEFT_FREE = 384 * 1024
"""Bytes the filler leaves free on the tmpfs: room for the tool cache and a few verdicts (about 30 KB each with their views), not for the 40 still to run."""

pytestmark = pytest.mark.timeout(300)


def namespaces_allowed() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


SESSIONS = r"""
import json, os, subprocess, sys

mnt, out, left_free, tests, preload, *fanout_args = sys.argv[1:]
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "none", mnt], check=True)
sys.path.insert(0, tests)
from warm import become

for name in json.loads(preload):
    __import__(name)


def session(args, output):
    # `python -m fanout ARGS` as a process of its own, forked from this interpreter: its exit status.
    pid = os.fork()
    if pid:
        return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    out_fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    request = {"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    become(request, [os.open(os.devnull, os.O_RDONLY), out_fd, out_fd])
    raise SystemExit(0)  # as `python -m fanout` when main returns: the child's exit, here or in the run


def copy_run(to):
    subprocess.run(["cp", "-a", f"{mnt}/run", f"{out}/{to}"], check=True)


if session([*fanout_args, "--limit", "2"], os.devnull) != 0:
    print("first session failed")
    raise SystemExit(9)
avail = int(subprocess.run(["df", "--output=avail", "-B1", mnt], capture_output=True, text=True,
                           check=True).stdout.split()[-1])
subprocess.run(["fallocate", "-l", str(avail - int(left_free)), f"{mnt}/filler"], check=True)
with open(f"{out}/full.rc", "w") as rc:
    rc.write(f"{session(fanout_args, f'{out}/full.txt')}\n")
copy_run("after-full")
os.remove(f"{mnt}/filler")
with open(f"{out}/resumed.rc", "w") as rc:
    rc.write(f"{session(fanout_args, f'{out}/resumed.txt')}\n")
copy_run("resumed")
"""
"""Inside the namespace: the tmpfs, then three sessions of the same `fanout run` (a first one of 2 edits, one on
the full disk, the resume once the filler is gone), each its own process forked from this interpreter, which
imported what a run imports once (tests/warm.py's PRELOAD) rather than three times (a second of CPU each), and
made into the run as tests/warm.py makes its children (warm.become)."""


@pytest.mark.skipif(not namespaces_allowed(), reason="needs `unshare -rm` (unprivileged user namespaces)")
async def test_enospc_stops_like_ctrl_c_keeps_what_finished_leaves_no_temp_file_and_the_same_command_resumes(tmp_path):
    mnt, out = tmp_path / "mnt", tmp_path / "out"
    mnt.mkdir()
    out.mkdir()
    async with running_simulator(SimConfig(seed=3)) as sim:
        fanout = ["run", str(SAMPLE), "--run-dir", str(mnt / "run"),
                  "--base-url", sim.api_base, "--searxng-url", sim.searxng_url, "--allow-private-urls",
                  "--fetch-delay", "0", "--concurrency", "8"]
        done = await anyio.run_process(["unshare", "-rm", sys.executable, "-c", SESSIONS, str(mnt), str(out),
                                        str(LEFT_FREE), str(Path(__file__).parent), json.dumps(PRELOAD["run"]),
                                        *fanout],
                                       check=False, stderr=subprocess.STDOUT)
    assert done.returncode == 0, done.stdout.decode()
    full = (out / "full.txt").read_text()
    assert (out / "full.rc").read_text() == "75\n", full
    stopped = [line for line in full.splitlines() if line.startswith("Stopped: ")]
    assert len(stopped) == 1 and stopped[0].startswith(f"Stopped: disk full at {mnt / 'run'}/"), full
    assert "; free space and run the same command: fanout run " in stopped[0]
    assert "Traceback" not in full
    after = out / "after-full"
    assert sorted(p.name for p in after.rglob("*tmp*")) == []
    kept = [json.loads(line) for line in (after / "checkpoint.jsonl").read_text().splitlines()]
    assert 8 < len(kept) < 48 and len({(r["edit_rcid"], r["model"]) for r in kept}) == len(kept)
    assert (out / "resumed.rc").read_text() == "0\n", (out / "resumed.txt").read_text()
    assert f"{len(kept)}/48 pairs already done" in (out / "resumed.txt").read_text(), (out / "resumed.txt").read_text()
    assert_one_record_and_one_matching_view_per_pair(out / "resumed", ALL_PAIRS)


# --- the same, file by file, on /dev/full (ENOSPC from the kernel on every write, anywhere) -----------------------

needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")


@needs_dev_full
def test_a_view_that_does_not_fit_is_disk_full_naming_it_and_leaves_no_temp_file(tmp_path):
    from fanout.base.errors import DiskFull
    from fanout.store.atomic import write_atomically

    target = tmp_path / "view.yaml"
    (tmp_path / ".view.yaml.tmp").symlink_to("/dev/full")
    with pytest.raises(DiskFull, match=f"^disk full at {target}; free space and run the same command$"):
        write_atomically(target, "verdict: plausible\n" * 1000)
    assert list(tmp_path.iterdir()) == []


@needs_dev_full
def test_a_log_line_that_does_not_fit_is_disk_full_and_an_index_that_does_not_fit_is_skipped(tmp_path):
    import os

    from fanout.base.errors import DiskFull
    from fanout.store.checkpoint import CheckpointWriter, LogEntry, LogIndex
    from test_orchestrator import MODELS, make_edits, record_for

    writer = CheckpointWriter(tmp_path, LogIndex())
    writer._fh.close()
    writer._fh = open("/dev/full", "ab", buffering=0)  # the log is never opened through a link: full in its place
    with pytest.raises(DiskFull, match="^disk full at .*checkpoint.jsonl;"):
        writer.append(record_for(make_edits(1)[0], MODELS[0]))
    assert writer.out_of_space is not None and list((tmp_path / "verdicts").iterdir()) == []
    writer.index.put((1, "m/a"), LogEntry("ok", 0.001, "view.yaml"), 10)  # something to save
    (tmp_path / f".checkpoint.index.{os.getpid()}.tmp").symlink_to("/dev/full")
    writer.close()  # the index is a cache: not saved, and no error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.jsonl", "verdicts"]

