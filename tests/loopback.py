"""One way to serve a test's aiohttp app on 127.0.0.1, shared by the tests that need a real server, and one way
to hold a port that refuses connections."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager

from aiohttp import web


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[int]:
    """Serve `app` on a free loopback port until the block ends; yields the port."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield runner.addresses[0][1]
    finally:
        await runner.cleanup()


def app_with(path: str, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.Application:
    """An app answering GET `path` (an aiohttp route pattern) with `handler`."""
    app = web.Application()
    app.router.add_get(path, handler)
    return app


@contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port that refuses every connection until the block ends.

    It stays bound (and never listens), so no other server, of this test or of a test running beside it
    on another worker, can be given it meanwhile: a port picked by binding and released at once can be.
    """
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]
