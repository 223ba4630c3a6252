"""Shared evidence (--evidence shared): one model investigates an item, every model judges that evidence.

`investigate_item` is phase A alone (fanout.research.investigation), run by
the investigator; what it gathered becomes an EvidenceRecord: each tool call
with its whole result, in order, the calls as the provenance check reads
them, the prefetched references the item's context shows, and the
investigation's cost. `judge_evidence` is phase B alone
(fanout.research.verdict_phase) over that record, for any model of the run
(the investigator's own verdict included): the same prompt and item, the
evidence, and the verdict request, with `--samples` and the swap as usual.

How a judge reads another model's investigation: as prompted-protocol turns
(fanout.research.prompted), one per tool call, an assistant message holding the
call as a JSON action and a user message `Tool result for <tool>:` holding
its result. That form carries no `tool_calls` and no `tool` messages, so a
judge takes it whatever its own tool protocol (native tool calling, prompted,
or an endpoint that refuses tools), and strict servers accept it; roles
still alternate; and it is the shape the rest of phase B already handles:
the swap reorders turns at assistant messages (fanout.research.swap) and trimming
recognises the results by their prefix. A note in the item's message tells
the judge that these turns are a shared investigation it cannot extend.

Provenance: the judge's cited sources are checked against the evidence's
tool log and the prefetched references, so a judge may call a source
`verified` only when the shared investigation fetched it; the rule check
(a verified-* verdict needs a verified source) applies as for any verdict.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any

import anyio

from fanout.base.errors import ModelRefused, ProviderError
from fanout.base.item import Item, Prompt
from fanout.base.records import EvidenceRecord, VerdictRecord, utc_now
from fanout.llm.chat import CallWatcher, ChatClient
from fanout.llm.models import ModelSpec
from fanout.research import prompted
from fanout.research.brief import judge_note, summary_preface
from fanout.research.investigation import Investigation, Outcome, provider_failure, run_tool_phase, use_prompted
from fanout.research.record import build_record
from fanout.research.swap import Sampling
from fanout.research.verdict_phase import settle_samples, verdict_phase
from fanout.tools import ToolBox

SHARED_PROTOCOL = "shared"
"""A judge's tool_protocol: it called no tools, it read the shared evidence."""
TEAM_PROTOCOL = "team"
"""A judge's tool_protocol under --evidence team: it called no tools, it read a research team's pooled evidence."""
SHARED_NOTE = (
    "In this run the research is shared: one investigation of this {item} was made for every judge, by {investigator}. "
    "Its tool calls and their results follow, one turn each. You cannot call tools now; judge the {item} from this "
    "evidence. Call a source verified only if it was fetched (web_fetch) in these turns or is a reference shown above."
)
"""Told to every judge after the item's context; {item} is the workload's noun for it (fanout.base.item.Prompt)."""


async def investigate_item(
    item: Item,
    model: ModelSpec,
    *,
    chat: ChatClient,
    tools: ToolBox,
    prompt: Prompt,
    max_turns: int,
    timeout_s: float,
    watcher: CallWatcher | None = None,
) -> EvidenceRecord:
    """Phase A by the investigator, within `timeout_s`; always returns a record (its status says how it ended).

    A timeout or a cut-off reply keeps what was gathered (it is judged, with a warning on each verdict); a
    provider error or refusal makes an `error`/`refused` record, which no judge reads and a resume redoes.
    """
    started = time.monotonic()
    state = Investigation.start(prompt, item.context(), watcher)
    status, error = await tool_loop(state, model, chat=chat, tools=tools, max_turns=max_turns, timeout_s=timeout_s)
    return evidence_record(item, model, state, status, error, time.monotonic() - started)


async def tool_loop(state: Investigation, model: ModelSpec, *, chat: ChatClient, tools: ToolBox, max_turns: int,
                    timeout_s: float) -> tuple[str, str | None]:
    """Phase A alone, within `timeout_s`: how it ended (status, error), everything gathered left in `state`.

    The loop of a shared investigation and of a research team's worker: a timeout or a cut-off reply keeps
    what was gathered; a provider's error or refusal is the status, never an exception.
    """
    if chat.tool_protocol(model) == "prompted":
        use_prompted(state)
    status: str = "timeout"
    error: str | None = f"the investigation did not finish within {timeout_s:g} s"
    with anyio.move_on_after(timeout_s):
        try:
            finished = await run_tool_phase(state, model, chat, tools, max_turns)
            status, error = ("ok", None) if finished else ("incomplete", None)
            if not finished:  # nothing trimmed here (as note_cut_off would for a verdict): each judge fits its own window
                state.cut_off = True
                state.warnings.append("an investigation reply was cut off (finish_reason=length); the evidence is "
                                      "what was gathered before it")
        except ModelRefused as exc:
            status, error = "refused", str(exc)
        except ProviderError as exc:
            failed = provider_failure(exc)
            status, error = failed.status, failed.error
    return status, error


def evidence_record(item: Item, model: ModelSpec, state: Investigation, status: str, error: str | None,
                    duration_s: float) -> EvidenceRecord:
    steps = evidence_steps(state)
    timestamp = utc_now()
    digest = hashlib.sha256(json.dumps([item.key, model.name, timestamp, steps], sort_keys=True).encode()).hexdigest()
    return EvidenceRecord(
        evidence_id=f"{item.key}-{digest[:12]}",
        edit_rcid=item.key,
        investigator=model.name,
        status=status,
        timestamp=timestamp,
        steps=steps,
        tool_calls=list(state.tool_log),
        references=item.prefetched_urls(),
        tool_protocol=state.protocol,
        token_usage=state.usage,
        cost_usd=state.cost_usd(),
        cost_source=state.cost_source(),
        served_model=state.served_model,
        error=error,
        warnings=list(state.warnings),
        duration_s=round(duration_s, 3),
    )


def evidence_steps(state: Investigation) -> list[dict[str, str]]:
    """Each tool call with its whole result, in order.

    The conversation holds one output message per logged call, in the order
    they were logged (fanout.research.investigation.answer_tool_calls), so the i-th
    output answers the i-th call of the tool log. The log's own copy of a result
    is cut to RECORD_TEXT_CHARS; the judges get the text the investigator read.
    """
    outputs = [m for m in state.messages if prompted.is_tool_output(m)]
    steps = []
    for call, message in zip(state.tool_log, outputs):
        text = str(message.get("content") or "")
        if message.get("role") == "user":  # prompted: drop the `Tool result for <tool>:` heading
            text = text.split("\n", 1)[1] if "\n" in text else ""
        steps.append({"tool": call.tool, "arguments": call.arguments, "result": text})
    return steps


def evidence_turns(evidence: EvidenceRecord) -> list[dict[str, Any]]:
    """The evidence as the turns a judge reads: an action and its result per tool call (see the module's docstring)."""
    messages: list[dict[str, Any]] = []
    for step in evidence.steps:
        try:
            arguments: Any = json.loads(step["arguments"])
        except ValueError:
            arguments = step["arguments"]
        said: dict[str, Any] = {"tool": step["tool"], "arguments": arguments}
        if step.get("by"):  # a team's pooled call: who made it, and in which round
            said.update(by=step["by"].split(", "), round=int(step.get("round") or 1))
        action = json.dumps(said, ensure_ascii=False)
        messages.append({"role": "assistant", "content": action})
        messages.append({"role": "user", "content": f"{prompted.RESULT_PREFIX}{step['tool']}:\n{step['result']}"})
    return messages


async def judge_evidence(
    item: Item,
    model: ModelSpec,
    evidence: EvidenceRecord,
    *,
    chat: ChatClient,
    prompt: Prompt,
    timeout_s: float,
    watcher: CallWatcher | None = None,
    samples: int = 1,
    swap_labels: bool = True,
) -> VerdictRecord:
    """Phase B of one model over the item's shared evidence, within `timeout_s`; always returns a record."""
    started = time.monotonic()
    state = judging_state(item, evidence, prompt, watcher)
    sampling = Sampling(item.key, model.name, samples, swap_labels) if samples > 1 else None
    if not evidence.judgeable:
        by = "team" if evidence.team is not None else f"investigation by {evidence.investigator}"
        outcome = Outcome("error", error=f"the shared {by} ended {evidence.status}: {evidence.error}")
    else:
        outcome = Outcome("timeout", error=f"no verdict within {timeout_s:g} s")
        with anyio.move_on_after(timeout_s):
            outcome = await verdict_phase(state, model, chat, sampling)
    if state.sample_orders:
        outcome = settle_samples(item, state, outcome)
    record = build_record(item, model, state, outcome, time.monotonic() - started)
    record.tool_calls = []  # this model called none: the evidence record holds the investigation's calls
    record.evidence_id = evidence.evidence_id
    return record


def judging_state(item: Item, evidence: EvidenceRecord, prompt: Prompt, watcher: CallWatcher | None) -> Investigation:
    """A judge's conversation before its verdict request: the prompt, the item with the note, the evidence turns.

    Its tool log is the evidence's, so the provenance check of its sources is against what the investigation
    fetched; an investigation cut short is said on the verdict.
    """
    team = evidence.team
    if team is None:
        note = SHARED_NOTE.format(item=prompt.item_noun, investigator=evidence.investigator)
    else:
        note = judge_note(prompt.item_noun, team.planner, team.workers, team.rounds, team.brief, team.second_brief)
    state = Investigation.start(prompt, f"{item.context()}\n\n{note}", watcher)
    state.protocol = SHARED_PROTOCOL if team is None else TEAM_PROTOCOL
    state.messages.extend(evidence_turns(evidence))
    state.tool_log = list(evidence.tool_calls)
    state.cut_off = evidence.status == "incomplete"
    if team is not None and team.summary and team.aggregator:
        state.verdict_preface = summary_preface(team.aggregator, team.summary)
    if evidence.status != "ok" and evidence.judgeable:
        what = "shared investigation" if team is None else "team's research"
        state.warnings.append(f"the {what} ended {evidence.status}; this verdict rests on what it gathered")
    if team is not None and team.brief is None:
        state.warnings.append(f"the planner's brief failed ({team.brief_status}); the workers researched alone")
    return state
