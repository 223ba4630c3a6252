"""Provenance: `verified` survives only where this verdict's own fetch log shows the page was read."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from aiohttp import web

from chat_server import ChatServer, completion, tool_call
from fanout.config import ModelSpec, ToolSettings, package_data
from fanout.llm import ChatClient
from fanout.prompt import Prompt
from fanout.provenance import check_provenance, fetched_pages, normalise_url
from fanout.records import Source, ToolCallLog, VerdictRecord
from fanout.snapshot import load_snapshot
from fanout.tools import ToolBox
from fanout.verdict import run_verdict

ARTICLE = ("<html><head><title>Obituary</title></head><body><article><h1>Douglas Adams</h1>"
           + "<p>Douglas Noel Adams was born in Cambridge on 11 March 1952.</p>" * 6 + "</article></body></html>")


def fetch(url: str, *, ok: bool = True, final_url: str | None = None) -> ToolCallLog:
    return ToolCallLog(1, "web_fetch", json.dumps({"url": url}), "text" if ok else "error: HTTP 404 Not Found", ok,
                       final_url)


@pytest.mark.parametrize(("a", "b"), [
    ("https://Example.ORG/a/", "http://example.org/a"),
    ("https://example.org:443/a#section", "https://example.org/a"),
    ("https://example.org/a%7Eb", "https://example.org/a~b"),
    ("https://example.org/Z%C3%BCrich", "https://example.org/Zürich"),
    ("https://example.org", "https://example.org/"),
])
def test_urls_that_name_the_same_page_compare_equal(a: str, b: str):
    assert normalise_url(a) == normalise_url(b)


@pytest.mark.parametrize(("a", "b"), [
    ("https://example.org/a", "https://example.org/b"),
    ("https://example.org/a?id=1", "https://example.org/a?id=2"),
    ("https://example.org:8443/a", "https://example.org/a"),
    ("https://example.org/A", "https://example.org/a"),
    ("https://www.example.org/a", "https://example.org/a"),
])
def test_urls_of_different_pages_stay_different(a: str, b: str):
    assert normalise_url(a) != normalise_url(b)


def test_the_fetch_log_counts_successful_fetches_by_requested_and_final_url():
    log = [
        fetch("https://a.example/page"),
        fetch("https://b.example/missing", ok=False),
        fetch("https://short.example/x", final_url="https://c.example/article"),
        ToolCallLog(1, "web_search", json.dumps({"query": "https://d.example/"}), "{}", True),
    ]

    assert fetched_pages(log) == {"a.example/page", "short.example/x", "c.example/article"}


def test_a_verified_claim_without_a_fetch_becomes_reported_with_a_flag_and_a_warning():
    log = [fetch("https://a.example/page"), fetch("https://b.example/page", ok=False),
           fetch("https://short.example/x", final_url="https://c.example/article")]
    cited = [
        Source("https://a.example/page/#top", True, "verified"),
        Source("https://b.example/page", False, "verified"),
        Source("https://c.example/article", True, "verified"),
        Source("https://d.example/", True, "reported"),
    ]

    sources, warnings = check_provenance(cited, log)

    assert sources == [
        Source("https://a.example/page/#top", True, "verified", fetched=True),
        Source("https://b.example/page", False, "reported", fetched=False, claimed_verified=True),
        Source("https://c.example/article", True, "verified", fetched=True),
        Source("https://d.example/", True, "reported", fetched=False),
    ]
    assert warnings == ["source https://b.example/page was cited as verified, but this investigation never fetched "
                        "it; its provenance was changed to reported"]


def test_a_record_keeps_the_flag_and_the_final_url_through_its_wire_format():
    record = VerdictRecord(
        model="m", edit_rcid=1, edit_revid=2, qid="Q42", property="P569", diff_type="update",
        timestamp="2026-01-01T00:00:00Z", status="ok",
        sources=[Source("https://b.example/", False, "reported", fetched=False, claimed_verified=True)],
        tool_calls=[fetch("https://short.example/x", final_url="https://c.example/article")],
    )

    again = VerdictRecord.from_dict(json.loads(json.dumps(record.to_dict())))

    assert again == record


def test_an_older_record_without_the_new_fields_still_loads():
    old = {"model": "m", "edit_rcid": 1, "edit_revid": 2, "qid": "Q42", "property": None, "diff_type": None,
           "timestamp": "2026-01-01T00:00:00Z", "status": "ok",
           "sources": [{"url": "https://a.example/", "supports_claim": True, "provenance": "verified", "fetched": True}],
           "tool_calls": [{"turn": 1, "tool": "web_fetch", "arguments": "{}", "result": "x", "ok": True}]}

    record = VerdictRecord.from_dict(old)

    assert (record.sources[0].claimed_verified, record.tool_calls[0].final_url) == (False, None)


# --- a whole verdict: the model claims a page it never fetched ------------------------------------

@pytest.fixture
async def site() -> AsyncIterator[str]:
    """/short redirects to the article; the article is the only page there is."""
    async def short(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound("/articles/obituary.html")

    async def article(request: web.Request) -> web.StreamResponse:
        return web.Response(text=ARTICLE, content_type="text/html")

    app = web.Application()
    app.router.add_get("/short", short)
    app.router.add_get("/articles/obituary.html", article)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    await runner.cleanup()


async def no_sleep(seconds: float) -> None:
    return None


async def test_a_model_that_claims_a_page_it_never_fetched_is_corrected_in_its_record(site: str):
    edit = load_snapshot(package_data("sample_snapshot.yaml")).edits[0]
    final = f"{site}/articles/obituary.html"
    verdict = {
        "verdict": "incorrect",
        "rationale": "The obituary gives 1952; the BBC agrees.",
        "sources": [
            {"url": final, "supports_claim": False, "provenance": "verified"},
            {"url": "https://www.bbc.co.uk/news/adams", "supports_claim": False, "provenance": "verified"},
        ],
    }
    script = [
        completion(None, tool_calls=[tool_call("web_fetch", {"url": f"{site}/short"})]),
        completion("The obituary says 11 March 1952."),
        completion(json.dumps(verdict)),
    ]
    async with httpx.AsyncClient() as http, ChatServer(script) as server:
        tools = ToolBox(http, ToolSettings(allow_private_urls=True, per_host_delay_s=0))
        chat = ChatClient(base_url=server.base_url, api_key=None, http=http, sleep=no_sleep)
        record = await run_verdict(edit, ModelSpec("test/model"), chat=chat, tools=tools,
                                   prompt=Prompt("Check the edit.", "0" * 64))

    assert record.status == "ok"
    assert [(t.tool, t.ok, t.final_url) for t in record.tool_calls] == [("web_fetch", True, final)]
    assert [(s.url, s.provenance, s.fetched, s.claimed_verified) for s in record.sources] == [
        (final, "verified", True, False),
        ("https://www.bbc.co.uk/news/adams", "reported", False, True),
    ]
    assert record.warnings == [
        "source https://www.bbc.co.uk/news/adams was cited as verified, but this investigation never fetched it; "
        "its provenance was changed to reported"
    ]
