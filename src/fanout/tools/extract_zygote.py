"""The extraction zygote: one process per pool that loads the extraction libraries once and forks workers from them.

A worker started as a fresh `python -m fanout.tools.extract_worker` pays about
0.8 s of CPU (Python, trafilatura, justext's stoplists) before its first page,
and again for every worker killed on a page's time limit. extract_pool starts
this process once per open pool instead, as
`python -m fanout.tools.extract_zygote MEMORY_BYTES PARENT_PID TIMEOUT_S CONTROL_FD`,
and each worker is a fork of it: ready in milliseconds, its libraries already loaded.

The control channel is a Unix socket (CONTROL_FD), one exchange at a time:
    zygote -> run, once:     b"ready\\n"
    run -> zygote, per fork: b"fork\\n" with three file descriptors: the worker's stdin (its jobs), its stdout
                             (its replies), and the write end of a pipe for its exit status
    zygote -> run:           b"%10d\\n" % pid with one descriptor, a pidfd of the worker (the run kills it
                             through the pidfd: no PID that the kernel has reused can be hit)
When a worker ends, the zygote reaps it and writes its exit status (b"%d\\n", negative for a signal, as
subprocess reports it) to its status pipe, then closes that pipe; the run reads SIGABRT there as "too large".

The forked child is an extract_worker in every way that matters (extract_worker.serve: the same exchange on
its stdin and stdout, SIGINT ignored, the backstop alarm and CPU limit per job, exiting when its stdin ends);
it sets its own memory limit (RLIMIT_AS) after the fork, so each worker has the whole limit for its pages.

Nothing here outlives the run, however it dies: the zygote asks for SIGKILL when the run dies and checks
the run's PID it was given (extract_worker.die_with), and ends, killing its workers, when the control channel
ends (the run closed it, or died); each worker asks for SIGKILL when the zygote dies and checks the zygote's PID.
Linux only (pidfd, parent-death signal); elsewhere the pool starts each worker as its own process.
"""

from __future__ import annotations

import gc
import os
import selectors
import signal
import socket
import sys
import threading
import traceback
from contextlib import suppress
from typing import NamedTuple, NoReturn

from fanout.tools.extract_worker import die_with, load_libraries, serve

READY = b"ready\n"
FORK = b"fork\n"
FORKED_SIZE = 11
"""The reply to a fork: the worker's PID as b"%10d\\n"."""


class _Child(NamedTuple):
    pid: int
    status: int
    """The write end of the pipe that gets the child's exit status."""


def main(argv: list[str]) -> int:
    die_with(int(argv[2]))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run decides when its zygote stops
    limit, timeout_s = int(argv[1]), float(argv[3])
    control = socket.socket(fileno=int(argv[4]))
    load_libraries()
    _warm_thread_arena()
    gc.freeze()  # a worker's garbage collections skip the loaded libraries' objects, so their pages stay shared
    control.sendall(READY)
    children: dict[int, _Child] = {}
    try:
        _serve(control, children, limit, timeout_s)
    finally:
        _end_all(children)
    return 0


def _warm_thread_arena() -> None:
    """Start and end one thread that allocates, so its malloc arena exists (free) before any fork: a worker's
    job-reading thread takes it over instead of mapping a new one under the memory limit, and the worker's address
    space and its peak (what extract_worker reads as "ran into the limit") start where a worker started alone does."""
    thread = threading.Thread(target=lambda: bytearray(1 << 16))
    thread.start()
    thread.join()


def _serve(control: socket.socket, children: dict[int, _Child], limit: int, timeout_s: float) -> None:
    """Fork on request and reap the workers that end, until the control channel ends."""
    with selectors.DefaultSelector() as selector:
        selector.register(control, selectors.EVENT_READ)
        while True:
            for key, _ in selector.select():
                if key.fileobj is not control:
                    _reap(children.pop(key.fd))
                    selector.unregister(key.fd)
                    os.close(key.fd)
                    continue
                message, fds, _flags, _address = socket.recv_fds(control, len(FORK), 3)
                if message != FORK or len(fds) != 3:
                    for fd in fds:
                        os.close(fd)
                    return  # the run closed the channel (or broke it): end, with the workers
                child, pidfd = _fork(*fds, limit=limit, timeout_s=timeout_s)
                children[pidfd] = child  # before the reply: a run gone by now still has this child killed
                selector.register(pidfd, selectors.EVENT_READ)
                socket.send_fds(control, [b"%10d\n" % child.pid], [pidfd])


def _fork(jobs: int, replies: int, status: int, *, limit: int, timeout_s: float) -> tuple[_Child, int]:
    """Fork one worker on these pipes; the zygote keeps the status pipe and a pidfd (the run gets a copy of it)."""
    zygote = os.getpid()
    pid = os.fork()
    if pid == 0:
        _become_worker(zygote, jobs, replies, limit, timeout_s)
    os.close(jobs)
    os.close(replies)
    return _Child(pid, status), os.pidfd_open(pid)


def _become_worker(zygote: int, jobs: int, replies: int, limit: int, timeout_s: float) -> NoReturn:
    """In the forked child: die with the zygote, take the pipes as stdin and stdout, close every other descriptor
    the zygote holds (its control channel, its other workers' pipes), and serve jobs. Never returns into the
    zygote's loop: os._exit, so none of the zygote's clean-up runs twice."""
    code = 1
    try:
        die_with(zygote)
        os.dup2(jobs, 0)
        os.dup2(replies, 1)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        code = serve(limit, timeout_s)
    except BaseException:  # noqa: BLE001 -- a worker that cannot serve says why on stderr and ends
        traceback.print_exc()
    finally:
        os._exit(code)


def _reap(child: _Child) -> None:
    """Wait for an ended worker and tell the run its exit status (the run may have closed its end already)."""
    _pid, status = os.waitpid(child.pid, 0)
    with suppress(OSError):
        os.write(child.status, b"%d\n" % os.waitstatus_to_exitcode(status))
    os.close(child.status)


def _end_all(children: dict[int, _Child]) -> None:
    """Kill the workers still running (through their pidfds) and reap them: none outlives its zygote."""
    for pidfd, child in children.items():
        with suppress(ProcessLookupError):
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        _reap(child)
        os.close(pidfd)
    children.clear()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
