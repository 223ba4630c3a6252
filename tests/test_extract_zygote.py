"""An open pool forks its extraction workers from one zygote, and every guarantee of a worker started alone holds.

The zygote loads the libraries once per pool (about 0.8 s of CPU a worker used to pay); what must not change is
what issue 27 and issue 12 bought: no zygote or worker outlives its owner however the owner dies, each worker has
its own memory limit and ignores SIGINT, a worker killed on its page's time limit is replaced (now by a fork),
the run kills a worker through a pidfd (never a PID the kernel may have reused) and reads its exit status (an
abort is "too large"). All real processes, read from /proc; the only bound in time is the guarantee under test
(gone within 1 s), and "busy" is read from a worker's CPU time, never a clock.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
import pytest_asyncio
from anyio.streams.buffered import BufferedByteReceiveStream

from fanout.base.errors import ToolFailure
from fanout.tools import extract_pool
from fanout.tools.extract_forks import Zygote, forking_available
from fanout.tools.extract_pool import ExtractionPool

from extract_procs import alive, children_of, cpu_s, workers_of, zygotes_of, ZYGOTE
from test_extract_orphans import FORKED_BUSY_CPU_S, SLOW_PAGE, job
from test_tools_extraction import ARTICLE, UNCLOSED_P, pdf_with_inflating_content

pytestmark = [pytest.mark.timeout(120),
              pytest.mark.skipif(not forking_available(), reason="workers fork from a zygote on Linux with pidfds")]
URL = "http://127.0.0.1/page"
MEMORY = 512 << 20
OWNER = """
import anyio, sys
from fanout.tools.extract_pool import ExtractionPool
async def main():
    async with ExtractionPool(timeout_s=60.0) as pool:
        await pool.extract("html", sys.stdin.buffer.read(), url="http://127.0.0.1/slow", encoding="utf-8")
anyio.run(main)
"""
"""A process of the test's own that opens a pool and reads the slow page from its stdin."""
AUDITED_ZYGOTE = """
import runpy, sys
SPAWNS = ("os.fork", "os.forkpty", "os.posix_spawn", "os.system", "subprocess.Popen")
sys.addaudithook(lambda event, args: event in SPAWNS and print(event, *args[:1], file=sys.stderr, flush=True))
runpy.run_module("fanout.tools.extract_zygote", run_name="__main__", alter_sys=True)
"""
"""extract_zygote as `python -m` runs it, saying on stderr each process it starts (an audit hook: Python's own
events for fork, exec and spawn)."""


async def article(pool: ExtractionPool) -> str | None:
    return (await pool.extract("html", ARTICLE, url=URL, encoding="utf-8")).text


async def failure(pool: ExtractionPool, page: bytes, outcomes: list[str]) -> None:
    """Extract `page`, which must fail; its reason (the text before the first colon) goes to `outcomes`."""
    try:
        await pool.extract("html", page, url=URL, encoding="utf-8")
    except ToolFailure as exc:
        outcomes.append(str(exc))
    else:
        outcomes.append("ok")


async def gone_within_a_second(pids: list[int]) -> list[int]:
    """The PIDs still alive after at most 1 s."""
    for _ in range(50):
        if not any(alive(pid) for pid in pids):
            break
        await anyio.sleep(0.02)
    return [pid for pid in pids if alive(pid)]


async def busy_worker(owner: int) -> int:
    while True:
        busy = [pid for pid in workers_of(owner) if cpu_s(pid) > FORKED_BUSY_CPU_S]
        if busy:
            return busy[0]
        await anyio.sleep(0.05)


def limit_line(pid: int, name: str) -> list[str]:
    """A line of /proc/PID/limits, split: the soft and hard limits are the last fields but the unit."""
    line = next(line for line in (Path("/proc") / str(pid) / "limits").read_text().splitlines() if line.startswith(name))
    return line[len(name):].split()


def ignores(pid: int, sig: int) -> bool:
    mask = next(line for line in (Path("/proc") / str(pid) / "status").read_text().splitlines()
                if line.startswith("SigIgn:"))
    return bool(int(mask.split()[1], 16) >> (sig - 1) & 1)


async def test_an_open_pool_forks_its_workers_from_one_zygote_that_ends_with_the_pool():
    async with ExtractionPool(workers=2) as pool:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(article, pool)
            tasks.start_soon(article, pool)
        [zygote] = zygotes_of(os.getpid())
        assert len(children_of(zygote, ZYGOTE)) == 2  # two pages at once: two forks of one zygote, both kept warm
    assert (zygotes_of(os.getpid()), workers_of(os.getpid())) == ([], [])

    async with ExtractionPool(workers=2) as pool:
        texts = [await article(pool), await article(pool)]
        [zygote] = zygotes_of(os.getpid())
        [worker] = workers_of(os.getpid())
        assert children_of(zygote, ZYGOTE) == [worker]
        assert children_of(os.getpid(), b"fanout.tools.extract_worker") == []
    assert texts[0] == texts[1] == ("Ada Whitlock\nAda Whitlock, the physicist, died on 12 March 2024 in Tromsø, "
                                    "her family said. She was 91.")
    assert (zygotes_of(os.getpid()), workers_of(os.getpid())) == ([], [])


async def test_a_worker_killed_on_its_page_time_limit_is_replaced_by_a_fork_of_the_same_zygote():
    seen: set[tuple[int, int]] = set()  # (zygote, worker) while the slow page runs
    outcomes: list[str] = []
    async with ExtractionPool(workers=1, timeout_s=1.0) as pool:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(failure, pool, SLOW_PAGE, outcomes)
            while not outcomes:
                seen.update((z, w) for z in zygotes_of(os.getpid()) for w in children_of(z, ZYGOTE))
                await anyio.sleep(0.01)
        [(zygote, killed)] = seen
        assert alive(killed) is False
        text = await article(pool)
        [replacement] = workers_of(os.getpid())
        assert (zygotes_of(os.getpid()), children_of(zygote, ZYGOTE)) == ([zygote], [replacement])
        assert replacement != killed
    assert [outcome.split(":")[0] for outcome in outcomes] == ["extraction_timeout"]
    assert text is not None and text.startswith("Ada Whitlock")


async def test_each_forked_worker_has_its_own_memory_limit_ignores_sigint_and_the_zygote_has_no_limit():
    async with ExtractionPool(workers=1, memory_mb=256) as pool:
        await article(pool)
        [zygote] = zygotes_of(os.getpid())
        [worker] = workers_of(os.getpid())
        assert limit_line(worker, "Max address space") == [str(256 << 20), str(256 << 20), "bytes"]
        assert limit_line(zygote, "Max address space") == ["unlimited", "unlimited", "bytes"]
        assert (ignores(worker, signal.SIGINT), ignores(zygote, signal.SIGINT)) == (True, True)


async def test_a_page_past_the_memory_limit_ends_only_its_worker_and_the_next_page_gets_a_fork():
    async with ExtractionPool(workers=1, memory_mb=256, timeout_s=120.0) as pool:
        with pytest.raises(ToolFailure) as refused:
            await pool.extract("html", UNCLOSED_P, url=URL, encoding="utf-8")
        [zygote] = zygotes_of(os.getpid())
        assert workers_of(os.getpid()) == []
        text = await article(pool)
        assert (zygotes_of(os.getpid()), len(children_of(zygote, ZYGOTE))) == ([zygote], 1)
    assert str(refused.value) == (f"extraction_too_large: reading the text of {URL} needed more than 256 MB and was "
                                  "stopped; use another source")
    assert text is not None and text.startswith("Ada Whitlock")


async def test_a_forked_worker_aborted_by_pdfium_is_read_from_its_exit_status_as_too_large():
    """The abort (SIGABRT) reaches the run only as the exit status the zygote reaped and wrote to the status pipe.
    256 MB: PDFium aborts there too, after a sixth of the CPU it spends filling 512 MB."""
    async with ExtractionPool(memory_mb=256, timeout_s=90) as pool:
        with pytest.raises(ToolFailure) as refused:
            await pool.extract("pdf", pdf_with_inflating_content(50), url=URL)
        assert len(zygotes_of(os.getpid())) == 1
    assert str(refused.value) == (f"extraction_too_large: reading the text of {URL} needed more than 256 MB and was "
                                  "stopped; use another source")


@pytest_asyncio.fixture(scope="class", loop_scope="class")
async def zygote() -> AsyncIterator[Zygote]:
    """One zygote (1 s page limit) for these tests: a zygote costs about 0.8 s of CPU to load the libraries.
    The tests that kill a zygote or end it with its pool start their own."""
    started = await Zygote.start(MEMORY, 1.0, 60.0)
    try:
        yield started
    finally:
        await started.aclose()


@pytest.mark.asyncio(loop_scope="class")
class TestForksOfOneZygote:
    """The tests that fork from a zygote and end only their workers share one, started and ended around them
    (the other tests count this process's zygotes)."""

    async def test_a_worker_is_signalled_through_its_pidfd_which_never_reaches_another_process_once_it_ended(
            self, zygote):
        worker = await zygote.fork()
        assert worker.pid in children_of(zygote.pid, ZYGOTE)
        worker.kill()
        assert await worker.wait() == -signal.SIGKILL  # reaped by the zygote, told over the status pipe
        with pytest.raises(ProcessLookupError):
            worker.kill()  # the pidfd names that process only: gone, even if its PID is handed out again
        await worker.aclose()

    async def test_a_forked_worker_whose_job_pipe_ends_exits_by_itself(self, zygote):
        """The run's end of the jobs pipe closes (the run closed it, or died): the worker's reader thread ends it, with
        status 0, not a signal; the run neither killed it nor had to."""
        worker = await zygote.fork()
        await worker.stdin.aclose()
        assert await worker.wait() == 0
        await worker.aclose()
        assert zygote.pid in zygotes_of(os.getpid())  # the zygote lives on: only its worker ended

    async def test_a_forked_worker_whose_page_overruns_its_own_time_limit_ends_itself_by_its_alarm(self, zygote):
        """The backstop in a fork: nobody kills the worker; 1 s limit + 2 s margin, ended by SIGALRM or SIGXCPU."""
        worker = await zygote.fork()
        assert await BufferedByteReceiveStream(worker.stdout).receive_until(b"\n", 64) == b"ready"
        await worker.stdin.send(job(SLOW_PAGE))
        assert await worker.wait() in (-signal.SIGALRM, -signal.SIGXCPU)
        await worker.aclose()


def test_a_zygote_whose_control_channel_ends_kills_its_workers_and_exits():
    """The exchange of extract_zygote's docstring, spoken by hand: ready, one fork, then the run's end closes.
    The one process the zygote starts is that fork: a child that is not a worker but has the zygote's command line
    (ldconfig, which ctypes.util.find_library ran, before its exec) was once listed as a second worker."""
    ours, theirs = socket.socketpair()
    jobs_out, jobs_in = os.pipe()
    replies_out, replies_in = os.pipe()
    status_out, status_in = os.pipe()
    command = [sys.executable, "-c", AUDITED_ZYGOTE, str(MEMORY), str(os.getpid()), "10.0", str(theirs.fileno())]
    with ours, subprocess.Popen(command, pass_fds=(theirs.fileno(),), stderr=subprocess.PIPE) as zygote:
        theirs.close()
        assert ours.recv(6) == b"ready\n"
        socket.send_fds(ours, [b"fork\n"], [jobs_out, replies_in, status_in])
        for fd in (jobs_out, replies_in, status_in):
            os.close(fd)
        reply, [pidfd], _flags, _address = socket.recv_fds(ours, 11, 1)
        worker = int(reply)
        os.close(pidfd)
        assert os.read(replies_out, 6) == b"ready\n"
        assert children_of(zygote.pid, ZYGOTE) == [worker]
        ours.close()
        assert zygote.wait(timeout=60) == 0
        assert zygote.stderr is not None and zygote.stderr.read() == b"os.fork\n"
    with os.fdopen(status_out, "rb") as status:
        assert status.read() == b"%d\n" % -signal.SIGKILL
    for fd in (jobs_in, replies_out):
        os.close(fd)
    assert alive(worker) is False


async def test_kill_9_of_the_owner_ends_its_zygote_and_its_busy_forked_worker_within_a_second():
    command = [sys.executable, "-c", OWNER]
    async with await anyio.open_process(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as owner:
        assert owner.stdin is not None
        await owner.stdin.send(SLOW_PAGE)
        await owner.stdin.aclose()
        worker = await busy_worker(owner.pid)
        [zygote] = zygotes_of(owner.pid)
        assert children_of(zygote, ZYGOTE) == [worker]
        owner.send_signal(signal.SIGKILL)
        await owner.wait()
        assert await gone_within_a_second([zygote, worker]) == []


async def test_kill_9_of_the_zygote_ends_its_busy_worker_and_the_pool_starts_another_zygote():
    outcomes: list[str] = []
    async with ExtractionPool(workers=1, timeout_s=60.0) as pool:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(failure, pool, SLOW_PAGE, outcomes)
            worker = await busy_worker(os.getpid())
            [zygote] = zygotes_of(os.getpid())
            os.kill(zygote, signal.SIGKILL)
            assert await gone_within_a_second([worker]) == []
        text = await article(pool)
        [second] = zygotes_of(os.getpid())
        assert second != zygote
    assert [outcome.split(" (")[0] for outcome in outcomes] == [f"extraction_failed: the text of {URL} could not be read"]
    assert text is not None and text.startswith("Ada Whitlock")


def test_a_zygote_started_after_its_parent_died_ends_at_once_without_loading_anything():
    ours, theirs = socket.socketpair()
    with ours, theirs:
        zygote = subprocess.run(
            [sys.executable, "-m", "fanout.tools.extract_zygote", str(MEMORY), "1" if os.getpid() != 1 else "2",
             "10.0", str(theirs.fileno())], pass_fds=(theirs.fileno(),), timeout=60, check=False)
        theirs.close()
        assert (zygote.returncode, ours.recv(64)) == (0, b"")


async def test_without_pidfds_an_open_pool_starts_each_worker_alone(monkeypatch):
    monkeypatch.setattr(extract_pool, "forking_available", lambda: False)
    async with ExtractionPool(workers=1) as pool:
        await article(pool)
        assert (zygotes_of(os.getpid()), len(children_of(os.getpid(), b"fanout.tools.extract_worker"))) == ([], 1)
    assert workers_of(os.getpid()) == []
