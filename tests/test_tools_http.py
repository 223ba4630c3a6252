"""The shared pool: sized from the run's concurrency, not httpx's default 100 connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anyio
import pytest
from aiohttp import web

from fanout.http import make_http_client

CONCURRENCY = 120  # more than httpx's default pool of 100


@pytest.fixture
async def gathering_server() -> AsyncIterator[tuple[int, list[int]]]:
    """Each request is held until CONCURRENCY of them are open at once."""
    arrived: list[int] = []
    all_here = asyncio.Event()

    async def hold(request: web.Request) -> web.Response:
        arrived.append(1)
        if len(arrived) >= CONCURRENCY:
            all_here.set()
        await all_here.wait()
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/", hold)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, backlog=CONCURRENCY * 2).start()
    yield runner.addresses[0][1], arrived
    all_here.set()
    await runner.cleanup()


async def test_the_pool_holds_as_many_open_requests_as_the_concurrency_asks_for(gathering_server):
    port, arrived = gathering_server
    statuses: list[int] = []

    async with make_http_client(CONCURRENCY, user_agent="fanout-test/1") as http:

        async def one() -> None:
            statuses.append((await http.get(f"http://127.0.0.1:{port}/")).status_code)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for _ in range(CONCURRENCY):
                    tg.start_soon(one)

    assert statuses == [200] * CONCURRENCY
    assert len(arrived) == CONCURRENCY


async def test_the_client_sends_the_user_agent_and_does_not_follow_redirects():
    async with make_http_client(1, user_agent="fanout-test/1") as http:
        assert http.headers["User-Agent"] == "fanout-test/1"
        assert http.follow_redirects is False


def test_a_concurrency_below_one_is_refused():
    with pytest.raises(ValueError, match="concurrency must be at least 1, got 0"):
        make_http_client(0, user_agent="x")


async def test_the_client_keeps_no_cookies_between_requests():
    """A page fetched for one model must not change what the next model sees."""
    cookies_seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        cookies_seen.append(request.headers.get("Cookie", ""))
        response = web.Response(text="ok")
        response.set_cookie("consent", "yes")
        return response

    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    port = runner.addresses[0][1]
    try:
        async with make_http_client(1, user_agent="fanout-test/1") as http:
            first = await http.get(f"http://127.0.0.1:{port}/")
            await http.get(f"http://127.0.0.1:{port}/")
    finally:
        await runner.cleanup()

    assert first.headers["Set-Cookie"].startswith("consent=yes")
    assert cookies_seen == ["", ""]
