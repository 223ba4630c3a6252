"""Phase B of a verdict: the model's answer as JSON, fitted to the schema, with one repair turn; and the samples.

ask_for_verdict appends the verdict request (fanout.research.messages) and
asks for JSON; a reply that does not fit the schema gets one repair turn.
Phase B offers no tools, except to a model whose provider caches at
breakpoints (fanout.llm.caching.uses_breakpoints) on the native protocol: its
cached prefix starts with the tools, so the verdict request offers the
investigation's tools to read what the investigation cached. A tool called
then is never run: it is answered that the investigation is closed, and the
repair turn asks for the verdict again.

Under `--samples N` the phase is asked N times over one investigation
(ask_samples), each sample on its own branch of the conversation, with the
evidence and the labels in its own order (fanout.research.swap); settle_samples
keeps the majority (fanout.research.samples).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from fanout.base.errors import ModelRefused, ProviderError
from fanout.base.item import Item
from fanout.base.records import PROVENANCES, VERDICTS, Source, VerdictSample
from fanout.llm.caching import uses_breakpoints
from fanout.llm.chat import ChatClient, ToolCall
from fanout.llm.models import ModelSpec
from fanout.research import prompted
from fanout.research.investigation import (
    Investigation, Outcome, SampleRun, add_user_message, ask, last_reply, note_once, provider_failure,
)
from fanout.research.messages import REPAIR_REQUEST, TOOLS_CLOSED, verdict_request
from fanout.base.provenance import check_provenance
from fanout.research.samples import SampleAnswer, majority
from fanout.research.swap import SampleOrder, Sampling, investigation_turns, reordered
from fanout.tools import TOOL_SCHEMAS


class ParsedVerdict(NamedTuple):
    verdict: dict[str, Any] | None
    problem: str | None



async def verdict_phase(state: Investigation, model: ModelSpec, chat: ChatClient, sampling: Sampling | None) -> Outcome:
    """Phase B over the conversation so far: once, or once per sample under --samples N (each sample's order set
    here, from the investigation's evidence turns). A provider's failure is the outcome; a refused model is raised
    (the run stops scheduling it: fanout.engine.orchestrator)."""
    try:
        if sampling is None:
            return await ask_for_verdict(state, model, chat)
        state.sample_orders = sampling.orders(len(investigation_turns(state.messages).evidence))
        return await ask_samples(state, model, chat)
    except ModelRefused:
        raise
    except ProviderError as exc:
        return provider_failure(exc)


async def ask_for_verdict(
    state: Investigation,
    model: ModelSpec,
    chat: ChatClient,
    request: str | None = None,
) -> Outcome:
    """Phase B: the verdict as JSON, one repair turn if the first answer does not fit.

    `request` is the verdict request (a sample's, with its labels' order); by default the one in the
    labels' natural order."""
    text = request or verdict_request(VERDICTS, state.prompt.item_noun)
    add_user_message(state.messages, f"{state.verdict_preface}\n\n{text}" if state.verdict_preface else text)
    outcome, problem = await verdict_turn(state, model, chat)
    if outcome is not None:
        return outcome
    state.messages.append({"role": "user", "content": REPAIR_REQUEST.format(problem=problem)})
    outcome, problem = await verdict_turn(state, model, chat)
    if outcome is not None:
        note_once(state, "the first verdict reply did not fit the schema; a repair turn fixed it")
        return outcome
    return Outcome("invalid_json", raw=last_reply(state), error=f"invalid verdict JSON after a repair turn: {problem}")


async def ask_samples(state: Investigation, model: ModelSpec, chat: ChatClient) -> Outcome:
    """Phase B once per sample, each on its own branch of the conversation, each with its repair turn.

    One after another rather than side by side: the model's limits then bound
    the samples as they bound everything else (a --per-model-concurrency of 1
    still means one request at a time), and all share the verdict's timeout.
    A sample the endpoint fails is that sample's result; the others still run.
    Which sample the record follows is settle_samples' choice.
    """
    base, counted = state.messages, (state.counted_tokens, state.counted_upto)
    for order in state.sample_orders:
        state.messages = reordered(base, order.turns)
        state.counted_tokens, state.counted_upto = counted
        try:
            outcome = await ask_for_verdict(state, model, chat, verdict_request(order.labels, state.prompt.item_noun))
        except ModelRefused:
            raise
        except ProviderError as exc:
            outcome = provider_failure(exc)
        state.sample_runs.append(SampleRun(outcome, state.messages))
    return state.sample_runs[0].outcome


def settle_samples(item: Item, state: Investigation, outcome: Outcome) -> Outcome:
    """The record's outcome under --samples N: the first sample that gave the majority verdict.

    Without any verdict it is the first sample's outcome (or `outcome`, the
    timeout, when the time ran out before the first sample was answered).
    Samples the time left unasked are listed with status `timeout`. The
    conversation the record keeps is the chosen sample's branch.
    """
    runs = state.sample_runs
    answers = [SampleAnswer(order, given_verdict(run.outcome), verified_sources(item, state, run.outcome))
               for order, run in zip(state.sample_orders, runs)]
    decision = majority(answers, len(state.sample_orders))
    state.stability = decision.stability
    state.samples = [sample_of(order, runs[i].outcome if i < len(runs) else None)
                     for i, order in enumerate(state.sample_orders)]
    state.confidence = majority_confidence(state.samples, decision.chosen)
    silent = [f"sample {i} {s.status}" for i, s in enumerate(state.samples, start=1) if s.verdict is None]
    if silent:
        state.warnings.append(f"{len(silent)} of {len(state.samples)} samples gave no verdict: {', '.join(silent)}")
    chosen = decision.chosen if decision.chosen is not None else (0 if runs else None)
    if chosen is None:
        return outcome
    state.messages = runs[chosen].messages
    return runs[chosen].outcome


def majority_confidence(samples: list[VerdictSample], chosen: int | None) -> float | None:
    """Mean stated confidence of the samples that gave the majority verdict (seed 003: thresholds read the average)."""
    if chosen is None:
        return None
    stated = [s.confidence for s in samples if s.verdict == samples[chosen].verdict and s.confidence is not None]
    return sum(stated) / len(stated) if stated else None


def given_verdict(outcome: Outcome) -> str | None:
    """The verdict a sample gave: only a reply that fits the schema counts."""
    return str(outcome.verdict["verdict"]) if outcome.status == "ok" and outcome.verdict else None


def verified_sources(item: Item, state: Investigation, outcome: Outcome) -> int:
    """Sources of a sample's verdict that were really read (after the provenance check)."""
    cited = (Source(s["url"], s["supports_claim"], s["provenance"]) for s in (outcome.verdict or {}).get("sources", []))
    sources, _warnings = check_provenance(cited, state.tool_log, item.prefetched_urls())
    return sum(source.provenance == "verified" for source in sources)


def sample_of(order: SampleOrder, outcome: Outcome | None) -> VerdictSample:
    """A sample as the record keeps it; one the time left unasked is a `timeout`."""
    labels, turns = list(order.labels), list(order.turns)
    if outcome is None:
        return VerdictSample(None, labels, turns, "timeout")
    verdict = given_verdict(outcome)
    rationale = outcome.verdict["rationale"] if verdict is not None and outcome.verdict else None
    stated = outcome.verdict.get("confidence") if verdict is not None and outcome.verdict else None
    return VerdictSample(verdict, labels, turns, outcome.status, rationale, stated)


async def verdict_turn(
    state: Investigation,
    model: ModelSpec,
    chat: ChatClient,
) -> tuple[Outcome | None, str | None]:
    """One JSON-mode call: an Outcome when it settles the verdict, else the problem to repair."""
    tools = verdict_tools(state, model)
    result = await ask(state, model, chat, tools=tools, json_mode=True)
    # A cut-off reply may carry half-written tool calls; like phase A, they are not kept.
    declined = result.tool_calls if tools and result.finish_reason != "length" else []
    state.add_reply(result, keep_tool_calls=bool(declined))
    if declined:
        decline_tool_calls(state, declined)
    if not result.json_mode_used:
        note_once(state, "this model rejects response_format; its verdict was parsed from plain text")
    parsed = parse_verdict(result.content)
    if result.finish_reason == "length":
        error = "the verdict reply was cut off (finish_reason=length)"
        return Outcome("incomplete", verdict=parsed.verdict, raw=result.content, error=error), None
    if parsed.verdict is not None:
        return Outcome("ok", verdict=parsed.verdict), None
    if declined:
        return None, f"it called {', '.join(call.name for call in declined)} instead of giving the verdict"
    return None, parsed.problem


def verdict_tools(state: Investigation, model: ModelSpec) -> list[dict[str, Any]] | None:
    """The investigation's tools, for a model whose cached prefix starts with them; else none (today's request)."""
    return TOOL_SCHEMAS if state.protocol == "native" and uses_breakpoints(model) else None


def decline_tool_calls(state: Investigation, calls: list[ToolCall]) -> None:
    """Answer each tool call of the verdict phase without running it: strict servers want every call answered."""
    for call in calls:
        state.messages.append({"role": "tool", "tool_call_id": call.id, "content": TOOLS_CLOSED})
    note_once(state, "the model called a tool when asked for its verdict; the call was not run, "
                     "and was answered that the investigation was closed")


def parse_verdict(text: str | None) -> ParsedVerdict:
    """The verdict object from a reply, validated against seed 000's schema."""
    if not text or not text.strip():
        return ParsedVerdict(None, "the reply was empty")
    found = prompted.first_json_object(text)
    if found is None:
        return ParsedVerdict(None, "the reply contains no JSON object")
    problems = schema_problems(found)
    if problems:
        return ParsedVerdict(None, "; ".join(problems))
    return ParsedVerdict(normalised(found), None)


def _label(value: Any) -> Any:
    """Verdict and provenance labels up to case and separators: `Verified_High` is `verified-high`."""
    if not isinstance(value, str):
        return value
    return value.strip().lower().replace("_", "-").replace(" ", "-")


def schema_problems(found: dict[str, Any]) -> list[str]:
    problems = []
    if _label(found.get("verdict")) not in VERDICTS:
        problems.append(f"verdict must be one of {', '.join(VERDICTS)} (got {found.get('verdict')!r})")
    if "confidence" in found and stated_confidence(found["confidence"]) is None:
        problems.append(f"confidence must be a number from 0 to 1 (got {found['confidence']!r})")
    if not isinstance(found.get("rationale"), str):
        problems.append("rationale must be a string")
    sources = found.get("sources")
    if not isinstance(sources, list):
        problems.append("sources must be a list")
        return problems
    for index, source in enumerate(sources):
        problems.extend(f"sources[{index}]: {p}" for p in source_problems(source))
    return problems


def stated_confidence(value: Any) -> float | None:
    """A stated confidence as a number from 0 to 1, or None when it is not one (a bool, 85, "high", NaN)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value) if 0 <= value <= 1 else None


def source_problems(source: Any) -> list[str]:
    if not isinstance(source, dict):
        return ["must be an object with url, supports_claim and provenance"]
    problems = []
    if not isinstance(source.get("url"), str) or not source["url"].strip():
        problems.append("url must be a non-empty string")
    if not isinstance(source.get("supports_claim"), bool):
        problems.append("supports_claim must be true or false")
    if _label(source.get("provenance")) not in PROVENANCES:
        problems.append(f"provenance must be one of {', '.join(PROVENANCES)}")
    return problems


def normalised(found: dict[str, Any]) -> dict[str, Any]:
    """The verdict in the record's shape; a confidence left out is None (the report counts such verdicts)."""
    return {
        "verdict": _label(found["verdict"]),
        "confidence": stated_confidence(found.get("confidence")),
        "rationale": found["rationale"].strip(),
        "sources": [
            {"url": s["url"].strip(), "supports_claim": s["supports_claim"], "provenance": _label(s["provenance"])}
            for s in found["sources"]
        ],
    }
