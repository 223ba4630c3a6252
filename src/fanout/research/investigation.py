"""Phase A of a verdict: a model investigates one item with the web tools; and the conversation's bookkeeping.

The investigation (run_tool_phase) is the open part of a verdict: the
workload's system prompt, the item's context, and up to `max_turns` chat
calls in which the model may call web_search and web_fetch, natively or, for
a model without tool calling, through the prompted protocol
(fanout.research.prompted). A reply cut off by finish_reason=length ends it;
the verdict is asked for all the same (fanout.research.verdict_phase), with
the oldest tool output trimmed.

Everything gathered lives in an Investigation object created outside the
timeout scope, so a verdict that runs out of time still reports the tool calls,
tokens and cost it had spent. `ask` is the one chat call of both phases: it
fits the conversation into the model's window first, and counts what the
call cost.

Cost: the sum of the calls' costs (reported, looked up or estimated; see
fanout.llm.cost), and `cost_source`, the weakest of their sources. When some
calls' costs are unknown, the record keeps the partial sum and says so in its
warnings (an undercount that is flagged is more useful than no figure); when
no call's cost is known, cost_usd is None, meaning unknown. A call cut off by
the timeout may still be billed, so it makes the source unknown too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from fanout.base.errors import ProviderError
from fanout.base.item import Prompt
from fanout.base.records import Status, ToolCallLog, Usage, VerdictSample
from fanout.llm.chat import CallWatcher, ChatClient, ChatResult, OversizedReply, ToolCall, rejects_tools
from fanout.llm.cost import CostSource, weakest
from fanout.llm.models import ModelSpec
from fanout.research import prompted
from fanout.research.swap import SampleOrder
from fanout.tools import TOOL_SCHEMAS, ToolBox

RECORD_TEXT_CHARS = 2000
"""Tool results and message contents are cut to this length in the record."""
TRIM_MARKER = "[trimmed to save context]"
CONTEXT_WARNING_FRACTION = 0.8
CHARS_PER_TOKEN = 4
"""A rough estimate for text the endpoint has not counted yet; it errs towards trimming early."""
MAX_COMPLETION_RESERVE = 4096
"""Tokens kept free for the model's answer when deciding whether a prompt fits."""


@dataclass
class Investigation:
    """The conversation and its bookkeeping, kept outside the timeout scope."""

    messages: list[dict[str, Any]]
    prompt: Prompt
    """The workload's prompt: its text opens the conversation, its words fill the verdict request."""
    usage: Usage = field(default_factory=Usage)
    known_cost: float = 0.0
    calls_without_cost: int = 0
    cost_sources: set[CostSource] = field(default_factory=set)
    call_pending: bool = False
    """A chat call is out and not yet answered: if time runs out now, its cost is unknown."""
    watcher: CallWatcher | None = None
    """Hears of each chat call as it happens (the run's journal of calls in flight)."""
    tool_log: list[ToolCallLog] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    served_model: str | None = None
    counted_tokens: int = 0
    """Prompt plus completion tokens of the latest reply, as the endpoint counted them."""
    counted_upto: int = 0
    """How many messages those counted tokens cover."""
    context_warned: bool = False
    trimmed: int = 0
    cut_off: bool = False
    """An investigation reply was cut off (finish_reason=length) before the verdict was asked for."""
    protocol: str = "native"
    """How the tools are offered: `native` (the request's tools) or `prompted` (fanout.research.prompted)."""
    sample_orders: list[SampleOrder] = field(default_factory=list)
    """Under --samples N > 1, each sample's order of labels and evidence; set when the verdict phase begins."""
    sample_runs: list[SampleRun] = field(default_factory=list)
    """The samples answered so far (a timeout can leave the later ones unasked)."""
    samples: list[VerdictSample] = field(default_factory=list)
    """The samples as the record keeps them (settle_samples); empty with one sample."""
    stability: float | None = None
    """Share of the samples that gave the majority verdict (settle_samples)."""
    confidence: float | None = None
    """Mean stated confidence of the samples that gave the majority verdict (settle_samples)."""
    verdict_preface: str | None = None
    """Said right before every verdict request, after the evidence in whatever order a sample shows it: a research
    team's aggregated summary (fanout.research.brief.summary_preface); None for every other verdict."""

    @classmethod
    def start(cls, prompt: Prompt, user: str, watcher: CallWatcher | None = None) -> Investigation:
        """The conversation before its first call: the system prompt, then `user` (an item's context)."""
        messages = [{"role": "system", "content": prompt.text}, {"role": "user", "content": user}]
        return cls(messages=messages, prompt=prompt, watcher=watcher)

    def account(self, result: ChatResult, model: ModelSpec) -> None:
        """Add one chat call's tokens and cost; warn once when the prompt nears the window."""
        self.usage.turns += 1
        self.usage.prompt_tokens += result.prompt_tokens
        self.usage.completion_tokens += result.completion_tokens
        self.usage.cached_tokens += result.cached_tokens
        self.usage.cache_write_tokens += result.cache_write_tokens
        self.cost_sources.add(result.cost_source)
        if result.cost_usd is None:
            self.calls_without_cost += 1
        else:
            self.known_cost += result.cost_usd
        self.served_model = result.served_model or self.served_model
        window = model.context_window
        if window and not self.context_warned and result.prompt_tokens >= CONTEXT_WARNING_FRACTION * window:
            self.context_warned = True
            self.warnings.append(
                f"prompt reached {result.prompt_tokens:,} tokens, "
                f"{result.prompt_tokens / window:.0%} of the {window:,}-token context window"
            )

    def add_reply(self, result: ChatResult, *, keep_tool_calls: bool) -> None:
        """Append the model's reply and remember how much of the conversation the endpoint counted."""
        self.messages.append(assistant_message(result, keep_tool_calls=keep_tool_calls))
        if result.prompt_tokens:
            self.counted_tokens = result.prompt_tokens + result.completion_tokens
            self.counted_upto = len(self.messages)

    def estimated_prompt_tokens(self) -> int:
        if self.counted_tokens:
            return self.counted_tokens + text_length(self.messages[self.counted_upto:]) // CHARS_PER_TOKEN
        return text_length(self.messages) // CHARS_PER_TOKEN

    def cost_usd(self) -> float | None:
        if self.usage.turns == self.calls_without_cost:
            return None
        return self.known_cost

    def cost_source(self) -> CostSource:
        """The weakest source of the calls' costs; unknown when no call was answered or one was cut off."""
        if self.call_pending or not self.cost_sources:
            return "unknown"
        return weakest(self.cost_sources) or "unknown"

    def record_tool(self, turn: int, call: ToolCall, text: str, ok: bool, final_url: str | None = None) -> None:
        """Log one tool call; a successful fetch's final URL is this verdict's evidence of what it read."""
        self.tool_log.append(ToolCallLog(turn, call.name, call.arguments, shorten(text), ok, final_url))


class Outcome(NamedTuple):
    """How a verdict ended; the Investigation holds everything else."""

    status: Status
    verdict: dict[str, Any] | None = None
    raw: str | None = None
    error: str | None = None


class SampleRun(NamedTuple):
    """How one sample of the verdict phase ended, and its branch of the conversation."""

    outcome: Outcome
    messages: list[dict[str, Any]]


def provider_failure(exc: ProviderError) -> Outcome:
    return Outcome("refused" if exc.refused else "error", error=str(exc))


async def run_tool_phase(
    state: Investigation,
    model: ModelSpec,
    chat: ChatClient,
    tools: ToolBox,
    max_turns: int,
) -> bool:
    """Phase A. False when a reply was cut off (finish_reason=length), which ends the investigation."""
    for turn in range(1, max_turns + 1):
        result = await investigation_turn(state, model, chat)
        truncated = result.finish_reason == "length"
        # A cut-off reply may carry half-written tool calls; they are neither kept nor run.
        state.add_reply(result, keep_tool_calls=not truncated and state.protocol == "native")
        if truncated:
            return False
        calls = result.tool_calls if state.protocol == "native" else prompted_calls(result, turn)
        if not calls:
            return True
        await answer_tool_calls(state, tools, calls, turn)
    state.warnings.append(f"the investigation used all {max_turns} turns; the verdict was asked for anyway")
    return True


async def investigation_turn(state: Investigation, model: ModelSpec, chat: ChatClient) -> ChatResult:
    """One chat call of phase A, with the tools offered the way this model can take them.

    A request with tools that the endpoint refuses switches the model to the
    prompted protocol (unless the user forced native) and asks again.
    """
    if state.protocol == "native":
        try:
            return await ask(state, model, chat, tools=TOOL_SCHEMAS)
        except ProviderError as exc:
            if model.tool_protocol == "native" or not rejects_tools(exc):
                raise
            chat.tools_refused(model)
            use_prompted(state)
            state.warnings.append(f"the endpoint refused a request with tools ({exc}); "
                                  "the tools were offered in the prompt instead (tool_protocol prompted)")
    return await ask(state, model, chat)


def use_prompted(state: Investigation) -> None:
    state.protocol = "prompted"
    prompted.offer_tools(state.messages)


def prompted_calls(result: ChatResult, turn: int) -> list[ToolCall]:
    action = prompted.parse_action(result.content, turn)
    return [action] if action is not None else []


def note_cut_off(state: Investigation) -> None:
    """A cut-off investigation still gets its verdict, asked with what it gathered.

    A reply runs out of room when the output limit or the context window is
    reached, so the oldest tool output goes first to leave the verdict space.
    Only a verdict that cannot be had makes the record `incomplete`.
    """
    state.cut_off = True
    if trim_oldest_tool_output(state.messages) is not None:
        state.trimmed += 1
    state.warnings.append(
        "an investigation reply was cut off (finish_reason=length); the verdict was asked for with what was gathered"
    )


async def answer_tool_calls(state: Investigation, tools: ToolBox, calls: list[ToolCall], turn: int) -> None:
    """Run one turn's tool calls in order.

    Sequential on purpose: verdicts already run side by side, one host's
    politeness delay would serialise most of them anyway, and a fixed order
    keeps transcripts readable and reproducible.
    """
    for call in calls:
        result = await tools.dispatch(call.name, call.arguments)
        state.record_tool(turn, call, result.logged, result.ok, result.final_url)
        if state.protocol == "native":
            state.messages.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
        else:
            state.messages.append(prompted.result_message(call, result.text))


async def ask(
    state: Investigation,
    model: ModelSpec,
    chat: ChatClient,
    *,
    tools: list[dict[str, Any]] | None = None,
    json_mode: bool = False,
) -> ChatResult:
    """One chat call on the conversation so far, trimmed to fit the model's window first."""
    fit_context(state, model)
    state.call_pending = True
    try:
        result = await chat.complete(model, state.messages, tools=tools, json_mode=json_mode, watcher=state.watcher)
    except OversizedReply as exc:  # generated and not read: counted at what /generation says, else unknown
        state.call_pending = False
        if exc.spent is not None:
            state.account(exc.spent, model)
        raise
    except ProviderError:
        state.call_pending = False  # a call that failed was answered with an error: nothing was generated
        raise
    state.call_pending = False
    state.account(result, model)
    return result


def fit_context(state: Investigation, model: ModelSpec) -> None:
    """Replace the oldest tool outputs with a marker until the next prompt should fit."""
    window = model.context_window
    if not window:
        return
    budget = window - min(MAX_COMPLETION_RESERVE, window // 10)
    estimate = state.estimated_prompt_tokens()
    while estimate > budget:
        saved = trim_oldest_tool_output(state.messages)
        if saved is None:
            return
        state.trimmed += 1
        estimate -= saved // CHARS_PER_TOKEN


def trim_oldest_tool_output(messages: list[dict[str, Any]]) -> int | None:
    """Characters saved by trimming the oldest untrimmed tool output, or None if none is left."""
    for message in messages:
        if prompted.is_tool_output(message) and not message["content"].endswith(TRIM_MARKER):
            kept = prompted.trimmed(message, TRIM_MARKER)
            saved = len(message["content"]) - len(kept)
            message["content"] = kept
            return max(saved, 0)
    return None


def add_user_message(messages: list[dict[str, Any]], text: str) -> None:
    """A user message, joined to a user message just before it: some chat templates insist that roles alternate."""
    last = messages[-1]
    if last.get("role") == "user" and isinstance(last.get("content"), str):
        last["content"] = f"{last['content']}\n\n{text}"
    else:
        messages.append({"role": "user", "content": text})


def note_once(state: Investigation, warning: str) -> None:
    if warning not in state.warnings:
        state.warnings.append(warning)


def assistant_message(result: ChatResult, *, keep_tool_calls: bool) -> dict[str, Any]:
    """The reply as it goes back into the conversation, in the shape strict servers accept.

    Content is always a string: OpenAI allows null next to tool_calls, but
    llama-cpp-python's server (and others that validate the request against a
    string-only schema) answer such a message with HTTP 500.
    """
    calls = result.tool_calls if keep_tool_calls else []
    message: dict[str, Any] = {"role": "assistant", "content": result.content or ""}
    if calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ]
    return message


def last_reply(state: Investigation) -> str | None:
    for message in reversed(state.messages):
        if message["role"] == "assistant":
            content: str | None = message.get("content")
            return content
    return None


def shorten(text: str, limit: int = RECORD_TEXT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]} [... {len(text) - limit} more characters]"


def text_length(messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        total += len(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            total += len(call["function"]["arguments"]) + len(call["function"]["name"])
    return total
