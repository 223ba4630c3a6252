"""The run's end of the extraction zygote (extract_zygote): starting it, asking it for workers, stopping it.

A forked worker is handed to extract_pool as an anyio `Process` (`ForkedWorker`), so the pool drives it exactly
like a worker it started itself: the same exchange on its stdin and stdout, `kill`, `wait`, `returncode`. The
differences stay here: the worker is the zygote's child, not ours, so it is killed through a pidfd (no PID reuse
can misdirect the signal) and its exit status comes from the zygote, which reaps it, over a pipe of its own.

Each exchange with the zygote runs shielded and under a deadline: a fork request whose reply was left unread by
a cancelled caller would hand the next caller the wrong worker. A zygote that fails an exchange is not asked
again: the pool closes it and starts another for its next page.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from contextlib import suppress
from functools import cache

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process, UNIXSocketStream
from anyio.lowlevel import checkpoint

from fanout.tools.extract_zygote import FORK, FORKED_SIZE, READY

ZYGOTE_MODULE = "fanout.tools.extract_zygote"
EXCHANGE_TIMEOUT_S = 10.0
"""A fork is milliseconds; this only bounds a zygote that stopped answering (frozen, swapped out)."""
UNKNOWN_EXIT = -signal.SIGKILL
"""The exit status of a worker whose zygote ended before reporting it: the zygote's death killed it."""


class ZygoteLost(Exception):
    """The zygote did not start, or ended or broke an exchange."""


@cache
def forking_available() -> bool:
    """Whether workers can be forked from a zygote here: Linux with pidfds (kernel 5.3) and descriptor passing."""
    if not (sys.platform.startswith("linux") and hasattr(os, "pidfd_open") and hasattr(socket, "send_fds")):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class Zygote:
    """One extract_zygote process and the run's end of its control channel."""

    def __init__(self, process: Process, control: UNIXSocketStream) -> None:
        self._process = process
        self._control = control
        self._lock = anyio.Lock()

    @classmethod
    async def start(cls, memory_bytes: int, timeout_s: float, start_timeout_s: float) -> Zygote:
        """The zygote is told this process's PID (it dies with us) and the workers' memory and time limits."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            process = await anyio.open_process(
                [sys.executable, "-m", ZYGOTE_MODULE, str(memory_bytes), str(os.getpid()), repr(timeout_s),
                 str(theirs.fileno())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),))
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        zygote = cls(process, await UNIXSocketStream.from_socket(ours))
        try:
            with anyio.fail_after(start_timeout_s):
                ready = await zygote._control.receive(len(READY))
        except (anyio.EndOfStream, anyio.BrokenResourceError, TimeoutError) as exc:
            await zygote.aclose()
            raise ZygoteLost(f"the extraction zygote did not start ({type(exc).__name__})") from exc
        except BaseException:
            await zygote.aclose()
            raise
        if ready != READY:
            await zygote.aclose()
            raise ZygoteLost(f"the extraction zygote did not start (it said {ready[:80]!r})")
        return zygote

    @property
    def pid(self) -> int:
        return self._process.pid

    async def fork(self) -> ForkedWorker:
        """A new worker, forked from the zygote, on pipes made here (the run keeps one end of each)."""
        jobs_out, jobs_in = os.pipe()
        replies_out, replies_in = os.pipe()
        status_out, status_in = os.pipe()
        ours = (jobs_in, replies_out, status_out)
        try:
            pid, pidfd = await self._exchange(jobs_out, replies_in, status_in)
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in (jobs_out, replies_in, status_in):  # the zygote has its own copies now
                os.close(fd)
        return ForkedWorker(pid, pidfd, jobs_in, replies_out, status_out)

    async def _exchange(self, *fds: int) -> tuple[int, int]:
        with anyio.CancelScope(shield=True):
            async with self._lock:
                try:
                    with anyio.fail_after(EXCHANGE_TIMEOUT_S):
                        await self._control.send_fds(FORK, fds)
                        reply, received = await self._control.receive_fds(FORKED_SIZE, 1)
                except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError,
                        TimeoutError, OSError) as exc:
                    raise ZygoteLost(f"the extraction zygote did not fork a worker ({type(exc).__name__})") from exc
        if len(reply) != FORKED_SIZE or len(received) != 1:
            for fd in received:
                os.close(fd)
            raise ZygoteLost(f"the extraction zygote did not fork a worker (it said {reply[:80]!r})")
        os.set_inheritable(received[0], False)  # a descriptor passed in a message comes without close-on-exec
        return int(reply), received[0]

    async def aclose(self) -> None:
        """Close the control channel, which ends the zygote and its workers; reap it (killed if it lingers)."""
        with anyio.CancelScope(shield=True):
            await self._control.aclose()
            with anyio.move_on_after(EXCHANGE_TIMEOUT_S):
                await self._process.wait()
            with suppress(ProcessLookupError):
                self._process.kill()
            await self._process.aclose()


class ForkedWorker(Process):
    """A worker forked by the zygote, as an anyio Process: signals go through its pidfd, its exit status comes
    from the zygote over the status pipe."""

    def __init__(self, pid: int, pidfd: int, jobs: int, replies: int, status: int) -> None:
        self._pid = pid
        self._pidfd = pidfd
        self._jobs = _PipeWriter(jobs)
        self._replies = _PipeReader(replies)
        self._status = _PipeReader(status)
        self._returncode: int | None = None

    async def wait(self) -> int:
        if self._returncode is None:
            said = b""
            with suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while not said.endswith(b"\n"):
                    said += await self._status.receive(16)
            self._returncode = int(said) if said.endswith(b"\n") else UNKNOWN_EXIT
        return self._returncode

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def send_signal(self, sig: int) -> None:
        """ProcessLookupError once the worker has ended, as os.kill says."""
        signal.pidfd_send_signal(self._pidfd, sig)

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> ByteSendStream:
        return self._jobs

    @property
    def stdout(self) -> ByteReceiveStream:
        return self._replies

    @property
    def stderr(self) -> None:
        return None

    async def aclose(self) -> None:
        """Close the pipes (the worker ends when its stdin does), then wait for its exit status: a while at most,
        as the zygote reports it (a zygote stopped by SIGSTOP leaves `returncode` None rather than hang the run)."""
        await self._jobs.aclose()
        await self._replies.aclose()
        try:
            with anyio.move_on_after(EXCHANGE_TIMEOUT_S):
                await self.wait()
        finally:
            await self._status.aclose()
            if self._pidfd >= 0:
                os.close(self._pidfd)
                self._pidfd = -1


class _PipeEnd:
    """The run's end of one pipe, non-blocking: closing it wakes whatever task still waits on it."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self._fd = fd

    async def aclose(self) -> None:
        if self._fd >= 0:
            anyio.notify_closing(self._fd)
            os.close(self._fd)
            self._fd = -1


class _PipeReader(_PipeEnd, ByteReceiveStream):
    """The run's end of a pipe, read without blocking the event loop."""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await checkpoint()
        while True:
            if self._fd < 0:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                await anyio.wait_readable(self._fd)
                continue
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            if not data:
                raise anyio.EndOfStream
            return data


class _PipeWriter(_PipeEnd, ByteSendStream):
    """The run's end of a pipe, written without blocking the event loop."""

    async def send(self, item: bytes) -> None:
        await checkpoint()
        view = memoryview(item)
        while view:
            if self._fd < 0:
                raise anyio.ClosedResourceError
            try:
                view = view[os.write(self._fd, view):]
            except BlockingIOError:
                await anyio.wait_writable(self._fd)
            except OSError as exc:  # BrokenPipeError: the worker ended
                raise anyio.BrokenResourceError from exc
