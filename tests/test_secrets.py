"""No key, token or password from the environment ever reaches a run directory or the terminal.

The real CLI runs as a child process with fake secrets planted in its
environment, against the simulator in this test's event loop. The simulator
sits behind a small gate that notes every bearer token it is shown (so the
tests know the key really was in play) and, when asked, refuses the key with a
401 that echoes it back, the worst an endpoint can do to an error message.
Every file under the run directory is read as bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from aiohttp import web

from fanout.config import package_data
from fanout.sim import SimConfig, make_state
from fanout.sim.app import build_app

pytestmark = pytest.mark.timeout(300)

SAMPLE = package_data("sample_snapshot.yaml")


def _fake(label: str, length: int = 64) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:length]


OPENROUTER_KEY = "sk-or-v1-" + _fake("openrouter")
SECRETS = {
    "OPENROUTER_API_KEY": OPENROUTER_KEY,
    "TAVILY_API_KEY": "tvly-" + _fake("tavily", 32),
    "BRAVE_API_KEY": "BSA" + _fake("brave", 28),
    "WIKIDATA_BOT_PASSWORD": "fanoutbot@" + _fake("wikidata", 32),
    "WIKIDATA_OAUTH_TOKEN": _fake("oauth"),
}
NEEDLES = [value.encode() for value in SECRETS.values()] + [OPENROUTER_KEY.removeprefix("sk-or-v1-").encode()]
"""Each secret, and the OpenRouter key's 64 hex digits on their own (a prefix stripped is still a leak)."""


@dataclass
class Gate:
    """What the gate saw, and the key it refuses (None: it lets everything through)."""

    refuse: str | None = None
    tokens: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GatedSim:
    base_url: str
    gate: Gate

    @property
    def api_base(self) -> str:
        return self.base_url + "/api/v1"


@asynccontextmanager
async def gated_simulator(config: SimConfig, gate: Gate) -> AsyncIterator[GatedSim]:
    """The simulator's own app, with a middleware in front of its OpenRouter API."""

    @web.middleware
    async def check_bearer(request: web.Request, handler):  # type: ignore[no-untyped-def]
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        if request.path.startswith("/api/v1/") and scheme.lower() == "bearer":
            gate.tokens.append(token)
            if token == gate.refuse and request.path != "/api/v1/models":
                body = {"error": {"code": 401, "message": f"Invalid API key: {token} is not a valid key"}}
                return web.json_response(body, status=401)
        return await handler(request)

    app = build_app(make_state(config))
    app.middlewares.append(check_bearer)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        yield GatedSim(f"http://{host}:{port}", gate)
    finally:
        await runner.cleanup()


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes


async def fanout(*args: str) -> Finished:
    """`python -m fanout ARGS` with the secrets in its environment, as a user would run it."""
    result = await anyio.run_process([sys.executable, "-m", "fanout", *args], check=False,
                                     env={**os.environ, **SECRETS})
    return Finished(result.returncode, result.stdout, result.stderr)


def run_args(sim: GatedSim, run_dir: Path) -> list[str]:
    return ["run", str(SAMPLE), "--run-dir", str(run_dir), "--base-url", sim.api_base,
            "--searxng-url", sim.base_url, "--allow-private-urls", "--fetch-delay", "0", "--limit", "2"]


def leaks_in(data: bytes) -> list[str]:
    return [needle.decode() for needle in NEEDLES if needle in data]


def leaks_under(run_dir: Path) -> dict[str, list[str]]:
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert files, f"nothing was written under {run_dir}"
    return {str(p.relative_to(run_dir)): found for p in files if (found := leaks_in(p.read_bytes()))}


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "checkpoint.jsonl").read_text().splitlines()]


async def test_a_run_and_every_command_after_it_keep_every_secret_out_of_files_and_output(tmp_path):
    run_dir = tmp_path / "run"
    gate = Gate()
    async with gated_simulator(SimConfig(seed=5, require_auth=True), gate) as sim:
        outputs = {"run": await fanout(*run_args(sim, run_dir))}
        outputs["check"] = await fanout("check", "--base-url", sim.api_base, "--searxng-url", sim.base_url)
    outputs["status"] = await fanout("status", str(run_dir))
    outputs["report"] = await fanout("report", str(run_dir), "--html", "--json")

    assert {name: out.returncode for name, out in outputs.items()} == {"run": 0, "check": 0, "status": 0, "report": 0}
    assert [r["status"] for r in records(run_dir)] == ["ok"] * 8
    assert (run_dir / "report.html").exists() and (run_dir / "report.json").exists()
    assert set(gate.tokens) == {OPENROUTER_KEY}
    assert leaks_under(run_dir) == {}
    assert {name: leaks_in(out.stdout + out.stderr) for name, out in outputs.items()} == {
        "run": [], "check": [], "status": [], "report": []}


async def test_a_refused_key_echoed_back_by_the_endpoint_is_redacted_everywhere(tmp_path):
    run_dir = tmp_path / "run"
    gate = Gate(refuse=OPENROUTER_KEY)
    async with gated_simulator(SimConfig(seed=5, require_auth=True), gate) as sim:
        outputs = {"run": await fanout(*run_args(sim, run_dir))}
    outputs["status"] = await fanout("status", str(run_dir))
    outputs["report"] = await fanout("report", str(run_dir), "--html", "--json")

    logged = records(run_dir)
    assert outputs["run"].returncode == 1
    assert [(r["status"], r["error"]) for r in logged] == [
        ("error", "HTTP 401: Invalid API key: [redacted] is not a valid key")] * 8
    assert b"HTTP 401: Invalid API key: [redacted] is not a valid key" in outputs["status"].stdout
    assert OPENROUTER_KEY in gate.tokens
    assert leaks_under(run_dir) == {}
    assert {name: leaks_in(out.stdout + out.stderr) for name, out in outputs.items()} == {
        "run": [], "status": [], "report": []}
