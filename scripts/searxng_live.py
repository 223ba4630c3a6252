"""`make searxng-live`: fanout's SearXNG client against SearXNG's own code, run from its source on 127.0.0.1.

    python scripts/searxng_live.py --searxng-src ../searxng --searxng-python ../searxng-venv/bin/python [--record]

SearXNG's upstream engines are replaced by a local corpus (a small aiohttp
server in this process) that three real SearXNG engines query: `json_engine`
(a generic JSON API), `mediawiki` (a MediaWiki search API, which gives
`publishedDate`) and SearXNG's own `wikipedia` engine pointed at a local
REST summary (which answers in `infoboxes`). The corpus can answer, refuse
(403/429, as engines that block a machine do), stall past SearXNG's timeout,
or send broken JSON, so each failure SearXNG reports is produced by SearXNG
itself. For each scenario the script runs `fanout check`'s SearXNG line and a
web_search the way a run does, and says what it expected and what it got;
exit 1 on any difference. With --record it also writes SearXNG's raw answers
to tests/fixtures/searxng/, which `make test` replays (CI cannot run SearXNG).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
from aiohttp import web

from fanout.tools.settings import ToolSettings
from fanout.http.client import make_http_client
from fanout.tools import ToolBox
from fanout.tools.providers.searxng import check_searxng

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "searxng"
CORPUS = [
    {"title": "Physicist Ada Whitlock dies at 91", "path": "/news/whitlock-obituary",
     "snippet": "Ada Whitlock, the physicist, died on 12 March 2024 in Tromsø, her family said."},
    {"title": "Ada Whitlock (1932-2024) | University of Oslo", "path": "/uio/whitlock",
     "snippet": "Whitlock studied at the University of Oslo before moving to Cambridge."},
]
WIKI_PAGES = [
    {"title": "Ada Whitlock", "snippet": "<span class=\"searchmatch\">Ada</span> Whitlock (3 June 1932 – 12 March 2024) "
     "was a Norwegian physicist", "timestamp": "2024-03-14T09:30:00Z"},
]


class Corpus:
    """The engines' upstream: answers, refuses, stalls or breaks, as `mode` says."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.base = ""
        self.seen: list[str] = []

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/search", self.json_api)
        app.router.add_get("/w/api.php", self.mediawiki)
        app.router.add_get("/api/rest_v1/page/summary/{title}", self.summary)
        return app

    async def _trouble(self, engine: str) -> web.Response | None:
        self.seen.append(engine)
        mode = self.mode
        if mode == "partial":
            mode = "blocked" if engine == "mediawiki" else "ok"
        if mode == "blocked":
            return web.Response(status=429 if engine == "mediawiki" else 403, text="blocked")
        if mode == "slow":
            await asyncio.sleep(6)
        if mode == "broken":
            return web.Response(text="{not json", content_type="application/json")
        return None

    async def json_api(self, request: web.Request) -> web.Response:
        trouble = await self._trouble("json")
        if trouble is not None:
            return trouble
        results = [{"url": self.base + page["path"], "title": page["title"], "snippet": page["snippet"]}
                   for page in CORPUS]
        return web.json_response({"results": results})

    async def mediawiki(self, request: web.Request) -> web.Response:
        trouble = await self._trouble("mediawiki")
        if trouble is not None:
            return trouble
        return web.json_response({"batchcomplete": "", "query": {"searchinfo": {"totalhits": len(WIKI_PAGES)},
                                                                  "search": WIKI_PAGES}})

    async def summary(self, request: web.Request) -> web.Response:
        trouble = await self._trouble("wikipedia")
        if trouble is not None:
            return trouble
        title = request.match_info["title"].replace(" ", "_")
        page = f"{self.base}/wiki/{title}"
        return web.json_response({
            "type": "standard", "title": title.replace("_", " "),
            "titles": {"display": title.replace("_", " ")},
            "description": "Norwegian physicist (1932-2024)",
            "extract": "Ada Whitlock was a Norwegian physicist known for her work on flux pinning in superconductors.",
            "content_urls": {"desktop": {"page": page}},
        })


def searxng_settings(port: int, corpus: str) -> str:
    return json.dumps({  # JSON is YAML: no quoting surprises
        "use_default_settings": {"engines": {"keep_only": ["wikipedia"]}},
        "general": {"instance_name": "fanout-live", "enable_metrics": False, "debug": True},
        # No suspension after a failure: each scenario must meet the engines as its corpus mode leaves them.
        "search": {"formats": ["html", "json"], "safe_search": 0, "ban_time_on_fail": 0, "max_ban_time_on_fail": 0,
                   "suspended_times": {"SearxEngineAccessDenied": 0, "SearxEngineCaptcha": 0,
                                       "SearxEngineTooManyRequests": 0}},
        "server": {"port": port, "bind_address": "127.0.0.1", "secret_key": secrets.token_hex(16),
                   "limiter": False, "public_instance": False, "image_proxy": False},
        "valkey": {"url": False},
        "outgoing": {"request_timeout": 2.0, "max_request_timeout": 4.0},
        "engines": [
            {"name": "wikipedia", "rest_v1_summary_url": corpus + "/api/rest_v1/page/summary/{title}",
             "enable_http": True},  # every engine: the corpus is plain http on 127.0.0.1
            {"name": "corpus", "engine": "json_engine", "shortcut": "cor", "categories": ["general"],
             "search_url": corpus + "/search?q={query}&lang={lang}", "results_query": "results",
             "url_query": "url", "title_query": "title", "content_query": "snippet", "enable_http": True},
            {"name": "corpuswiki", "engine": "mediawiki", "shortcut": "cwk", "categories": ["general"],
             "base_url": corpus + "/", "search_type": "text", "enable_http": True},
        ],
    }, indent=2)


Expectation = Callable[[str, dict[str, Any]], list[str]]


def expect_ok(check: str, answer: dict[str, Any]) -> list[str]:
    problems = [] if check.startswith("OK ") else [f"check should be OK: {check}"]
    engines = {engine for hit in answer.get("results", []) for engine in hit.get("engines", [])}
    if engines != {"corpus", "corpuswiki", "wikipedia"}:
        problems.append(f"hits should name corpus, corpuswiki and wikipedia (the infobox): {sorted(engines)}")
    if not any(hit.get("published") for hit in answer.get("results", [])):
        problems.append("the corpuswiki hit should keep its publishedDate")
    return problems + (["no engine failed, yet the answer warns"] if "warning" in answer else [])


def expect_partial(check: str, answer: dict[str, Any]) -> list[str]:
    problems = [] if check.startswith("WARN") and "corpuswiki" in check else [f"check should WARN about corpuswiki: {check}"]
    if not all(text in answer.get("warning", "") for text in ("corpuswiki (", "too many requests")):
        problems.append(f"the answer should tell the model that corpuswiki did not answer: {answer}")
    return problems


def expect_failure(hint: str) -> Expectation:
    def expect(check: str, answer: dict[str, Any]) -> list[str]:
        problems = [] if check.startswith("FAIL") and hint in check else [f"check should FAIL with {hint!r}: {check}"]
        if hint not in answer.get("error", ""):
            problems.append(f"the model should read {hint!r}: {answer}")
        return problems
    return expect


def expect_answer(check: str, answer: dict[str, Any]) -> list[str]:
    return [] if any("= 84" in text for text in answer.get("answers", [])) else [f"the statistics answerer's answer should reach the model: {answer}"]


SCENARIOS: dict[str, tuple[str, str, Expectation]] = {
    "ok": ("ok", "ada whitlock", expect_ok),
    "answer": ("ok", "sum 40 44", expect_answer),
    "partial": ("partial", "ada whitlock", expect_partial),
    "blocked": ("blocked", "ada whitlock", expect_failure("blocking this machine")),
    "timeout": ("slow", "ada whitlock", expect_failure("did not answer in time")),
    "broken": ("broken", "ada whitlock", expect_failure("could not read")),
}
"""name -> (corpus mode, query, what fanout must make of SearXNG's answer)."""


@asynccontextmanager
async def running_corpus(corpus: Corpus) -> AsyncIterator[str]:
    runner = web.AppRunner(corpus.app())
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    corpus.base = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield corpus.base
    finally:
        await runner.cleanup()


@asynccontextmanager
async def running_searxng(source: Path, python: str, corpus: str) -> AsyncIterator[str]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="fanout-searxng-") as tmp:
        settings = Path(tmp) / "settings.yml"
        settings.write_text(searxng_settings(port, corpus), encoding="utf-8")
        env = {**os.environ, "SEARXNG_SETTINGS_PATH": str(settings), "PYTHONPATH": str(source)}
        env.pop("SEARXNG_SECRET", None)
        log = (Path(tmp) / "searxng.log").open("wb")
        process = await anyio.open_process([python, "-m", "searx.webapp"], cwd=source, env=env,
                                           stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            await wait_until_up(base, process, Path(tmp) / "searxng.log")
            yield base
        finally:
            with anyio.CancelScope(shield=True):
                process.terminate()
                await process.wait()
                log.close()


async def wait_until_up(base: str, process: Any, log: Path) -> None:
    deadline = time.monotonic() + 90
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if process.returncode is not None:
                raise SystemExit(f"SearXNG exited ({process.returncode}):\n{log.read_text()[-3000:]}")
            try:
                if (await http.get(f"{base}/healthz", timeout=2)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await anyio.sleep(0.5)
    raise SystemExit(f"SearXNG did not answer at {base} within 90 s:\n{log.read_text()[-3000:]}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def run_scenario(name: str, corpus: Corpus, searxng: str, record: str | None) -> list[str]:
    """One corpus mode through SearXNG; with `record` (SearXNG's version), its raw answer becomes a fixture."""
    mode, query, expect = SCENARIOS[name]
    corpus.mode = mode
    settings = ToolSettings(searxng_url=f"{searxng}/search", allow_private_urls=True)
    async with make_http_client(2, user_agent=settings.user_agent) as http:
        raw = await http.get(f"{searxng}/search", params={"q": query, "format": "json"}, timeout=30)
        check = (await check_searxng(http, settings.searxng_url, settings=settings)).line()
        answer = json.loads((await ToolBox(http, settings).web_search(query)).text)
    if record is not None:
        FIXTURES.mkdir(parents=True, exist_ok=True)
        fixture = {"recorded_from": f"SearXNG {record} from source (scripts/searxng_live.py)", "scenario": name,
                   "query": query, "corpus_base": corpus.base, "status": raw.status_code, "body": raw.json()}
        (FIXTURES / f"{name}.json").write_text(json.dumps(fixture, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    problems = expect(check, answer)
    print(f"{'ok  ' if not problems else 'FAIL'} {name}: {check}")
    for problem in problems:
        print(f"       {problem}")
    return problems


SHIPPED_SETTINGS = Path(__file__).resolve().parent.parent / "searxng" / "settings.yml"
ENGINE_FLAGS = """
import json
from searx import settings
engines = {e["name"]: e for e in settings["engines"]}
print(json.dumps({name: {"disabled": bool(e.get("disabled")), "display_type": e.get("display_type")}
                  for name, e in engines.items()}))
"""


def check_shipped_settings(source: Path, python: str) -> list[str]:
    """searxng/settings.yml read by SearXNG's own loader: which engines it really runs, and how."""
    env = {**os.environ, "SEARXNG_SETTINGS_PATH": str(SHIPPED_SETTINGS), "PYTHONPATH": str(source)}
    done = subprocess.run([python, "-c", ENGINE_FLAGS], cwd=source, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return [f"SearXNG could not load {SHIPPED_SETTINGS}: {done.stderr[-1000:]}"]
    engines = json.loads(done.stdout.splitlines()[-1])
    problems = [f"{name} is disabled" for name, flags in engines.items() if flags["disabled"]]
    if "list" not in (engines.get("wikipedia", {}).get("display_type") or []):
        problems.append("wikipedia answers only in infoboxes")
    print(f"{'ok  ' if not problems else 'FAIL'} shipped settings: engines {', '.join(sorted(engines))}"
          + (f" ({'; '.join(problems)})" if problems else ", all enabled"))
    return problems


def searxng_version(source: Path, given: str | None) -> str:
    if given:
        return given
    done = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else "unknown (not a git checkout; pass --searxng-version)"


async def main_async(args: argparse.Namespace) -> int:
    corpus = Corpus()
    problems = check_shipped_settings(args.searxng_src, args.searxng_python)
    version = searxng_version(args.searxng_src, args.searxng_version)
    async with running_corpus(corpus) as base, running_searxng(args.searxng_src, args.searxng_python, base) as searxng:
        print(f"SearXNG {version} from {args.searxng_src} at {searxng}; corpus at {base}")
        for name in args.only or SCENARIOS:
            problems += await run_scenario(name, corpus, searxng, version if args.record else None)
    if args.record:
        print(f"Recorded SearXNG's answers in {FIXTURES}")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/searxng_live.py", description=__doc__.splitlines()[0])
    parser.add_argument("--searxng-src", type=Path, required=True, help="a SearXNG source tree (its `searx` package)")
    parser.add_argument("--searxng-python", default=sys.executable,
                        help="a Python with SearXNG's requirements.txt installed (default: this one)")
    parser.add_argument("--record", action="store_true", help=f"write SearXNG's answers to {FIXTURES}")
    parser.add_argument("--only", nargs="+", choices=list(SCENARIOS), metavar="NAME")
    parser.add_argument("--searxng-version", help="the source tree's commit, when it is not a git checkout")
    args = parser.parse_args(argv)
    if not (args.searxng_src / "searx" / "webapp.py").exists():
        parser.error(f"{args.searxng_src} is not a SearXNG source tree (no searx/webapp.py)")
    return anyio.run(main_async, args)


if __name__ == "__main__":
    sys.exit(main())
