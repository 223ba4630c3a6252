"""The verdict record: what one (edit, model) pair produced, and its one wire format.

The JSON line in checkpoint.jsonl is the source of truth (`log_line` /
`from_dict`); the YAML file in verdicts/ is a view of it (`yaml_view`), with
seed 000's trimmed schema at the top level so existing readers keep working.
A cost of `None` means unknown, never zero.

Resume reads the key fields of a million lines without parsing each as JSON
(`read_line_head`); that reader and the writer (`log_line`) live together
here, because the reader depends on the order in which the writer puts the
fields: LINE_HEAD_FIELDS, the first fields of VerdictRecord.
"""

from __future__ import annotations

import builtins
import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple, TypeVar

from fanout.base.reading import parse_json
from fanout.base.schema import Schema, flag, list_of, number, one_of, optional, record, text, whole
from fanout.base.yamlio import NotPlain, plain_asdict

Status = Literal["ok", "timeout", "incomplete", "invalid_json", "error", "refused"]
STATUSES: tuple[str, ...] = ("ok", "timeout", "incomplete", "invalid_json", "error", "refused")
"""`error` is a failure that may pass (resume runs it again); `refused` is a request the endpoint will
never take as it stands (fanout.base.retry.is_refusal): done, unless --retry names it."""
VERDICTS: tuple[str, ...] = (
    "verified-high",
    "verified-low",
    "plausible",
    "unverifiable",
    "suspect",
    "incorrect",
)
PROVENANCES: tuple[str, ...] = ("verified", "reported")
VERIFIED_WITHOUT_SOURCE = "verified_verdict_without_verified_source"
"""The rule violation of a verified-high/verified-low verdict none of whose sources was read."""
MODEL_SLUG_CHARS = 64
_T = TypeVar("_T")
"""The readable part of a model's slug is cut here, so a view's name stays far below a file system's 255 bytes."""


def utc_now() -> str:
    """Now, as records and manifests write a time: UTC, ISO 8601, whole seconds (2026-02-19T08:02:14Z)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Source:
    """A source the model cited in its verdict."""

    url: str
    supports_claim: bool
    provenance: str
    """`verified` = fetched and read; `reported` = seen only in a search snippet."""
    fetched: bool | None = None
    """Whether the transcript shows a successful web_fetch of this URL (None = not checked)."""
    claimed_verified: bool = False
    """The model called this source `verified`, but its own fetch log shows no successful
    web_fetch of it, so provenance was changed to `reported` (see the record's warnings)."""
    prefetched: bool = False
    """A reference attached to the edit whose text the prompt handed over: read on the verdict's
    behalf, so it may be `verified` without a web_fetch."""


@dataclass
class Usage:
    """Tokens and turns summed over every chat call of one verdict."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    turns: int = 0
    """Chat calls made (investigation turns plus verdict and repair calls)."""
    cached_tokens: int = 0
    """Of prompt_tokens, those the provider read from its prompt cache (`prompt_tokens_details.cached_tokens`)."""
    cache_write_tokens: int = 0
    """Of prompt_tokens, those the provider wrote to its prompt cache, where it reports them (OpenRouter's
    `prompt_tokens_details.cache_write_tokens`); 0 in records written before fanout kept either."""


@dataclass
class ToolCallLog:
    """One tool call in the investigation, as the model asked and as it was answered."""

    turn: int
    tool: str
    arguments: str
    """The raw argument string the model sent (may be malformed JSON)."""
    result: str
    """What the model was handed back, truncated for the record; for a failure, its `error: <word>` and then
    the detail the model was not shown (`error: timeout: https://x did not answer within 15 s`)."""
    ok: bool
    """False when the result is an error string."""
    final_url: str | None = None
    """For a successful web_fetch: where the page was read from after redirects."""


@dataclass
class TranscriptEntry:
    """One message of the conversation, content truncated for the record."""

    role: str
    content: str | None = None
    tool_calls: list[dict[str, str]] = field(default_factory=list)
    tool_call_id: str | None = None


@dataclass
class Escalation:
    """Where a record stands in its edit's judging strategy (fanout.judging.strategy)."""

    step: int
    """1 = the first model asked for the edit; a cascade's later steps count up from there."""
    reason: str
    """Why this model was asked: "cheapest model first", "model-a said plausible, which does not pass on
    one model's word", "router: cheapest allowed for time/value_changed (gate '*')"."""


@dataclass
class VerdictSample:
    """One ask of the verdict phase when `--samples` is more than 1 (fanout.research.samples).

    Every sample answers over the same investigation; only the order of its
    evidence and of the labels in the verdict request differ.
    """

    verdict: str | None
    """The verdict this sample gave; None when it gave none (its status says why)."""
    label_order: list[str]
    """The six verdict labels in the order the verdict request listed them."""
    evidence_order: list[int]
    """The investigation's turns (numbered from 1, as in tool_calls) in the order this sample was shown them."""
    status: str
    """ok, or why this sample gave no verdict (incomplete, invalid_json, timeout, error, refused)."""
    rationale: str | None = None
    confidence: float | None = None
    """The confidence this sample stated with its verdict (0 to 1); None when it stated none."""


@dataclass
class VerdictRecord:
    """Everything fanout keeps about one finished (edit, model) pair."""

    model: str
    """The model name as requested; with edit_rcid it keys the checkpoint."""
    edit_rcid: int
    edit_revid: int
    qid: str
    property: str | None
    diff_type: str | None
    timestamp: str
    """When the verdict finished (UTC, ISO 8601)."""
    status: Status
    verdict: str | None = None
    rationale: str | None = None
    sources: list[Source] = field(default_factory=list)
    token_usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    cost_source: str | None = None
    """Where cost_usd came from: reported, generation, estimated or unknown (fanout.llm.cost); None in
    records written before fanout said (their cost was reported, or null for unknown)."""
    timeout: bool = False
    served_model: str | None = None
    """The exact model the endpoint reported (`model` in its responses)."""
    edit_timestamp: str | None = None
    error: str | None = None
    """What went wrong, for statuses other than ok."""
    raw_verdict: str | None = None
    """The model's verdict text when it could not be parsed (status invalid_json)."""
    warnings: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallLog] = field(default_factory=list)
    transcript: list[TranscriptEntry] = field(default_factory=list)
    duration_s: float | None = None
    investigation_cut_off: bool = False
    """An investigation reply was cut off (finish_reason=length); the verdict was then asked for
    with what had been gathered, so this verdict rests on a shortened investigation."""
    tool_protocol: str = "native"
    """How the model got its tools: `native` (tool calling) or `prompted` (one JSON action per
    reply, for models without tool calling; see fanout.research.prompted)."""
    rule_violations: list[str] = field(default_factory=list)
    """The prompt's rules the verdict breaks (VERIFIED_WITHOUT_SOURCE: a verified-* verdict with
    no verified source); the report counts them and its committee applies a stated policy."""
    strategy: str = "all"
    """How the run chose the models of an edit: `all` (every model), `cascade` or `router` (--strategy)."""
    aspect: str | None = None
    """The edit's aspect (`datatype/change`, fanout.judging.policy.aspect_of), which a router's gates read."""
    escalation: Escalation | None = None
    """The step and reason of a cascade or router; None under `all`."""
    samples: list[VerdictSample] = field(default_factory=list)
    """Every ask of the verdict phase under `--samples N` (N > 1); empty with one sample."""
    stability: float | None = None
    """Share of the samples whose verdict is the record's `verdict` (their majority), under `--samples N`
    (N > 1); None with one sample (it agrees with itself, which measures nothing) or without a verdict."""
    confidence: float | None = None
    """The model's own confidence in its verdict, 0 to 1, as it stated it in the verdict JSON (under
    `--samples N`, the mean over the samples that gave the majority verdict); None when it stated none,
    and in records written before fanout asked for it. fanout.judging.policy.confidence reads it at one sample."""
    evidence_id: str | None = None
    """Under --evidence shared, the EvidenceRecord (evidence.jsonl) this verdict read instead of investigating;
    None when the model investigated the edit itself."""

    @builtins.property  # plain `property` here would name the field above
    def key(self) -> tuple[int, str]:
        return (self.edit_rcid, self.model)

    def to_dict(self) -> dict[str, Any]:
        """dataclasses.asdict(self), without its deepcopy call on every leaf (the writer makes one per verdict)."""
        try:
            return plain_asdict(self)
        except NotPlain:
            return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VerdictRecord:
        data = {**data, **_verdict_parts(data)}
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def yaml_view(self, data: dict[str, Any] | None = None) -> dict[str, Any]:
        """Seed 000's trimmed schema first, then status, the stated confidence and the investigation.

        `data` is this record's to_dict() when the caller already made it (the
        checkpoint writer does, for the log line), sparing a second deep copy.
        """
        d = self.to_dict() if data is None else data
        head = [
            "model", "edit_rcid", "edit_revid", "qid", "property", "diff_type", "timestamp",
            "verdict", "rationale", "sources", "token_usage", "cost_usd", "timeout", "status", "confidence",
        ]
        view = {k: d[k] for k in head}
        view.update({k: v for k, v in d.items() if k not in view})
        return view

    def file_name(self) -> str:
        """`{date}-{qid}-{property}-{rcid}-{model_slug}.yaml`: unique per (edit, model)."""
        return verdict_file_name(self.model, self.edit_rcid, self.qid, self.property, self.timestamp)


def _verdict_parts(data: dict[str, Any]) -> dict[str, Any]:
    """A verdict line's nested parts as their classes; a part left out (an older line) is its empty form."""
    return {
        "sources": _each(Source, data.get("sources")),
        "token_usage": Usage(**(data.get("token_usage") or {})),
        "tool_calls": _each(ToolCallLog, data.get("tool_calls")),
        "transcript": _each(TranscriptEntry, data.get("transcript")),
        "escalation": Escalation(**data["escalation"]) if data.get("escalation") else None,
        "samples": _each(VerdictSample, data.get("samples")),
    }


def _each(kind: Callable[..., _T], entries: list[dict[str, Any]] | None) -> list[_T]:
    return [kind(**entry) for entry in entries or []]


def verdict_file_name(model: str, edit_rcid: int, qid: str, property: str | None, timestamp: str) -> str:
    """VerdictRecord.file_name from the five fields it uses (the checkpoint index has no whole record)."""
    date = timestamp[:10]
    slug = model_slug(model)
    return f"{date}-{safe_name(qid)}-{safe_name(property or 'none')}-{edit_rcid}-{slug}.yaml"


@functools.lru_cache(maxsize=256)
def model_slug(model: str) -> str:
    """The model part of a verdict file name: `anthropic/claude-haiku-4.5` -> `claude-haiku-4.5-2e1f95b1`.

    The readable end of the id alone would give `nvidia/x` and `other/x` one
    file; so would safe_name's folding of other characters, and a file system
    that ignores case. The first 8 hex digits of the whole id's sha256 keep
    every two ids apart (a run refuses two models whose slugs still meet:
    slug_clash).
    """
    return f"{legacy_model_slug(model)[:MODEL_SLUG_CHARS]}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"


def slug_clash(models: list[str]) -> tuple[str, str] | None:
    """Two of these models whose views would share file names, if any."""
    seen: dict[str, str] = {}
    for model in models:
        other = seen.setdefault(model_slug(model).lower(), model)
        if other != model:
            return other, model
    return None


def legacy_model_slug(model: str) -> str:
    """The model part of the view names of runs before the id's hash was added (found and renamed on resume)."""
    return safe_name(model.rsplit("/", 1)[-1])


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "x"


# --- the log line --------------------------------------------------------------------------

LINE_HEAD_FIELDS = ("model", "edit_rcid", "edit_revid", "qid", "property", "diff_type", "timestamp", "status")
"""VerdictRecord's first fields, in order: what read_line_head finds at the front of every line."""


def log_line(data: dict[str, Any]) -> bytes:
    """A record's to_dict() as its line in checkpoint.jsonl: compact JSON, fields in declaration order."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


class LineHead(NamedTuple):
    """The fields of a log line that resume and the view's file name need."""

    model: str
    edit_rcid: int
    qid: str
    property: str | None
    timestamp: str
    status: str
    cost_usd: float | None
    cost_source: str | None = None


_STR = rb'"((?:[^"\\]|\\.)*)"'
_HEAD = re.compile(
    rb'\{"model":' + _STR + rb',"edit_rcid":(-?\d+),"edit_revid":-?\d+,"qid":' + _STR
    + rb',"property":(?:' + _STR + rb'|null),"diff_type":(?:' + _STR + rb'|null),"timestamp":' + _STR
    + rb',"status":' + _STR + rb','
)
_COST = re.compile(rb',"cost_usd":(null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?),(?:"cost_source":(?:"([a-z]+)"|null),)?')
_INT = re.compile(rb"-?\d+")


def read_line_head(line: bytes) -> LineHead | None:
    """The head of a line exactly as log_line writes it, read without parsing the whole line; None for
    any other shape (a line edited by hand, a foreign writer), which the caller then parses as JSON."""
    head = _HEAD.match(line)
    cost = _COST.search(line, head.end()) if head is not None else None
    if head is None or cost is None or not line.rstrip(b"\r\n").endswith(b"}"):
        return None
    prop, raw_cost, source = head.group(4), cost.group(1), cost.group(2)
    value = None if raw_cost == b"null" else int(raw_cost) if _INT.fullmatch(raw_cost) else float(raw_cost)
    return LineHead(
        _text(head.group(1)), int(head.group(2)), _text(head.group(3)), None if prop is None else _text(prop),
        _text(head.group(6)), _text(head.group(7)), value, None if source is None else source.decode(),
    )


def parse_record(line: bytes) -> VerdictRecord | None:
    """The record a log line holds, or None for a line that is not one (not JSON, `null`, `{"hello": 1}`, half a
    record, or a record that breaks VERDICT_LINE: a verdict of "bogus", a confidence of 2)."""
    return check_record(line)[0]


def check_record(line: bytes) -> tuple[VerdictRecord | None, str | None]:
    """The record a log line holds and None, or None and what is wrong with the line (for the reader to name)."""
    problem, data = checked_json(line, VERDICT_LINE)
    if problem is not None:
        return None, problem
    try:
        return VerdictRecord.from_dict(data), None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # a nested record of another shape
        return None, f"not a verdict record ({type(exc).__name__})"


def checked_json(line: bytes, schema: Schema) -> tuple[str | None, Any]:
    """A JSON line parsed (depth-capped) and held to `schema`: (None, data), or (what is wrong, None)."""
    try:
        data = parse_json(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the cap
        return "not JSON", None
    problem = schema.problem(data)
    return (problem, None) if problem is not None else (None, data)


def read_line_key(line: bytes) -> tuple[int, str] | None:
    """(edit_rcid, model) from the first bytes of a line as log_line writes it (all after the status may be cut off)."""
    head = _HEAD.match(line)
    return None if head is None else (int(head.group(2)), _text(head.group(1)))


def _text(raw: bytes) -> str:
    return json.loads(b'"' + raw + b'"') if b"\\" in raw else raw.decode("utf-8")


@dataclass
class EvidenceRecord:
    """One shared investigation of one edit (--evidence shared), or a research team's pooled evidence (--evidence
    team): what every judge of the edit reads.

    Logged once in `evidence.jsonl` (fanout.store.evidence_log) before any judge
    is asked; each judge's VerdictRecord names it in `evidence_id`. Its cost is
    the investigation's, attributed to the edit and to no judge (a team's is its
    steps', each counted in team.jsonl as it finished).
    """

    evidence_id: str
    edit_rcid: int
    investigator: str
    """The model that investigated (as requested); its own verdict is one of the judges' records. `team` for a
    research team's pooled evidence (who did what is in `team`)."""
    status: str
    """ok; timeout or incomplete (what was gathered before the time ran out or a reply was cut off, still judged);
    error or refused (nothing fit to judge: the judges' records are errors, and a resume investigates again)."""
    timestamp: str
    steps: list[dict[str, str]] = field(default_factory=list)
    """Each tool call in order, whole: {tool, arguments (the JSON text the model wrote), result (the text it got)}.
    What every judge reads (fanout.research.shared.evidence_turns); the investigator's closing summary is not kept."""
    tool_calls: list[ToolCallLog] = field(default_factory=list)
    """The calls as the provenance check reads them: a fetched final_url is what a judge may cite as verified."""
    references: list[str] = field(default_factory=list)
    """The prefetched reference URLs the edit's context showed every judge."""
    tool_protocol: str = "native"
    token_usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    cost_source: str | None = None
    served_model: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    duration_s: float | None = None
    team: TeamEvidence | None = None
    """Under --evidence team: who planned and researched, the brief, each pooled page with every worker that found
    it, the workers' notes and the aggregator's summary. None (and left out of the line) for a shared investigation,
    so its lines read as they always did. The cost of a team's evidence is its steps' (team.jsonl), counted there."""

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        if self.team is None:
            del data["team"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvidenceRecord:
        data = dict(data)
        data["tool_calls"] = [ToolCallLog(**t) for t in data.get("tool_calls") or []]
        data["token_usage"] = Usage(**(data.get("token_usage") or {}))
        data["team"] = TeamEvidence.from_dict(data["team"]) if isinstance(data.get("team"), dict) else None
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    @builtins.property
    def judgeable(self) -> bool:
        """Whether judges may read it; an error or refusal gave nothing fit to judge, and a resume investigates again."""
        return self.status not in ("error", "refused")


# --- a research team (--evidence team) -----------------------------------------------------------------

TEAM_ROLES: tuple[str, ...] = ("planner", "worker", "aggregator")
"""The roles of a research team's steps (seed 003): who plans, who researches, who summarises."""


@dataclass
class TeamStep:
    """One finished step of a research team's work on one item: a line of team.jsonl (fanout.store.team_log).

    Appended and fsynced as the step finishes, before the next step that reads
    it starts, so a kill never loses a step that was paid for: the next start
    finds the line and goes on from there. Its cost is counted here, once,
    never again in the pooled evidence that is made of it.
    """

    edit_rcid: int
    step: str
    """Which step of the item's team work: `plan-1`, `work-1-2` (round 1, the second worker), `plan-2` (the
    planner's review after the workers reported), `work-2-1`, `aggregate`."""
    role: str
    """planner, worker or aggregator (TEAM_ROLES)."""
    model: str
    round: int
    status: str
    """A planner's: ok, invalid (no brief fit the schema after the repair turn), or how the call ended (timeout,
    error, refused); a worker's as an investigation's (ok, timeout, incomplete, error, refused); an aggregator's
    ok or how its call ended."""
    timestamp: str
    finished_ns: int = 0
    """When the step was logged (ns since the epoch): an in-flight file of the step started before it is settled."""
    brief: dict[str, Any] | None = None
    """A planner's brief as validated: sub_questions, queries, pages, missing."""
    raw: str | None = None
    """A planner's last reply when it stayed invalid."""
    steps: list[dict[str, str]] = field(default_factory=list)
    """A worker's tool calls with their whole results, in order (as EvidenceRecord.steps)."""
    tool_calls: list[ToolCallLog] = field(default_factory=list)
    notes: str | None = None
    """A worker's closing notes; the aggregator's summary."""
    tool_protocol: str = "native"
    token_usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    cost_source: str | None = None
    served_model: str | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    duration_s: float | None = None

    @builtins.property
    def key(self) -> tuple[int, str]:
        return (self.edit_rcid, self.step)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TeamStep:
        data = dict(data)
        data["tool_calls"] = [ToolCallLog(**t) for t in data.get("tool_calls") or []]
        data["token_usage"] = Usage(**(data.get("token_usage") or {}))
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class PooledPage:
    """A page the team's workers read, once however many read it (by canonical URL)."""

    url: str
    """Its canonical form (fanout.tools.fusion.canonical_url): what two spellings of one page share."""
    fetched: str
    """The URL as the first worker that read it asked for it."""
    found_by: list[str] = field(default_factory=list)
    """Every worker that read it, in the team's order."""
    round: int = 1
    """The first round it was read in: 2 means the planner's second round found it."""


@dataclass
class WorkerNotes:
    """What one worker did in one round, in brief: the pooled record keeps its notes, its steps are in team.jsonl."""

    model: str
    round: int
    status: str
    notes: str | None = None
    searches: int = 0
    fetches: int = 0
    error: str | None = None


@dataclass
class TeamEvidence:
    """The team part of a pooled evidence record (EvidenceRecord.team)."""

    planner: str
    workers: list[str]
    aggregator: str | None = None
    brief: dict[str, Any] | None = None
    """The planner's first brief; None when it stayed invalid (or the planner failed): then each worker researched
    the item as a lone investigator would."""
    brief_status: str = "ok"
    brief_error: str | None = None
    second_brief: dict[str, Any] | None = None
    """The planner's review after the workers reported, when it named something still missing."""
    rounds: int = 1
    """Rounds of research done: 2 when the review sent the workers out again."""
    pages: list[PooledPage] = field(default_factory=list)
    workers_notes: list[WorkerNotes] = field(default_factory=list)
    summary: str | None = None
    """The aggregator's summary of the workers' notes (shown to the judges after the evidence, marked as such)."""
    summary_status: str | None = None
    step_ids: list[str] = field(default_factory=list)
    """The team.jsonl steps this evidence was made of (their costs are counted there)."""
    role_costs: dict[str, float] = field(default_factory=dict)
    """Known cost per role (planner, worker, aggregator), summed over the steps."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TeamEvidence:
        data = dict(data)
        data["pages"] = [PooledPage(**p) for p in data.get("pages") or []]
        data["workers_notes"] = [WorkerNotes(**w) for w in data.get("workers_notes") or []]
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


# --- what a line may hold (fanout.base.schema): checked by every reader, a line that breaks it set aside -------------

COST_SOURCES = ("reported", "generation", "estimated", "unknown")
_COST_USD = optional(number(low=0))
_USAGE = record({k: whole(low=0) for k in ("prompt_tokens", "completion_tokens", "turns", "cached_tokens",
                                           "cache_write_tokens")}, what="token count")
_TOOL_CALL = record({"turn": whole(), "tool": text(), "arguments": text(), "result": text(), "ok": flag(),
                     "final_url": optional(text())}, ("turn", "tool", "arguments", "result", "ok"), "tool call")
_SOURCE = record({"url": text(), "supports_claim": flag(), "provenance": one_of(PROVENANCES),
                  "fetched": optional(flag()), "claimed_verified": flag(), "prefetched": flag()},
                 ("url", "supports_claim", "provenance"), "source")
_TRANSCRIPT = record({"role": text(), "content": optional(text()), "tool_calls": list_of(record({}, what="call")),
                      "tool_call_id": optional(text())}, ("role",), "message")
_SAMPLE = record({"verdict": optional(one_of(VERDICTS)), "label_order": list_of(text()),
                  "evidence_order": list_of(whole()), "status": one_of(STATUSES), "rationale": optional(text()),
                  "confidence": optional(number(low=0, high=1))}, ("verdict", "label_order", "evidence_order", "status"),
                 "sample")
_OPTIONAL_TEXT = optional(text())
VERDICT_LINE = record({
    "model": text(empty=False), "edit_rcid": whole(), "edit_revid": whole(), "qid": text(),
    "property": _OPTIONAL_TEXT, "diff_type": _OPTIONAL_TEXT, "timestamp": text(), "status": one_of(STATUSES),
    "verdict": optional(one_of(VERDICTS)), "rationale": _OPTIONAL_TEXT, "sources": list_of(_SOURCE),
    "token_usage": optional(_USAGE), "cost_usd": _COST_USD, "cost_source": optional(one_of(COST_SOURCES)),
    "timeout": flag(), "served_model": _OPTIONAL_TEXT, "edit_timestamp": _OPTIONAL_TEXT, "error": _OPTIONAL_TEXT,
    "raw_verdict": _OPTIONAL_TEXT, "warnings": list_of(text()), "tool_calls": list_of(_TOOL_CALL),
    "transcript": list_of(_TRANSCRIPT), "duration_s": optional(number(low=0)), "investigation_cut_off": flag(),
    "tool_protocol": text(), "rule_violations": list_of(text()), "strategy": text(), "aspect": _OPTIONAL_TEXT,
    "escalation": optional(record({"step": whole(low=1), "reason": text()}, ("step", "reason"), "escalation")),
    "samples": list_of(_SAMPLE), "stability": optional(number(low=0, high=1)),
    "confidence": optional(number(low=0, high=1)), "evidence_id": _OPTIONAL_TEXT,
}, ("model", "edit_rcid", "edit_revid", "qid", "property", "diff_type", "timestamp", "status"), "verdict record")
"""A line of checkpoint.jsonl: a VerdictRecord as log_line writes it."""
EVIDENCE_LINE = record({
    "evidence_id": text(empty=False), "edit_rcid": whole(), "investigator": text(empty=False),
    "status": one_of(STATUSES), "timestamp": text(), "steps": list_of(record({}, what="step")),
    "tool_calls": list_of(_TOOL_CALL), "references": list_of(text()), "tool_protocol": text(),
    "token_usage": optional(_USAGE), "cost_usd": _COST_USD, "cost_source": optional(one_of(COST_SOURCES)),
    "served_model": _OPTIONAL_TEXT, "error": _OPTIONAL_TEXT, "warnings": list_of(text()),
    "duration_s": optional(number(low=0)), "team": optional(record({}, what="team evidence")),
}, ("evidence_id", "edit_rcid", "investigator", "status", "timestamp"), "evidence record")
"""A line of evidence.jsonl: an EvidenceRecord (a shared investigation's, or a research team's pooled evidence)."""
TEAM_LINE = record({
    "edit_rcid": whole(), "step": text(empty=False), "role": one_of(TEAM_ROLES), "model": text(empty=False),
    "round": whole(low=1), "status": text(empty=False), "timestamp": text(), "finished_ns": whole(low=0),
    "brief": optional(record({}, what="brief")), "raw": _OPTIONAL_TEXT, "steps": list_of(record({}, what="step")),
    "tool_calls": list_of(_TOOL_CALL), "notes": _OPTIONAL_TEXT, "tool_protocol": text(),
    "token_usage": optional(_USAGE), "cost_usd": _COST_USD, "cost_source": optional(one_of(COST_SOURCES)),
    "served_model": _OPTIONAL_TEXT, "error": _OPTIONAL_TEXT, "warnings": list_of(text()),
    "duration_s": optional(number(low=0)),
}, ("edit_rcid", "step", "role", "model", "round", "status", "timestamp"), "team step")
"""A line of team.jsonl: a TeamStep."""


def check_evidence(line: bytes) -> tuple[EvidenceRecord | None, str | None]:
    """The evidence record a line holds and None, or None and what is wrong with the line."""
    problem, data = checked_json(line, EVIDENCE_LINE)
    if problem is not None:
        return None, problem
    try:
        return EvidenceRecord.from_dict(data), None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        return None, f"not an evidence record ({type(exc).__name__})"
