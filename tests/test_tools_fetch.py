"""web_fetch against real HTTP servers on 127.0.0.1 (AC1.2-AC1.4 and the URL guard).

The "public" site runs on 127.0.0.1, reached through names like news.example
that a fake resolver maps there, and 127.0.0.1/32 is the one private network
the tests allow. A second server on 127.0.0.2 stands for a private machine:
the guard must refuse it without ever connecting. The pages' text is read
in one extraction pool open for the whole module, as a run keeps one open:
without it, each page read started a worker of its own (an interpreter
importing trafilatura); so the tests share the module's event loop.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
import httpx
import pytest
import pytest_asyncio
from aiohttp import web

from fanout.tools.settings import ToolSettings
from fanout.tools import ToolBox, ToolResult
from fanout.tools.body import read_capped
from fanout.tools.extract_pool import ExtractionPool

pytestmark = pytest.mark.asyncio(loop_scope="module")

ARTICLE_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Physicist Ada Whitlock dies at 91 | The Northern Gazette</title></head>
<body>
<header><a href="/">The Northern Gazette</a>
<nav><ul><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li>
<li><a href="/weather">Weather</a></li><li><a href="/subscribe">Subscribe today</a></li></ul></nav></header>
<div class="ad-banner" id="ad-top"><a href="https://ads.example/watch">Buy cheap luxury watches now</a></div>
<main><article>
<h1>Physicist Ada Whitlock dies at 91</h1>
<p>Ada Whitlock, the physicist whose work on low-temperature superconductors shaped a generation of research,
died on 12 March 2024 in Tromsø, her family said. She was 91.</p>
<p>Born on 3 June 1932 in Bergen, Whitlock studied at the University of Oslo before moving to Cambridge, where
she completed her doctorate in 1958 under the supervision of a pioneer of cryogenic measurement.</p>
<p>Her 1967 paper on flux pinning in niobium alloys is still among the most cited in the field. Colleagues
described her as exacting, generous with students and impatient with vague claims.</p>
<p>She is survived by two children and four grandchildren. A memorial service will be held in Bergen later
this spring.</p>
</article>
<aside class="related"><h3>Most read</h3><ul><li><a href="/a">Storm closes mountain pass</a></li>
<li><a href="/b">Ferry timetable changes</a></li></ul></aside>
</main>
<footer><p>Copyright 2024 The Northern Gazette. All rights reserved.</p><a href="/privacy">Privacy policy</a></footer>
</body></html>
"""

HUGE_TOTAL = 20 * 1024 * 1024
CHUNK = 64 * 1024
CAP = 256 * 1024
PARAGRAPH = b"<p>The committee met again on Tuesday and agreed the minutes of the previous session.</p>\n"


@dataclass
class SiteState:
    """What the servers saw, for assertions about requests that must not happen."""

    release: asyncio.Event = field(default_factory=asyncio.Event)
    huge_done: asyncio.Event = field(default_factory=asyncio.Event)
    huge_sent: int = 0
    huge_finished: bool = False
    hosts_seen: list[str] = field(default_factory=list)
    private_hits: int = 0


@dataclass
class Site:
    port: int
    private_port: int
    state: SiteState
    lookups: list[str]
    pool: ExtractionPool

    def url(self, path: str, host: str = "news.example") -> str:
        return f"http://{host}:{self.port}{path}"


def build_app(state: SiteState) -> web.Application:
    async def article(request: web.Request) -> web.Response:
        state.hosts_seen.append(request.headers.get("Host", ""))
        return web.Response(text=ARTICLE_HTML, content_type="text/html", charset="utf-8")

    async def status(request: web.Request) -> web.Response:
        return web.Response(status=int(request.match_info["code"]), text="<html><body>nope</body></html>",
                            content_type="text/html")

    async def plain(request: web.Request) -> web.Response:
        return web.Response(text="Minutes of the 1958 meeting.\nPresent: A. Whitlock.", content_type="text/plain")

    async def script_only(request: web.Request) -> web.Response:
        return web.Response(text="<html><body><div id='app'></div><script>boot()</script></body></html>",
                            content_type="text/html")

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPFound(request.query["to"])

    async def loop(request: web.Request) -> web.Response:
        raise web.HTTPFound("/loop")

    async def huge(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
        response.content_length = HUGE_TOTAL
        await response.prepare(request)
        block = (PARAGRAPH * (CHUNK // len(PARAGRAPH) + 1))[:CHUNK]
        try:
            while state.huge_sent < HUGE_TOTAL:
                await response.write(block)
                state.huge_sent += len(block)
            await response.write_eof()
            state.huge_finished = True
        except ConnectionError:
            pass  # the client stopped reading, as it should
        finally:
            state.huge_done.set()
        return response

    async def gzip_bomb(request: web.Request) -> web.Response:
        return web.Response(body=bomb_body(), headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    async def slow(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        try:
            await response.write(b"<html><body><p>The first part arrives, the rest never does")
            await state.release.wait()
        except ConnectionError:
            pass
        return response

    async def drip(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        try:
            while not state.release.is_set():
                await response.write(b"<p>.</p>")
                await asyncio.sleep(0.02)
        except ConnectionError:
            pass
        return response

    app = web.Application()
    app.router.add_get("/article", article)
    app.router.add_get("/drip", drip)
    app.router.add_get("/status/{code}", status)
    app.router.add_get("/minutes.txt", plain)
    app.router.add_get("/app", script_only)
    app.router.add_get("/redirect", redirect)
    app.router.add_get("/loop", loop)
    app.router.add_get("/huge", huge)
    app.router.add_get("/bomb", gzip_bomb)
    app.router.add_get("/slow", slow)
    return app


@functools.cache
def bomb_body() -> bytes:
    """16 MiB of HTML once inflated. Made on first use, not at import: every pytest-xdist worker imports this
    module to collect it, and only one runs its tests."""
    return gzip.compress(b"<html><body><p>" + b"a" * (16 * 1024 * 1024), compresslevel=9)


def build_private_app(state: SiteState) -> web.Application:
    async def secret(request: web.Request) -> web.Response:
        state.private_hits += 1
        return web.Response(text="<html><body><p>internal admin token</p></body></html>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", secret)
    return app


async def start(app: web.Application, host: str) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, 0).start()
    return runner, runner.addresses[0][1]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def pool() -> AsyncIterator[ExtractionPool]:
    async with ExtractionPool() as pool:
        yield pool


@pytest_asyncio.fixture(loop_scope="module")
async def site(pool: ExtractionPool) -> AsyncIterator[Site]:
    state = SiteState()
    bomb_body()  # made before the site serves: its handler must not hold up the loop the client shares
    runner, port = await start(build_app(state), "127.0.0.1")
    private_runner, private_port = await start(build_private_app(state), "127.0.0.2")
    yield Site(port, private_port, state, lookups=[], pool=pool)
    state.release.set()
    await runner.cleanup()
    await private_runner.cleanup()


DNS = {
    "news.example": ["127.0.0.1"],
    "other.example": ["127.0.0.1"],
    "intranet.example": ["10.0.0.1"],
    "dual.example": ["93.184.216.34", "10.0.0.1"],
}


def settings(**overrides: object) -> ToolSettings:
    base = dict(allowed_networks=("127.0.0.1/32",), per_host_delay_s=0.0, fetch_timeout_s=10.0)
    base.update(overrides)
    return ToolSettings(**base)  # type: ignore[arg-type]


@pytest_asyncio.fixture(loop_scope="module")
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


def toolbox(http: httpx.AsyncClient, site: Site, **overrides: object) -> ToolBox:
    async def resolve(host: str, port: int) -> list[str]:
        site.lookups.append(host)
        return DNS[host]

    return ToolBox(http, settings(**overrides), resolver=resolve, extractor=site.pool)


async def test_ac1_2_web_fetch_extracts_the_article_text_and_drops_nav_ads_and_footer(site: Site, http):
    result = await toolbox(http, site).web_fetch(site.url("/article"))

    assert result.ok is True
    assert result.text.startswith("Physicist Ada Whitlock dies at 91\nAda Whitlock, the physicist")
    assert "Born on 3 June 1932 in Bergen" in result.text
    assert "A memorial service will be held in Bergen" in result.text
    for boilerplate in ("Subscribe today", "Buy cheap luxury watches", "Copyright 2024", "Most read", "Ferry timetable"):
        assert boilerplate not in result.text


async def test_the_request_goes_to_the_checked_address_but_names_the_host(site: Site, http):
    await toolbox(http, site).web_fetch(site.url("/article"))

    assert site.lookups == ["news.example"]
    assert site.state.hosts_seen == [f"news.example:{site.port}"]


@pytest.mark.parametrize(
    "url",
    [
        "https://www.wikidata.org/wiki/Q42",
        "https://m.wikidata.org/wiki/Q42",
        "https://query.wikidata.org/sparql?query=x",
        "https://WIKIDATA.org./wiki/Q42",
        "https://reasonator.toolforge.org/?q=Q42",
    ],
)
async def test_ac1_3_web_fetch_returns_blocked_domain_for_wikidata_and_its_mirrors_without_a_request(
    site: Site, http, url: str
):
    result = await toolbox(http, site).web_fetch(url)

    assert result[:2] == ("error: blocked_domain", False)  # seed 002's words, and nothing after them
    assert result.detail is not None and result.detail.endswith(
        "so it cannot be evidence for it); find an independent source")
    assert site.lookups == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [(403, "error: HTTP 403 Forbidden"), (404, "error: HTTP 404 Not Found"), (500, "error: HTTP 500 Internal Server Error")],
)
async def test_ac1_4_web_fetch_returns_an_error_string_for_http_error_statuses(site: Site, http, code: int, expected: str):
    result = await toolbox(http, site).web_fetch(site.url(f"/status/{code}"))

    assert result == ToolResult(expected, False)  # seed 002's words, and nothing after them


async def test_ac1_4_web_fetch_returns_a_timeout_error_when_the_body_stalls(site: Site, http):
    url = site.url("/slow")
    result = await toolbox(http, site, fetch_timeout_s=0.5).web_fetch(url)

    assert result == ToolResult("error: timeout", False, detail=f"{url} did not finish within 0.5 s")


async def test_ac1_4_a_body_that_trickles_in_forever_hits_the_overall_deadline(site: Site, http):
    """Each read succeeds quickly, so only the deadline over the whole fetch can stop it."""
    url = site.url("/drip")
    result = await toolbox(http, site, fetch_timeout_s=0.5).web_fetch(url)

    assert result == ToolResult("error: timeout", False, detail=f"{url} did not finish within 0.5 s")


async def test_a_redirect_to_a_loopback_address_is_refused_without_connecting(site: Site, http):
    private = f"http://127.0.0.2:{site.private_port}/admin"
    result = await toolbox(http, site).web_fetch(site.url(f"/redirect?to={private}"))

    assert (result.logged, result.ok) == (
        "error: refused_address: 127.0.0.2 is a loopback address; web_fetch reads only public web pages",
        False,
    )
    assert site.state.private_hits == 0


async def test_the_private_server_is_really_there_when_the_guard_is_off(site: Site, http):
    """Guards the test above: its zero hits mean refused, not unreachable."""
    private = f"http://127.0.0.2:{site.private_port}/admin"
    result = await toolbox(http, site, allow_private_urls=True).web_fetch(private)

    assert result[:2] == ("internal admin token", True)
    assert site.state.private_hits == 1


async def test_a_redirect_to_a_name_that_resolves_to_a_private_address_is_refused_after_dns(site: Site, http):
    result = await toolbox(http, site).web_fetch(site.url("/redirect?to=http://intranet.example/wiki"))

    assert (result.logged, result.ok) == (
        "error: refused_address: intranet.example resolves to 10.0.0.1, which is a private address; "
        "web_fetch reads only public web pages",
        False,
    )
    assert site.lookups == ["news.example", "intranet.example"]


@pytest.mark.parametrize(
    ("location", "expected"),
    [
        ("http://169.254.169.254/latest/meta-data/", "error: refused_address: 169.254.169.254 is a cloud metadata endpoint"),
        ("http://[fd00:ec2::254]/latest/", "error: refused_address: fd00:ec2::254 is a cloud metadata endpoint"),
        ("http://metadata.google.internal/computeMetadata/v1/", "error: refused_address: metadata.google.internal is a cloud metadata endpoint"),
    ],
)
async def test_a_redirect_to_a_cloud_metadata_endpoint_is_refused_even_with_private_urls_allowed(
    site: Site, http, location: str, expected: str
):
    start = site.url(f"/redirect?to={location}", host="127.0.0.1")
    result = await toolbox(http, site, allow_private_urls=True).web_fetch(start)

    assert (result.logged, result.ok) == (expected, False)


async def test_a_redirect_into_wikidata_is_refused_as_a_blocked_domain(site: Site, http):
    result = await toolbox(http, site).web_fetch(site.url("/redirect?to=https://www.wikidata.org/wiki/Q42"))

    assert result.ok is False
    assert result.text == "error: blocked_domain"
    assert result.logged.startswith("error: blocked_domain: www.wikidata.org is blocked")


async def test_a_name_with_any_private_address_among_its_answers_is_refused(site: Site, http):
    result = await toolbox(http, site).web_fetch("http://dual.example/page")

    assert (result.logged, result.ok) == (
        "error: refused_address: dual.example resolves to 10.0.0.1, which is a private address; "
        "web_fetch reads only public web pages",
        False,
    )


async def test_redirects_between_allowed_pages_are_followed_to_the_article(site: Site, http):
    target = site.url("/article", host="other.example")
    result = await toolbox(http, site).web_fetch(site.url(f"/redirect?to={target}"))

    assert result.ok is True
    assert result.text.startswith("Physicist Ada Whitlock dies at 91")
    assert site.lookups == ["news.example", "other.example"]


async def test_a_redirect_loop_stops_after_the_redirect_limit(site: Site, http):
    url = site.url("/loop")
    result = await toolbox(http, site, max_redirects=3).web_fetch(url)

    assert (result.logged, result.ok) == (f"error: too_many_redirects: {url} redirected more than 3 times", False)
    assert site.lookups == ["news.example"] * 4


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "error: unsupported_scheme: web_fetch reads only http and https URLs, not 'file'"),
        ("ftp://news.example/a", "error: unsupported_scheme: web_fetch reads only http and https URLs, not 'ftp'"),
        ("javascript:alert(1)", "error: unsupported_scheme: web_fetch reads only http and https URLs, not 'javascript'"),
        ("news.example/article", "error: unsupported_scheme: web_fetch reads only http and https URLs, not 'none'"),
    ],
)
async def test_only_http_and_https_urls_are_fetched(site: Site, http, url: str, expected: str):
    result = await toolbox(http, site).web_fetch(url)

    assert (result.logged, result.ok) == (expected, False)
    assert site.lookups == []


async def test_a_20_mb_body_is_cut_at_the_byte_cap_and_the_server_never_finishes_sending(site: Site, http):
    result = await toolbox(http, site, fetch_max_bytes=CAP, fetch_max_chars=1_000_000).web_fetch(site.url("/huge"))

    assert result.ok is True
    assert result.text.startswith("The committee met again on Tuesday")
    assert result.text.endswith("\n\n[page cut at 262,144 bytes: only its first part was read]")
    with anyio.fail_after(10):
        await site.state.huge_done.wait()
    assert site.state.huge_finished is False
    assert site.state.huge_sent < HUGE_TOTAL


async def test_capped_reading_takes_at_most_one_network_chunk_past_the_cap(site: Site, http):
    async with http.stream("GET", f"http://127.0.0.1:{site.port}/huge") as response:
        body = await read_capped(response, CAP)

    assert len(body.data) == CAP
    assert body.truncated is True
    assert CAP < body.raw_bytes <= CAP + 64 * 1024


async def test_a_gzip_bomb_inflates_no_further_than_the_byte_cap(site: Site, http):
    async with http.stream("GET", f"http://127.0.0.1:{site.port}/bomb") as response:
        body = await read_capped(response, CAP)

    assert len(body.data) == CAP
    assert body.data.startswith(b"<html><body><p>aaaa")
    assert body.truncated is True
    assert body.raw_bytes <= len(bomb_body())


async def test_a_page_with_no_article_text_gives_an_empty_extraction_error(site: Site, http):
    url = site.url("/app")
    result = await toolbox(http, site).web_fetch(url)

    assert result == ToolResult("error: extraction_empty", False, detail=(
        f"no readable article text at {url} (the page may need JavaScript, sit behind a login, or hold no article)"))


async def test_a_long_article_is_truncated_with_a_marker_saying_how_much_was_cut(site: Site, http):
    full = await toolbox(http, site).web_fetch(site.url("/article"))
    cut = await toolbox(http, site, fetch_max_chars=120).web_fetch(site.url("/article"))

    assert cut.ok is True
    assert cut.text == f"{full.text[:120]}\n\n[truncated: showing the first 120 of {len(full.text):,} characters]"


async def test_plain_text_pages_are_returned_as_they_are(site: Site, http):
    result = await toolbox(http, site).web_fetch(site.url("/minutes.txt"))

    assert result[:2] == ("Minutes of the 1958 meeting.\nPresent: A. Whitlock.", True)


async def test_allow_private_urls_connects_without_resolving_names_itself(site: Site, http):
    box = toolbox(http, site, allow_private_urls=True, allowed_networks=())
    result = await box.web_fetch(f"http://127.0.0.1:{site.port}/article")

    assert result.ok is True
    assert site.lookups == []


async def test_a_refused_connection_becomes_an_error_string(site: Site, http, refused_port: int):
    url = f"http://news.example:{refused_port}/page"
    result = await toolbox(http, site).web_fetch(url)

    assert result.ok is False
    assert result.text == "error: connection_error"
    assert result.logged.startswith(f"error: connection_error: could not fetch {url} (ConnectError: ")


