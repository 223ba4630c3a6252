"""The paid steps of a research team, one model's chat calls each: plan, work, aggregate.

Each step runs within the run's per-verdict timeout and always returns a
TeamStep (its status says how it ended): a provider's error or refusal, a
timeout, or a brief that stays invalid are outcomes the team goes on from,
never exceptions. What a step cost is on it, for the step log
(fanout.store.team_log) to count once.

- `plan_step`: the planner reads the item as any model does, then the
  planning (or review) request, and answers with a brief in JSON mode; a
  reply that does not fit the schema (fanout.research.brief) gets one repair
  turn, and that is the step's budget: two calls.
- `work_step`: a worker's own tool loop (the shared investigation's,
  fanout.research.shared.tool_loop) over the item and its brief; its closing
  reply is its notes.
- `aggregate_step`: one call summarising the workers' notes.
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from fanout.base.errors import ModelRefused, ProviderError
from fanout.base.item import Item, Prompt
from fanout.base.records import TeamStep, utc_now
from fanout.llm.chat import CallWatcher, ChatClient
from fanout.llm.models import ModelSpec
from fanout.research import prompted
from fanout.research.brief import brief_problems, normalised_brief
from fanout.research.investigation import Investigation, ask, last_reply
from fanout.research.shared import evidence_steps, tool_loop
from fanout.tools import ToolBox

REPAIR_BRIEF = ("Your reply is not a brief that fits: {problems}. Reply with the JSON object alone, with the keys "
                "sub_questions, queries, pages and missing, each a list of strings.")


class StepFailed(Exception):
    """A step's chat call ended without an answer (a provider error or refusal): its status and message."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


async def plan_step(item: Item, model: ModelSpec, step: str, request: str, *, round_: int, chat: ChatClient,
                    prompt: Prompt, timeout_s: float, watcher: CallWatcher | None = None) -> TeamStep:
    """The planner's brief (round 1) or review (round 2), checked against the schema, with one repair turn."""
    started = time.monotonic()
    state = Investigation.start(prompt, f"{item.context()}\n\n{request}", watcher)
    outcome: dict[str, Any] = {"status": "timeout", "error": f"no brief within {timeout_s:g} s"}
    with anyio.move_on_after(timeout_s):
        try:
            outcome = await _ask_for_brief(state, model, chat, first=round_ == 1)
        except StepFailed as exc:
            outcome = {"status": exc.status, "error": str(exc)}
    return finished_step(item, step, "planner", model, round_, state, started, **outcome)


async def _ask_for_brief(state: Investigation, model: ModelSpec, chat: ChatClient, *, first: bool) -> dict[str, Any]:
    """At most two calls: the brief, and one repair turn when it does not fit."""
    problems: list[str] = []
    for attempt in range(2):
        if attempt:
            state.messages.append({"role": "user", "content": REPAIR_BRIEF.format(problems="; ".join(problems))})
        result = await _call(state, model, chat, json_mode=True)
        state.add_reply(result, keep_tool_calls=False)
        found = prompted.first_json_object(result.content or "")
        problems = brief_problems(found, first=first) if found is not None else ["the reply holds no JSON object"]
        if not problems and found is not None:
            brief, cut = normalised_brief(found)
            state.warnings.extend(cut)
            if attempt:
                state.warnings.append("the first brief did not fit the schema; a repair turn fixed it")
            return {"status": "ok", "brief": brief}
    return {"status": "invalid", "raw": last_reply(state),
            "error": f"no brief fit the schema after a repair turn: {'; '.join(problems)}"}


async def work_step(item: Item, model: ModelSpec, step: str, brief: str, *, round_: int, chat: ChatClient,
                    tools: ToolBox, prompt: Prompt, max_turns: int, timeout_s: float,
                    watcher: CallWatcher | None = None) -> TeamStep:
    """A worker's research on the brief: its own tool loop; its closing reply without a tool call is its notes."""
    started = time.monotonic()
    state = Investigation.start(prompt, f"{item.context()}\n\n{brief}", watcher)
    status, error = await tool_loop(state, model, chat=chat, tools=tools, max_turns=max_turns, timeout_s=timeout_s)
    return finished_step(item, step, "worker", model, round_, state, started, status=status, error=error,
                         steps=evidence_steps(state), tool_calls=list(state.tool_log), notes=closing_notes(state))


def closing_notes(state: Investigation) -> str | None:
    """The worker's last reply when it called no tool: its notes (None when the loop ended otherwise)."""
    last = state.messages[-1]
    if last.get("role") != "assistant" or last.get("tool_calls"):
        return None
    return str(last.get("content") or "").strip() or None


async def aggregate_step(item: Item, model: ModelSpec, request: str, *, chat: ChatClient, prompt: Prompt,
                         timeout_s: float, watcher: CallWatcher | None = None) -> TeamStep:
    """The aggregator's summary of the workers' notes: one call, plain text."""
    started = time.monotonic()
    state = Investigation.start(prompt, f"{item.context()}\n\n{request}", watcher)
    outcome: dict[str, Any] = {"status": "timeout", "error": f"no summary within {timeout_s:g} s"}
    with anyio.move_on_after(timeout_s):
        try:
            result = await _call(state, model, chat, json_mode=False)
            state.add_reply(result, keep_tool_calls=False)
            text = (result.content or "").strip()
            outcome = {"status": "ok", "notes": text} if text else {"status": "invalid", "error": "an empty summary"}
        except StepFailed as exc:
            outcome = {"status": exc.status, "error": str(exc)}
    return finished_step(item, "aggregate", "aggregator", model, 1, state, started, **outcome)


async def _call(state: Investigation, model: ModelSpec, chat: ChatClient, *, json_mode: bool) -> Any:
    """One chat call of a step; a provider's failure becomes StepFailed (a refused model is a refusal here: the
    team goes on without this step, and the judges of the run meet the refusal themselves)."""
    try:
        return await ask(state, model, chat, json_mode=json_mode)
    except ModelRefused as exc:
        raise StepFailed("refused", str(exc)) from exc
    except ProviderError as exc:
        raise StepFailed("refused" if exc.refused else "error", str(exc)) from exc


def finished_step(item: Item, step: str, role: str, model: ModelSpec, round_: int, state: Investigation,
                  started: float, **fields: Any) -> TeamStep:
    """The step as team.jsonl keeps it: its outcome, and what its calls cost."""
    return TeamStep(
        edit_rcid=item.key, step=step, role=role, model=model.name, round=round_, timestamp=utc_now(),
        tool_protocol=state.protocol, token_usage=state.usage, cost_usd=state.cost_usd(),
        cost_source=state.cost_source(), served_model=state.served_model,
        warnings=list(state.warnings), duration_s=round(time.monotonic() - started, 3), **fields,
    )
