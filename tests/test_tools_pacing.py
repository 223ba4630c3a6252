"""Per-host politeness: same host spaced out, different hosts never wait for each other.

A fake clock stands still, so every wait is computed from slots alone, and
sleeps are recorded (or held on an event) instead of taking real time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import httpx
import pytest
from aiohttp import web

from fanout.tools.settings import ToolSettings
from fanout.tools import ToolBox
from fanout.tools.pacing import HostPacer
from loopback import app_with, serving

NOW = 1000.0


class RecordingSleep:
    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


async def test_requests_to_one_host_are_spaced_by_the_delay_in_arrival_order():
    sleep = RecordingSleep()
    pacer = HostPacer(0.5, clock=lambda: NOW, sleep=sleep)

    for _ in range(3):
        await pacer.wait("news.example")

    assert sleep.calls == [0.5, 1.0]


async def test_different_hosts_do_not_wait_for_each_other():
    sleep = RecordingSleep()
    pacer = HostPacer(0.5, clock=lambda: NOW, sleep=sleep)

    for host in ("a.example", "b.example", "c.example"):
        await pacer.wait(host)

    assert sleep.calls == []


async def test_a_host_waiting_for_its_slot_does_not_hold_up_another_host():
    """No global lock: while a.example sleeps, b.example goes straight through."""
    a_sleeping = anyio.Event()
    a_may_go = anyio.Event()
    order: list[str] = []

    async def held_sleep(seconds: float) -> None:
        order.append(f"a sleeps {seconds}")
        a_sleeping.set()
        await a_may_go.wait()

    pacer = HostPacer(0.5, clock=lambda: NOW, sleep=held_sleep)
    await pacer.wait("a.example")

    async def second_request_to_a() -> None:
        await pacer.wait("a.example")
        order.append("a done")

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(second_request_to_a)
            await a_sleeping.wait()
            await pacer.wait("b.example")
            order.append("b done")
            a_may_go.set()

    assert order == ["a sleeps 0.5", "b done", "a done"]


async def test_the_next_slot_counts_from_when_the_last_request_went_out():
    now = [NOW]
    sleep = RecordingSleep()
    pacer = HostPacer(0.5, clock=lambda: now[0], sleep=sleep)

    await pacer.wait("news.example")
    now[0] += 0.2
    await pacer.wait("news.example")
    now[0] += 10.0
    await pacer.wait("news.example")

    assert sleep.calls == [pytest.approx(0.3)]


async def test_a_zero_delay_never_sleeps():
    sleep = RecordingSleep()
    pacer = HostPacer(0.0, clock=lambda: NOW, sleep=sleep)

    await pacer.wait("news.example")
    await pacer.wait("news.example")

    assert sleep.calls == []


@pytest.fixture
async def server_port() -> AsyncIterator[int]:
    async def page(request: web.Request) -> web.Response:
        return web.Response(text="<html><body><article><p>" + "Enough words for an article. " * 20
                            + "</p></article></body></html>", content_type="text/html")

    async with serving(app_with("/{tail:.*}", page)) as port:
        yield port


async def test_web_fetch_paces_by_host_name(server_port: int):
    """Two names on one server: only the repeat visit to the same name waits."""
    sleep = RecordingSleep()

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    settings = ToolSettings(allowed_networks=("127.0.0.1/32",), per_host_delay_s=0.5)
    async with httpx.AsyncClient() as http:
        box = ToolBox(http, settings, resolver=resolve, pacer=HostPacer(0.5, clock=lambda: NOW, sleep=sleep))
        for host in ("a.example", "b.example", "a.example"):
            result = await box.web_fetch(f"http://{host}:{server_port}/page")
            assert result.ok is True

    assert sleep.calls == [0.5]
