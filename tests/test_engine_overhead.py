"""What keeps the engine's own cost small: lazy imports, a bounded record queue, the lead that --concurrency
needs, the opt-in loop-lag probe, and chat errors read as the SDK read them."""

from __future__ import annotations

import argparse
import dataclasses
import json
import subprocess
import sys
import threading
from functools import partial
from pathlib import Path

import anyio
import anyio.lowlevel
import httpx
import pytest
import respx
from anyio import wait_all_tasks_blocked

from fanout.store.checkpoint import CheckpointWriter, log_path, read_index
from fanout.cli import run as run_cli
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.base.errors import ProviderError
from fanout.llm.chat import ChatClient
from fanout.engine.loop_lag import watch_loop_lag
from fanout.engine.orchestrator import orchestrate
from fanout.base.records import VerdictRecord
from fanout.workloads.patrol.edit import Edit
from edits import make_edit

MODELS = tuple(ModelSpec(name) for name in ("m/a", "m/b"))


def test_a_chat_call_imports_no_openai_sdk_and_no_pydantic():
    """The SDK's import was 1 to 2 s of CPU in every process that chats (fanout.llm.endpoint says why it went)."""
    code = ("import sys, httpx, anyio, fanout.cli.run, fanout.engine.runner, fanout.research.verdict\n"
            "from fanout.llm.chat import ChatClient\nfrom fanout.llm.models import ModelSpec\n"
            "reply = {'id': 'r', 'choices': [{'message': {'content': 'ok'}, 'finish_reason': 'stop'}], 'usage': {}}\n"
            "async def chat():\n"
            "    transport = httpx.MockTransport(lambda request: httpx.Response(200, json=reply))\n"
            "    async with httpx.AsyncClient(transport=transport) as http:\n"
            "        client = ChatClient(base_url='http://127.0.0.1:9/v1', api_key=None, http=http)\n"
            "        return await client.complete(ModelSpec('m/a'), [{'role': 'user', 'content': 'hi'}])\n"
            "result = anyio.run(chat)\n"
            "print(result.content, sorted(m for m in ('openai', 'pydantic') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok []"


def parse_run_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    run_cli.configure(parser)
    return parser.parse_args(["snap.yaml", *argv])


@pytest.mark.parametrize(
    ("argv", "lead"),
    [
        ((), 10),
        (("--concurrency", "8"), 10),
        (("--concurrency", "64"), 64),
        (("--concurrency", "256"), 256),
        (("--concurrency", "256", "--models", "a/x", "b/y"), 512),
        (("--concurrency", "256", "--max-lead", "5"), 5),
    ],
)
def test_the_default_lead_leaves_room_for_the_concurrency_asked_for(argv, lead):
    assert run_cli.settings_from_args(parse_run_args(*argv)).max_lead == lead


def test_an_explicit_lead_that_caps_the_concurrency_is_warned_about(capsys):
    run_cli.settings_from_args(parse_run_args("--concurrency", "64", "--max-lead", "4"))
    assert "--max-lead 4 with 4 model(s) lets about 16 verdicts run at once, fewer than --concurrency 64" in (
        capsys.readouterr().err
    )


class BlockedWriter(CheckpointWriter):
    """A writer held up (a slow disk) until the test lets it go."""

    gate = threading.Event()
    entered: anyio.Event
    """Set from the writer's thread when it takes up its first record."""

    def append(self, record: VerdictRecord):
        anyio.from_thread.run_sync(self.entered.set)
        self.gate.wait(timeout=30)
        return super().append(record)


async def test_when_the_writer_falls_behind_new_verdicts_wait_instead_of_records_piling_up(tmp_path: Path):
    started: list[int] = []

    async def verdict(edit: Edit, model: ModelSpec) -> VerdictRecord:
        started.append(edit.rcid)
        await anyio.sleep(0)
        return VerdictRecord(model=model.name, edit_rcid=edit.rcid, edit_revid=1, qid="Q1", property="P31",
                             diff_type="value_added", timestamp="2026-11-22T10:00:00Z", status="ok", cost_usd=0.001)

    edits = [make_edit(100 + i) for i in range(50)]
    settings = RunSettings(models=MODELS, concurrency=2, max_lead=100)
    BlockedWriter.gate.clear()
    writer = BlockedWriter(tmp_path, read_index(log_path(tmp_path)))
    writer.entered = anyio.Event()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(orchestrate, edits, settings, writer, verdict)
            await writer.entered.wait()  # the writer's thread holds its first batch at the gate,
            await wait_all_tasks_blocked()  # and the verdicts have gone as far as they can without it
            # one record with the writer, its queue (2) full, two verdicts holding their slots
            assert len(started) == 1 + 2 + 2
            BlockedWriter.gate.set()
        assert len(started) == 100
        assert len(writer.index.entries) == 100
    finally:
        BlockedWriter.gate.set()
        writer.close()


class LateLoop:
    """A virtual clock whose every wake-up comes late by the next of `lates` seconds, then never again."""

    def __init__(self, lates: list[float]) -> None:
        self.now = 0.0
        self._lates = iter(lates)
        self.spent = anyio.Event()

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        late = next(self._lates, None)
        if late is None:
            self.spent.set()
            await anyio.sleep_forever()
        await anyio.lowlevel.checkpoint()
        self.now += seconds + late


async def test_the_lag_probe_writes_how_late_the_loop_woke(tmp_path: Path):
    """Four wake-ups 0, 300, 2 and 60 ms late (a blocking call of 300 ms among them), on a virtual clock."""
    path = tmp_path / "lag.json"
    loop = LateLoop([0.0, 0.3, 0.002, 0.06])
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(watch_loop_lag, path, 0.005, clock=loop.clock, sleep=loop.sleep))
        await loop.spent.wait()
        tg.cancel_scope.cancel()
    assert json.loads(path.read_text()) == {
        "interval_ms": 5.0, "samples": 4, "max_lag_ms": 300.0, "max_lag_at_s": 0.31, "mean_lag_ms": 90.5,
        "p50_lag_ms": 2, "p99_lag_ms": 300, "over_ms": {"5": 2, "20": 2, "50": 2, "100": 1, "250": 1},
    }


@respx.mock
async def test_an_error_body_that_is_not_json_becomes_the_message():
    respx.post("http://chat.test/v1/chat/completions").mock(return_value=httpx.Response(400, text="bad gateway html"))
    async with httpx.AsyncClient() as http:
        chat = ChatClient(base_url="http://chat.test/v1", api_key=None, http=http)
        with pytest.raises(ProviderError) as caught:
            await chat.complete(ModelSpec("m/a"), [{"role": "user", "content": "hi"}])
    assert str(caught.value) == "HTTP 400: bad gateway html"
    assert caught.value.retryable is False


@respx.mock
async def test_an_error_object_without_a_message_is_worded_as_the_sdk_worded_it():
    respx.post("http://chat.test/v1/chat/completions").mock(
        return_value=httpx.Response(400, json={"error": {"code": 400}})
    )
    async with httpx.AsyncClient() as http:
        chat = ChatClient(base_url="http://chat.test/v1", api_key="k", http=http)
        with pytest.raises(ProviderError) as caught:
            await chat.complete(ModelSpec("m/a"), [{"role": "user", "content": "hi"}])
    assert str(caught.value) == "HTTP 400: Error code: 400 - {'error': {'code': 400}}"


@respx.mock
async def test_chat_requests_send_the_key_and_the_json_body():
    route = respx.post("http://chat.test/v1/chat/completions").mock(
        return_value=httpx.Response(200, json={"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]})
    )
    async with httpx.AsyncClient() as http:
        chat = ChatClient(base_url="http://chat.test/v1/", api_key="sk-test", http=http)
        result = await chat.complete(ModelSpec("m/a"), [{"role": "user", "content": "hi"}], json_mode=True)
    request = route.calls[0].request
    assert result.content == "ok"
    assert request.headers["authorization"] == "Bearer sk-test"
    assert json.loads(request.content) == {
        "model": "m/a", "messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_object"},
    }
