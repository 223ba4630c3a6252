"""Page text made in a small pool of worker processes, each bounded in time and memory.

Extraction cannot run in the run's process: a thread cannot be stopped, so
one malformed page (2 MB of unclosed <p> tags: minutes of CPU, 400 MB) held
its verdict past --timeout and grew the run's memory. Here each page goes to
a worker process (extract_worker) under a memory limit of its own; a page
that takes longer than `timeout_s`, or a verdict cancelled while it waits,
kills that worker, and the next page starts a fresh one (forked from the
pool's zygote, extract_zygote: the libraries are loaded once per open pool,
not per worker, and a replacement is ready in milliseconds). So a verdict's
deadline holds through extraction, and no page can take the run's process
past its size or a worker past `memory_mb`.

    async with ExtractionPool.from_settings(settings) as pool:   # keeps up to `workers` warm
        found = await pool.extract("html", body, url=url, encoding="utf-8")

Outside `async with` the pool still works, one worker per page, started and
stopped within the call (`fanout tool web_fetch`, tests), each started alone
(as everywhere without Linux's pidfds): no process outlives the call that
started it. Workers start only when a page first needs one, at
most `workers` exist at any moment (each is started, used and stopped inside
one of the `workers` slots, and only as many are kept warm), and none outlives
this process, however it dies (see extract_worker). An open pool's zygote
starts with its first worker, is the one process beside them (it reads no
page), and ends when the pool closes or this process dies (see extract_zygote).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from contextlib import suppress
from types import TracebackType
from typing import Literal, NamedTuple

import anyio
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from fanout.tools.settings import ToolSettings
from fanout.base.errors import ToolFailure
from fanout.tools.extract_forks import ForkedWorker, Zygote, ZygoteLost, forking_available
from fanout.tools.pdf import UnreadablePdf

Kind = Literal["html", "pdf"]
WORKER_MODULE = "fanout.tools.extract_worker"
START_TIMEOUT_S = 60.0
"""A worker imports trafilatura before it is ready: under a second, more on a loaded machine."""
HEADER_LIMIT = 64 * 1024
LOST_GRACE_S = 1.0
"""How long a worker whose pipe closed may take to exit by itself before it is killed (an abort ends in ms)."""
_LOST = (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.DelimiterNotFound,
         anyio.ClosedResourceError, json.JSONDecodeError, KeyError, TypeError)
"""What reading a worker's reply raises when the worker died or answered nonsense."""


class ExtractedText(NamedTuple):
    text: str | None
    """None when the page holds no text the extractor could find."""
    pages_read: int | None = None
    """For a PDF: the pages read (at most max_pdf_pages) ..."""
    pages: int | None = None
    """... of this many."""


class _Reply(NamedTuple):
    status: str
    detail: str
    found: ExtractedText


class WorkerLost(Exception):
    """The worker died or broke the exchange (killed by the kernel, a crash in a native library)."""


class ExtractionPool:
    """At most `workers` extraction processes; each page's work bounded by `timeout_s` and `memory_mb`."""

    def __init__(self, *, workers: int = 2, timeout_s: float = 10.0, memory_mb: int = 512,
                 max_pdf_pages: int = 50) -> None:
        self._slots = anyio.Semaphore(workers)
        self._timeout_s = timeout_s
        self._memory_bytes = memory_mb * 1024 * 1024
        self._memory_mb = memory_mb
        self._max_pdf_pages = max_pdf_pages
        self._idle: list[_Worker] = []
        self._open = False
        self._zygote: Zygote | None = None
        self._zygote_lock = anyio.Lock()

    @classmethod
    def from_settings(cls, settings: ToolSettings) -> ExtractionPool:
        return cls(workers=settings.extract_workers, timeout_s=settings.extract_timeout_s,
                   memory_mb=settings.extract_memory_mb, max_pdf_pages=settings.pdf_max_pages)

    async def __aenter__(self) -> ExtractionPool:
        self._open = True
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        self._open = False
        while self._idle:
            await self._idle.pop().stop()
        with anyio.CancelScope(shield=True):
            async with self._zygote_lock:  # a zygote being started is started, then closed here
                zygote, self._zygote = self._zygote, None
            if zygote is not None:
                await zygote.aclose()

    async def extract(self, kind: Kind, body: bytes, *, url: str, encoding: str | None = None) -> ExtractedText:
        """The page's text; ToolFailure (extraction_timeout, ...) when the worker overran or failed."""
        job = {"kind": kind, "url": url, "encoding": encoding, "size": len(body), "max_pages": self._max_pdf_pages}
        async with self._slots:
            reply = await self._run(json.dumps(job).encode() + b"\n" + body, url)
        return self._read(reply, kind, url)

    async def _run(self, job: bytes, url: str) -> _Reply:
        """One job on a warm worker or a new one; the worker is kept only if it finished cleanly."""
        worker = self._idle.pop() if self._idle else await self._new_worker()
        keep = False
        try:
            with anyio.move_on_after(self._timeout_s):
                reply = await worker.run(job)
                keep = self._open and reply.status != "too_large"
                return reply
        except WorkerLost as exc:
            await worker.stop(grace_s=LOST_GRACE_S)
            if worker.aborted:
                raise self._too_large(url) from exc
            raise ToolFailure(f"extraction_failed: the text of {url} could not be read ({exc})") from exc
        finally:
            if keep:
                self._idle.append(worker)
            else:
                await worker.stop()
        raise ToolFailure(
            f"extraction_timeout: reading the text of {url} took longer than {self._timeout_s:g} s and was "
            "stopped (the page is probably malformed or huge); use another source"
        )

    async def _new_worker(self) -> _Worker:
        """A worker forked from the pool's zygote while the pool is open (Linux); otherwise one started alone."""
        if not (self._open and forking_available()):
            return await _Worker.start(self._memory_bytes, self._timeout_s)
        try:
            return await _Worker.ready(await self._fork())
        except ZygoteLost as exc:
            raise ToolFailure(f"extraction_failed: {exc}") from exc

    async def _fork(self) -> ForkedWorker:
        """A fork of the zygote, started with the first worker. A zygote that fails is closed, and one new zygote
        is tried at once (the old one may have been killed since its last fork); a new one that fails, fails."""
        zygote, started = await self._running_zygote()
        try:
            return await self._fork_from(zygote)
        except ZygoteLost:
            if started:
                raise
        zygote, _ = await self._running_zygote()
        return await self._fork_from(zygote)

    async def _fork_from(self, zygote: Zygote) -> ForkedWorker:
        try:
            return await zygote.fork()
        except ZygoteLost:
            if self._zygote is zygote:
                self._zygote = None
            await zygote.aclose()
            raise

    async def _running_zygote(self) -> tuple[Zygote, bool]:
        """The pool's zygote, and whether it was started just now."""
        async with self._zygote_lock:
            if not self._open:  # closed while this page waited: no zygote may start that nothing would close
                raise ZygoteLost("the extraction pool was closed")
            if self._zygote is not None:
                return self._zygote, False
            self._zygote = await Zygote.start(self._memory_bytes, self._timeout_s, START_TIMEOUT_S)
            return self._zygote, True

    def _read(self, reply: _Reply, kind: Kind, url: str) -> ExtractedText:
        if reply.status == "ok":
            return reply.found
        if reply.status == "too_large":
            raise self._too_large(url)
        if reply.status == "unreadable":
            raise UnreadablePdf(f"unreadable_pdf: {url} is a PDF that could not be opened ({reply.detail}); "
                                "it may be damaged or encrypted")
        raise ToolFailure(f"extraction_failed: the text of {url} could not be read ({reply.detail})")


    def _too_large(self, url: str) -> ToolFailure:
        return ToolFailure(f"extraction_too_large: reading the text of {url} needed more than "
                           f"{self._memory_mb} MB and was stopped; use another source")


class _Worker:
    """One extract_worker process and the buffered end of its replies."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self._process = process
        self._jobs = process.stdin
        self._replies = BufferedByteReceiveStream(process.stdout)
        self._stopped = False

    @classmethod
    async def start(cls, memory_bytes: int, timeout_s: float) -> _Worker:
        """The worker is told this process's PID and the page time limit: it dies with us and keeps the limit itself."""
        return await cls.ready(await anyio.open_process(
            [sys.executable, "-m", WORKER_MODULE, str(memory_bytes), str(os.getpid()), repr(timeout_s)],
            stderr=subprocess.DEVNULL,
        ))

    @classmethod
    async def ready(cls, process: Process) -> _Worker:
        """The worker once it said it is ready (its libraries loaded, its memory limit set)."""
        worker = cls(process)
        try:
            with anyio.fail_after(START_TIMEOUT_S):
                ready = await worker._replies.receive_until(b"\n", HEADER_LIMIT)
        except (*_LOST, TimeoutError) as exc:
            await worker.stop()
            raise ToolFailure(f"extraction_failed: the extraction worker did not start ({type(exc).__name__})") from exc
        except BaseException:
            await worker.stop()
            raise
        if ready != b"ready":
            await worker.stop()
            raise ToolFailure(f"extraction_failed: the extraction worker did not start (it said {ready[:80]!r})")
        return worker

    async def run(self, job: bytes) -> _Reply:
        try:
            await self._jobs.send(job)
            header = json.loads(await self._replies.receive_until(b"\n", HEADER_LIMIT))
            size = header["size"]
            text = (await self._replies.receive_exactly(size)).decode("utf-8", "replace") if size else ""
            found = ExtractedText(text.strip() or None, header["pages_read"], header["pages"])
            return _Reply(header["status"], header["detail"], found)
        except _LOST as exc:
            raise WorkerLost(f"the extraction worker ended unexpectedly: {type(exc).__name__}") from exc

    @property
    def aborted(self) -> bool:
        """Whether native code aborted the worker (SIGABRT): what PDFium does when an allocation fails under the
        worker's memory limit (a 150 KB PDF whose content inflates to 50 MB did, 512 MB limit), where Python code
        would have raised MemoryError. Read once the worker is reaped."""
        return self._process.returncode == -signal.SIGABRT

    async def stop(self, grace_s: float = 0.0) -> None:
        """Kill and reap, shielded: this runs while a cancelled verdict unwinds, and must finish. `grace_s` lets a
        worker whose pipe already closed finish dying on its own first, so its own exit (an abort) is what is read,
        not the kill that would otherwise overtake it on a loaded machine."""
        if self._stopped:
            return
        self._stopped = True
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(grace_s):
                await self._process.wait()
            with suppress(ProcessLookupError):
                self._process.kill()
            await self._process.aclose()
