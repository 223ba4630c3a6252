"""One extraction worker: a child process that turns page bytes into text, within a memory limit.

extract_pool starts it as `python -m fanout.tools.extract_worker MEMORY_BYTES PARENT_PID TIMEOUT_S`,
or, in an open pool on Linux, forks it from the pool's extraction zygote
(extract_zygote, whose forked child calls `serve` here: the same job loop, its
libraries loaded once by the zygote), and kills it when a page takes too long;
the memory limit (RLIMIT_AS, the whole address space) is the worker's own, set
once its libraries are loaded (after the fork, for a forked one), so a page
that needs more fails with MemoryError here instead of growing the run's
process. The worker ignores SIGINT: the run decides when it stops.

A worker never outlives its run, however the run dies (issue 27: after
`kill -9` of the run, a worker busy on a page went on for 13 s, reparented to
init, because the page's time limit was kept by the dead parent). Three
things end it, each alone enough: the kernel kills it when its parent dies
(Linux's parent-death signal, set before anything slow, then the parent's PID
checked to close the race with a parent that died even earlier; a forked
worker's parent is the zygote, which dies with the run the same way); a thread
that reads its jobs exits the process the moment stdin ends (the parent's end
of the pipe closes with the parent); and each job runs under a wall-clock
alarm and a CPU limit of its own, a little past the page's time limit, whose
default actions end the process even inside native code.

The exchange on stdin/stdout, binary, one job at a time:
    worker -> run, once:    b"ready\\n"
    run -> worker, per job: a JSON header line {"kind", "url", "encoding", "size", "max_pages"}, then `size` bytes
    worker -> run, per job: a JSON header line {"status", "size", "detail", "pages_read", "pages"},
                            then `size` bytes of UTF-8 text
`status` is ok (size 0: no text found), unreadable (a PDF PDFium cannot
open), too_large (the job ran into the memory limit; the worker exits after
replying, and a worker whose peak came that near is not reused) or failed.
"""

from __future__ import annotations

import ctypes
import functools
import json
import math
import os
import queue
import resource
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any, BinaryIO

from fanout.tools.extract import article_text
from fanout.tools.pdf import UnreadablePdf, pdf_text

READY = b"ready\n"
NEAR_LIMIT = 0.9
"""A job whose peak address space reached this share of the limit counts as too large (see _ran_into)."""
PR_SET_PDEATHSIG = 1
"""prctl(2): the signal the kernel sends this process when the thread that started it ends."""
BACKSTOP_MARGIN_S = 2
"""How far past the page's time limit the worker's own alarm and CPU limit end it (the run kills it at the limit)."""
Job = tuple[dict[str, Any], bytes]


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        die_with(int(argv[2]))
    timeout_s = float(argv[3]) if len(argv) > 3 else None
    return serve(int(argv[1]), timeout_s, load=load_libraries)


def serve(limit: int, timeout_s: float | None, *, load: Callable[[], None] | None = None) -> int:
    """The job loop on stdin/stdout, under the memory limit `limit`. `load` runs before the limit is set (a worker
    forked from the extraction zygote has its libraries loaded already, and passes None)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a backstop's SIGXCPU leaves no core file in the cwd
    replies = os.fdopen(os.dup(1), "wb")  # the exchange keeps the real stdout...
    os.dup2(2, 1)  # ...and whatever a library prints goes to stderr instead
    jobs: queue.Queue[Job] = queue.Queue(maxsize=1)
    threading.Thread(target=_read_jobs, args=(sys.stdin.buffer, jobs), daemon=True).start()  # before the limit
    if load is not None:
        load()
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    _send(replies, READY)
    while True:
        job, body = jobs.get()
        with _backstop(timeout_s):
            reply, text = _run(job, body)
        if _ran_into(limit):
            reply, text = {**reply, "status": "too_large"}, b""
        _send(replies, json.dumps({**reply, "size": len(text)}).encode() + b"\n" + text)
        if reply["status"] == "too_large":
            return 0  # a heap that hit the limit is not worth keeping


def die_with(parent_pid: int) -> None:
    """Ask the kernel for SIGKILL when the parent dies; if it already has (we were reparented), end now."""
    libc = _libc()
    if libc is not None:
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(0)


@functools.cache
def _libc() -> ctypes.CDLL | None:
    """Linux's C library, as the symbols this process already has (dlopen of NULL), never through
    ctypes.util.find_library: that runs /sbin/ldconfig as a child process, and a child of the zygote that is
    not a worker looks like one (same command line) until its exec. The zygote finds it, and its forks inherit it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # a Python that cannot load shared libraries
        return None
    return libc if hasattr(libc, "prctl") else None


def _read_jobs(stdin: BinaryIO, jobs: queue.Queue[Job]) -> None:
    """Hand each job to the main thread; end the whole process when stdin ends (the run closed it, or died)
    or breaks the exchange, even while the main thread is deep in a page."""
    try:
        for line in iter(stdin.readline, b""):
            job = json.loads(line)
            body = stdin.read(job["size"])
            if len(body) < job["size"]:
                break
            jobs.put((job, body))
    finally:
        os._exit(0)


class _backstop:
    """SIGALRM and SIGXCPU with their default action (end the process) past the page's time limit."""

    def __init__(self, timeout_s: float | None) -> None:
        self._seconds = math.ceil(timeout_s) + BACKSTOP_MARGIN_S if timeout_s else 0

    def __enter__(self) -> None:
        if self._seconds:
            used = resource.getrusage(resource.RUSAGE_SELF)
            cpu = math.ceil(used.ru_utime + used.ru_stime) + self._seconds
            resource.setrlimit(resource.RLIMIT_CPU, (cpu, resource.RLIM_INFINITY))
            signal.alarm(self._seconds)

    def __exit__(self, *exc: object) -> None:
        if self._seconds:
            signal.alarm(0)
            resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def load_libraries() -> None:
    """Loaded before the memory limit, so the limit is all left for pages; one small page
    warms trafilatura's lazy set-up, which would otherwise count against the first page's time. An
    install without pypdfium2 still reads HTML; a PDF then fails with the ImportError as its reason."""
    try:
        import pypdfium2  # noqa: F401 -- loaded now, under no limit yet (pdf_text imports it when a PDF comes)
    except ImportError:
        pass
    article_text(b"<html><body><article><p>Warm-up text for the extractor.</p></article></body></html>", "utf-8", "")


def _run(job: dict[str, Any], body: bytes) -> tuple[dict[str, Any], bytes]:
    reply: dict[str, Any] = {"status": "ok", "detail": "", "pages_read": None, "pages": None}
    try:
        if job["kind"] == "pdf":
            found = pdf_text(body, max_pages=job["max_pages"])
            reply.update(pages_read=found.pages_read, pages=found.pages)
            return reply, found.text.encode("utf-8", "replace")
        return reply, (article_text(body, job["encoding"], job["url"]) or "").encode("utf-8", "replace")
    except MemoryError:
        return {**reply, "status": "too_large"}, b""
    except UnreadablePdf as exc:
        return {**reply, "status": "unreadable", "detail": str(exc)}, b""
    except Exception as exc:  # noqa: BLE001 -- the run reads every failure as a tool error
        return {**reply, "status": "failed", "detail": f"{type(exc).__name__}: {exc}"}, b""


def _ran_into(limit: int) -> bool:
    """Whether the address space came near the limit: lxml reports a failed allocation as an
    "unknown error" and trafilatura then answers "no text", so the MemoryError never reaches us."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            peak = next((line for line in status if line.startswith("VmPeak:")), "")
    except OSError:
        return False  # no /proc: only a MemoryError that reaches _run tells
    fields = peak.split()
    return len(fields) >= 2 and int(fields[1]) * 1024 >= NEAR_LIMIT * limit


def _send(replies: BinaryIO, data: bytes) -> None:
    replies.write(data)
    replies.flush()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
