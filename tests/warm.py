"""`python -m fanout ARGS` as real processes, forked from one interpreter that imported fanout once.

A test about the process itself (a signal, kill -9, a closed pipe, its exit status) needs a process of its own,
and a fresh interpreter pays its imports again, a second and more of CPU before the command does anything (a
test that kills a run twenty times paid it twenty times, most of its cost). Here a plain interpreter (the warm
one) imports fanout, and before the first fork of a command what that command imports (PRELOAD), then forks a
child per command. The child puts the given stdin, stdout and stderr on fds 0-2, takes the test's environment
and working directory, and runs `fanout.__main__` as `python -m fanout` does, up to the interpreter's own exit:
its own PID, files, locks and signal handlers, and what a real process does on exit, such as flushing stdout
into a closed pipe, happens as it would (checked against a fresh interpreter: both exit 120 with the same
"Exception ignored" line). What an interpreter reads only as it starts (PYTHONUNBUFFERED, PYTHONHASHSEED, ...)
comes from the environment the warm one started in, not from the test's at the fork. The warm interpreter
refuses to fork while a thread runs (a fork copies only the forking one). A test of the start itself (imports,
start-up time) still runs `python -m fanout` afresh.

Several children may run at once (a second run refused by the first one's lock). Each `WarmInterpreter` is
one warm interpreter: `with` it for a fixture's scope, and what still runs when it closes (a failed test's
command) is killed and reaped with it. `start` uses one shared by the whole test process, ended at its exit.

    process = warm.start([*warm.FANOUT, "report", str(run_dir)], stdout=write_end)  # an fd of ours
    process.send_signal(signal.SIGTERM)
    assert process.wait_blocking() == 130

    with WarmInterpreter() as interpreter:
        process = interpreter.start(cmd, stdout=tmp_path / "out.txt")  # stderr goes where stdout goes
        process.send_signal(signal.SIGKILL)
        assert await process.wait() == -signal.SIGKILL
        code, output = await interpreter.run(cmd, tmp_path / "resumed.txt")

Run as a script, this file is the warm interpreter: each request is one packet on a socket (JSON: argv, cwd,
environment, what to preload; the fds 0-2 ride along with it), answered `started PID`, and `exited PID CODE`
once it has reaped that child (CODE negative: the signal that ended it, as subprocess reports it).
"""

from __future__ import annotations

import atexit
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

FANOUT = [sys.executable, "-m", "fanout"]
"""What every command starts with: the command as a fresh interpreter would run it."""
STDOUT = subprocess.STDOUT
"""As `stderr`: where stdout goes (the default)."""
Target = int | Path | None
"""Where a child's stream goes: an fd of ours (the child gets a copy), a file (made or emptied), None: /dev/null."""

PRELOAD = {
    "run": ("fanout.cli.run", "fanout.engine.runner", "fanout.engine.preflight", "fanout.llm.endpoint",
            "fanout.llm.chat", "fanout.research.team", "fanout.research.verdict", "fanout.tools.run_tools",
            "fanout.workloads.patrol.workload", "fanout.workloads.claims.workload", "fanout.http.transport"),
    "watch": ("fanout.cli.watch", "fanout.cli.run", "fanout.cli.progress_display", "fanout.engine.live",
              "fanout.engine.runner", "fanout.engine.preflight", "fanout.llm.endpoint", "fanout.llm.chat",
              "fanout.research.verdict", "fanout.tools", "fanout.tools.run_tools", "fanout.workloads.patrol.workload",
              "fanout.workloads.patrol.live.clients", "fanout.workloads.patrol.live.source",
              # imported once it started: the HTTP transport (aiohttp makes its TLS contexts as it loads, 0.3 s),
              # the event loop, its signals and subprocesses
              "fanout.http.transport", "anyio._backends._asyncio", "anyio._core._signals", "anyio._core._subprocesses"),
    "report": ("fanout.cli.report", "fanout.report"),
    "status": ("fanout.cli.status", "fanout.report"),
    "queue": ("fanout.cli.queue", "fanout.report"),
}
"""What a command imports on its way: the warm interpreter loads it before its first fork of that command, and
keeps it for the next."""


class WarmProcess:
    """A `python -m fanout` child of a warm interpreter: its pid, signals, and its exit status once it ended."""

    def __init__(self, interpreter: WarmInterpreter, pid: int) -> None:
        self.pid = pid
        self._interpreter = interpreter

    @property
    def returncode(self) -> int | None:
        """The exit status if the process ended (as subprocess gives it: negative, the signal), else None."""
        return self._interpreter.exit_code(self.pid)

    def send_signal(self, signum: int) -> None:
        """Only to a process not yet reaped: its pid is not reused while the warm interpreter has not reaped it."""
        if self.returncode is None:
            os.kill(self.pid, signum)

    async def wait(self) -> int:
        """The exit status, once the process ended; cancellable (anyio.fail_after)."""
        while (code := self.returncode) is None:
            await anyio.sleep(0.01)
        return code

    def wait_blocking(self) -> int:
        """`wait` for a test or fixture outside an event loop (or in a worker thread)."""
        while (code := self._interpreter.exit_code(self.pid, timeout=0.05)) is None:
            pass
        return code


class WarmInterpreter:
    """One warm interpreter; each `start` forks one command from it, and several may run at once."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # a request and a reply: a packet
        self._server = subprocess.Popen([sys.executable, __file__, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                                        stdin=subprocess.DEVNULL)
        theirs.close()
        self._channel = ours
        self._lock = threading.Lock()  # one start at a time, one reader of the replies at a time
        self._exited: dict[int, int] = {}

    def start(self, cmd: list[str], *, stdin: int | None = None, stdout: Target = None,
              stderr: Target = STDOUT) -> WarmProcess:
        """`cmd` (`[*FANOUT, ARGS...]`) in this process's current directory and environment, with these streams."""
        assert cmd[:3] == FANOUT, cmd
        argv = cmd[3:]
        request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(),
                   "preload": PRELOAD.get(argv[0], ()) if argv else ()}
        opened: list[int] = []
        try:
            fds = [_fd(stdin, os.O_RDONLY, opened), _fd(stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, opened)]
            fds.append(fds[1] if stderr == STDOUT else _fd(stderr, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, opened))
            with self._lock:
                socket.send_fds(self._channel, [json.dumps(request).encode()], fds)
                while (pid := self._reply(timeout=None)) is None:
                    pass
        finally:
            for fd in opened:
                os.close(fd)
        return WarmProcess(self, pid)

    async def run(self, cmd: list[str], output: Path) -> tuple[int, str]:
        """Run `cmd` to its end: its exit code and what it printed (stdout and stderr, interleaved)."""
        code = await self.start(cmd, stdout=output).wait()
        return code, output.read_text()

    def run_blocking(self, cmd: list[str], output: Path, errors: Path) -> tuple[int, str, str]:
        """`run` outside an event loop: the exit code, stdout and stderr."""
        code = self.start(cmd, stdout=output, stderr=errors).wait_blocking()
        return code, output.read_text(), errors.read_text()

    def exit_code(self, pid: int, *, timeout: float = 0) -> int | None:
        """`pid`'s exit status if the warm interpreter has reaped it; waits up to `timeout` seconds for news."""
        if pid not in self._exited:
            with self._lock:
                if pid not in self._exited:
                    self._reply(timeout=timeout)
        return self._exited.get(pid)

    def _reply(self, *, timeout: float | None) -> int | None:
        """Take in the next reply (within `timeout`; None: as long as it takes): a started child's pid, else None."""
        if not select.select([self._channel], [], [], timeout)[0]:
            return None
        reply = self._channel.recv(256)
        if not reply:
            raise RuntimeError(f"the warm interpreter ended (exit status {self._server.wait()})")
        kind, *numbers = reply.decode().split()
        if kind == "started":
            return int(numbers[0])
        self._exited[int(numbers[0])] = int(numbers[1])
        return None

    def running(self) -> bool:
        return self._server.poll() is None

    def close(self) -> None:
        """End the warm interpreter (its socket closes): it kills and reaps what still runs, then exits, reaped
        here, so nothing outlives the tests and its CPU is counted."""
        self._channel.close()
        self._server.wait(timeout=60)

    def __enter__(self) -> WarmInterpreter:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def _fd(target: Target, flags: int, opened: list[int]) -> int:
    """The fd to hand over for `target`: ours as it is, else one opened here (closed once sent)."""
    if isinstance(target, int):
        return target
    opened.append(os.open(os.devnull, os.O_RDWR) if target is None else os.open(target, flags, 0o644))
    return opened[-1]


_shared: WarmInterpreter | None = None
_shared_lock = threading.Lock()


def start(cmd: list[str], *, stdin: int | None = None, stdout: Target = None, stderr: Target = STDOUT) -> WarmProcess:
    """`WarmInterpreter.start` on the interpreter shared by this test process (started on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None or not _shared.running():
            _shared = WarmInterpreter()
            atexit.register(_shared.close)
        shared = _shared
    return shared.start(cmd, stdin=stdin, stdout=stdout, stderr=stderr)


# --- the warm interpreter -------------------------------------------------------------------------------------


def _serve(channel: socket.socket) -> tuple[dict[str, Any], list[int]] | None:
    """Fork a child per request and report its exit; in a child, its request and fds. None: the tests ended."""
    children: dict[int, int] = {}  # pidfd: pid
    requests = channel.fileno()
    while True:
        ready, _, _ = select.select([requests, *children], [], [])
        for pidfd in (fd for fd in ready if fd != requests):
            pid = children.pop(pidfd)
            os.close(pidfd)
            channel.send(b"exited %d %d" % (pid, os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))
        if requests not in ready:
            continue
        message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
        if not message:
            _end(children)
            return None
        request = json.loads(message)
        for name in request["preload"]:
            __import__(name)
        if threading.active_count() != 1:
            raise SystemExit(f"warm: {threading.active_count()} threads; a fork would copy only one")
        pid = os.fork()
        if pid == 0:
            for pidfd in children:
                os.close(pidfd)
            return request, fds
        for fd in fds:
            os.close(fd)
        children[os.pidfd_open(pid)] = pid
        channel.send(b"started %d" % pid)


def _end(children: dict[int, int]) -> None:
    """The tests are over: what still runs (a failed test's command) is killed and reaped."""
    for pidfd, pid in children.items():
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(pidfd)


def become(request: dict[str, Any], fds: list[int]) -> None:
    """In a forked child: the streams (`fds` on 0-2), directory, environment and argv (`request`'s "cwd", "env",
    "argv") of `python -m fanout ARGS`, then run it (test_disk_full's sessions in a namespace are forked so too)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds) - {0, 1, 2}:
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]  # as `python -m` has it, not this file's folder
    sys.argv = ["fanout", *request["argv"]]
    runpy.run_module("fanout", run_name="__main__", alter_sys=True)


def _main() -> None:
    channel = socket.socket(fileno=int(sys.argv[1]))
    sys.path[0] = os.getcwd()
    import fanout.cli  # noqa: F401  (what every command imports)

    child = _serve(channel)
    if child is None:
        return
    channel.close()
    become(*child)  # its SystemExit, or its end, is this interpreter's exit, with no frame of _serve left to unwind


if __name__ == "__main__":
    _main()
