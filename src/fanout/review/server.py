"""Serving the desk on 127.0.0.1 until stopped; only fanout.cli starts it.

The address is fixed to loopback: the desk writes decisions into a run
directory and shows its transcripts, which nobody on the network should
reach. Port 0 asks the system for a free port (the tests do). Before it
listens, the run must read and reviews.jsonl must be a file it can append
to; a request aiohttp cannot parse (no Host, two Hosts, a bad length) is
answered 400 by aiohttp and logged in one line on stderr, never as a
traceback.
"""

from __future__ import annotations

import errno
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio
from aiohttp import web

from fanout.base.errors import ConfigError
from fanout.review.app import desk_app
from fanout.review.desk import Desk, check_reviews_file
from fanout.review.guard import OwnAddress

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8766
SHUTDOWN_GRACE_S = 2.0
"""How long Ctrl-C waits for requests still being answered before it cancels them. A decision being
appended is not torn by that: its append runs in a thread that finishes first. aiohttp's own default (60 s)
kept a desk whose browser had sent half a request running 9-12 s after Ctrl-C."""


@asynccontextmanager
async def running_desk(desk: Desk, reviewer: str, port: int = DEFAULT_PORT) -> AsyncIterator[str]:
    """Serve the desk until the block ends; yields its URL (`http://127.0.0.1:PORT/`)."""
    await desk.report()  # a directory that is no run, or an unreadable log: one line before listening
    check_reviews_file(desk.run_dir)  # unusable or unwritable: one line now, not a 500 at the first decision
    address = OwnAddress()
    app = desk_app(desk, reviewer, address)
    runner = web.AppRunner(app, access_log=None, handle_signals=False, logger=one_line_log(),
                           shutdown_timeout=SHUTDOWN_GRACE_S)
    await runner.setup()
    try:
        try:
            await web.TCPSite(runner, LOOPBACK, port).start()
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise ConfigError(f"port {port} on {LOOPBACK} is in use; pass another --port") from None
            raise ConfigError(f"cannot listen on {LOOPBACK}:{port}: {exc.strerror or exc}") from None
        bound = runner.addresses[0][1]
        address.host = f"{LOOPBACK}:{bound}"
        yield f"http://{LOOPBACK}:{bound}/"
    finally:
        await runner.cleanup()


async def serve_desk(desk: Desk, reviewer: str, port: int, announce: Callable[[str], None]) -> None:
    """Serve until cancelled (Ctrl-C); `announce` is given the URL once the desk listens."""
    async with running_desk(desk, reviewer, port) as url:
        announce(url)
        await anyio.sleep_forever()


class OneLine(logging.Handler):
    """A request aiohttp could not handle, as one line on stderr: what was wrong, never the traceback."""

    def emit(self, record: logging.LogRecord) -> None:
        error = record.exc_info[1] if record.exc_info else None
        reason = getattr(error, "message", None) or (str(error) if error else "") or record.getMessage()
        first = next((line.strip() for line in str(reason).splitlines() if line.strip()), "")
        kind = type(error).__name__ if error else "error"
        shown = first.encode("ascii", "backslashreplace").decode("ascii")  # a request's bytes: nothing raw
        safe = "".join(c if c.isprintable() else repr(c)[1:-1] for c in shown)
        sys.stderr.write(f"review desk: refused a request ({kind}: {safe})\n")


def one_line_log() -> logging.Logger:
    """The logger the desk's server reports request errors to (aiohttp's `logger`), writing one line each."""
    log = logging.getLogger("fanout.review.requests")
    log.propagate = False
    log.setLevel(logging.INFO)  # aiohttp logs bytes that are not HTTP at all at debug level: left out
    if not log.handlers:
        log.addHandler(OneLine())
    return log
