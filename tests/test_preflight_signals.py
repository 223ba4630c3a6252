"""SIGTERM and SIGHUP during the pre-flight stop `fanout run` as Ctrl-C does, in one line.

Issue 27, finding 4: on an endless /models body the pre-flight waits out its
deadline, and SIGTERM meanwhile killed the process without a word (exit 143):
the run's own signal watcher starts only with the log. `make chaos` found it
still so. A loopback server trickles /models and says when it is being read. Each run is a real process,
forked from a warm interpreter that imported fanout (and what a run imports) once (tests/warm.py).
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from aiohttp import web

import warm
from fanout.base.validate import package_data

SAMPLE = package_data("sample_snapshot.yaml")
pytestmark = pytest.mark.timeout(180)  # a `fanout run` process each: 30 s at a load average of 6 on 2 CPUs (not warm)


@asynccontextmanager
async def trickling_models() -> AsyncIterator[tuple[str, anyio.Event]]:
    """/api/v1/models answers a byte every 50 ms, forever; the event is set once a client is reading it."""
    reading = anyio.Event()

    async def models(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        await response.prepare(request)
        reading.set()
        while True:
            await response.write(b" ")
            await anyio.sleep(0.05)

    app = web.Application()
    app.router.add_get("/api/v1/models", models)
    runner = web.AppRunner(app, access_log=None, handler_cancellation=True, shutdown_timeout=0.5)
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        yield f"http://127.0.0.1:{runner.addresses[0][1]}", reading
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
async def test_a_stop_signal_during_the_preflight_ends_the_run_in_one_line(tmp_path: Path, signum: signal.Signals) -> None:
    async with trickling_models() as (base, reading):
        argv = ["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), "-m", "deepseek/deepseek-v3.2",
                "--base-url", f"{base}/api/v1", "--searxng-url", base]
        err_read, err_write = os.pipe()
        try:
            process = warm.start([*warm.FANOUT, *argv], stderr=err_write)
        finally:
            os.close(err_write)
        with os.fdopen(err_read, "rb") as err:
            await reading.wait()
            process.send_signal(signum)
            assert await process.wait() == 130
            stderr = (await anyio.to_thread.run_sync(err.read)).decode()

    assert stderr == "fanout run: interrupted\n"
