"""Lift Wing's revert-risk client: the documented answer read, every failure a score of `unknown`, never a raise."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from fanout.base.retry import RetryPolicy
from fanout.http.client import make_http_client
from fanout.wikidata.revertrisk import LIFTWING_URL, RevertRisk, RevertRiskClient, RevertRiskSettings

from parsed_yaml import parsed_yaml

DOCUMENTED = parsed_yaml(Path(__file__).parent / "fixtures" / "liftwing" / "inference-services-revertrisk-wikidata.yaml")
OPERATION = DOCUMENTED["paths"]["/service/lw/inference/v1/models/revertrisk-wikidata:predict"]["post"]
REQUEST = OPERATION["requestBody"]["content"]["application/json"]["example"]
ANSWER = OPERATION["responses"]["200"]["content"]["application/json"]["example"]
REV = REQUEST["rev_id"]
NOT_FOUND = {"error": f"The MW API does not have any info related to the rev-id provided as input ({REV}), therefore "
                      "it is not possible to extract features properly."}


class Waits:
    """A sleep that records what it was asked to wait, and a clock that stands still."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(round(seconds, 6))


@pytest.fixture
async def scorer(respx_mock: respx.MockRouter, transport_for: Callable[[respx.Router], httpx.MockTransport]
                 ) -> AsyncIterator[tuple[respx.MockRouter, RevertRiskClient, Waits]]:
    waits = Waits()
    settings = RevertRiskSettings(per_second=1000.0, retry=RetryPolicy(max_attempts=3, base_wait_s=0.5, max_wait_s=1.0))
    async with make_http_client(4, user_agent="fanout-test (me@example.org)", transport=transport_for(respx_mock)) as http:
        yield respx_mock, RevertRiskClient(http, settings, sleep=waits, clock=lambda: 100.0), waits


def route(router: respx.MockRouter) -> respx.Route:
    return router.post(LIFTWING_URL)


async def test_the_documented_request_gets_the_documented_answer_read_as_a_score(scorer: Any) -> None:
    router, client, _ = scorer
    lift_wing = route(router).mock(return_value=httpx.Response(200, json=ANSWER))
    risk = await client.score(REV)
    assert risk == RevertRisk(REV, probability=0.3938304642610285, prediction=False, model_version="v1")
    assert risk.status == "scored"
    sent = lift_wing.calls.last.request
    assert json.loads(sent.content) == REQUEST
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["user-agent"] == "fanout-test (me@example.org)"


async def test_a_passing_5xx_is_asked_again_and_scored(scorer: Any) -> None:
    router, client, _ = scorer
    lift_wing = route(router).mock(side_effect=[httpx.Response(503), httpx.Response(200, json=ANSWER)])
    assert (await client.score(REV)).probability == 0.3938304642610285
    assert lift_wing.call_count == 2


async def test_5xx_that_does_not_pass_ends_as_unknown_after_the_attempts(scorer: Any) -> None:
    router, client, _ = scorer
    lift_wing = route(router).mock(return_value=httpx.Response(502, json={"error": "upstream\nconnect error"}))
    assert await client.score(REV) == RevertRisk(REV, reason="Lift Wing answered HTTP 502: upstream connect error")
    assert lift_wing.call_count == 3
    assert client.outcomes == {"HTTP 502": 1}


async def test_timeouts_end_as_unknown_and_the_edit_is_still_returned(scorer: Any) -> None:
    router, client, _ = scorer
    route(router).mock(side_effect=httpx.ReadTimeout("slow"))
    risk = await client.score(REV)
    assert (risk.rev_id, risk.probability, risk.reason) == (REV, None, "Lift Wing did not answer within 10 s")
    assert client.requests_sent == 3


async def test_a_revision_lift_wing_cannot_see_is_refused_once_and_not_asked_again(scorer: Any) -> None:
    router, client, _ = scorer
    lift_wing = route(router).mock(return_value=httpx.Response(400, json=NOT_FOUND))
    risk = await client.score(REV)
    assert risk.reason is not None and risk.reason.startswith(
        "Lift Wing answered HTTP 400: The MW API does not have any info related to the rev-id provided as input (")
    assert lift_wing.call_count == 1


@pytest.mark.parametrize(("body", "reason"), [
    (b"<html>gateway</html>", "Lift Wing's answer is not JSON"),
    (b"[0.4]", "Lift Wing's answer has no output object"),
    (json.dumps({"output": {"prediction": True}}).encode(), "Lift Wing's answer has no output.probabilities.true"),
    (json.dumps({"output": {"probabilities": {"true": "high"}}}).encode(), "Lift Wing's answer has no output.proba"),
    (json.dumps({"output": {"probabilities": {"true": 1.5}}}).encode(), "Lift Wing's answer has no output.proba"),
    (b'{"output": {"probabilities": {"true": NaN}}}', "Lift Wing's answer has no output.probabilities.true"),
    (json.dumps({**ANSWER, "revision_id": 1}).encode(), "Lift Wing answered for revision 1, not 1799693453"),
    (json.dumps({**ANSWER, "padding": "x" * 70_000}).encode(), "Lift Wing's answer is over the 65,536-byte cap"),
])
async def test_a_body_that_is_not_the_documented_shape_is_unknown_and_not_asked_again(
        scorer: Any, body: bytes, reason: str) -> None:
    router, client, _ = scorer
    lift_wing = route(router).mock(return_value=httpx.Response(200, content=body))
    risk = await client.score(REV)
    assert risk.probability is None and risk.reason is not None and risk.reason.startswith(reason)
    assert lift_wing.call_count == 1


async def test_an_unexpected_failure_inside_costs_the_score_not_the_edit(scorer: Any) -> None:
    router, client, _ = scorer
    route(router).mock(side_effect=RuntimeError("a bug"))
    assert await client.score(REV) == RevertRisk(REV, reason="unexpected RuntimeError while asking Lift Wing")


async def test_a_429_holds_later_requests_for_its_retry_after(scorer: Any) -> None:
    router, client, waits = scorer
    route(router).mock(side_effect=[httpx.Response(429, headers={"Retry-After": "7"}),
                                    httpx.Response(200, json=ANSWER), httpx.Response(200, json=ANSWER)])
    assert (await client.score(REV)).status == "scored"
    assert (await client.score(REV)).status == "scored"
    assert waits.asked[0] == 7.0  # the retry waited what Lift Wing asked
    assert max(waits.asked[1:]) >= 7.0  # and the next request's slot is behind the hold


async def test_requests_start_no_closer_than_the_pace_allows(
        respx_mock: respx.MockRouter, transport_for: Callable[[respx.Router], httpx.MockTransport]) -> None:
    route(respx_mock).mock(return_value=httpx.Response(200, json=ANSWER))
    waits = Waits()
    async with make_http_client(4, user_agent="fanout-test", transport=transport_for(respx_mock)) as http:
        client = RevertRiskClient(http, RevertRiskSettings(per_second=2.0), sleep=waits, clock=lambda: 50.0)
        for _ in range(3):
            await client.score(REV)
    assert waits.asked == [0.5, 1.0]  # a clock that stands still: each slot half a second after the last
