"""One report of a run, as built: its options, every table, the totals and the notes; `to_json` is `report --json`.

Built by fanout.report.build (each table by its registered builder,
fanout.report.builders), then rendered by terminal.py (the summary),
first_page.py and edit_pages.py (the HTML report), `to_json` (tables as lists
of flat row dicts, ready for pandas.DataFrame or duckdb) and `edit_table`
(`report --csv`). Each table's rows and columns are defined once, in
fanout.report.columns.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from fanout.base.item import Editor
from fanout.base.version import __version__
from fanout.judging.policy import Thresholds
from fanout.report.change import Change, change_text, item_link, link_text
from fanout.report.claims_rows import factuality_documents
from fanout.report.columns import Context, EditRow, edit_columns, edit_rows, mean_confidence_words
from fanout.report.fmt import short_names
from fanout.report.guarantee import GuaranteeSettings, People
from fanout.report.run_data import EditInfo, RunData
from fanout.report.table import Scalar, Table
from fanout.report.truth import Labels
from fanout.stats.calibration import MIN_CALIBRATE, Bin
from fanout.stats.dawid_skene import MIN_EDITS, DawidSkene
from fanout.stats.decisions import EditDecision, QueuePolicy
from fanout.stats.spend import ModelCost
from fanout.stats.uncertainty import RESAMPLES
from fanout.store.reviews import ReviewLog, reviews_path

NOTE_TOPICS = ("sample", "accuracy", "committee", "replay", "edits", "human", "guarantee")
"""sample: the whole report (how many edits); accuracy: the scores against labels; committee: its
decisions; replay: the policy replay table; edits: what the edit table can show; human: the scores
against human decisions (reviews.jsonl); guarantee: the certificates and the accuracy from few labels."""


@dataclass(frozen=True)
class ReportOptions:
    labels_path: Path | None = None
    project_edits: int = 500
    policy: QueuePolicy = field(default_factory=QueuePolicy)
    thresholds: Thresholds = field(default_factory=Thresholds)
    """When an edit pauses for a human or passes on its own (on top of `policy`'s queue reasons)."""
    policy_path: Path | None = None
    """A --policy file: its cascades and routers are replayed over the run (fanout.stats.replay)."""
    rule_violations: str = "abstain"
    """`abstain`: a verdict that breaks the prompt's rules (a verified-* verdict with no verified
    source) casts no committee vote, as if the model had given none, because the rule is what makes
    the word `verified` worth trusting; `count`: it votes like any other. Agreement tables and
    each model's own accuracy always use the verdict as given."""
    resamples: int = RESAMPLES
    """Bootstrap resamples behind the agreement intervals; 0 leaves them out (the review desk shows none,
    and they are most of a large report's time: 20 of 24 s for 500 edits x 4 models)."""
    calibrate: bool = True
    """With labels, the thresholds read each model's confidence through its isotonic calibration map,
    fitted on its other labelled edits (fanout.stats.calibration); False: as stated or measured."""
    calibrate_from: int = MIN_CALIBRATE
    """Labelled verdicts with a confidence a model needs before the thresholds read its calibrated confidence."""
    sources: Mapping[str, str] = field(default_factory=dict)
    """The thresholds an environment variable gave (seed 003's JUDGE_* names), by option: recorded in the report's
    settings; a threshold not named here came from its flag or its default."""
    guarantee: GuaranteeSettings = field(default_factory=GuaranteeSettings)
    """--target-agreement and --risk: certified auto-decisions in place of --autopass (fanout.report.guarantee)."""


class ReportTables(Mapping[str, Table[Any]]):
    """Every table of the report, by the name `report --json` gives it, in the order the builders were registered
    (fanout.report.builders): a new table is a new key, with nothing to declare here."""

    def __init__(self, tables: Mapping[str, Table[Any]]) -> None:
        self._tables = dict(tables)

    def __getitem__(self, name: str) -> Table[Any]:
        return self._tables[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tables)

    def __len__(self) -> int:
        return len(self._tables)

    def replaced(self, name: str, table: Table[Any]) -> ReportTables:
        """The same tables with `name`'s replaced (its place in the order kept)."""
        if name not in self._tables:
            raise KeyError(name)
        return ReportTables({**self._tables, name: table})

    def json(self) -> dict[str, list[dict[str, Scalar]]]:
        return {name: table.json() for name, table in self._tables.items()}


class EditWords(NamedTuple):
    """An edit as people read it (the queue, the review desk), from the run's snapshot where it still describes
    the edit (fanout.report.change); None where it does not, or the edit has no such part."""

    item: str | None
    """The item's label, like `Douglas Adams`."""
    what: str | None
    """What was edited (`date of birth (P569)`); the property or kind of change when the snapshot is silent."""
    old: str | None
    new: str | None
    change: str
    """`old → new` in plain text (the kind of change when the snapshot is silent)."""
    diff_url: str | None
    """Where a reader checks the item: the edit's diff on Wikidata (None without a revision), or the link its
    workload names (a claim's source)."""
    link_text: str = "diff"
    """What that link is: `diff`, or the workload's word (`source`)."""
    editor: Editor | None = None
    """Who made it, as the snapshot says (anonymous, new, edit count where it has one)."""
    history_url: str | None = None
    """The item's history on Wikidata."""
    undo_url: str | None = None
    """Where to undo the edit on Wikidata."""


@dataclass
class Report:
    run: RunData
    options: ReportOptions
    labels: Labels | None
    consensus: DawidSkene
    decisions: list[EditDecision]
    costs: list[ModelCost]
    tables: ReportTables
    totals: dict[str, Any]
    notes_on: dict[str, list[str]]
    """Notes that qualify the figures, by what they qualify (NOTE_TOPICS), so a page can show each beside them."""
    generated_at: str
    changes: dict[int, Change] = field(default_factory=dict)
    """What each edit changed, for the edits the run's snapshot still describes."""
    reviews: ReviewLog = field(default_factory=lambda: ReviewLog([]))
    """The run's human decisions (reviews.jsonl of `fanout review`): a truth source of its own
    (fanout.stats.human_decisions)."""
    calibration_bins: dict[str, list[Bin]] = field(default_factory=dict)
    """Model -> the bins of its reliability diagram (fanout.stats.calibration), with labels."""
    people: People | None = None
    """Who decided (reviews.jsonl or a labels file), and which decisions are the random sample."""
    confidence_read: str = "stated"
    """What the models' mean confidence averages in this run (fanout.report.columns.confidence_read)."""

    @property
    def models(self) -> list[str]:
        return self.run.models

    @property
    def mean_confidence_words(self) -> str:
        """The models' mean confidence named for what it averages: `mean stated confidence` in most runs."""
        return mean_confidence_words(self.confidence_read)

    @property
    def dawid_skene_queues(self) -> bool:
        """Whether Dawid–Skene's posterior queues edits (--min-confidence): from MIN_EDITS answered edits on."""
        return len(self.consensus.posteriors) >= MIN_EDITS

    def table(self, name: str) -> list[dict[str, Any]]:
        """A table's rows as its JSON has them (by the name `report --json` gives the table): for the charts and
        for a reader of the data; the tables themselves render `tables`."""
        return list(self.tables[name].json())

    def edit_table(self, edit_pages: str = "report/edits") -> Table[EditRow]:
        """One row per edit, in the run's order: what changed, the truth, each model's verdict and cost, and the
        committee's decision (`report --csv`, and the page's edit table, whose cells link the edit pages in
        `edit_pages`)."""
        ctx = Context(short_names(self.models), self.options.project_edits, self.changes, edit_pages,
                      self.options.rule_violations, self.confidence_read)
        rows = edit_rows(self.run.edits, self.tables["committee"].rows, self.run.by_edit(), self.changes)
        return Table(edit_columns(ctx, self.models, self.labels is not None,
                                  self.labels.sources if self.labels is not None else None), rows)

    def edit_words(self, edit: EditInfo) -> EditWords:
        change = self.changes.get(edit.rcid)
        return EditWords(
            item=change.item_label if change else None,
            what=change.what if change else (edit.property or edit.diff_type),
            old=change.old if change else None,
            new=change.new if change else None,
            change=change_text(change, edit.diff_type),
            diff_url=item_link(edit, change),
            link_text=link_text(change),
            editor=change.editor if change else None,
            history_url=change.history_url if change else None,
            undo_url=change.undo_url if change else None,
        )

    @property
    def notes(self) -> list[str]:
        return [note for topic in NOTE_TOPICS for note in self.notes_on.get(topic, [])]

    def to_json(self) -> dict[str, Any]:
        return {
            "fanout_version": __version__,
            "generated_at": self.generated_at,
            "run_dir": str(self.run.run_dir),
            "models": self.models,
            "edits": len(self.run.edits),
            "edits_in_scope": self.run.edits_in_scope,
            "simulated": self.run.simulated(),
            "records": len(self.run.records),
            "labels": self._labels_json(),
            "human_decisions": human_source(self.reviews, self.run.run_dir, [e.rcid for e in self.run.edits]),
            "guarantee": self._guarantee_json(),
            "settings": self._settings_json(),
            "totals": self.totals,
            "notes": self.notes,
            "warnings": self.run.warnings,
            "tables": self.tables.json(),
            "calibration_bins": {m: [b._asdict() for b in bins] for m, bins in self.calibration_bins.items()},
            **self._factuality_json(),
        }

    def _factuality_json(self) -> dict[str, Any]:
        """Seed 004's fields per text (fanout.report.claims_rows), for a run whose items are claims; else nothing."""
        if "factuality" not in self.tables or not self.tables["factuality"].rows:
            return {}
        return {"factuality": factuality_documents(self.tables["factuality"], self.tables["claim_verdicts"])}

    def _guarantee_json(self) -> dict[str, Any]:
        """Who the certificates and the accuracy from few labels rest on, and whether the certificates decide."""
        g = self.options.guarantee
        people = self.people.json() if self.people is not None else {}
        return {**people, "target_agreement": g.target, "risk": g.risk, "applied": g.applied}

    def _labels_json(self) -> dict[str, Any] | None:
        if self.labels is None:
            return None
        found = {"path": str(self.labels.path), "kind": self.labels.kind,
                 "labelled_edits": self.totals["labelled_edits"], "skipped_entries": self.labels.skipped}
        if self.labels.sources:  # a watched run's: which source each label came from
            found["sources"] = {str(rcid): source for rcid, source in sorted(self.labels.sources.items())}
        return found

    def _settings_json(self) -> dict[str, Any]:
        options = self.options
        return {
            "rule_violations": options.rule_violations,
            "min_agreement": options.policy.min_agreement,
            "min_confidence": options.policy.min_confidence,
            "quorum": options.policy.quorum,
            "pause": options.thresholds.pause,
            "delta": options.thresholds.delta,
            "autopass": options.thresholds.autopass,
            "calibrate": options.calibrate,
            "target_agreement": options.guarantee.target_agreement,
            "risk": options.guarantee.risk,
            "project_edits": options.project_edits,
            "policy": None if options.policy_path is None else str(options.policy_path),
            **({"sources": dict(options.sources)} if options.sources else {}),
        }


def human_source(reviews: ReviewLog, run_dir: Path, keys: Collection[int]) -> dict[str, Any]:
    """The human decisions as the report names them: the file, how many of the run's edits they decide (`keys`:
    the run's edits; a decision on another edit is not counted), who decided. The queue, the desk and compare
    count decided edits the same way."""
    wanted = set(keys)
    latest = {rcid: r for rcid, r in reviews.latest.items() if rcid in wanted}
    edits = len(wanted)
    counts = {d: sum(r.decision == d for r in latest.values()) for d in ("accept", "reject", "unsure")}
    return {"path": str(reviews_path(run_dir)), "decisions": len(reviews.decisions),
            "undone": len(reviews.history) - len(reviews.decisions), "edits_decided": len(latest),
            "edits": edits, **counts, "reviewers": sorted({r.reviewer for r in latest.values() if r.reviewer}), "skipped_lines": reviews.skipped}
