"""Page text is made in killable worker processes: bounded in time and memory, and never past a verdict's deadline.

The finding (issue 12 §3): extraction ran in a thread nobody could stop, so a
2 MB page of unclosed <p> tags held its verdict for minutes past --timeout
and took hundreds of MB of the run's memory. Pages here are served on
127.0.0.1 or by respx; the assertions look at the worker processes
themselves (children of this process), never at timings: the verdict's
own deadline is shown holding against a worker that never answers.
"""

from __future__ import annotations

import os
import signal
import zlib
from collections.abc import AsyncIterator
from contextlib import suppress

import httpx
import pytest
import respx
from aiohttp import web

from fanout.base.validate import package_data
from fanout.llm.models import ModelSpec
from fanout.tools.settings import ToolSettings
from fanout.base.errors import ToolFailure
from fanout.llm.chat import ChatClient
from fanout.workloads.patrol.prompt import sift_prompt
from fanout.workloads.patrol.snapshot import load_snapshot
from fanout.research.verdict import run_verdict
from fanout.tools import ToolBox
from fanout.tools.extract_pool import ExtractionPool
from scripted_chat import LOCAL, STALL, ScriptedChat, completion, tool_call
from loopback import app_with, serving
from extract_procs import workers_of

UNCLOSED_P = b"<html><body>" + b"<p>x" * 497_000
"""The finding's page: 1,988,012 bytes, inside the 2 MB byte cap; minutes of CPU and 400+ MB for trafilatura."""
ARTICLE = (b"<html><body><article><h1>Ada Whitlock</h1><p>Ada Whitlock, the physicist, died on 12 March 2024 "
           b"in Troms\xc3\xb8, her family said. She was 91.</p></article></body></html>")


def worker_pids() -> list[int]:
    """This process's living extraction workers, read from /proc (started alone, or forked by a zygote)."""
    return workers_of(os.getpid())


@pytest.fixture
async def site() -> AsyncIterator[str]:
    async def page(request: web.Request) -> web.Response:
        body = UNCLOSED_P if request.match_info["name"] == "unclosed" else ARTICLE
        return web.Response(body=body, content_type="text/html", charset="utf-8")

    async with serving(app_with("/{name}", page)) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def settings(**overrides: object) -> ToolSettings:
    return ToolSettings(allow_private_urls=True, per_host_delay_s=0, **overrides)  # type: ignore[arg-type]


async def test_a_page_of_unclosed_p_tags_becomes_an_extraction_timeout_and_its_worker_is_killed(site, http):
    # memory is not what stops it here: at the default 512 MB a fast machine's worker reached the limit within
    # the second, and the page ended as too large instead (the next test checks that limit)
    tool_settings = settings(extract_timeout_s=1.0, extract_memory_mb=4096)
    async with ExtractionPool.from_settings(tool_settings) as pool:
        tools = ToolBox(http, tool_settings, extractor=pool)

        overran = await tools.web_fetch(f"{site}/unclosed")
        left_after_overrun = worker_pids()
        article = await tools.web_fetch(f"{site}/article")
        warm = worker_pids()

    assert (overran.logged, overran.ok) == (
        f"error: extraction_timeout: reading the text of {site}/unclosed took longer than 1 s and was stopped "
        "(the page is probably malformed or huge); use another source",
        False,
    )
    assert left_after_overrun == []
    assert article[:2] == ("Ada Whitlock\nAda Whitlock, the physicist, died on 12 March 2024 in Tromsø, her "
                           "family said. She was 91.", True)
    assert len(warm) == 1
    assert worker_pids() == []


async def test_a_page_that_needs_more_memory_than_the_worker_may_have_is_refused_and_its_worker_ends(
    site, http
):
    tools = ToolBox(http, settings(extract_timeout_s=120.0, extract_memory_mb=256))

    result = await tools.web_fetch(f"{site}/unclosed")

    assert (result.logged, result.ok) == (
        f"error: extraction_too_large: reading the text of {site}/unclosed needed more than 256 MB and was "
        "stopped; use another source",
        False,
    )
    assert worker_pids() == []


async def test_without_an_open_pool_each_page_gets_a_worker_that_does_not_outlive_the_call(site, http):
    result = await ToolBox(http, settings()).web_fetch(f"{site}/article")

    assert result.ok is True
    assert worker_pids() == []


async def test_a_verdict_ends_at_its_timeout_while_its_page_s_extraction_never_does(site, http):
    """--timeout 3 gave a 7.8 s verdict when the thread could not be stopped; now the worker is killed.

    The pool's warm worker is frozen (SIGSTOP) before the verdict asks it for
    a page, so the page's text never comes: the verdict returns only because
    its deadline cuts the extraction short, killing the worker, and nothing
    here reads the clock (a verdict held by its extraction would hang until
    the test's timeout fails it).
    """
    edit = load_snapshot(package_data("sample_snapshot.yaml")).edits[0]
    page = "http://slow-page.example/article"
    script = [completion(None, tool_calls=[tool_call("web_fetch", {"url": page})]), STALL]
    tool_settings = settings(extract_timeout_s=600.0, extract_workers=1)
    async with ExtractionPool.from_settings(tool_settings) as pool:
        assert (await ToolBox(http, tool_settings, extractor=pool).web_fetch(f"{site}/article")).ok is True
        [worker] = worker_pids()  # warm and idle, the one the verdict's page will go to
        os.kill(worker, signal.SIGSTOP)
        try:
            tools = ToolBox(http, tool_settings, extractor=pool)
            chat = ChatClient(base_url=LOCAL, api_key=None, http=http)
            with respx.mock:
                respx.post(f"{LOCAL}/chat/completions").mock(side_effect=ScriptedChat(script))
                respx.get(page).respond(200, content=ARTICLE, headers={"Content-Type": "text/html"})
                record = await run_verdict(edit, ModelSpec("test/model"), chat=chat, tools=tools,
                                           prompt=sift_prompt("Check the edit.", "0" * 64), timeout_s=2.0)
            assert worker_pids() == []  # killed and reaped by the verdict's deadline, not by the pool's close
        finally:
            with suppress(ProcessLookupError):  # a failing test must not leave a stopped process behind
                os.kill(worker, signal.SIGKILL)

    assert (record.status, record.error) == ("timeout", "no verdict within 2 s")


def pdf_with_inflating_content(inflated_mb: int) -> bytes:
    """A one-page PDF whose Flate content stream inflates to `inflated_mb` MB of text operators (150 KB for 50)."""
    packer = zlib.compressobj(9)
    chunk = b"BT /F1 12 Tf 72 712 Td (x) Tj ET\n" * 32768
    stream = b"".join(packer.compress(chunk) for _ in range(inflated_mb * (1 << 20) // len(chunk))) + packer.flush()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    pdf, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(pdf))
        pdf += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(pdf)
    pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1) + b"".join(b"%010d 00000 n \n" % o for o in offsets)
    return pdf + b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)


async def test_a_pdf_that_needs_more_memory_than_the_worker_may_have_is_extraction_too_large():
    """Issue 27 §7: PDFium aborts the worker (SIGABRT) when an allocation fails under the limit, where Python would
    raise MemoryError; that was reported as `extraction_failed ... IncompleteRead`."""
    url = "http://127.0.0.1/report.pdf"
    # The memory cap is under test, not the deadline: with the default 10 s a loaded machine (load average 9.5 on
    # 2 CPUs) let the deadline end the worker before it had allocated 512 MB (a parallel run reported
    # extraction_timeout once). 90 s keeps a deadline, far out of the race, below the test's own timeout.
    # 256 MB: PDFium aborts there as at 512 MB (the default), after a sixth of the CPU it spends filling 512 MB.
    with pytest.raises(ToolFailure) as refused:
        await ExtractionPool(memory_mb=256, timeout_s=90).extract("pdf", pdf_with_inflating_content(50), url=url)

    assert str(refused.value) == (
        f"extraction_too_large: reading the text of {url} needed more than 256 MB and was stopped; use another source"
    )
    assert worker_pids() == []
