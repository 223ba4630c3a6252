"""web_fetch on what references really are (issue 12 §5): PDF reports, plain text and JSON, served on 127.0.0.1.

A PDF's text is read in the same bounded extraction workers as HTML, at most
pdf_max_pages pages, with the same character cut and marker; plain-text and
JSON pages come back as they are. The workers are warm pools open for the
whole module (one per set of extraction settings), as a run keeps its pool
open: a pool per fetch started a worker (an interpreter importing trafilatura)
for every page; so the tests share the module's event loop.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack

import httpx
import pytest
import pytest_asyncio
from aiohttp import web

from fanout.tools.settings import ToolSettings
from fanout.base.errors import ToolFailure
from fanout.tools import ToolBox
from fanout.tools.extract_pool import ExtractionPool
from fanout.tools.pdf import UnreadablePdf, pdf_text
from pdfs import make_pdf
from loopback import app_with, serving

REPORT_PAGES = ["Annual report 2023 (summary)", "Ada Whitlock was born in Bergen on 3 June 1932.", "Appendix."]
REPORT = make_pdf(REPORT_PAGES)
SCANNED = make_pdf(["", ""])
module_loop = pytest.mark.asyncio(loop_scope="module")
"""The async tests run in the module's event loop, where the pools live."""
ENTITY = {"@context": "https://schema.org", "@type": "Person", "name": "Ada Whitlock", "birthDate": "1932-06-03"}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def pools() -> AsyncIterator[Callable[[ToolSettings], Awaitable[ExtractionPool]]]:
    """An open extraction pool for the settings' extraction limits (pdf_max_pages, ...), kept warm for the module."""
    async with AsyncExitStack() as stack:
        keys: dict[tuple[int, float, int, int], ExtractionPool] = {}

        async def pool_for(settings: ToolSettings) -> ExtractionPool:
            key = (settings.extract_workers, settings.extract_timeout_s, settings.extract_memory_mb,
                   settings.pdf_max_pages)
            if key not in keys:
                keys[key] = await stack.enter_async_context(ExtractionPool.from_settings(settings))
            return keys[key]
        yield pool_for


@pytest_asyncio.fixture(loop_scope="module")
async def site() -> AsyncIterator[str]:
    pages: dict[str, tuple[bytes, str]] = {
        "report.pdf": (REPORT, "application/pdf"),
        "download": (REPORT, "application/octet-stream"),
        "scan.pdf": (SCANNED, "application/pdf"),
        "broken.pdf": (b"%PDF-1.7\n" + b"0" * 2000, "application/pdf"),
        "entity.jsonld": (json.dumps(ENTITY).encode(), "application/ld+json"),
        "api.json": (b'{"born": "1932-06-03", "place": "Bergen"}', "application/json"),
        "photo.png": (b"\x89PNG\r\n\x1a\n" + b"0" * 100, "image/png"),
        "blob": (b"\x00\x01binary", "application/octet-stream"),
    }

    async def serve(request: web.Request) -> web.Response:
        body, content_type = pages[request.match_info["name"]]
        return web.Response(body=body, headers={"Content-Type": content_type})

    async with serving(app_with("/{name}", serve)) as port:
        yield f"http://127.0.0.1:{port}"


@pytest_asyncio.fixture(loop_scope="module")
async def fetch(site, pools) -> AsyncIterator:
    """web_fetch with a warm extraction pool, as a run has it."""
    async with httpx.AsyncClient() as http:
        async def fetch_one(name: str, **overrides: object):
            settings = ToolSettings(allow_private_urls=True, per_host_delay_s=0, **overrides)  # type: ignore[arg-type]
            return await ToolBox(http, settings, extractor=await pools(settings)).web_fetch(f"{site}/{name}")
        yield fetch_one


@module_loop
async def test_a_pdf_report_is_read_page_by_page(fetch, site):
    result = await fetch("report.pdf")

    assert result[:3] == ("\n\n".join(REPORT_PAGES), True, f"{site}/report.pdf")


@module_loop
async def test_a_pdf_sent_as_octet_stream_is_recognised_by_its_first_bytes(fetch):
    result = await fetch("download")

    assert result[:2] == ("\n\n".join(REPORT_PAGES), True)


@module_loop
async def test_only_the_first_pdf_max_pages_are_read_and_the_text_says_so(fetch):
    result = await fetch("report.pdf", pdf_max_pages=2)

    assert result[:2] == ("\n\n".join(REPORT_PAGES[:2]) + "\n\n[PDF cut: read the first 2 of its 3 pages]", True)


@module_loop
async def test_a_pdf_gets_the_same_character_cut_and_marker_as_a_web_page(fetch):
    full = "\n\n".join(REPORT_PAGES)
    result = await fetch("report.pdf", fetch_max_chars=20)

    assert result[:2] == (f"{full[:20]}\n\n[truncated: showing the first 20 of {len(full)} characters]", True)


@module_loop
async def test_a_pdf_cut_at_its_byte_cap_that_cannot_be_read_says_why(fetch, site):
    result = await fetch("report.pdf", pdf_max_bytes=600)

    assert (result.logged, result.ok) == (
        f"error: unreadable_pdf: {site}/report.pdf is larger than 600 bytes, the most web_fetch reads of a PDF, "
        "and its first part cannot be read on its own; look for a smaller or HTML version of this document",
        False,
    )


@module_loop
async def test_a_damaged_pdf_is_an_error_naming_pdfium_s_reason(fetch, site):
    result = await fetch("broken.pdf")

    assert (result.logged, result.ok) == (
        f"error: unreadable_pdf: {site}/broken.pdf is a PDF that could not be opened (Failed to load document "
        "(PDFium: Data format error).); it may be damaged or encrypted",
        False,
    )


def test_the_reader_s_refusal_is_the_tool_failure_the_pool_and_web_fetch_catch():
    """One UnreadablePdf on both sides of the worker: what the reader raises is already a failure the model reads."""
    with pytest.raises(UnreadablePdf) as caught:
        pdf_text(b"%PDF-1.7\n" + b"0" * 2000, max_pages=5)

    assert isinstance(caught.value, ToolFailure)
    assert str(caught.value) == "Failed to load document (PDFium: Data format error)."


@module_loop
async def test_a_pdf_without_a_text_layer_says_it_is_probably_scanned(fetch, site):
    result = await fetch("scan.pdf")

    assert (result.logged, result.ok) == (
        f"error: extraction_empty: {site}/scan.pdf is a PDF without a text layer (probably scanned images)", False
    )


@pytest.mark.parametrize(("name", "text"), [
    ("entity.jsonld", json.dumps(ENTITY)),
    ("api.json", '{"born": "1932-06-03", "place": "Bergen"}'),
])
@module_loop
async def test_json_pages_are_returned_as_text(fetch, name: str, text: str):
    result = await fetch(name)

    assert result[:2] == (text, True)


@pytest.mark.parametrize(("name", "said"), [
    ("photo.png", "is image/png, not a web page; web_fetch reads HTML, PDF, plain text and JSON only "
                  "(look for an HTML version of this document)"),
    ("blob", "is application/octet-stream and does not look like HTML or PDF"),
])
@module_loop
async def test_other_content_is_refused_as_an_unsupported_type(fetch, site, name: str, said: str):
    result = await fetch(name)

    assert (result.logged, result.ok) == (f"error: unsupported_content_type: {site}/{name} {said}", False)
