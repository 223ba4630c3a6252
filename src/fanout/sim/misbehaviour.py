"""Bending a good reply into the bad outputs real models produce.

Each function takes the reply a simulated model meant to give and returns the
broken version a client must survive: arguments that are not JSON, a tool
that does not exist, a verdict that is not JSON, an answer cut off at the
token limit. The client's job is to record these, never to crash on them.
"""

from __future__ import annotations

import dataclasses
import json
import random

from fanout.sim.investigation import Reply

UNKNOWN_TOOLS = ("browse_page", "search_web", "open_url", "google_search")
LOST_THOUGHT = "I will now search for independent sources about this edit, starting with the"


def malformed_arguments(reply: Reply, rng: random.Random) -> Reply:
    call = reply.tool_calls[0]
    args = call.arguments
    broken = rng.choice(
        (
            args[:-1],  # lost its closing brace
            args.replace('"', "'"),  # Python-style quotes
            args[:-2] + ",}",  # trailing comma
            " ".join(f"{k}={v}" for k, v in json.loads(args).items()),  # not JSON at all
        )
    )
    calls = [dataclasses.replace(call, arguments=broken), *reply.tool_calls[1:]]
    return dataclasses.replace(reply, tool_calls=calls)


def unknown_tool(reply: Reply, rng: random.Random) -> Reply:
    call = reply.tool_calls[0]
    calls = [dataclasses.replace(call, name=rng.choice(UNKNOWN_TOOLS)), *reply.tool_calls[1:]]
    return dataclasses.replace(reply, tool_calls=calls)


def invalid_verdict_json(verdict: dict[str, object], rng: random.Random) -> str:
    """A verdict that fails to parse or to validate, in one of the ways models get it wrong."""
    text = json.dumps(verdict, ensure_ascii=False)
    variants = (
        text.replace('"', "'"),  # a Python dict, not JSON
        text[:-1] + ', "confidence": high}',  # an unquoted value
        f"Verdict: {verdict['verdict']}\nRationale: {verdict['rationale']}",  # prose
        json.dumps({**verdict, "verdict": "probably-correct"}, ensure_ascii=False),  # not in the enum
        json.dumps({"verdict": verdict["verdict"], "sources": verdict["sources"]}, ensure_ascii=False),  # no rationale
    )
    return rng.choice(variants)


def cut_off(reply: Reply, keep_chars: int | None = None) -> Reply:
    """finish_reason=length: the text stops mid-way and any tool call is lost."""
    text = reply.content if reply.content and not reply.tool_calls else LOST_THOUGHT
    keep = keep_chars if keep_chars is not None else max(1, int(len(text) * 0.6))
    return Reply(content=text[:keep], tool_calls=[], finish_reason="length")
