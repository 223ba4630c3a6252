"""`python -m fanout ARGS` as real processes, forked from one interpreter that imported fanout once.

A test about the process itself (a signal, kill -9, a closed pipe, its exit status) needs a process of its own,
and each one paid its imports again: a second and more of CPU before the command did anything. Here one plain
interpreter per test process (the warm one, started on first use) imports fanout and the modules the commands
load, then forks a child per command; the child puts the given stdin, stdout and stderr on fds 0-2, takes the
test's environment and working directory, and runs `fanout.__main__` as `python -m fanout` does, up to the
interpreter's own exit (so what a real process does on exit, such as flushing stdout into a closed pipe, happens
as it would: checked against a fresh interpreter, both exit 120 with the same "Exception ignored" line). What an
interpreter reads only as it starts (PYTHONUNBUFFERED, PYTHONHASHSEED, ...) comes from the environment the warm
one started in, not from the test's at the fork. The warm interpreter has no threads when it forks, and ends when
this process closes its socket.

    process = warm.start(["report", str(run_dir)], stdout=write_end)
    process.send_signal(signal.SIGTERM)
    assert process.wait() == 130
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
from contextlib import suppress
from dataclasses import dataclass

PRELOAD = {
    "run": ("fanout.cli.run", "fanout.engine.runner", "fanout.llm.endpoint"),
    "report": ("fanout.cli.report", "fanout.report"),
    "status": ("fanout.cli.status", "fanout.report"),
    "queue": ("fanout.cli.queue", "fanout.report"),
}
"""What a command imports anyway (a run imports the openai SDK, two seconds of CPU, during its pre-flight): the
warm interpreter loads it before its first fork of that command, and keeps it for the next."""

SERVER = r"""
import json, os, runpy, socket, sys, threading
import fanout.cli
channel = socket.socket(fileno=int(sys.argv[1]))


def serve():
    while True:
        message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
        if not message:
            return None
        request = json.loads(message)
        for name in request["preload"]:
            __import__(name)
        if threading.active_count() != 1:
            raise SystemExit(f"warm: {threading.active_count()} threads; a fork would copy only one")
        pid = os.fork()
        if pid == 0:
            return request, fds
        for fd in fds:
            os.close(fd)
        channel.sendall(b"%d\n" % pid)
        _, status = os.waitpid(pid, 0)
        channel.sendall(b"%d\n" % os.waitstatus_to_exitcode(status))


child = serve()
if child is None:
    raise SystemExit(0)
request, fds = child
channel.close()
for target, fd in enumerate(fds):
    os.dup2(fd, target)
for fd in fds:
    os.close(fd)
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])
sys.argv = ["fanout", *request["argv"]]
runpy.run_module("fanout", run_name="__main__", alter_sys=True)
"""


class _Warm:
    """The warm interpreter and the one command it is running, if any (it runs one at a time)."""

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.server = subprocess.Popen([sys.executable, "-c", SERVER, str(theirs.fileno())],
                                       pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL)
        theirs.close()
        self.channel = ours
        self.buffer = b""
        self.running: WarmProcess | None = None
        atexit.register(self.close)

    def close(self) -> None:
        """Ends the warm interpreter (its socket closes) and reaps it, so its CPU is counted and nothing outlives us."""
        if self.running is not None:
            self.running.send_signal(signal.SIGKILL)
        self.channel.close()
        self.server.wait(timeout=60)


    def reply(self, *, block: bool = True) -> int | None:
        """The next number the warm interpreter sends (a pid, then an exit status); None if none came yet."""
        while b"\n" not in self.buffer:
            if not block and not select.select([self.channel], [], [], 0)[0]:
                return None
            received = self.channel.recv(4096)
            if not received:
                raise RuntimeError(f"the warm interpreter ended (exit status {self.server.wait()})")
            self.buffer += received
        line, self.buffer = self.buffer.split(b"\n", 1)
        return int(line)


_warm: _Warm | None = None
_lock = threading.Lock()


@dataclass
class WarmProcess:
    """A `python -m fanout` child of the warm interpreter: its pid, signals, and its exit status once it ended."""

    pid: int
    _warm: _Warm
    returncode: int | None = None

    def send_signal(self, signum: int) -> None:
        if self.returncode is None:
            with suppress(ProcessLookupError):  # it ended, and its status is on its way
                os.kill(self.pid, signum)

    def poll(self) -> int | None:
        """The exit status if the process ended, else None (as subprocess's poll)."""
        if self.returncode is None:
            self.returncode = self._warm.reply(block=False)
            if self.returncode is not None:
                self._warm.running = None
        return self.returncode

    def wait(self) -> int:
        """The exit status as subprocess gives it (negative: the signal that ended it); blocks until it ends."""
        if self.returncode is None:
            self.returncode = self._warm.reply()
            self._warm.running = None
        assert self.returncode is not None
        return self.returncode


def start(argv: list[str], *, stdin: int | None = None, stdout: int | None = None,
          stderr: int | None = None) -> WarmProcess:
    """`python -m fanout ARGV` with these fds (None: /dev/null) and this process's environment and directory."""
    global _warm
    with _lock:
        if _warm is None or _warm.server.poll() is not None:
            _warm = _Warm()
        warm = _warm
        if warm.running is not None:  # a test that failed left its command running: it must not hold the next one
            warm.running.send_signal(signal.SIGKILL)
            warm.running.wait()
        null = os.open(os.devnull, os.O_RDWR)
        try:
            fds = [null if fd is None else fd for fd in (stdin, stdout, stderr)]
            request = {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(),
                       "preload": PRELOAD.get(argv[0], ()) if argv else ()}
            socket.send_fds(warm.channel, [json.dumps(request).encode()], fds)
        finally:
            os.close(null)
        pid = warm.reply()
        assert pid is not None
        warm.running = WarmProcess(pid, warm)
        return warm.running
