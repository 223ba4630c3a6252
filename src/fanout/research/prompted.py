"""The prompted tool protocol: the same research for models without tool calling.

Seed 000 promises every model the same tools. A model whose endpoint cannot
take `tools` (its listing lacks them, or a request with them was refused) is
told about the tools in its first user message instead, and writes one JSON
action per turn in its text: `{"tool": "web_search", "arguments": {...}}`.
fanout parses the action, runs the tool through the same dispatcher as the
native path (so malformed arguments and unknown tools are the same error
strings), and hands the result back as the next user message. A reply with
no action is the end of the investigation, as a reply without tool calls is
on the native path; the turn limit, trimming and the verdict phase are shared.

Results go back as user messages, not `tool` messages: a `tool` message must
answer a `tool_calls` entry, and strict servers refuse one that does not.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fanout.base.reading import parse_json
from fanout.llm.chat import ToolCall
from fanout.tools import TOOL_SCHEMAS

_OBJECT_START = re.compile(r'\{[ \t\n\r]*["}]')
"""Where a JSON object can start: `{`, JSON's whitespace, then a key's quote or the closing brace. Any other `{`
fails to decode at once, and json's error for it counts the lines before it: trying every `{` of a reply made of
100,000 of them cost 4 s of CPU (quadratic), skipping those costs a regex scan."""
RESULT_PREFIX = "Tool result for "
"""How a user message that carries a tool's output starts; trimming recognises it by this."""


def _tool_lines() -> str:
    lines = []
    for schema in TOOL_SCHEMAS:
        function = schema["function"]
        arguments = json.dumps({name: f"<{spec['type']}: {spec.get('description', name)}>"
                                for name, spec in function["parameters"]["properties"].items()})
        lines.append(f'- {function["name"]}: {function["description"]} '
                     f'Write: {{"tool": "{function["name"]}", "arguments": {arguments}}}')
    return "\n".join(lines)


INSTRUCTIONS = (
    "You cannot call tools directly here, but you can use these tools by writing an action:\n"
    + _tool_lines()
    + "\n\nTo use a tool, reply with exactly one such JSON object and nothing else; you will get its "
    "result in the next message. Use one tool per reply. When you have enough evidence, reply with "
    "your summary in plain text, with no JSON action in it."
)


def offer_tools(messages: list[dict[str, Any]]) -> None:
    """Tell the model about the tools in its first user message (one message, so roles still alternate)."""
    for message in messages:
        if message.get("role") == "user":
            if INSTRUCTIONS not in (message.get("content") or ""):
                message["content"] = f"{message.get('content') or ''}\n\n{INSTRUCTIONS}"
            return


def parse_action(text: str | None, turn: int) -> ToolCall | None:
    """The first JSON object in the reply that names a tool, as a ToolCall; None when there is none.

    Arguments that are not an object are passed on as they are, so the
    dispatcher answers them with the same error a malformed native call gets.
    """
    found = first_json_object(text or "", _is_action)
    if found is None:
        return None
    arguments = found.get("arguments", {})
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=f"prompted_{turn}", name=str(found["tool"]), arguments=raw)


def first_json_object(text: str, accept: Callable[[dict[str, Any]], bool] = lambda _: True) -> dict[str, Any] | None:
    """The whole text as JSON, or the first JSON object inside it (prose, code fences) that `accept` takes.

    A reply is the model's to write, nested as deep as it likes: the whole is
    parsed depth-capped, and an object nested past what Python's parser can
    recurse into ends the search (none found) rather than the verdict in a
    RecursionError, which would be recorded as an error and paid again.
    """
    try:
        whole = parse_json(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and accept(whole):
        return whole
    decoder = json.JSONDecoder()
    match = _OBJECT_START.search(text)
    while match is not None:
        start = match.start()
        try:
            found, _end = decoder.raw_decode(text, start)
        except ValueError:
            found = None
        except RecursionError:
            return None  # every later `{` inside this one nests as deep: searching on costs, and finds no verdict
        if isinstance(found, dict) and accept(found):
            return found
        match = _OBJECT_START.search(text, start + 1)
    return None


def _is_action(found: dict[str, Any]) -> bool:
    return isinstance(found.get("tool"), str)


def result_message(call: ToolCall, text: str) -> dict[str, Any]:
    """A tool's output as the user message that answers the model's action."""
    return {"role": "user", "content": f"{RESULT_PREFIX}{call.name}:\n{text}"}


def trimmed(message: dict[str, Any], marker: str) -> str:
    """A tool output's content with its text replaced by `marker`; a prompted one keeps its heading."""
    if message.get("role") == "tool":
        return marker
    heading = str(message["content"]).split("\n", 1)[0]
    return f"{heading}\n{marker}"


def is_tool_output(message: dict[str, Any]) -> bool:
    """A message holding a tool's output, on either protocol."""
    if message.get("role") == "tool":
        return True
    content = message.get("content")
    return message.get("role") == "user" and isinstance(content, str) and content.startswith(RESULT_PREFIX)
