"""`fanout` processes forked from one warm interpreter: real processes, without two seconds of imports each.

A test of kill -9, Ctrl-C or exit codes needs `fanout run` as a process of its
own, but a fresh interpreter pays ~3 s of CPU for its imports (the openai SDK
alone 1-2 s) before it does anything, and a test that kills a run twenty
times paid that twenty times, most of its cost. Here one interpreter imports
what a run loads, once per test module, and forks each command from it: the
child is a process with its own PID, its own files, locks and signal
handlers, killed and exiting exactly as `python -m fanout ...` is; only its
imports were done before the fork. A test of the start itself (imports, the
interpreter's own exit) still runs `python -m fanout` afresh.

    with WarmFanout() as warm:
        process = warm.start([sys.executable, "-m", "fanout", "run", ...], output=tmp_path / "out.txt")
        process.send_signal(signal.SIGKILL)
        code = await process.wait()

Run as a script, this file is the warm interpreter: it reads one JSON request
a line (argv, cwd, environment, output files), forks, replies `started PID`,
and `exited PID CODE` once it has reaped that child (CODE negative: the signal
that ended it, as subprocess reports it). Several children may run at once.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

WARM_MODULES = ("fanout.cli", "fanout.cli.run", "fanout.engine.runner", "fanout.engine.preflight",
                "fanout.llm.endpoint", "fanout.llm.chat", "fanout.research.team", "fanout.research.verdict",
                "fanout.tools.run_tools", "fanout.workloads.patrol.workload", "fanout.workloads.claims.workload")
"""What `fanout run` imports on its way (the SDK's import is the pre-flight's, in a thread, done here before)."""
PREFIX = [sys.executable, "-m", "fanout"]


class Forked:
    """A `fanout` process forked by the warm interpreter: its PID, signals and exit code, as anyio's Process."""

    def __init__(self, server: WarmFanout, pid: int) -> None:
        self.pid = pid
        self._server = server

    @property
    def returncode(self) -> int | None:
        return self._server.exit_code(self.pid)

    def send_signal(self, signum: int) -> None:
        """Only to a process not yet reaped: its PID is not reused while the warm interpreter has not reaped it."""
        if self.returncode is None:
            os.kill(self.pid, signum)

    async def wait(self) -> int:
        while (code := self.returncode) is None:
            await anyio.sleep(0.01)
        return code

    def wait_blocking(self) -> int:
        """`wait` for a test or fixture outside an event loop."""
        while (code := self.returncode) is None:
            time.sleep(0.01)
        return code


class WarmFanout:
    """The warm interpreter, started once; each `start` forks one command from it (several may run at once)."""

    def __init__(self) -> None:
        self._server = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self._server.stdout is not None
        self._out = self._server.stdout.fileno()
        self._pending = b""
        self._exited: dict[int, int] = {}
        self._started: list[int] = []
        self._children: list[int] = []
        while self._started != [0]:  # ready
            self._read(block=True)
        self._started.clear()
        os.set_blocking(self._out, False)

    def start(self, cmd: list[str], *, output: Path | None = None, errors: Path | None = None) -> Forked:
        """`cmd` as it would be run (`python -m fanout ...`), in this process's current folder and environment;
        stdin is empty, stdout goes to `output` (or nowhere), stderr to `errors` (or where stdout goes)."""
        assert cmd[:3] == PREFIX, cmd
        request = {"argv": cmd[3:], "cwd": os.getcwd(), "env": dict(os.environ),
                   "output": None if output is None else str(output),
                   "errors": None if errors is None else str(errors)}
        assert self._server.stdin is not None
        self._server.stdin.write(json.dumps(request).encode() + b"\n")
        self._server.stdin.flush()
        while not self._started:
            self._read(block=True)
        self._children.append(self._started.pop())
        return Forked(self, self._children[-1])

    async def run(self, cmd: list[str], output: Path) -> tuple[int, str]:
        """Run `cmd` to its end: its exit code and what it printed (stdout and stderr, interleaved)."""
        code = await self.start(cmd, output=output).wait()
        return code, output.read_text()

    def run_blocking(self, cmd: list[str], output: Path, errors: Path) -> tuple[int, str, str]:
        """`run` outside an event loop: the exit code, stdout and stderr."""
        code = self.start(cmd, output=output, errors=errors).wait_blocking()
        return code, output.read_text(), errors.read_text()

    def exit_code(self, pid: int) -> int | None:
        self._read(block=False)
        return self._exited.get(pid)

    def _read(self, *, block: bool) -> bool:
        """Take in the warm interpreter's reply lines (`started PID`, `exited PID CODE`); False if none came."""
        if block:
            select.select([self._out], [], [])
        try:
            chunk = os.read(self._out, 65536)
        except BlockingIOError:
            return False
        if chunk == b"":
            raise RuntimeError(f"the warm interpreter ended (exit code {self._server.wait()})")
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        for line in lines:
            kind, *numbers = line.decode().split()
            if kind == "started":
                self._started.append(int(numbers[0]))
            else:
                self._exited[int(numbers[0])] = int(numbers[1])
        return True

    def close(self) -> None:
        """Kill what still runs (a failed test's process), then the warm interpreter, which holds nothing to save."""
        for pid in self._children:
            if self.exit_code(pid) is None:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self._server.kill()
        self._server.wait()
        for pipe in (self._server.stdin, self._server.stdout):
            assert pipe is not None
            pipe.close()

    def __enter__(self) -> WarmFanout:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


# --- the warm interpreter -------------------------------------------------------------------------------------


def _child(request: dict[str, Any]) -> int:
    """In the forked process: become the command a fresh interpreter would run, then run it."""
    import random
    import traceback

    from fanout.cli import main

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    random.seed()  # a fresh interpreter's state, not the parent's copy
    null = os.open(os.devnull, os.O_RDWR)
    out = null if request["output"] is None else os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    err = out if request["errors"] is None else os.open(request["errors"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.argv = ["fanout", *request["argv"]]
    try:
        code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    return code


def _serve() -> None:
    from importlib import import_module

    sys.path[0] = os.getcwd()  # as `python -m` has it, not this file's folder
    for name in WARM_MODULES:
        import_module(name)
    reply = sys.stdout.buffer
    reply.write(b"started 0\n")  # ready
    reply.flush()
    requests, pending, children = sys.stdin.fileno(), b"", set()
    while True:
        readable, _, _ = select.select([requests], [], [], 0.02 if children else None)
        while children and (found := os.waitpid(-1, os.WNOHANG))[0]:
            children.discard(found[0])
            reply.write(f"exited {found[0]} {os.waitstatus_to_exitcode(found[1])}\n".encode())
        if readable:
            chunk = os.read(requests, 65536)
            if not chunk:
                return
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                children.add(_fork(json.loads(line)))
        reply.flush()


def _fork(request: dict[str, Any]) -> int:
    sys.stdout.buffer.flush()  # nothing of the replies may be left in the buffer the child inherits
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = _child(request)
        finally:
            os._exit(code)
    sys.stdout.buffer.write(f"started {pid}\n".encode())
    return pid


if __name__ == "__main__":
    _serve()
