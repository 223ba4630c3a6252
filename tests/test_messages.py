"""Issue 27, findings 7 and 8: messages that were a traceback, or numbers that misled; each pinned exactly."""

from __future__ import annotations

import anyio
import pytest
from aiohttp import web
from loopback import app_with, serving

from fanout.cli import main
from fanout.http.client import make_http_client

ARTICLE = (
    "<html><body><article><h1>Minutes of 1958</h1><p>The committee recorded that Ada Whitlock completed her "
    "doctorate at Cambridge in 1958, under the supervision of a pioneer of cryogenic measurement, and joined "
    "the faculty the following spring.</p></article></body></html>"
)


def seen_authorization(seen: list[str | None]) -> web.Application:
    async def page(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization"))
        return web.Response(text=ARTICLE, content_type="text/html")

    return app_with("/minutes", page)


async def test_a_url_with_user_and_password_is_fetched_with_them_as_basic_auth() -> None:
    seen: list[str | None] = []
    async with serving(seen_authorization(seen)) as port:
        async with make_http_client(1, user_agent="test") as client:
            response = await client.get(f"http://u:p@127.0.0.1:{port}/minutes")
    assert response.status_code == 200
    assert seen == ["Basic dTpw"]  # base64 of "u:p"


async def test_tool_web_fetch_of_a_userinfo_url_with_allow_private_urls_reads_the_page(
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[str | None] = []
    async with serving(seen_authorization(seen)) as port:
        argv = ["tool", "web_fetch", f"http://u:p@127.0.0.1:{port}/minutes", "--allow-private-urls"]
        code = await anyio.to_thread.run_sync(main, argv)
    captured = capsys.readouterr()
    assert code == 0, captured.out
    assert captured.out.startswith("Minutes of 1958\nThe committee recorded that Ada Whitlock")
    assert seen == ["Basic dTpw"]


@pytest.mark.parametrize(("argv", "line"), [
    (["run", "x.yaml", "--concurrency", "abc"],
     "fanout run: error: argument --concurrency: invalid int value: 'abc'; see `fanout run --help`"),
    (["report", "runs/x", "--project", "many"],
     "fanout report: error: argument --project: invalid int value: 'many'; see `fanout report --help`"),
    (["status", "runs/x", "--no-such-flag"],
     "fanout status: error: unrecognized arguments: --no-such-flag; see `fanout status --help`"),
])
def test_a_flag_argparse_refuses_is_one_line_like_every_other_bad_input(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", line + "\n")
