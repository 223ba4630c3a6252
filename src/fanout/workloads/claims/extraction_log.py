"""The claims a run has extracted, as its prepared-items log holds them (fanout.store.prepared).

One line per extraction of a text: the fields every prepared line has
(`unit` = the text's id, `model` = the extractor, `status`, `cost_usd`,
`cost_source`, `attempt` = its in-flight file's id), then the workload's:

    number        the text's number: its claims' keys are number * 1000 + 1, + 2, ...
    text_sha256   of the text extracted: a line applies to the text only while the text is unchanged
    claims        [{claim, topic}] in the text's order (empty for a text with no verifiable claim)
    prompt_sha256 of the extraction prompt
    timestamp, duration_s, prompt_tokens, completion_tokens, served_model, error, warnings

A text's claims are those of its latest `ok` line of the same text_sha256:
a text with one is never extracted again. A failed extraction is logged too
(it was paid for) and the text is tried again on the next start.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from fanout.base.records import utc_now
from fanout.store.prepared import PreparedLine
from fanout.workloads.claims.claim import MAX_CLAIMS, TOPICS
from fanout.workloads.claims.split_text import ExtractedClaim, Extraction, claims_json
from fanout.workloads.claims.texts import Text


class LoggedText(NamedTuple):
    """A text's extraction as logged: its number, its claims, and when."""

    number: int
    claims: tuple[ExtractedClaim, ...]
    timestamp: str
    extractor: str


def text_line(text: Text, number: int, extractor: str, extraction: Extraction, attempt: str,
              prompt_sha256: str) -> dict[str, Any]:
    """The prepared line of one extraction of `text`."""
    return {
        "unit": text.id, "model": extractor, "status": extraction.status, "cost_usd": extraction.cost_usd,
        "cost_source": extraction.cost_source, "attempt": attempt, "number": number, "text_sha256": text.sha256,
        "claims": claims_json(extraction.claims), "prompt_sha256": prompt_sha256, "timestamp": utc_now(),
        "duration_s": extraction.duration_s, "prompt_tokens": extraction.prompt_tokens,
        "completion_tokens": extraction.completion_tokens, "served_model": extraction.served_model,
        "error": extraction.error, "warnings": extraction.warnings,
    }


def _number(data: Mapping[str, Any]) -> int | None:
    value = data.get("number")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _claims(data: Mapping[str, Any]) -> tuple[ExtractedClaim, ...] | None:
    """The line's claims, or None when the line does not hold them as this workload writes them."""
    listed = data.get("claims")
    if not isinstance(listed, list) or len(listed) > MAX_CLAIMS:
        return None
    found = []
    for entry in listed:
        if not isinstance(entry, dict) or not isinstance(entry.get("claim"), str) or entry.get("topic") not in TOPICS:
            return None
        found.append(ExtractedClaim(entry["claim"], entry["topic"]))
    return tuple(found)


def extracted(texts: Sequence[Text], lines: Iterable[PreparedLine]) -> dict[str, LoggedText]:
    """Each text's claims from its latest usable `ok` line (same text, claims as written); texts without one are
    left out."""
    shas = {t.id: t.sha256 for t in texts}
    found: dict[str, LoggedText] = {}
    for line in lines:
        data = line.data
        if line.status != "ok" or shas.get(line.unit) != data.get("text_sha256"):
            continue
        number, claims = _number(data), _claims(data)
        timestamp = data.get("timestamp")
        if number is None or claims is None or not isinstance(timestamp, str):
            continue
        found[line.unit] = LoggedText(number, claims, timestamp, line.model)
    return found


def text_numbers(texts: Sequence[Text], lines: Iterable[PreparedLine]) -> dict[str, int]:
    """Each text's number: the one a logged line gave it, else its place in the input, else (a place a logged text
    of another id holds: the input changed) the next number free. Keys therefore never move once logged."""
    logged: dict[str, int] = {}
    for line in lines:
        number = _number(line.data)
        if number is not None:
            logged.setdefault(line.unit, number)
    taken = set(logged.values())
    free = max([*taken, len(texts)], default=0) + 1
    numbers: dict[str, int] = {}
    for text in texts:
        if text.id in logged:
            numbers[text.id] = logged[text.id]
        elif text.position not in taken:
            numbers[text.id] = text.position
            taken.add(text.position)
        else:
            numbers[text.id], free = free, free + 1
    return numbers
