"""`--samples N`: the verdict phase asked N times over one investigation, the swap, the majority.

The orders and the vote are pure functions, tested directly. Whole verdicts
run against the simulator (its Haiku and Olmo, with their noise and position
bias) or against scripted answers where an exact sequence is needed (a
sample that times out, a tie).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import yaml

from fanout.cli import main
from fanout.base.validate import package_data
from fanout.base.records import VERDICTS, VerdictRecord, VerdictSample
from fanout.research.messages import verdict_request
from fanout.workloads.patrol.prompt import VERDICT_REQUEST
from fanout.research.prompted import result_message
from fanout.research.samples import Majority, SampleAnswer, majority
from fanout.workloads.patrol.snapshot import load_snapshot
from fanout.research.swap import SampleOrder, investigation_turns, reordered, sample_orders
from fanout.llm.chat import ChatClient, ToolCall
from fanout.base.errors import ConfigError
from fanout.sim import SimConfig, load_profile, profile_from_dict, running_simulator, with_overrides
from fanout.tools import ToolBox
from fanout.tools.extract_pool import ExtractionPool
from module_pool import ON_THE_MODULE_LOOP, pool  # noqa: F401 -- pool: the module's fixture
from fanout.tools.settings import ToolSettings
from fanout.sim.models import SIM_MODELS
from scripted_chat import STALL, completion, error_response, tool_call
from simulated import serving_simulator
from test_verdict import GOOD_VERDICT, HAIKU, SEED, Simulated, StubTools, Wire, noop_sleep, verdict_reply, verdict_with

NATURAL = VERDICTS
RCID = 2540801101


# --- the orders --------------------------------------------------------------------------------


def test_sample_orders_are_fixed_by_rcid_model_and_index_and_the_first_sample_keeps_the_natural_order():
    orders = sample_orders(RCID, "anthropic/claude-haiku-4.5", 3, 3)
    assert orders == [
        SampleOrder(NATURAL, (1, 2, 3)),
        SampleOrder(("plausible", "verified-high", "incorrect", "suspect", "verified-low", "unverifiable"), (1, 3, 2)),
        SampleOrder(("incorrect", "verified-high", "verified-low", "suspect", "unverifiable", "plausible"), (2, 1, 3)),
    ]
    assert sample_orders(RCID, "anthropic/claude-haiku-4.5", 3, 3) == orders
    assert sample_orders(RCID, "anthropic/claude-haiku-4.5", 2, 3) == orders[:2]
    assert sample_orders(RCID + 1, "anthropic/claude-haiku-4.5", 3, 3) != orders
    assert sample_orders(RCID, "allenai/olmo-3.1-32b-instruct", 3, 3) != orders


def test_six_samples_put_each_label_first_once_and_evidence_orders_repeat_only_when_none_is_left():
    orders = sample_orders(7, "m/a", 8, 3)
    assert sorted(o.labels[0] for o in orders[:6]) == sorted(VERDICTS)
    assert all(sorted(o.labels) == sorted(VERDICTS) for o in orders)
    assert len({o.turns for o in orders[:6]}) == 6  # 3 turns have 6 orders: all used before any repeats
    assert [o.turns for o in sample_orders(7, "m/a", 3, 1)] == [(1,), (1,), (1,)]


def test_without_the_swap_every_sample_lists_the_labels_in_the_natural_order_and_the_evidence_moves_the_same():
    swapped = sample_orders(RCID, "m/a", 4, 4)
    fixed = sample_orders(RCID, "m/a", 4, 4, swap_labels=False)
    assert [o.labels for o in fixed] == [NATURAL] * 4
    assert [o.turns for o in fixed] == [o.turns for o in swapped]


def test_the_verdict_request_lists_the_labels_in_the_order_given_and_in_the_natural_order_is_todays_to_the_byte():
    # The hash of the request a verdict with one sample is asked (changed once since --samples existed: the
    # confidence field of issue 28).
    assert hashlib.sha256(VERDICT_REQUEST.encode()).hexdigest() == (
        "061f18c2648d11fd8d0a6ec2be156b99256e6517a09a10e30683350b8e396cc5")
    assert verdict_request(NATURAL, "edit") == VERDICT_REQUEST
    order = ("incorrect", "suspect", "unverifiable", "plausible", "verified-low", "verified-high")
    swapped = verdict_request(order, "edit")
    assert "- verdict: one of incorrect, suspect, unverifiable, plausible, verified-low, verified-high, chosen" in swapped
    assert '"enum": [\n        "incorrect",\n        "suspect",\n        "unverifiable",\n' in swapped
    # Made once per order (cached): asked again, as a list or a tuple, the same text.
    assert verdict_request(list(order), "edit") == swapped and verdict_request(list(NATURAL), "edit") == VERDICT_REQUEST


# --- reordering a conversation -------------------------------------------------------------------


def native_conversation() -> list[dict[str, Any]]:
    def asks(call_ids: list[str]) -> dict[str, Any]:
        calls = [{"id": c, "type": "function", "function": {"name": "web_search", "arguments": "{}"}} for c in call_ids]
        return {"role": "assistant", "content": "", "tool_calls": calls}

    return [
        {"role": "system", "content": "SIFT"}, {"role": "user", "content": "the edit"},
        asks(["a"]), {"role": "tool", "tool_call_id": "a", "content": "A"},
        asks(["b1", "b2"]), {"role": "tool", "tool_call_id": "b1", "content": "B1"},
        {"role": "tool", "tool_call_id": "b2", "content": "B2"},
        asks(["c"]), {"role": "tool", "tool_call_id": "c", "content": "C"},
        {"role": "assistant", "content": "Enough evidence."},
    ]


def test_a_turn_moves_whole_so_every_tool_result_still_follows_the_call_it_answers():
    messages = native_conversation()
    branch = reordered(messages, (3, 1, 2))
    assert [m.get("tool_call_id") or m["content"] for m in branch] == [
        "SIFT", "the edit", "", "c", "", "a", "", "b1", "b2", "Enough evidence."]
    for i, message in enumerate(branch):
        if message["role"] == "tool":
            asker = next(m for m in reversed(branch[:i]) if m["role"] != "tool")
            assert message["tool_call_id"] in [c["id"] for c in asker["tool_calls"]]


def test_a_branch_is_a_copy_so_what_one_sample_adds_or_trims_stays_in_it():
    messages = native_conversation()
    branch = reordered(messages, (1, 2, 3))
    assert branch == messages
    branch[3]["content"] = "[trimmed]"
    branch[-1]["content"] += " Verdict follows."
    assert messages == native_conversation()


def test_prompted_turns_move_with_their_result_messages_and_an_investigation_without_a_closing_reply_has_no_tail():
    action = {"role": "assistant", "content": '{"tool": "web_search", "arguments": {"query": "q"}}'}
    first = result_message(ToolCall("prompted_1", "web_search", "{}"), "hits 1")
    second = result_message(ToolCall("prompted_2", "web_fetch", "{}"), "page 2")
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "E"}, action, first, dict(action), second]
    turns = investigation_turns(messages)
    assert (len(turns.head), [len(t) for t in turns.evidence], turns.tail) == (2, [2, 2], [])
    assert [m["content"] for m in reordered(messages, (2, 1))][2:] == [action["content"], second["content"],
                                                                       action["content"], first["content"]]


def test_an_order_that_does_not_cover_the_turns_is_refused():
    with pytest.raises(ValueError, match=r"turn order \[1, 1, 2\] does not cover the 3 evidence turns"):
        reordered(native_conversation(), (1, 1, 2))


# --- the vote ------------------------------------------------------------------------------------

SWAP = ("plausible", "verified-high", "incorrect", "suspect", "verified-low", "unverifiable")


def answer(verdict: str | None, labels: tuple[str, ...] = NATURAL, verified: int = 0) -> SampleAnswer:
    return SampleAnswer(SampleOrder(labels, ()), verdict, verified)


def test_the_majority_wins_and_stability_counts_every_sample_asked_including_those_without_a_verdict():
    answers = [answer("suspect"), answer("incorrect", SWAP), answer("suspect", SWAP), answer(None)]
    assert majority(answers, 4) == Majority(0, 0.5)
    assert majority([answer(None), answer("plausible")], 3) == Majority(1, pytest.approx(1 / 3))
    assert majority([answer(None), answer(None)], 2) == Majority(None, None)


def test_a_tie_goes_against_the_label_whose_votes_were_cast_while_it_was_listed_first():
    # Sample 1 lists verified-high first and votes for it; sample 2 lists plausible first, votes suspect.
    assert majority([answer("verified-high"), answer("suspect", SWAP)], 2) == Majority(1, 0.5)
    # The other way round: sample 2's vote for plausible was cast while plausible was listed first.
    assert majority([answer("suspect"), answer("plausible", SWAP)], 2) == Majority(0, 0.5)


def test_a_tie_not_settled_by_position_goes_to_more_verified_sources_then_to_the_earlier_label_on_the_scale():
    assert majority([answer("suspect", verified=2), answer("plausible", verified=1)], 2) == Majority(0, 0.5)
    assert majority([answer("suspect"), answer("plausible")], 2) == Majority(1, 0.5)


# --- whole verdicts --------------------------------------------------------------------------------



@pytest_asyncio.fixture(loop_scope="module")
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """conftest's plain client, on the module's event loop (the one the shared pool lives on)."""
    async with httpx.AsyncClient() as client:
        yield client


@asynccontextmanager
async def simulated(pool: ExtractionPool, faults: dict[str, Any] | None = None, *,
                    seed: int = SEED) -> AsyncIterator[Simulated]:
    """test_verdict's simulator, wire and real ToolBox, the pages read in `pool`."""
    config = SimConfig(seed=seed, profile=profile_from_dict({"defaults": faults or {}}))
    wire = Wire()
    hooks = {"request": [wire.on_request], "response": [wire.on_response]}
    async with running_simulator(config) as sim, httpx.AsyncClient(event_hooks=hooks) as http:
        settings = ToolSettings(searxng_url=sim.searxng_url, allow_private_urls=True, per_host_delay_s=0.0)
        chat = ChatClient(base_url=sim.api_base, api_key=None, http=http, sleep=noop_sleep)
        yield Simulated(sim, wire, chat, ToolBox(http, settings, extractor=pool))


def wire_calls(requests: list[dict[str, Any]], sim_url: str) -> list[str]:
    """The request bodies as sent, with the simulator's own address (a new port each time) taken out."""
    return [json.dumps(r, sort_keys=True).replace(sim_url, "SIM") for r in requests]


@ON_THE_MODULE_LOOP
async def test_one_sample_sends_exactly_the_requests_and_pays_exactly_what_a_verdict_always_did(edit, pool):
    async with simulated(pool, seed=3) as run:
        plain = await run.verdict(edit)
        plain_requests = wire_calls(run.wire.requests, run.sim.base_url)
        plain_cost = run.sim.stats()["cost_usd"]["total"]
    async with simulated(pool, seed=3) as run:
        one = await run.verdict(edit, samples=1)
        one_requests, one_cost = wire_calls(run.wire.requests, run.sim.base_url), run.sim.stats()["cost_usd"]["total"]
    async with simulated(pool, seed=3) as run:
        three = await run.verdict(edit, samples=3)
        three_requests = wire_calls(run.wire.requests, run.sim.base_url)
    assert one_requests == plain_requests
    assert (one.cost_usd, one_cost) == (plain.cost_usd, plain_cost)
    assert (one.samples, one.stability) == ([], None)  # one sample measures no stability
    # Sample 1 of three asks what one sample asks, to the byte: its requests open the three-sample verdict.
    assert three_requests[:len(plain_requests)] == plain_requests
    assert three.samples[0].verdict == plain.verdict


@ON_THE_MODULE_LOOP
async def test_three_samples_of_the_noisy_model_over_one_investigation(edit, pool):
    async with simulated(pool, seed=3) as run:
        record = await run.verdict(edit, samples=3)
        requests = run.wire.requests
    investigation = [r for r in requests if r.get("tools")]
    verdict_asks = [r for r in requests if not r.get("tools")]
    assert len(verdict_asks) == 3  # one per sample, no repair needed, and no new tool calls
    assert record.token_usage.turns == len(investigation) + 3
    turns = len(investigation) - 1  # every investigation reply but the closing one called tools
    orders = sample_orders(edit.rcid, HAIKU.name, 3, turns)
    assert [(s.label_order, s.evidence_order) for s in record.samples] == [
        (list(o.labels), list(o.turns)) for o in orders]
    for ask, order in zip(verdict_asks, orders):
        assert ask["messages"][-1] == {"role": "user", "content": verdict_request(order.labels, "edit")}
        tool_ids = [m["tool_call_id"] for m in ask["messages"] if m["role"] == "tool"]
        asked_ids = [c["id"] for m in ask["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        assert tool_ids == asked_ids  # results follow the calls they answer, in every order
    # A page Haiku read contradicts the edit: its leaning never moves incorrect, and no sample's own slip fired.
    assert [s.verdict for s in record.samples] == ["incorrect", "incorrect", "incorrect"]
    assert [s.status for s in record.samples] == ["ok", "ok", "ok"]
    assert (record.status, record.verdict, record.stability) == ("ok", "incorrect", 1.0)
    assert record.rationale == record.samples[0].rationale
    assert record.cost_usd == pytest.approx(run.sim.stats()["cost_usd"]["total"])


@ON_THE_MODULE_LOOP
async def test_a_sample_the_time_runs_out_on_is_a_timeout_and_the_verdict_stands_on_those_answered(edit, http):
    script = [completion(None, tool_calls=[tool_call("web_search", {"query": "q"})]), completion("Done."),
              verdict_reply(cost=0.01), STALL]
    record, server = await verdict_with(script, edit, http, tools=StubTools(), timeout_s=1.0, samples=3)
    assert (record.status, record.timeout, record.verdict) == ("ok", False, "incorrect")
    assert [(s.verdict, s.status) for s in record.samples] == [("incorrect", "ok"), (None, "timeout"), (None, "timeout")]
    assert record.stability == pytest.approx(1 / 3)
    assert "2 of 3 samples gave no verdict: sample 2 timeout, sample 3 timeout" in record.warnings
    assert len(server.requests) == 4


@ON_THE_MODULE_LOOP
async def test_a_sample_the_endpoint_fails_leaves_the_others_to_decide_and_its_own_status_says_why(edit, http):
    suspect = {**GOOD_VERDICT, "verdict": "suspect"}
    script = [completion("Done."), error_response(402, "Insufficient credits"), verdict_reply(suspect),
              verdict_reply(suspect)]
    record, _ = await verdict_with(script, edit, http, samples=3)
    assert [(s.verdict, s.status) for s in record.samples] == [(None, "error"), ("suspect", "ok"), ("suspect", "ok")]
    assert (record.status, record.verdict, record.stability) == ("ok", "suspect", pytest.approx(2 / 3))


@ON_THE_MODULE_LOOP
async def test_without_any_verdict_the_record_takes_the_first_samples_status(edit, http):
    script = [completion("Done."), *[verdict_reply("no json here") for _ in range(4)]]
    record, _ = await verdict_with(script, edit, http, samples=2)
    assert (record.status, record.verdict, record.stability) == ("invalid_json", None, None)
    assert [s.status for s in record.samples] == ["invalid_json", "invalid_json"]
    assert record.raw_verdict == "no json here"


def test_a_record_with_samples_reads_back_as_written_and_older_records_have_none():
    sample = VerdictSample("suspect", list(SWAP), [2, 1], "ok", "Two sources disagree.")
    record = VerdictRecord(model="m/a", edit_rcid=1, edit_revid=2, qid="Q1", property="P1", diff_type="value_changed",
                           timestamp="2026-11-23T10:00:00Z", status="ok", verdict="suspect", samples=[sample],
                           stability=0.5)
    assert VerdictRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record
    older = {k: v for k, v in record.to_dict().items() if k not in ("samples", "stability")}
    assert (VerdictRecord.from_dict(older).samples, VerdictRecord.from_dict(older).stability) == ([], None)


# --- the simulator's habits ----------------------------------------------------------------------

STEP = {label: i for i, label in enumerate(VERDICTS)}


@ON_THE_MODULE_LOOP
async def test_a_simulated_model_with_a_full_position_bias_answers_whatever_label_each_request_lists_first(edit, pool):
    async with simulated(pool, {"label_position_bias": 1.0}) as run:
        swapped = await run.verdict(edit, samples=4)
    async with simulated(pool, {"label_position_bias": 1.0}) as run:
        fixed = await run.verdict(edit, samples=4, swap_labels=False)
    assert [s.verdict for s in swapped.samples] == [s.label_order[0] for s in swapped.samples]
    assert len({s.verdict for s in swapped.samples}) == 4
    assert [s.verdict for s in fixed.samples] == ["verified-high"] * 4
    assert (swapped.stability, fixed.stability) == (0.25, 1.0)


@ON_THE_MODULE_LOOP
async def test_a_request_that_lists_no_labels_feels_no_pull_and_a_repeat_of_a_request_gets_the_same_answer(edit, http, pool):
    async with simulated(pool, {"label_position_bias": 1.0, "temperature_noise": 0.5}) as run:
        record = await run.verdict(edit, samples=2)
        ask = run.wire.requests[-1]
        answers = [(await http.post(f"{run.sim.api_base}/chat/completions", json=ask)).json() for _ in range(2)]
        unlisted = {**ask, "messages": [*ask["messages"][:-1], {"role": "user", "content": "Your verdict as JSON?"}]}
        plain = (await http.post(f"{run.sim.api_base}/chat/completions", json=unlisted)).json()
    contents = [json.loads(a["choices"][0]["message"]["content"]) for a in answers]
    assert contents[0] == contents[1]
    assert contents[0]["verdict"] == record.samples[-1].verdict == record.samples[-1].label_order[0]
    assert json.loads(plain["choices"][0]["message"]["content"])["verdict"] != record.samples[-1].label_order[0]


@pytest.fixture(scope="module")
def unsure_edit():
    """Seed 3's Haiku reads this edit's pages as verified-high; its leaning and slips are the unsure part."""
    return load_snapshot(package_data("sample_snapshot.yaml")).edits[1]


@ON_THE_MODULE_LOOP
async def test_without_noise_every_sample_meets_the_same_habits_and_gives_the_same_verdict(unsure_edit, pool):
    async with simulated(pool, {"temperature_noise": 0.0}, seed=3) as run:
        quiet = await run.verdict(unsure_edit, samples=5)
    assert [s.verdict for s in quiet.samples] == ["verified-high"] * 5
    assert quiet.stability == 1.0


@ON_THE_MODULE_LOOP
async def test_full_noise_redraws_the_habits_per_sample_and_a_repeated_request_or_a_new_port_replays_them(unsure_edit, http, pool):
    noisy, asks = [], []
    for _ in range(2):
        async with simulated(pool, {"temperature_noise": 1.0}, seed=3) as run:
            noisy.append(await run.verdict(unsure_edit, samples=5))
            asks.append(run.wire.requests[-1])
            again = [(await http.post(f"{run.sim.api_base}/chat/completions", json=asks[-1])).json() for _ in range(2)]
    # Every sample draws its own leaning, slip and misreadings from its request's text: they spread.
    assert [s.verdict for s in noisy[0].samples] == ["verified-high", "verified-high", "verified-high", "unverifiable",
                                                     "unverifiable"]
    assert [s.verdict for s in noisy[1].samples] == [s.verdict for s in noisy[0].samples]
    assert [json.loads(a["choices"][0]["message"]["content"])["verdict"] for a in again] == ["unverifiable"] * 2


def test_a_fault_profile_can_plant_or_remove_a_models_habits_and_refuses_a_chance_above_one():
    olmo, haiku = SIM_MODELS[1], SIM_MODELS[3]
    assert (olmo.label_position_bias, haiku.temperature_noise) == (0.2, 0.5)
    profile = with_overrides(load_profile("clean"), [f"{olmo.id}:label_position_bias=0", "temperature_noise=0.5"])
    habits = profile.for_model(olmo.id).habits(olmo)
    assert (habits.label_position_bias, habits.temperature_noise) == (0.0, 0.5)
    assert profile.for_model(haiku.id).habits(haiku).temperature_noise == 0.5
    assert load_profile("clean").for_model(olmo.id).habits(olmo) == olmo
    with pytest.raises(ConfigError, match="a rate is a probability between 0 and 1, got 1.5"):
        with_overrides(load_profile("clean"), ["label_position_bias=1.5"])


# --- fanout run --samples --------------------------------------------------------------------------

SAMPLE = package_data("sample_snapshot.yaml")
LOCAL = ["--base-url", "http://127.0.0.1:9/v1", "--searxng-url", "http://127.0.0.1:9"]
MODELS = "anthropic/claude-haiku-4.5,allenai/olmo-3.1-32b-instruct"


@pytest.mark.parametrize(("value", "expected"), [
    ("0", "--samples must be at least 1 (got 0)."),
    ("21", "--samples must be at most 20 (got 21)."),
    ("x", "--samples must be a whole number (got 'x')."),
    ("2.5", "--samples must be a whole number (got '2.5')."),
])
def test_a_bad_number_of_samples_is_refused_in_one_line_before_anything_is_written(tmp_path, capsys, value, expected):
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), *LOCAL, "--samples", value])
    err = capsys.readouterr().err.strip()
    assert (code, err) == (2, f"fanout run: error: {expected}")
    assert not (tmp_path / "run").exists()


def test_help_offers_samples_and_keeps_the_benchmarks_switch_out_of_sight(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = capsys.readouterr().out
    assert "--samples N" in text and "ask the verdict phase N times (1-20)" in text
    assert "--no-label-swap" not in text


def run_command(sim, run_dir: Path, *extra: str) -> list[str]:
    return ["run", str(SAMPLE), "--run-dir", str(run_dir), "--limit", "3",
            "-m", MODELS, "--samples", "3", "--base-url", sim.api_base, "--searxng-url", sim.searxng_url,
            "--allow-private-urls", "--fetch-delay", "0", *extra]


def fanout(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """`fanout ARGV` through the command line's entry point, in this process: its exit code and what it printed."""
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out + err


def logged(run_dir: Path) -> dict[tuple[int, str], dict[str, Any]]:
    lines = (run_dir / "checkpoint.jsonl").read_text().splitlines()
    return {(r["edit_rcid"], r["model"]): r for r in map(json.loads, lines)}


@pytest.mark.timeout(300)
def test_a_sampled_run_on_the_simulator_keeps_every_sample_and_a_resume_runs_nothing_again(tmp_path, capsys):
    with serving_simulator(SimConfig(seed=5)) as sim:
        first = fanout(run_command(sim, tmp_path / "a"), capsys)
        calls = sim.stats()["requests"]["chat_completions"]
        log = (tmp_path / "a" / "checkpoint.jsonl").read_bytes()
        again = fanout(run_command(sim, tmp_path / "a"), capsys)
        resumed_calls = sim.stats()["requests"]["chat_completions"]
        elsewhere = fanout(run_command(sim, tmp_path / "b"), capsys)
    assert first[0] == 0, first[1]
    assert again[0] == 0 and "6/6 pairs already done; running 0" in again[1]
    assert (resumed_calls, (tmp_path / "a" / "checkpoint.jsonl").read_bytes()) == (calls, log)
    records = logged(tmp_path / "a")
    summary = {(rcid, model.split("/")[0]): (r["verdict"], [s["verdict"] for s in r["samples"]], r["stability"])
               for (rcid, model), r in records.items()}
    assert summary == {
        # Haiku redraws half its habits per sample; on these three edits every sample came out the same.
        (2540801101, "anthropic"): ("incorrect", ["incorrect"] * 3, 1.0),
        (2540801102, "anthropic"): ("verified-low", ["verified-low"] * 3, 1.0),
        (2540801103, "anthropic"): ("verified-high", ["verified-high"] * 3, 1.0),
        # Olmo's second sample took the label listed first (unverifiable, verified-low).
        (2540801101, "allenai"): ("incorrect", ["incorrect"] * 3, 1.0),
        (2540801102, "allenai"): ("verified-high", ["verified-high", "unverifiable", "verified-high"], pytest.approx(2 / 3)),
        (2540801103, "allenai"): ("verified-high", ["verified-high", "verified-low", "verified-high"], pytest.approx(2 / 3)),
    }
    assert [records[(2540801102, "allenai/olmo-3.1-32b-instruct")]["samples"][1]["label_order"][0],
            records[(2540801103, "allenai/olmo-3.1-32b-instruct")]["samples"][1]["label_order"][0]] == [
        "unverifiable", "verified-low"]
    assert all(r["samples"][0]["label_order"] == list(VERDICTS) for r in records.values())
    manifest = yaml.safe_load((tmp_path / "a" / "manifest.yaml").read_text())
    assert (manifest["settings"]["samples"], manifest["settings"]["swap_labels"]) == (3, True)
    # A re-run in another directory asks every sample in the same orders, and gets the same answers.
    orders = {k: [(s["label_order"], s["evidence_order"], s["verdict"]) for s in r["samples"]] for k, r in records.items()}
    assert elsewhere[0] == 0, elsewhere[1]
    assert {k: [(s["label_order"], s["evidence_order"], s["verdict"]) for s in r["samples"]]
            for k, r in logged(tmp_path / "b").items()} == orders
