"""The run's wire (aiohttp under its httpx client) behaves as httpx's own: pool size, headers, redirects, cookies,
errors, and a connection the server closed while idle is never reused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from aiohttp import web

from fanout.http.client import ForgetfulCookieJar, make_http_client

CONCURRENCY = 120


async def serve(app: web.Application, **kwargs) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, **kwargs)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0, backlog=CONCURRENCY * 2).start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest.fixture
async def site() -> AsyncIterator[tuple[str, dict]]:
    seen: dict = {"arrived": 0, "cookies": [], "agents": [], "peers": [], "transports": [], "stalled": asyncio.Event()}
    all_here = asyncio.Event()
    released = asyncio.Event()

    async def hold(request: web.Request) -> web.Response:
        seen["arrived"] += 1
        if seen["arrived"] >= CONCURRENCY:
            all_here.set()
        await all_here.wait()
        return web.Response(text="held")

    async def echo(request: web.Request) -> web.Response:
        seen["cookies"].append(request.headers.get("Cookie", ""))
        seen["agents"].append(request.headers.get("User-Agent", ""))
        seen["peers"].append(request.transport.get_extra_info("peername")[1])
        seen["transports"].append(request.transport)
        response = web.json_response({"got": (await request.read()).decode()})
        response.set_cookie("consent", "yes")
        return response

    async def moved(request: web.Request) -> web.Response:
        raise web.HTTPFound("/echo")

    async def stall(request: web.Request) -> web.Response:
        seen["stalled"].set()
        await released.wait()
        return web.Response(text="late")

    app = web.Application()
    app.router.add_get("/hold", hold)
    app.router.add_route("*", "/echo", echo)
    app.router.add_get("/moved", moved)
    app.router.add_get("/stall", stall)
    runner, base = await serve(app)
    yield base, seen
    all_here.set()
    released.set()
    await runner.cleanup()


async def test_the_pool_holds_as_many_open_requests_as_the_concurrency_asks_for(site):
    base, seen = site
    statuses: list[int] = []
    async with make_http_client(CONCURRENCY, user_agent="fanout-test/1") as http:

        async def one() -> None:
            statuses.append((await http.get(f"{base}/hold")).status_code)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for _ in range(CONCURRENCY):
                    tg.start_soon(one)
    assert statuses == [200] * CONCURRENCY


async def test_requests_carry_the_user_agent_and_bodies_and_no_cookie_comes_back(site):
    base, seen = site
    async with make_http_client(2, user_agent="fanout-test/1") as http:
        first = await http.post(f"{base}/echo", json={"a": "ü"})
        second = await http.post(f"{base}/echo", content=b"raw")
    assert first.json() == {"got": '{"a":"ü"}'} and second.json() == {"got": "raw"}
    assert seen["agents"] == ["fanout-test/1", "fanout-test/1"]
    assert seen["cookies"] == ["", ""]
    assert list(http.cookies.jar) == []


def cookie_setting_server(sent: list[str | None]) -> httpx.MockTransport:
    """Answers every request with a Set-Cookie, and records the Cookie header each one carried."""

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("Cookie"))
        return httpx.Response(200, headers={"Set-Cookie": "consent=yes; Path=/"}, text="ok")

    return httpx.MockTransport(answer)


async def test_the_client_keeps_no_cookie_whatever_transport_carries_it():
    """The refusal is the client's, not the wire's; a cookie set by code is not kept either."""
    sent: list[str | None] = []
    async with make_http_client(1, user_agent="x", transport=cookie_setting_server(sent)) as http:
        assert (await http.get("http://news.example/page")).headers["set-cookie"] == "consent=yes; Path=/"
        http.cookies.set("session", "x", domain="news.example")
        await http.get("http://news.example/page")
        with pytest.raises(AttributeError, match="the shared client never keeps cookies"):
            http.cookies = {"session": "x"}
    assert sent == [None, None]


async def test_the_forgetful_jar_alone_keeps_no_cookie_in_httpx_own_client():
    """The guarantee rests on the jar passed as cookies=, not on the client subclass that skips offering it."""
    sent: list[str | None] = []
    async with httpx.AsyncClient(transport=cookie_setting_server(sent), cookies=ForgetfulCookieJar()) as http:
        for _ in range(2):
            await http.get("http://news.example/page")
        http.cookies.set("session", "x", domain="news.example")
        await http.get("http://news.example/page")
    assert sent == [None, None, None]


async def test_a_redirect_is_returned_not_followed(site):
    base, _ = site
    async with make_http_client(1, user_agent="x") as http:
        response = await http.get(f"{base}/moved")
    assert response.status_code == 302 and response.headers["location"] == "/echo"
    assert response.has_redirect_location


async def settle() -> None:
    """A few turns of the loop: the server's close runs, then the client reads the end of the stream
    (on loopback the FIN is there as soon as the server's socket is closed)."""
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_connection_the_server_closed_while_idle_is_not_reused(site):
    """The server closes the idle connection itself (as its keep-alive expiry would), no clock involved."""
    base, seen = site
    async with make_http_client(1, user_agent="x") as http:
        await http.get(f"{base}/echo")
        seen["transports"][0].close()
        await settle()
        response = await http.get(f"{base}/echo")
    assert response.status_code == 200
    assert seen["peers"][0] != seen["peers"][1]


async def test_a_refused_connection_is_an_httpx_connect_error(refused_port: int):
    async with make_http_client(1, user_agent="x") as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(f"http://127.0.0.1:{refused_port}/")


async def test_a_stalled_answer_is_an_httpx_read_timeout(site):
    base, _ = site
    async with make_http_client(1, user_agent="x", timeout_s=0.2) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.get(f"{base}/stall")




async def test_a_cancelled_request_raises_the_cancellation_itself_not_a_chain_that_loops(site):
    base, seen = site
    caught: list[BaseException] = []

    async def request(http: httpx.AsyncClient) -> None:
        try:
            await http.get(f"{base}/stall")
        except BaseException as exc:  # the cancellation, as the wire let it out
            caught.append(exc)
            raise

    async with make_http_client(1, user_agent="x") as http:
        task = asyncio.ensure_future(request(http))
        await seen["stalled"].wait()  # the request is on the wire, its answer held
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert len(caught) == 1 and isinstance(caught[0], asyncio.CancelledError)
    assert caught[0].__cause__ is not caught[0]
