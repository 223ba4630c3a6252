"""Every fault the simulator can inject is observable by a client, seeded and on demand."""

from __future__ import annotations

import json

import httpx
import pytest

from fanout.base.errors import ConfigError
from fanout.sim import SimConfig, load_profile, profile_from_dict, running_simulator, with_overrides
from fanout.sim.dice import dice, lognormal_seconds
from fanout.sim.faults import FaultProfile, ModelFaults, RpmLimiter, TokenBucket
from fanout.tools import TOOL_NAMES, TOOL_SCHEMAS

MODEL = "deepseek/deepseek-v3.2"
CONTEXT = "rcid: 2540801109\nqid: Q254\nitem label: Wolfgang Amadeus Mozart\n"


class FakeClock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


def every_model(**faults: object) -> FaultProfile:
    return profile_from_dict({"defaults": faults})


async def ask(sim, http: httpx.AsyncClient, *, phase: str = "investigate", **extra) -> httpx.Response:
    messages = [{"role": "user", "content": CONTEXT}]
    body: dict = {"model": MODEL, "messages": messages, **extra}
    if phase == "investigate":
        body["tools"] = TOOL_SCHEMAS
    else:
        messages += [{"role": "assistant", "content": "Done."}, {"role": "user", "content": "Verdict as JSON."}]
        body.setdefault("response_format", {"type": "json_object"})
    return await http.post(f"{sim.api_base}/chat/completions", json=body)


@pytest.mark.parametrize(
    ("kind", "status", "message"),
    [("http_502", 502, "Provider returned error"), ("http_503", 503, "No instances available")],
)
async def test_gateway_errors_come_back_with_their_status_and_openrouters_error_body(kind, status, message):
    async with running_simulator(SimConfig(profile=every_model(**{kind: 1.0}))) as sim, httpx.AsyncClient() as http:
        response = await ask(sim, http)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == status and error["message"].startswith(message)
    assert sim.stats()["faults"] == {kind: 1}
    assert sim.stats()["completions"] == {}


async def test_an_error_inside_a_200_body_has_finish_reason_error_and_the_code_it_carries():
    async with running_simulator(SimConfig(profile=every_model(error_in_200=1.0))) as sim, httpx.AsyncClient() as http:
        response = await ask(sim, http)
    choice = response.json()["choices"][0]
    assert response.status_code == 200
    assert choice["finish_reason"] == "error"
    assert choice["error"]["code"] == 502
    assert response.json()["usage"]["cost"] == 0.0


async def test_malformed_tool_call_arguments_are_not_json():
    async with running_simulator(SimConfig(profile=every_model(malformed_args=1.0))) as sim, httpx.AsyncClient() as http:
        response = await ask(sim, http)
    call = response.json()["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] in TOOL_NAMES
    with pytest.raises(json.JSONDecodeError):
        json.loads(call["function"]["arguments"])
    assert sim.stats()["faults"] == {"malformed_args": 1}


async def test_an_unknown_tool_name_is_one_the_client_never_offered():
    async with running_simulator(SimConfig(profile=every_model(unknown_tool=1.0))) as sim, httpx.AsyncClient() as http:
        response = await ask(sim, http)
    call = response.json()["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] not in TOOL_NAMES
    assert json.loads(call["function"]["arguments"])


async def test_a_model_repeats_a_step_spoiled_by_a_bad_tool_call_on_its_next_turn():
    profile = FaultProfile(models={MODEL: ModelFaults(unknown_tool=1.0)})
    async with running_simulator(SimConfig(profile=profile)) as sim, httpx.AsyncClient() as http:
        spoiled = (await ask(sim, http)).json()["choices"][0]["message"]
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        clean = (await ask(sim, http)).json()["choices"][0]["message"]
        call = spoiled["tool_calls"][0]
        messages = [
            {"role": "user", "content": CONTEXT},
            spoiled,
            {"role": "tool", "tool_call_id": call["id"], "content": "error: unknown tool; valid tools: web_search, web_fetch"},
        ]
        body = {"model": MODEL, "messages": messages, "tools": TOOL_SCHEMAS}
        retried = (await http.post(f"{sim.api_base}/chat/completions", json=body)).json()["choices"][0]["message"]
    assert [c["function"] for c in retried["tool_calls"]] == [c["function"] for c in clean["tool_calls"]]


async def test_an_invalid_verdict_is_not_a_valid_verdict_json_object():
    async with running_simulator(SimConfig(profile=every_model(invalid_json=1.0))) as sim, httpx.AsyncClient() as http:
        contents = [(await ask(sim, http, phase="verdict")).json()["choices"][0]["message"]["content"] for _ in range(6)]
    for content in contents:
        try:
            verdict = json.loads(content)
        except json.JSONDecodeError:
            continue
        assert not (
            set(verdict) >= {"verdict", "rationale", "sources"}
            and verdict["verdict"] in ("verified-high", "verified-low", "plausible", "unverifiable", "suspect", "incorrect")
        )
    assert sim.stats()["faults"] == {"invalid_json": 6}


async def test_finish_reason_length_cuts_the_answer_and_drops_tool_calls():
    async with running_simulator(SimConfig(profile=every_model(length=1.0))) as sim, httpx.AsyncClient() as http:
        investigating = (await ask(sim, http)).json()["choices"][0]
        judging = (await ask(sim, http, phase="verdict")).json()["choices"][0]
    assert investigating["finish_reason"] == judging["finish_reason"] == "length"
    assert "tool_calls" not in investigating["message"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(judging["message"]["content"])


async def test_max_tokens_from_the_client_truncates_with_finish_reason_length():
    async with running_simulator() as sim, httpx.AsyncClient() as http:
        response = await ask(sim, http, phase="verdict", max_tokens=10)
    body = response.json()
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 10
    assert len(body["choices"][0]["message"]["content"]) == 40


async def test_response_format_is_refused_with_400_for_a_model_that_does_not_support_it():
    profile = FaultProfile(models={MODEL: ModelFaults(response_format_unsupported=True)})
    async with running_simulator(SimConfig(profile=profile)) as sim, httpx.AsyncClient() as http:
        refused = await ask(sim, http, phase="verdict")
        plain = await ask(sim, http, phase="verdict", response_format=None)
    assert refused.status_code == 400
    assert "response_format" in refused.json()["error"]["message"]
    assert plain.status_code == 200
    assert json.loads(plain.json()["choices"][0]["message"]["content"])["verdict"]


async def test_a_stalled_answer_hangs_past_the_clients_timeout_and_is_never_billed():
    profile = every_model(stall=1.0, stall_s=30)
    async with running_simulator(SimConfig(profile=profile)) as sim, httpx.AsyncClient(timeout=0.3) as http:
        with pytest.raises(httpx.ReadTimeout):
            await ask(sim, http)
        assert sim.stats()["faults"] == {"stall": 1}
    assert sim.stats()["completions"] == {}


async def test_the_rpm_limit_answers_429_with_retry_after_until_the_window_frees_a_slot():
    clock = FakeClock()
    profile = FaultProfile(models={MODEL: ModelFaults(rpm=2)})
    async with running_simulator(SimConfig(profile=profile, clock=clock)) as sim, httpx.AsyncClient() as http:
        first, second = await ask(sim, http), await ask(sim, http)
        clock.now += 15
        limited = await ask(sim, http)
        other_model = await http.post(
            f"{sim.api_base}/chat/completions",
            json={"model": "nvidia/nemotron-3-nano-30b-a3b", "messages": [{"role": "user", "content": CONTEXT}]},
        )
        clock.now += 45
        freed = await ask(sim, http)
    assert (first.status_code, second.status_code) == (200, 200)
    assert limited.status_code == 429
    assert limited.headers["Retry-After"] == "45"
    assert limited.json()["error"]["code"] == 429
    assert other_model.status_code == 200
    assert freed.status_code == 200
    assert sim.stats()["faults"] == {"rate_limited": 1}


def test_the_rate_window_slides_rather_than_resetting_each_window():
    clock = FakeClock()
    limiter = RpmLimiter(clock)

    def at(t: float) -> float | None:
        clock.now = 500.0 + t
        return limiter.admit("m", 3, 10.0)

    assert [at(0), at(1), at(2)] == [None, None, None]
    assert at(3) == 7.0  # the slot of t=0 frees at t=10
    assert at(10) is None
    assert at(10.5) == 0.5  # a fixed window would have reset at t=10 and let three through
    assert at(11) is None
    assert at(11) == 1.0
    assert limiter.admit("other", 3, 10.0) is None


async def test_a_retried_request_gets_a_fresh_draw_so_a_fault_does_not_repeat_forever():
    async with running_simulator(SimConfig(profile=every_model(http_502=0.5))) as sim, httpx.AsyncClient() as http:
        statuses = [(await ask(sim, http)).status_code for _ in range(12)]
    assert set(statuses) == {200, 502}


async def test_the_same_seed_injects_the_same_faults():
    async def statuses(seed: int) -> list[int]:
        profile = every_model(http_502=0.3, http_503=0.2)
        async with running_simulator(SimConfig(seed=seed, profile=profile)) as sim, httpx.AsyncClient() as http:
            return [(await ask(sim, http)).status_code for _ in range(12)]

    first = await statuses(4)
    assert set(first) == {200, 502, 503}  # faults were drawn at all, so the equality below means something
    assert await statuses(4) == first


async def test_an_unresponsive_engine_is_listed_and_its_results_are_lost():
    profile = profile_from_dict({"search": {"unresponsive": 1.0}})
    async with running_simulator(SimConfig(profile=profile)) as sim, httpx.AsyncClient() as http:
        data = (await http.get(f"{sim.searxng_url}/search", params={"q": "Mozart Salzburg", "format": "json"})).json()
    [[engine, reason]] = data["unresponsive_engines"]
    assert engine in ("google", "duckduckgo", "brave") and reason
    assert all(engine not in r["engines"] and r["engine"] != engine for r in data["results"])


async def test_the_search_limiter_answers_429_like_searxngs():
    profile = profile_from_dict({"search": {"http_429": 1.0}})
    async with running_simulator(SimConfig(profile=profile)) as sim, httpx.AsyncClient() as http:
        response = await http.get(f"{sim.searxng_url}/search", params={"q": "Mozart", "format": "json"})
    assert response.status_code == 429


def test_latencies_follow_the_lognormal_given_by_median_and_p95():
    draws = sorted(lognormal_seconds(dice(1, "latency", i), 0.8, 2.4) for i in range(4000))
    assert draws[2000] == pytest.approx(0.8, rel=0.06)
    assert draws[3800] == pytest.approx(2.4, rel=0.08)
    assert lognormal_seconds(dice(1), 0.0, 0.0) == 0.0


def test_the_bundled_profiles_load_and_the_demo_has_a_little_of_every_fault():
    assert load_profile("clean") == FaultProfile(name="clean")
    default = load_profile("default")
    assert default.defaults.latency.median_s == 0.05 and default.generation_delay_s == 1.0
    demo = load_profile("demo")
    for kind in ("http_502", "http_503", "error_in_200", "stall", "malformed_args", "unknown_tool", "invalid_json", "length"):
        assert 0 < getattr(demo.defaults, kind) <= 0.05
    assert demo.for_model("allenai/olmo-3.1-32b-instruct").response_format_unsupported
    assert demo.for_model("nvidia/nemotron-3-nano-30b-a3b").rpm == 15
    assert demo.for_model("nvidia/nemotron-3-nano-30b-a3b").http_502 == demo.defaults.http_502
    assert demo.search.unresponsive == 0.1


def test_a_profile_with_an_unknown_key_or_a_bad_rate_is_refused_naming_it():
    with pytest.raises(ConfigError, match="models.x/y: unknown key.*http_500"):
        profile_from_dict({"models": {"x/y": {"http_500": 0.1}}})
    with pytest.raises(ConfigError, match="defaults.stall: a rate is a probability"):
        profile_from_dict({"defaults": {"stall": 2}})
    with pytest.raises(ConfigError, match="no fault profile named 'chaos'"):
        load_profile("chaos")


def test_fault_flags_override_every_model_one_model_or_the_search():
    profile = with_overrides(
        load_profile("demo"),
        ["http_502=0.5", "deepseek/deepseek-v3.2:rpm=20", "search:unresponsive=0.25", "latency={median_s: 1, p95_s: 3}"],
    )
    assert profile.defaults.http_502 == 0.5
    assert profile.for_model("allenai/olmo-3.1-32b-instruct").http_502 == 0.5
    assert profile.for_model(MODEL).rpm == 20
    assert profile.for_model(MODEL).latency.median_s == 1.0
    assert profile.search.unresponsive == 0.25
    assert profile.search.latency.median_s == 0.15
    with pytest.raises(ConfigError, match="expected \\[MODEL:\\]KEY=VALUE"):
        with_overrides(profile, ["http_502"])


def test_the_token_bucket_lets_its_burst_through_then_one_per_drip_and_names_the_wait():
    clock = FakeClock()
    bucket = TokenBucket(clock)
    faults = ModelFaults(bucket_rpm=30, bucket_burst=2)  # one token every 2 s, two held at most

    def at(t: float) -> float | None:
        clock.now = 500.0 + t
        return bucket.admit("m", faults)

    assert [at(0), at(0), at(0.5)] == [None, None, 1.5]
    assert [at(2), at(2)] == [None, 2.0]
    assert [at(100), at(100), at(100)] == [None, None, 2.0]  # a quiet spell refills only the burst
    assert bucket.admit("other", faults) is None


def test_the_token_bucket_follows_its_schedule_from_the_models_first_request():
    clock = FakeClock()
    bucket = TokenBucket(clock)
    faults = ModelFaults(bucket_rpm=60, bucket_schedule=((10.0, 30.0), (20.0, 60.0)))
    waits = []
    for t in (0, 1, 10, 11, 12, 20, 21):
        clock.now = 500.0 + t
        waits.append(bucket.admit("m", faults))
    assert waits == [None, None, None, 1.0, None, None, None]


async def test_the_token_bucket_answers_429_with_retry_after_in_whole_seconds():
    clock = FakeClock()
    profile = profile_from_dict({"models": {MODEL: {"bucket_rpm": 20}}})  # one every 3 s
    async with running_simulator(SimConfig(profile=profile, clock=clock)) as sim, httpx.AsyncClient() as http:
        first = await ask(sim, http)
        clock.now += 0.5
        limited = await ask(sim, http)
        clock.now += 2.5
        again = await ask(sim, http)
    assert (first.status_code, limited.status_code, again.status_code) == (200, 429, 200)
    assert limited.headers["Retry-After"] == "3"
    assert sim.stats()["rate_limit_events"] == {MODEL: {"admitted": [0.0, 3.0], "refused": [0.5]}}


@pytest.mark.parametrize(("section", "message"), [
    ({"bucket_rpm": 0}, "models.m.bucket_rpm: expected a positive number, got 0"),
    ({"bucket_schedule": [[10, 30], [5, 60]]}, "models.m.bucket_schedule: the pairs must be in order of their seconds, got [[10, 30], [5, 60]]"),
    ({"bucket_schedule": [10, 30]}, "models.m.bucket_schedule: expected a list of [seconds, rpm] pairs, got [10, 30]"),
])
def test_a_bad_token_bucket_is_refused_naming_the_key(section, message):
    with pytest.raises(ConfigError) as caught:
        profile_from_dict({"models": {"m": section}})
    assert str(caught.value) == message


async def test_a_request_refused_by_the_rate_limit_draws_the_same_answer_when_it_comes_back():
    """A 429 depends on the clock: counting it as an attempt would let the timing change what the model does."""
    other = "rcid: 2540801110\nqid: Q255\nitem label: Ludwig van Beethoven\n"
    profile = FaultProfile(models={MODEL: ModelFaults(rpm=1, malformed_args=0.5)})

    async def answers(*, first_refused: bool, asked: int = 1) -> list[dict]:
        clock = FakeClock()
        async with running_simulator(SimConfig(profile=profile, clock=clock)) as sim, httpx.AsyncClient() as http:
            if first_refused:
                await http.post(f"{sim.api_base}/chat/completions", json={
                    "model": MODEL, "tools": TOOL_SCHEMAS, "messages": [{"role": "user", "content": other}]})
                assert (await ask(sim, http)).status_code == 429
            replies = []
            for _ in range(asked):
                clock.now += 60
                replies.append((await ask(sim, http)).json()["choices"][0]["message"])
        return replies

    [unrefused] = await answers(first_refused=False)
    [after_429] = await answers(first_refused=True)
    first, retried = await answers(first_refused=False, asked=2)

    assert after_429["tool_calls"] == unrefused["tool_calls"] == first["tool_calls"]
    assert retried["tool_calls"] != first["tool_calls"]  # a real second attempt draws anew: the check can fail
