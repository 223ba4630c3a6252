"""Reading a run directory for analysis, without changing anything in it.

The run's own reader (fanout.store.checkpoint) repairs a torn tail and refuses a
damaged middle line, which is right before resuming a run. A report only
reads: it skips what it cannot parse, counts it, and says so, so a report can
be made of a run that is still going or that crashed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fanout.stats.spend import AttemptCost
from fanout.base.reading import load_yaml
from fanout.llm.models import ModelSpec, model_spec
from fanout.base.errors import ConfigError
from fanout.base.records import EvidenceRecord, TeamStep, VerdictRecord
from fanout.store.attempts import read_abandoned
from fanout.store.evidence_log import read_evidence
from fanout.store.layout import LOG_NAME, MANIFEST_NAME, run_file
from fanout.store.lines import Damage, Line, damage_note, damage_notes, open_line_file, scan_lines
from fanout.store.prepared import read_prepared
from fanout.store.team_log import parse_step_attempt, read_team_steps
from fanout.research.prepare import PREPARATION_SUFFIX
from fanout.base.item import DEFAULT_WORKLOAD



@dataclass(frozen=True)
class EditInfo:
    """What the report shows about an edit, taken from its first record."""

    rcid: int
    qid: str
    property: str | None
    diff_type: str | None
    edit_timestamp: str | None
    revid: int | None = None
    """The revision the edit made: its diff on Wikidata."""
    diffable: bool = True
    """Whether the item is a Wikidata edit whose revision has a diff there (SIFT-Patrol's); another workload's item
    says where a reader checks it in its own words (fanout.base.item.Change.link)."""


@dataclass
class RunData:
    """The latest record per (edit, model) of one run, and what could not be read."""

    run_dir: Path
    records: list[VerdictRecord]
    models: list[str]
    """Models in the manifest's order, then any others in first-logged order."""
    edits: list[EditInfo]
    """Edits in first-logged order (the run is edit-major, so snapshot order)."""
    edits_in_scope: int | None = None
    """The manifest's edit count: what a finished run would cover."""
    warnings: list[str] = field(default_factory=list)
    earlier_attempts: list[AttemptCost] = field(default_factory=list)
    """Paid-for attempts that are not the latest of their pair: superseded in the log, or cut off by a stop
    (abandoned.jsonl)."""
    snapshot_path: Path | None = None
    """The snapshot the manifest says the run started from (what each edit changed is there)."""
    prices: dict[str, ModelSpec] = field(default_factory=dict)
    """Each model's prices as the run had them (the manifest: the table and --limits), over the table's."""
    manifest: dict[str, Any] = field(default_factory=dict)
    """The manifest as read (empty without one): its settings say how the run chose and asked its models."""

    evidence: dict[str, Any] = field(default_factory=lambda: {"mode": "own"})
    """The manifest's --evidence entry: {mode: own}, {mode: shared, investigator: M} or {mode: team, planner: P,
    workers: [...], aggregator: A, rounds: N}."""
    investigations: list[AttemptCost] = field(default_factory=list)
    """Under shared evidence, each investigation paid for (evidence.jsonl, and any cut off by a stop), by investigator;
    under a team, each step paid for (team.jsonl, and any cut off by a stop), by its model."""
    investigation_usd: dict[int, float] = field(default_factory=dict)
    """Under shared evidence, the known cost of each edit's investigations (a team's: of its steps)."""
    team_evidence: dict[int, EvidenceRecord] = field(default_factory=dict)
    """Under --evidence team, each edit's latest pooled evidence (the brief, who found each page, the notes)."""
    team_steps: list[TeamStep] = field(default_factory=list)
    """Under --evidence team, every step logged (team.jsonl), in log order: what each role did and cost."""
    evidence_ids: set[str] = field(default_factory=set)
    """The ids of every investigation in evidence.jsonl (what a verdict may cite)."""
    preparations: int = 0
    """How many of `investigations` are a workload's preparation (texts split into claims, cut-off ones included)."""
    preparation_usd: dict[str, float] = field(default_factory=dict)
    """A workload's preparation (the claims workload: splitting each text), its known cost by unit (the text's id);
    each preparation is in `investigations` too, under the model that did it."""

    @property
    def workload(self) -> str:
        """The run's workload as its manifest names it (none: the default, SIFT-Patrol)."""
        name = self.manifest.get("workload")
        return name if isinstance(name, str) and name else DEFAULT_WORKLOAD

    def missing_evidence(self) -> dict[int, list[str]]:
        """Edit -> the models whose verdict cites evidence that evidence.jsonl does not hold (lost or deleted)."""
        found: dict[int, list[str]] = {}
        for r in self.records:
            if r.evidence_id is not None and r.evidence_id not in self.evidence_ids:
                found.setdefault(r.edit_rcid, []).append(r.model)
        return found

    def mixed_evidence(self) -> list[int]:
        """Edits whose verdicts rest on more than one investigation (a resume reinvestigated some of them)."""
        cited: dict[int, set[str]] = {}
        for r in self.records:
            if r.evidence_id is not None:
                cited.setdefault(r.edit_rcid, set()).add(r.evidence_id)
        return [rcid for rcid, ids in cited.items() if len(ids) > 1]

    def planned_models(self) -> list[str]:
        """Every model the run was started with (the manifest's), then any other that logged a record: a
        strategy may have asked some of them nothing yet, and `models` holds only those with a record."""
        return list(dict.fromkeys(manifest_models(self.manifest) + self.models))

    def simulated(self) -> bool:
        """Whether the run's models were fanout's simulator, as its manifest shows: one loopback server
        answering the chat API at /api/v1 and search at its root, which is how `fanout sim` serves (and what
        `make demo` and the docs' examples pass). A real endpoint is never that shape."""
        settings = self.manifest.get("settings")
        if not isinstance(settings, dict):
            return False
        base, search = settings.get("base_url"), settings.get("searxng_url")
        if not isinstance(base, str) or not isinstance(search, str):
            return False
        host = urlsplit(base).hostname or ""
        return base.rstrip("/") == search.rstrip("/") + "/api/v1" and host in ("127.0.0.1", "localhost", "::1")

    def strategy_settings(self) -> dict[str, Any] | None:
        """The manifest's `settings.strategy` (the strategy's name and settings), None when it has none."""
        settings = self.manifest.get("settings")
        found = settings.get("strategy") if isinstance(settings, dict) else None
        return found if isinstance(found, dict) else None

    def by_edit(self) -> dict[int, dict[str, VerdictRecord]]:
        table: dict[int, dict[str, VerdictRecord]] = {e.rcid: {} for e in self.edits}
        for record in self.records:
            table[record.edit_rcid][record.model] = record
        return table


def load_run(run_dir: Path) -> RunData:
    """Every latest record of a run; ConfigError when there is nothing to report on."""
    run_dir = Path(run_dir)
    log = _log_of(run_dir)
    records, warnings, earlier = read_latest_records(log)
    if not records:
        raise ConfigError(f"{log} holds no verdicts yet; run `fanout run ... --run-dir {run_dir}` first.")
    manifest = _read_manifest(run_dir / MANIFEST_NAME, warnings)
    models = _model_order(manifest, records)
    edits_in_scope = manifest.get("edits") if isinstance(manifest.get("edits"), int) else None
    abandoned = [AttemptCost(a.model, a.cost_usd, a.cost_source) for a in read_abandoned(run_dir)]
    earlier += [a for a in abandoned if not is_investigation(a.model) and not a.model.endswith(PREPARATION_SUFFIX)]
    snapshot = manifest.get("snapshot_path")
    snapshot_path = Path(snapshot) if isinstance(snapshot, str) and snapshot else None
    diffable = manifest.get("workload", DEFAULT_WORKLOAD) == DEFAULT_WORKLOAD
    run = RunData(run_dir, records, models, _edits(records, diffable), edits_in_scope, warnings, earlier,
                  snapshot_path, _prices(manifest, models), manifest)
    _read_investigations(run, manifest, abandoned)
    _read_preparations(run, abandoned)
    warnings += damage_notes(run_dir, {LOG_NAME: []})  # every other log of the run: evidence, reviews, ...
    return run


def _log_of(run_dir: Path) -> Path:
    """The run directory's log; ConfigError, saying what to pass instead, when it is no run directory."""
    if run_dir.is_file():
        raise ConfigError(f"{run_dir} is a file; pass the run directory that holds it (the --run-dir of a "
                          f"`fanout run`): fanout report {run_dir.parent}")
    if not run_dir.is_dir():
        raise ConfigError(f"run directory {run_dir} does not exist; pass the --run-dir of a `fanout run`.")
    log = run_dir / LOG_NAME
    if not log.exists():
        raise ConfigError(f"{run_dir} has no {LOG_NAME}; is it the --run-dir of a `fanout run`?")
    return log


INVESTIGATION_SUFFIX = " (investigation)"
"""How a shared investigation's in-flight calls are named (fanout.engine.clients.investigation_key)."""


def is_investigation(attempt: str) -> bool:
    """Whether an abandoned attempt was evidence-making (a shared investigation, a team step), not a verdict."""
    return attempt.endswith(INVESTIGATION_SUFFIX) or parse_step_attempt(attempt) is not None


def investigator_of(attempt: str) -> str:
    """The model of an abandoned investigation or team step."""
    step = parse_step_attempt(attempt)
    return step[0] if step is not None else attempt.removesuffix(INVESTIGATION_SUFFIX)


def _read_investigations(run: RunData, manifest: dict[str, Any], abandoned: list[AttemptCost]) -> None:
    """A shared or team run's evidence mode and what its investigations (or team steps) cost, apart from the
    verdicts (no model's record); a team's pooled evidence, whose cost is its steps'."""
    settings = manifest.get("settings")
    evidence = settings.get("evidence") if isinstance(settings, dict) else None
    if isinstance(evidence, dict) and evidence.get("mode") in ("shared", "team"):
        run.evidence = dict(evidence)
    spent = run.investigation_usd
    for record in read_evidence(run.run_dir):
        run.evidence_ids.add(record.evidence_id)
        if record.team is not None:
            run.team_evidence[record.edit_rcid] = record
            continue
        run.investigations.append(AttemptCost(record.investigator, record.cost_usd, record.cost_source))
        spent[record.edit_rcid] = spent.get(record.edit_rcid, 0.0) + (record.cost_usd or 0.0)
    for step in read_team_steps(run.run_dir):
        run.team_steps.append(step)
        run.investigations.append(AttemptCost(step.model, step.cost_usd, step.cost_source))
        spent[step.edit_rcid] = spent.get(step.edit_rcid, 0.0) + (step.cost_usd or 0.0)
    run.investigations += [AttemptCost(investigator_of(a.model), a.cost_usd, a.cost_source)
                           for a in abandoned if is_investigation(a.model)]


def _read_preparations(run: RunData, abandoned: list[AttemptCost]) -> None:
    """What a workload's preparation cost (prepared.jsonl, and calls cut off by a stop), with the investigations:
    paid before any verdict, under the model that did the work."""
    lines = read_prepared(run.run_dir)  # its damaged lines: named with every log's (damage_notes)
    for line in lines:
        run.investigations.append(AttemptCost(line.model, line.cost_usd, line.cost_source))
        run.preparation_usd[line.unit] = run.preparation_usd.get(line.unit, 0.0) + (line.cost_usd or 0.0)
    cut_off = [AttemptCost(a.model.removesuffix(PREPARATION_SUFFIX), a.cost_usd, a.cost_source)
               for a in abandoned if a.model.endswith(PREPARATION_SUFFIX)]
    run.investigations += cut_off
    run.preparations = len(lines) + len(cut_off)


def read_latest_records(log: Path) -> tuple[list[VerdictRecord], list[str], list[AttemptCost]]:
    """The last record per key, in first-logged order, a warning per skipped line, and the cost of each
    record a later one superseded (a retried attempt was paid for too)."""
    latest: dict[tuple[int, str], VerdictRecord] = {}
    superseded: list[AttemptCost] = []
    warnings: list[str] = []
    damaged: list[Damage] = []
    opened = open_line_file(log, run_file(LOG_NAME), missing_ok=False)
    assert opened is not None
    with opened:
        for item in scan_lines(opened, run_file(LOG_NAME)):
            record = _record(item.data) if isinstance(item, Line) else None
            if record is None:
                damaged.append(item if isinstance(item, Damage) else Damage(*item[:3], False, "not a verdict record"))
                continue
            previous = latest.get(record.key)
            if previous is not None:
                superseded.append(AttemptCost(previous.model, previous.cost_usd, previous.cost_source))
            latest[record.key] = record
    if any(d.torn for d in damaged):
        warnings.append(f"{log.name}: ignored a torn last line (a crash mid-write)")
    note = damage_note(log.name, [d for d in damaged if not d.torn])
    return list(latest.values()), warnings + ([note] if note else []), superseded


def _record(data: dict[str, Any]) -> VerdictRecord | None:
    try:
        return VerdictRecord.from_dict(data)
    except (ValueError, TypeError, KeyError, AttributeError):  # a nested part of another shape
        return None


def _read_manifest(path: Path, warnings: list[str]) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = load_yaml(path, path.name)
    except ConfigError as exc:
        warnings.append(f"{exc}; model order from the log")
        return {}
    return data if isinstance(data, dict) else {}


PRICE_FIELDS = ("input_price", "output_price", "cached_input_price", "cache_write_price")


def _prices(manifest: dict[str, Any], models: list[str]) -> dict[str, ModelSpec]:
    """The prices the run started with, per model, over the table's (a manifest without them leaves the table's)."""
    settings = manifest.get("settings")
    listed = settings.get("models") if isinstance(settings, dict) else None
    prices = {}
    for model in models:
        fields = listed.get(model) if isinstance(listed, dict) else None
        given = {k: v for k, v in fields.items() if k in PRICE_FIELDS} if isinstance(fields, dict) else {}
        try:
            prices[model] = model_spec(model, **given)
        except ConfigError:  # a price edited into something invalid: the table's, if it has the model
            continue
    return prices


def manifest_models(manifest: Mapping[str, Any]) -> list[str]:
    """The models a manifest lists (a name, or a mapping with one), in its order, each once."""
    listed = manifest.get("models")
    if not isinstance(listed, list):
        return []
    names = [item.get("name") if isinstance(item, dict) else item for item in listed]
    return list(dict.fromkeys(name for name in names if isinstance(name, str)))


def _model_order(manifest: Mapping[str, Any], records: list[VerdictRecord]) -> list[str]:
    order = manifest_models(manifest)
    logged = list(dict.fromkeys(r.model for r in records))
    # A model named in the manifest but without a single record says nothing; leave it out.
    return [m for m in order if m in logged] + [m for m in logged if m not in order]


def _edits(records: list[VerdictRecord], diffable: bool = True) -> list[EditInfo]:
    edits: dict[int, EditInfo] = {}
    for r in records:
        if r.edit_rcid not in edits:
            edits[r.edit_rcid] = EditInfo(r.edit_rcid, r.qid, r.property, r.diff_type, r.edit_timestamp, r.edit_revid,
                                          diffable)
    return list(edits.values())
