"""Reading a chat request the way a model would: which edit, which phase, what was seen.

The simulator keeps no per-conversation state: everything it needs is in the
messages the client sends back each turn (the edit context, its own earlier
tool calls and the tool results). Parsing them, rather than remembering what
the simulator meant to do, is what makes a simulated model fetch only URLs it
really got back from a search, and notice when a fetch really failed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from fanout.sim.dice import short_hash
from fanout.workloads.claims.split_text import EXTRACTION_MARKER  # how a request to split a text starts

SCALE: tuple[str, ...] = ("verified-high", "verified-low", "plausible", "unverifiable", "suspect", "incorrect")
"""The six verdicts, in the order of the scale (fanout's VERDICTS, as a model reads them in the prompt)."""
SIM_ADDRESS = re.compile(r"https?://[^/\s\"'\\]+/web/")
LABEL_LIST = re.compile(r"verdict: one of ((?:[a-z-]+, ){5}[a-z-]+)")

Phase = Literal["investigate", "verdict", "extract"]

KNOWN_TOOLS = ("web_search", "web_fetch")
RCID_LINE = re.compile(r"^\W*rcid\W*[:=]\s*(\d+)", re.IGNORECASE | re.MULTILINE)
QID_LINE = re.compile(r"^\W*qid\W*[:=]\s*(Q\d+)", re.IGNORECASE | re.MULTILINE)
URL = re.compile(r"https?://[^\s\"'<>)\]]+")


@dataclass(frozen=True)
class SeenResult:
    url: str
    title: str
    snippet: str


@dataclass(frozen=True)
class WorkerBrief:
    """What a research team's worker was told after the edit (fanout.research.brief.worker_brief), as it reads it."""

    share: tuple[str, ...]
    """The queries it was asked to start with."""
    sites: tuple[str, ...]
    """Pages or sites the brief named as worth trying."""
    read: tuple[str, ...]
    """Pages the team read already (a second round)."""
    round: int
    digest: str
    """A hash of the brief's text: seeds this worker's plan for this brief."""


TeamRole = Literal["plan", "review", "worker", "aggregate"]
WORKER_OPENING = "You are worker "
PLANNER_OPENING = "You are the planner of a research team"
REVIEW_OPENING = "The workers of your research team have reported"
AGGREGATOR_OPENING = "You are the aggregator of a research team"
SHARE_HEADING = "Start with these queries:"
PAGES_HEADING = "Pages or sites worth trying:"
READ_HEADING = "Already read by the team (do not read these again):"
SUMMARY_OPENING = "Summary of the workers' notes, written by"
"""The phrases of a research team's messages (fanout.research.brief writes them; a test checks they agree)."""


@dataclass
class Conversation:
    """What the request's messages say about the investigation so far."""

    rcid: int | None
    qid: str | None
    first_user_text: str
    phase: Phase
    turn: int
    """Assistant messages so far: the index of the reply being asked for."""
    completed_steps: int = 0
    """Assistant turns whose tool calls were all well formed and known."""
    searches: list[str] = field(default_factory=list)
    seen: list[SeenResult] = field(default_factory=list)
    fetch_attempts: list[str] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)
    """URLs whose fetch returned text rather than an error."""
    json_mode: bool = False
    max_tokens: int | None = None
    label_order: tuple[str, ...] | None = None
    """The six labels in the order the latest verdict request lists them; None when no request lists them."""
    request_digest: str = ""
    """A hash of the whole conversation sent, in the verdict phase: seeds what differs from ask to ask."""
    team_role: TeamRole | None = None
    """The part this model plays in a research team (--evidence team), read from the request; None otherwise."""
    brief: WorkerBrief | None = None
    """A team worker's brief."""
    summary: str | None = None
    """In a verdict request of a team's judge: the aggregator's summary, when one is shown."""

    @property
    def key(self) -> str:
        """Identifies the conversation for seeded draws: the rcid, or a hash of its start."""
        return str(self.rcid) if self.rcid is not None else "h" + short_hash(self.first_user_text)


def read_conversation(body: dict[str, Any]) -> Conversation:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    user_texts = [message_text(m) for m in messages if m.get("role") == "user"]
    first_user = user_texts[0] if user_texts else ""
    rcid, qid = _edit_ids(first_user, messages)
    json_mode, max_tokens = _asked_for(body)
    conv = Conversation(
        rcid=rcid,
        qid=qid,
        first_user_text=first_user,
        phase="extract" if first_user.startswith(EXTRACTION_MARKER) else _phase(body, messages),
        turn=_turn(messages),
        json_mode=json_mode,
        max_tokens=max_tokens,
    )
    _read_tool_traffic(conv, messages)
    if conv.phase == "verdict":
        conv.label_order = label_order(user_texts)
        conv.request_digest = request_digest(messages)
    read_team_part(conv, user_texts)
    return conv


def _turn(messages: list[dict[str, Any]]) -> int:
    """The index of the reply asked for: the assistant messages so far (a retried request asks the same turn)."""
    return sum(1 for m in messages if m.get("role") == "assistant")


def _asked_for(body: dict[str, Any]) -> tuple[bool, Any]:
    """Whether JSON was asked for (either response_format type), and the token cap by its new name or its old."""
    json_mode = (body.get("response_format") or {}).get("type") in ("json_object", "json_schema")
    return json_mode, body.get("max_completion_tokens") or body.get("max_tokens")


def _edit_ids(first_user: str, messages: list[dict[str, Any]]) -> tuple[int | None, str | None]:
    """The edit's rcid and QID, from the first user message, else from it and the system prompt together."""
    context = "\n".join([first_user, *(message_text(m) for m in messages if m.get("role") == "system")])
    rcid_match = RCID_LINE.search(first_user) or RCID_LINE.search(context)
    qid_match = QID_LINE.search(first_user) or QID_LINE.search(context)
    return int(rcid_match.group(1)) if rcid_match else None, qid_match.group(1) if qid_match else None


def read_team_part(conv: Conversation, user_texts: list[str]) -> None:
    """Whether the request is a research team's, and in which role; a worker's brief; a judge's summary shown."""
    first = conv.first_user_text
    if PLANNER_OPENING in first:
        conv.team_role = "review" if REVIEW_OPENING in first else "plan"
    elif AGGREGATOR_OPENING in first:
        conv.team_role = "aggregate"
    elif WORKER_OPENING in first and conv.phase == "investigate":
        conv.team_role, conv.brief = "worker", worker_brief(first)
    if conv.phase == "verdict" and conv.team_role is None:
        conv.summary = next((t[t.index(SUMMARY_OPENING):] for t in reversed(user_texts) if SUMMARY_OPENING in t), None)


def worker_brief(text: str) -> WorkerBrief:
    return WorkerBrief(share=tuple(_listed(text, SHARE_HEADING)), sites=tuple(_listed(text, PAGES_HEADING)),
                       read=tuple(_listed(text, READ_HEADING)), round=2 if READ_HEADING in text else 1,
                       digest=short_hash(text, 16))


def _listed(text: str, heading: str) -> list[str]:
    """The `- entry` lines right under a heading."""
    if heading not in text:
        return []
    entries = []
    for line in text.split(heading, 1)[1].splitlines()[1:]:
        if not line.startswith("- "):
            break
        entries.append(line[2:].strip())
    return entries


def request_digest(messages: list[dict[str, Any]]) -> str:
    """A hash of the conversation, with the simulator's own address cut out of its page URLs: the same
    questions get the same answers from a simulator restarted on another port (a resumed demo)."""
    text = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return short_hash(SIM_ADDRESS.sub("/web/", text), 16)


def label_order(user_texts: list[str]) -> tuple[str, ...] | None:
    """The labels as the latest verdict request lists them (`- verdict: one of a, b, ...`)."""
    for text in reversed(user_texts):
        found = LABEL_LIST.findall(text)
        if found:
            order = tuple(found[-1].split(", "))
            return order if sorted(order) == sorted(SCALE) else None
    return None


def _phase(body: dict[str, Any], messages: list[dict[str, Any]]) -> Phase:
    """Verdict when no tools are offered, JSON is asked for, or a user speaks after the model."""
    if not body.get("tools") or body.get("response_format"):
        return "verdict"
    roles = [m.get("role") for m in messages]
    last_user = max((i for i, r in enumerate(roles) if r == "user"), default=-1)
    if last_user > 0 and "assistant" in roles[:last_user]:
        return "verdict"
    return "investigate"


PROMPTED_RESULT = "Tool result for "
"""How a tool's result starts when it comes back as a user message: the prompted protocol, and the turns of a
shared investigation that every judge of an edit reads (fanout.research.shared)."""


def _read_tool_traffic(conv: Conversation, messages: list[dict[str, Any]]) -> None:
    """What the conversation searched, saw and read: native tool calls and their `tool` results, or actions
    written as JSON text and answered by `Tool result for` user messages (so a judge of shared evidence meets
    the pages the investigator found, and nothing else)."""
    calls: dict[str, tuple[str, dict[str, Any] | None]] = {}
    action: tuple[str, dict[str, Any] | None] | None = None
    for message in messages:
        if message.get("role") == "assistant" and not message.get("tool_calls"):
            action = _written_action(message_text(message))
            if action is not None:
                _note_call(conv, *action)
        elif message.get("role") == "user" and action is not None and message_text(message).startswith(PROMPTED_RESULT):
            name, args = action
            _note_result(conv, name, args, message_text(message).split("\n", 1)[-1])
            action = None
        else:
            _native_traffic(conv, message, calls)


def _native_traffic(conv: Conversation, message: dict[str, Any],
                    calls: dict[str, tuple[str, dict[str, Any] | None]]) -> None:
    """An assistant's tool calls (remembered in `calls` by id), or a `tool` message answering one of them."""
    if message.get("role") == "assistant" and message.get("tool_calls"):
        _native_calls(conv, message["tool_calls"], calls)
    elif message.get("role") == "tool":
        name, args = calls.get(str(message.get("tool_call_id")), ("", None))
        _note_result(conv, name, args, message_text(message))


def _native_calls(conv: Conversation, tool_calls: list[Any],
                  calls: dict[str, tuple[str, dict[str, Any] | None]]) -> None:
    """A turn's calls; the turn counts as a completed step only when every call is well formed and known."""
    parsed = [_parse_call(c) for c in tool_calls if isinstance(c, dict)]
    if parsed and all(name in KNOWN_TOOLS and args is not None for _, name, args in parsed):
        conv.completed_steps += 1
    for call_id, name, args in parsed:
        calls[call_id] = (name, args)
        _note_call(conv, name, args, count_step=False)


def _written_action(text: str) -> tuple[str, dict[str, Any] | None] | None:
    """A tool call written as `{"tool": ..., "arguments": {...}}` in a reply's text, or None."""
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, dict) or not isinstance(found.get("tool"), str):
        return None
    args = found.get("arguments")
    return str(found["tool"]), args if isinstance(args, dict) else None


def _note_call(conv: Conversation, name: str, args: dict[str, Any] | None, *, count_step: bool = True) -> None:
    if count_step and name in KNOWN_TOOLS and args is not None:
        conv.completed_steps += 1
    if name == "web_search" and args is not None:
        conv.searches.append(str(args.get("query", "")))
    if name == "web_fetch" and args is not None:
        conv.fetch_attempts.append(str(args.get("url", "")))


def _note_result(conv: Conversation, name: str, args: dict[str, Any] | None, text: str) -> None:
    if name == "web_search":
        _add_seen(conv, search_results(text))
    elif name == "web_fetch" and args is not None and not is_error_text(text):
        conv.fetched.append(str(args.get("url", "")))


def _parse_call(call: dict[str, Any]) -> tuple[str, str, dict[str, Any] | None]:
    function = call.get("function") or {}
    try:
        args = json.loads(function.get("arguments") or "{}")
    except (TypeError, ValueError):
        args = None
    return str(call.get("id", "")), str(function.get("name", "")), args if isinstance(args, dict) else None


def search_results(text: str) -> list[SeenResult]:
    """The results a web_search tool message handed back (JSON, or URLs in plain text)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return [
            SeenResult(str(r.get("url")), str(r.get("title", "")), str(r.get("snippet") or r.get("content") or ""))
            for r in data["results"]
            if isinstance(r, dict) and r.get("url")
        ]
    return [SeenResult(url.rstrip(".,;"), "", "") for url in URL.findall(text)]


def _add_seen(conv: Conversation, results: list[SeenResult]) -> None:
    known = {r.url for r in conv.seen}
    for result in results:
        if result.url not in known:
            known.add(result.url)
            conv.seen.append(result)


def is_error_text(text: str) -> bool:
    head = text.lstrip()[:40].lower()
    return not head or head.startswith(("error", "blocked_domain", "blocked domain"))


def message_text(message: dict[str, Any]) -> str:
    """A message's text, whether content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def request_chars(body: dict[str, Any]) -> int:
    """Characters the model reads: messages, tool-call arguments and tool schemas."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    return sum(message_chars(m) for m in messages) + tools_chars(body)


def message_chars(message: dict[str, Any]) -> int:
    """Characters one message adds to the prompt: its text, its tool calls, and a little for its framing."""
    total = len(message_text(message)) + 16
    for call in message.get("tool_calls") or []:
        total += len(json.dumps(call.get("function", {}), ensure_ascii=False))
    return total


def tools_chars(body: dict[str, Any]) -> int:
    """Characters of the tool schemas a request offers."""
    return len(json.dumps(body["tools"], ensure_ascii=False)) if body.get("tools") else 0
