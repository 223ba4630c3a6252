"""The claims workload's input: a file of texts, each to be split into claims and every claim verified.

JSON Lines (one object a line, `.jsonl`) or YAML (a list, or a mapping with
`texts:`), each text:

    id:         text or number, unique in the file (the report and the quarantine name the text by it)
    text:       the text to check (often a model's answer), at most MAX_TEXT_CHARS characters
    question:   optional: what the text answers (shown to the extractor and every judge)
    context:    optional: anything else a reader of the text should know
    source_url: optional http(s) URL the text came from (the report links it)
    label:      optional: the whole text's truth, correct | incorrect | unverifiable
    claims:     optional: the text's claims with their truth, each {claim: ..., label: ...}

Labels also read as true/false, supported/refuted and not enough info (see
LABEL_WORDS). They are never shown to a model: the report scores against them
(fanout.workloads.claims.align matches the labelled claims to the claims
extracted; a text labelled correct makes every claim of it correct).

The file is read within bounds (fanout.base.reading); every bad record is
named in one line, all of them in one error, before anything runs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from fanout.base.errors import ConfigError
from fanout.base.reading import SIDE_FILE_BOUNDS, OverLimit, parse_json, parse_yaml, read_bounded, yaml_problem
from fanout.base.validate import require_http_url

MAX_TEXT_CHARS = 20_000
"""About 4 000 words: a long answer. Longer texts are split by the user, so one extraction stays one bounded call."""
MAX_LABELLED_CLAIMS = 200
SHOWN_PROBLEMS = 20
"""Bad records named in the error; more are counted."""
TEXTS_BOUNDS = SIDE_FILE_BOUNDS._replace(
    kind="texts file", max_bytes=256 << 20, max_text=MAX_TEXT_CHARS + 1, max_repeated=10_000_000,
    text_hint=f"a text may have at most {MAX_TEXT_CHARS:,} characters",
    split_hint="split the texts into several files, each run in its own --run-dir",
)
TRUTHS = ("correct", "incorrect", "unverifiable")
LABEL_WORDS: Mapping[str, str] = {
    **{w: "correct" for w in ("correct", "true", "supported", "factual", "yes")},
    **{w: "incorrect" for w in ("incorrect", "false", "refuted", "not factual", "wrong", "no")},
    **{w: "unverifiable" for w in ("unverifiable", "unknown", "not enough info", "nei", "unsure")},
}
"""A label as written (case and spaces ignored) -> the truth the report scores against (fanout.judging.scales)."""
FIELDS = frozenset({"id", "text", "question", "context", "source_url", "label", "claims"})


class LabelledClaim(NamedTuple):
    """A claim the input says the text makes, with its truth."""

    claim: str
    truth: str


@dataclass(frozen=True)
class Text:
    """One validated text of the input."""

    id: str
    text: str
    position: int
    """1-based place in the input: the number its claims' keys start from, unless a resume assigned another."""
    question: str | None = None
    context: str | None = None
    source_url: str | None = None
    truth: str | None = None
    """The whole text's label, if the input gives one."""
    claims: tuple[LabelledClaim, ...] = ()
    """Its labelled claims, if the input gives them."""

    @property
    def sha256(self) -> str:
        """Of the text itself: a logged extraction belongs to this text only while it is unchanged."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TextFile:
    path: Path
    sha256: str
    """Of the file's bytes (the manifest pins it)."""
    texts: tuple[Text, ...]


class _Problems:
    """Every bad record's one line, in order."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, where: str, problem: str) -> None:
        self.lines.append(f"{where}: {problem}")

    def raise_if_any(self, name: str) -> None:
        if not self.lines:
            return
        shown = self.lines[:SHOWN_PROBLEMS]
        more = f"\n  ... and {len(self.lines) - SHOWN_PROBLEMS} more" if len(self.lines) > SHOWN_PROBLEMS else ""
        raise ConfigError(f"{name}: {len(self.lines)} bad record(s); fix or remove them:\n  "
                          + "\n  ".join(shown) + more)


def read_texts(path: Path) -> TextFile:
    """The validated texts of `path` (JSON Lines or YAML); ConfigError naming each bad record in one line."""
    name = f"the texts file {path}"
    raw = read_bounded(path, name, TEXTS_BOUNDS, fix="pass a JSON Lines or YAML file of texts (docs/claims.md)")
    problems = _Problems()
    records = list(_records(path, raw, name, problems))
    texts = _validated(records, problems)
    problems.raise_if_any(name)
    if not texts:
        raise ConfigError(f"{name} holds no texts; give one JSON object a line, or a YAML list, each with id and text")
    return TextFile(path, hashlib.sha256(raw).hexdigest(), tuple(texts))


def _records(path: Path, raw: bytes, name: str, problems: _Problems) -> Iterator[tuple[str, Any]]:
    """Each record with where it is (`line 3`, `texts[2]`): JSON Lines by suffix or by a first `{`, else YAML."""
    head = raw.lstrip()[:1]
    if path.suffix.lower() in (".jsonl", ".ndjson") or (head == b"{" and path.suffix.lower() not in (".yaml", ".yml")):
        yield from _json_lines(raw, problems)
    else:
        yield from _yaml_records(raw, name)


def _json_lines(raw: bytes, problems: _Problems) -> Iterator[tuple[str, Any]]:
    """A line that is not JSON is named and skipped, so one read names every bad line, not only the first."""
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", parse_json(line)
        except (ValueError, RecursionError) as exc:
            problems.add(f"line {number}", f"not a JSON object ({str(exc).splitlines()[0][:80]})")


def _yaml_records(raw: bytes, name: str) -> Iterator[tuple[str, Any]]:
    """A YAML list, or `texts:` holding one; a file that is not such a list is refused whole, in one line."""
    try:
        data = parse_yaml(raw, TEXTS_BOUNDS)
    except OverLimit as exc:
        raise ConfigError(f"{name} {exc}") from None
    except yaml.YAMLError as exc:
        raise yaml_problem(name, exc) from None
    listed = data.get("texts") if isinstance(data, dict) else data
    if isinstance(data, dict) and "edits" in data:
        raise ConfigError(f"{name} is a snapshot of Wikidata edits, not texts: leave out --workload claims")
    if not isinstance(listed, list):
        raise ConfigError(f"{name}: expected a list of texts (or `texts:` holding one), each with id and text")
    yield from ((f"texts[{i}]", entry) for i, entry in enumerate(listed))


def _validated(records: Sequence[tuple[str, Any]], problems: _Problems) -> list[Text]:
    texts: list[Text] = []
    seen: dict[str, str] = {}
    for where, data in records:
        text = _text(where, data, len(texts) + 1, problems)
        if text is None:
            continue
        if text.id in seen:
            problems.add(where, f"id {text.id!r} repeats {seen[text.id]}; give each text its own id")
            continue
        seen[text.id] = where
        texts.append(text)
    return texts


def _text(where: str, data: Any, position: int, problems: _Problems) -> Text | None:
    """One record as a Text, or None after naming its first problem."""
    if not isinstance(data, dict):
        problems.add(where, "not a mapping with id and text")
        return None
    try:
        unknown = sorted(str(k) for k in set(data) - FIELDS)
        if unknown:
            raise ValueError(f"unknown field {unknown[0]!r}; known: {', '.join(sorted(FIELDS))}")
        return Text(id=_id(data.get("id")), text=_body(data.get("text")), position=position,
                    question=_optional(data, "question"), context=_optional(data, "context"),
                    source_url=_url(data.get("source_url")), truth=_truth(data.get("label"), "label"),
                    claims=_claims(data.get("claims")))
    except ValueError as exc:
        problems.add(where, str(exc))
        return None


def _id(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not str(value).strip():
        raise ValueError("id is missing (a text or a number)")
    text = str(value).strip()
    if len(text) > 200 or any(ch in text for ch in "\n\r\t"):
        raise ValueError("id must be one line of at most 200 characters")
    return text


def _body(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("text is missing or empty")
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"text has {len(value):,} characters, more than {MAX_TEXT_CHARS:,}; split it")
    return value.strip()


def _optional(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"{key} must be text")
    return value.strip() or None


def _url(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError("source_url must be an http(s) URL")
    try:
        require_http_url(value.strip(), "source_url")
    except ConfigError as exc:
        raise ValueError(str(exc).rstrip(".")) from None
    return value.strip()


def _truth(value: Any, key: str) -> str | None:
    """A label as one of TRUTHS; YAML's true/false read as correct/incorrect."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "correct" if value else "incorrect"
    found = LABEL_WORDS.get(" ".join(str(value).lower().replace("_", " ").replace("-", " ").split()))
    if found is None:
        raise ValueError(f"{key} {value!r} is not a label; use {', '.join(TRUTHS)}")
    return found


def _claims(value: Any) -> tuple[LabelledClaim, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_LABELLED_CLAIMS:
        raise ValueError(f"claims must be a list of at most {MAX_LABELLED_CLAIMS} {{claim, label}} mappings")
    found = []
    for index, entry in enumerate(value):
        if not isinstance(entry, dict) or not isinstance(entry.get("claim"), str) or not entry["claim"].strip():
            raise ValueError(f"claims[{index}] needs a claim (text) and a label")
        truth = _truth(entry.get("label"), f"claims[{index}].label")
        if truth is None:
            raise ValueError(f"claims[{index}] has no label")
        found.append(LabelledClaim(" ".join(entry["claim"].split()), truth))
    return tuple(found)
