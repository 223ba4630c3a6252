"""Splitting one text into claims: one JSON-mode chat call to the extractor, a repair turn, and its cost.

SAFE's first two steps (Wei et al. 2024): split a response into individual
facts, then revise each to be self-contained (pronouns and elided subjects
resolved). Here both are one request to the extractor (the prompt is
src/fanout/data/claims_extraction_prompt.md), whose answer is checked
against a small schema, `{"claims": [{"claim": ..., "topic": ...}]}`, with
one repair turn when it does not fit, as a verdict's JSON is
(fanout.research.verdict_phase). The conversation's bookkeeping (tokens,
cost, the weakest cost source, a call cut off) is the investigation's own
(fanout.research.investigation), and its calls are written down as they
happen (the run's in-flight file), so a kill cannot hide what they cost.

The request starts with EXTRACTION_MARKER, by which the simulator knows it is
asked to split a text (fanout.sim.claims).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import anyio

from fanout.base.errors import ModelRefused, ProviderError
from fanout.base.item import Prompt
from fanout.llm.chat import CallWatcher, ChatClient
from fanout.llm.models import ModelSpec
from fanout.research.investigation import Investigation, ask, last_reply
from fanout.research.prompted import first_json_object
from fanout.workloads.claims.claim import MAX_CLAIMS, TOPICS
from fanout.workloads.claims.texts import Text

EXTRACTION_MARKER = "Split the text below into atomic, self-contained claims."
REPAIR = ("That answer could not be used: {problem}. Reply again with only the JSON object described in your "
          'instructions, {{"claims": [{{"claim": "...", "topic": "..."}}]}}, with no other text.')
MAX_CLAIM_CHARS = 1_000


class ExtractedClaim(NamedTuple):
    claim: str
    topic: str


class Extraction(NamedTuple):
    """How one text's extraction ended, and what it cost."""

    status: str
    """ok, invalid_json (no usable answer after the repair turn), incomplete (cut off), timeout or error."""
    claims: list[ExtractedClaim]
    cost_usd: float | None
    cost_source: str
    prompt_tokens: int
    completion_tokens: int
    duration_s: float
    served_model: str | None
    error: str | None
    warnings: list[str]


def extraction_request(text: Text) -> str:
    """The user message: the marker, what the text is about, and the text itself."""
    lines = [EXTRACTION_MARKER, f"Text id: {text.id}"]
    if text.question:
        lines.append(f"The text answers this question: {text.question}")
    if text.context:
        lines.append(f"Given with the text: {text.context}")
    if text.source_url:
        lines.append(f"Source: {text.source_url}")
    return "\n".join([*lines, "", "<<<", text.text, ">>>"])


def parse_claims(reply: str | None) -> tuple[list[ExtractedClaim] | None, str | None, list[str]]:
    """The claims of a reply, or None and what is wrong with it; and warnings (a topic not on the list, a cut)."""
    if not reply or not reply.strip():
        return None, "the reply was empty", []
    found = first_json_object(reply, lambda obj: "claims" in obj)
    if found is None:
        return None, 'the reply contains no JSON object with "claims"', []
    listed = found.get("claims")
    if not isinstance(listed, list):
        return None, "claims must be a list", []
    claims: list[ExtractedClaim] = []
    warnings: list[str] = []
    for index, entry in enumerate(listed):
        parsed, problem = _claim(entry, warnings)
        if problem is not None:
            return None, f"claims[{index}]: {problem}", []
        if parsed is not None:
            claims.append(parsed)
    if len(claims) > MAX_CLAIMS:
        warnings.append(f"the extractor gave {len(claims)} claims; the first {MAX_CLAIMS} are kept")
        claims = claims[:MAX_CLAIMS]
    return claims, None, warnings


def _claim(entry: Any, warnings: list[str]) -> tuple[ExtractedClaim | None, str | None]:
    """One listed claim (an object, or a bare string as seed 004's extractor returns them)."""
    if isinstance(entry, str):
        entry = {"claim": entry}
    if not isinstance(entry, dict) or not isinstance(entry.get("claim"), str):
        return None, "must be an object with a claim (text) and a topic"
    text = " ".join(entry["claim"].split())
    if not text:
        return None, None  # an empty claim says nothing: left out, not an error
    if len(text) > MAX_CLAIM_CHARS:
        return None, f"a claim of {len(text)} characters is not atomic (at most {MAX_CLAIM_CHARS})"
    topic = entry.get("topic")
    topic = topic.strip().lower() if isinstance(topic, str) else ""
    if topic not in TOPICS:
        if topic:
            warnings.append(f"topic {topic[:40]!r} is not one of {', '.join(TOPICS)}; read as other")
        topic = "other"
    return ExtractedClaim(text, topic), None


async def extract_claims(text: Text, model: ModelSpec, chat: ChatClient, prompt: Prompt, *, timeout_s: float,
                         watcher: CallWatcher | None = None) -> Extraction:
    """One text's claims by `model`, within `timeout_s`; a refused model is raised (the run cannot split texts)."""
    state = Investigation.start(prompt, extraction_request(text), watcher)
    started = time.monotonic()
    status: str = "timeout"
    error: str | None = f"no answer within {timeout_s:g}s"
    claims: list[ExtractedClaim] = []
    warnings: list[str] = []
    try:
        with anyio.fail_after(timeout_s):
            status, claims, error, warnings = await _ask_for_claims(state, model, chat)
    except TimeoutError:
        pass
    except ModelRefused:
        raise
    except ProviderError as exc:
        status, error = "error", f"the extractor failed: {exc}"
    return Extraction(status, claims, state.cost_usd(), state.cost_source(), state.usage.prompt_tokens,
                      state.usage.completion_tokens, round(time.monotonic() - started, 3), state.served_model, error,
                      [*state.warnings, *warnings])


async def _ask_for_claims(state: Investigation, model: ModelSpec,
                          chat: ChatClient) -> tuple[str, list[ExtractedClaim], str | None, list[str]]:
    """The JSON-mode call, and one repair turn when its answer does not fit the schema."""
    problem: str | None = None
    for turn in range(2):
        if turn:
            state.messages.append({"role": "user", "content": REPAIR.format(problem=problem)})
        result = await ask(state, model, chat, json_mode=True)
        state.add_reply(result, keep_tool_calls=False)
        if result.finish_reason == "length":
            return "incomplete", [], "the extractor's reply was cut off (finish_reason=length)", []
        claims, problem, warnings = parse_claims(result.content)
        if claims is not None:
            return "ok", claims, None, (["a repair turn fixed the extractor's first reply"] if turn else []) + warnings
    return "invalid_json", [], f"no usable claims after a repair turn: {problem} ({_shown(last_reply(state))})", []


def _shown(reply: str | None) -> str:
    text = " ".join((reply or "").split())
    return text if len(text) <= 120 else text[:117] + "..."


def claims_json(claims: Sequence[ExtractedClaim]) -> list[dict[str, str]]:
    """The claims as the prepared line keeps them."""
    return [{"claim": c.claim, "topic": c.topic} for c in claims]
