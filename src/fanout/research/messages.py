"""The fixed messages of the verdict phase: the verdict request, the repair request, the closed tools.

Every workload's models are asked for their verdict the same way, on the
same six-label scale and with the same schema (seed 000's); only the noun
for the item is the workload's (fanout.base.item.Prompt.item_noun).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from typing import Any

from fanout.base.records import PROVENANCES, VERDICTS


def verdict_schema(labels: Sequence[str] = VERDICTS) -> dict[str, Any]:
    """Seed 000's verdict schema, the contract for the model's structured answer, its labels in this order."""
    return {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": list(labels)},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "rationale": {"type": "string"},
            "sources": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "url": {"type": "string"},
                        "supports_claim": {"type": "boolean"},
                        "provenance": {"type": "string", "enum": list(PROVENANCES)},
                    },
                    "required": ["url", "supports_claim", "provenance"],
                },
            },
        },
        "required": ["verdict", "confidence", "rationale", "sources"],
    }


def verdict_request(labels: Sequence[str], item_noun: str) -> str:
    """The verdict request, listing the six labels in `labels`' order (the swap of fanout.research.swap).

    In the natural order (VERDICTS) this is the one request a verdict with one
    sample has always been asked, byte for byte.
    """
    return _verdict_request(tuple(labels), item_noun)


@functools.lru_cache(maxsize=64)
def _verdict_request(labels: tuple[str, ...], item_noun: str) -> str:
    """Made once per label order and noun: the schema in it is indented JSON, which Python encodes in pure
    Python (a tenth of a millisecond), and every verdict asks for one."""
    return (
        "Your investigation is over; do not call any more tools. Give your final verdict "
        f"on this {item_noun} as one JSON object and nothing else (no prose, no code fence). It "
        "must match this JSON schema:\n\n"
        + json.dumps(verdict_schema(labels), indent=2)
        + "\n\n"
        "- verdict: one of " + ", ".join(labels) + ", chosen by the rules you were given.\n"
        "- confidence: the probability, from 0 to 1, that your verdict is the right one given the "
        "evidence you found (0.5: a coin toss; 0.95: you would be surprised to be wrong).\n"
        "- rationale: two or three sentences naming the decisive evidence.\n"
        "- sources: every source you relied on. supports_claim is true when the source "
        f"supports the {item_noun} and false when it contradicts it. provenance is \"verified\" "
        "only for a page you fetched and read with web_fetch (or a prefetched reference), "
        "otherwise \"reported\". Use an empty list if you found no sources.\n\n"
        "Example of the shape (not of the content):\n"
        '{"verdict": "verified-low", "confidence": 0.8, "rationale": "...", "sources": '
        '[{"url": "https://example.org/page", "supports_claim": true, "provenance": "verified"}]}'
    )


REPAIR_REQUEST = (
    "That answer could not be used: {problem}. Reply again with only the JSON object "
    "described above (keys verdict, confidence, rationale, sources), with no other text."
)

TOOLS_CLOSED = (
    "error: the investigation is closed and this tool was not run. "
    "The verdict is wanted now: reply with only the JSON object described above."
)
"""The answer to a tool call made in the verdict phase (offered the tools only to share the cached prefix)."""
