"""A new kind of item plugs in at the seam: no change to the engine, judging, the store, the research or the statistics.

This file defines a workload of its own, as docs/extending.md ("A new
workload") says one is written: claims in a JSON file, each a sentence to
check, as an Item type, an ItemSource and a Workload, registered by name.
Then it is run as SIFT-Patrol is: through the engine (scripted verdicts, every
model on every claim, then a router choosing by the claims' aspects), the
research (one real verdict against a scripted endpoint), and the report (the
committee, accuracy against labels keyed by the claims' own key, and the
claims described in their own words).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import httpx
import pytest
import respx
import yaml
from scripted_chat import LOCAL, ScriptedChat, completion

from fanout.report import ReportOptions, build_report
from fanout.base.errors import ConfigError
from fanout.base.item import Aspect, Change, Prompt, RecordKeys
from fanout.base.records import VERDICTS, VerdictRecord
from fanout.base.validate import package_data
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.judging.router import RouterStrategy
from fanout.llm.chat import ChatClient
from fanout.llm.models import ModelSpec
from fanout.research.messages import verdict_request
from fanout.research.record import new_record
from fanout.research.verdict import run_verdict
from fanout.store.checkpoint import read_records
from fanout.tools import ToolResult
from fanout.workloads import WORKLOADS, get_workload, register
from fanout.workloads.patrol.workload import PATROL

pytestmark = pytest.mark.timeout(120)


# --- the workload: everything a new kind of item needs, and nothing else ---------------------------


class Claim(NamedTuple):
    """A sentence to check, as this workload's input lists it; the Item of fanout.base.item."""

    number: int
    text: str
    topic: str
    """What the claim is about (`date`, `place`): the router's gate key."""

    @property
    def key(self) -> int:
        return self.number

    @property
    def kind(self) -> str:
        return "claim"

    @property
    def aspect(self) -> Aspect:
        return Aspect(self.topic, "stated")

    @property
    def label_key(self) -> int:
        return self.number

    def record_keys(self) -> RecordKeys:
        return RecordKeys(edit_rcid=self.number, edit_revid=1, qid=f"C{self.number}", property=None,
                          diff_type="claim", edit_timestamp=None)

    def question(self) -> str:
        return f"Is it true that {self.text}?"

    def context(self) -> str:
        return f"Claim {self.number}: {self.text}\nVerification question: {self.question()}\n"

    def prefetched_urls(self) -> list[str]:
        return []


@dataclass
class ClaimFile:
    """The input, opened (an ItemSource): nothing to close, nothing to keep for a resume."""

    sha256: str
    items: list[Claim]

    def keep_in(self, run_dir: Path) -> None:
        pass

    def __enter__(self) -> ClaimFile:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class ClaimsWorkload:
    name = "claims-test"
    item_noun = "claim"

    def prompt(self) -> Prompt:
        return Prompt("You check one claim.", "c" * 64, item_noun="claim", method="CLAIMS")

    def open(self, path: Path, *, cache_dir: Path | None = None) -> ClaimFile:
        raw = path.read_bytes()
        return ClaimFile(hashlib.sha256(raw).hexdigest(), [Claim(**c) for c in json.loads(raw)])

    def describe(self, item: Claim) -> Change:
        return Change(f"claim {item.number}", "a claim", None, item.text, None, item.question(), aspect=item.aspect)


CLAIMS = ClaimsWorkload()
INPUT = [
    {"number": 1, "text": "Douglas Adams was born in 1952", "topic": "date"},
    {"number": 2, "text": "Mozart was born in Vienna", "topic": "place"},
    {"number": 3, "text": "Ada Lovelace died in 1852", "topic": "date"},
]
TRUTH = {1: "correct", 2: "incorrect", 3: "correct"}
MODELS = (ModelSpec("m/a", None, 1.0, 1.0), ModelSpec("m/b", None, 2.0, 2.0), ModelSpec("m/c", None, 3.0, 3.0))
VERDICT_OF = {  # (claim, model) -> verdict
    (1, "m/a"): "verified-high", (1, "m/b"): "verified-high", (1, "m/c"): "plausible",
    (2, "m/a"): "incorrect", (2, "m/b"): "incorrect", (2, "m/c"): "verified-low",
    (3, "m/a"): "verified-low", (3, "m/b"): "unverifiable", (3, "m/c"): "verified-high",
}


@pytest.fixture(autouse=True)
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The workload registered for this test only (the registry is the command line's and the report's)."""
    monkeypatch.setitem(WORKLOADS, CLAIMS.name, CLAIMS)
    yield


@pytest.fixture
def claims_file(tmp_path: Path) -> Path:
    path = tmp_path / "claims.json"
    path.write_text(json.dumps(INPUT), encoding="utf-8")
    return path


async def scripted(item: Any, model: ModelSpec) -> VerdictRecord:
    """Each (claim, model) pair's planned verdict, made as the research makes a record: from the item."""
    await anyio.sleep(0)
    return new_record(item, model.name, "ok", verdict=VERDICT_OF[(item.key, model.name)], cost_usd=0.01)


def run_claims(path: Path, run_dir: Path, **settings: Any) -> str:
    out = StringIO()
    request = RunRequest(path, run_dir, RunSettings(models=MODELS, concurrency=4, **settings), handle_signals=False,
                         out=out, progress_interval_s=3600, workload=get_workload(CLAIMS.name))
    anyio.run(lambda: run(request, verdict_fn=scripted))
    return out.getvalue()


# --- through the engine, judging and the store -----------------------------------------------------


def test_the_engine_runs_every_pair_of_a_new_workload_and_logs_each_record_under_the_item_s_keys(claims_file,
                                                                                                  tmp_path):
    run_dir = tmp_path / "run"
    run_claims(claims_file, run_dir)
    records = sorted(read_records(run_dir), key=lambda r: (r.edit_rcid, r.model))
    assert [(r.edit_rcid, r.qid, r.model, r.verdict, r.aspect, r.diff_type) for r in records] == [
        (key, f"C{key}", model, VERDICT_OF[(key, model)], f"{INPUT[key - 1]['topic']}/stated", "claim")
        for key in (1, 2, 3) for model in ("m/a", "m/b", "m/c")]
    assert len(list((run_dir / "verdicts").glob("*.yaml"))) == 9
    manifest = yaml.safe_load((run_dir / "manifest.yaml").read_text())
    assert (manifest["workload"], manifest["edits"], manifest["prompt_sha256"]) == ("claims-test", 3, "c" * 64)
    assert "9/9 pairs already done; running 0" in run_claims(claims_file, run_dir)


def test_a_router_routes_a_new_workload_s_items_by_the_aspect_each_states(claims_file, tmp_path):
    run_dir = tmp_path / "run"
    run_claims(claims_file, run_dir, strategy=RouterStrategy(gates={"date": ("m/c",), "place": ("m/b",)}))
    routed = {(r.edit_rcid, r.model) for r in read_records(run_dir)}
    assert routed == {(1, "m/c"), (2, "m/b"), (3, "m/c")}


def test_a_run_of_one_workload_is_not_resumed_as_another(claims_file, tmp_path):
    run_dir = tmp_path / "run"
    run_claims(claims_file, run_dir)
    request = RunRequest(package_data("sample_snapshot.yaml"), run_dir, RunSettings(models=MODELS), limit=1,
                         handle_signals=False, out=StringIO(), workload=PATROL)
    with pytest.raises(ConfigError) as refused:
        anyio.run(lambda: run(request, verdict_fn=scripted))
    assert str(refused.value) == ("cannot resume this run directory with the workload patrol: it was started with "
                                  "claims-test. Use a new --run-dir.")


def test_the_registry_gives_patrol_by_default_and_names_an_unknown_workload():
    assert get_workload() is PATROL and get_workload("patrol") is PATROL
    with pytest.raises(ConfigError) as unknown:
        get_workload("nope")
    assert str(unknown.value) == "unknown workload 'nope'; known: patrol, claims, claims-test"
    register(CLAIMS)  # the same object again: it replaces itself
    assert get_workload("claims-test") is CLAIMS


# --- through the statistics and the report ---------------------------------------------------------


def test_the_report_scores_a_new_workload_against_labels_and_describes_its_items_in_their_own_words(
        claims_file, tmp_path):
    run_dir = tmp_path / "run"
    run_claims(claims_file, run_dir)
    labels = tmp_path / "labels.yaml"
    labels.write_text(yaml.safe_dump({"labels": [{"rcid": key, "truth": truth} for key, truth in TRUTH.items()]}))
    report = build_report(run_dir, ReportOptions(labels_path=labels))
    committee = {row["rcid"]: row["majority"] for row in report.table("committee")}
    assert committee == {1: "accept", 2: "reject", 3: "accept"}
    scores = {row["subject"]: (row["answered"], row["correct"]) for row in report.table("scores")}
    assert (scores["m/a"], scores["m/b"], scores["m/c"]) == ((3, 3), (3, 2), (3, 2))
    assert report.changes[2] == Change("claim 2", "a claim", None, "Mozart was born in Vienna", None,
                                       "Is it true that Mozart was born in Vienna?", aspect=Aspect("place", "stated"))
    assert report.notes_on.get("edits", []) == []


# --- through the research -------------------------------------------------------------------------


class NoTools:
    async def dispatch(self, name: str, raw_arguments: str) -> ToolResult:
        raise AssertionError("this verdict calls no tool")


async def test_the_research_asks_about_a_new_workload_s_item_in_its_own_words():
    claim = Claim(**INPUT[1])
    answer = {"verdict": "incorrect", "confidence": 0.9, "rationale": "He was born in Salzburg.", "sources": []}
    server = ScriptedChat([completion("I know this one."), completion(json.dumps(answer))])
    async with httpx.AsyncClient() as http:
        chat = ChatClient(base_url=LOCAL, api_key=None, http=http)
        with respx.mock:
            respx.post(f"{LOCAL}/chat/completions").mock(side_effect=server)
            record = await run_verdict(claim, ModelSpec("m/a"), chat=chat, tools=NoTools(), prompt=CLAIMS.prompt())
    first, verdict = server.requests
    assert first["messages"] == [{"role": "system", "content": "You check one claim."},
                                 {"role": "user", "content": claim.context()}]
    assert verdict["messages"][-1] == {"role": "user", "content": verdict_request(VERDICTS, "claim")}
    assert "Give your final verdict on this claim as one JSON object" in verdict_request(VERDICTS, "claim")
    assert (record.edit_rcid, record.qid, record.status, record.verdict) == (2, "C2", "ok", "incorrect")
    assert record.transcript[0].content == f"[CLAIMS system prompt, sha256 {'c' * 12}]"
