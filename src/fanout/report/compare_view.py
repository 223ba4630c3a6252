"""Two runs over the same edits, compared pair by pair: `fanout compare RUN_A RUN_B`.

A user who changes the prompt, the models, the strategy, the evidence or the
number of samples wants to know what the change did, on the same edits. Each
model and each committee rule is scored in each run, with that run's labels
(named; --labels gives both the same file), on the edits both runs judged,
and the runs are compared on the edits both label alike and both answered:
B - A with its 95 % interval (Newcombe's paired interval), the coverage (the
share of those labelled edits both answered) and McNemar's exact test (only
the edits one run got right and the other wrong tell them apart). Costs per
edit (a shared run's investigations counted in the committee's) and per
correct verdict, the edits whose decision flipped, how many edits people
decided in each run, and the settings that differ and change results (from
the manifests) complete the picture. A model one run did not ask reads "not in
this run".
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from fanout.base.safe_text import for_terminal
from fanout.report.charts import esc
from fanout.report.fmt import short_names, subject_name, usd, with_interval
from fanout.report.page_shell import notes_html, page, stance_html, truth_html
from fanout.report.document import Report
from fanout.base.records import VerdictRecord
from fanout.stats.decisions import COMMITTEE_RULES, EditDecision, rule_predictions
from fanout.stats.scoring import paired, score
from fanout.stats.uncertainty import DISTINGUISHABLE_P, mcnemar_exact_p, paired_difference_interval
from fanout.report.table import Column, Scalar, Table, fixed, money, share
from fanout.judging.scales import stance

DECISION = "decision"
"""The subject for the decision each run acts on: its strategy's settlement, else the Dawid–Skene consensus."""


@dataclass(frozen=True)
class Side:
    """One subject in one run, over the edits both runs judged."""

    predictions: Mapping[int, str | None]
    """rcid -> stance (None: no answer); only edits this subject has a record or decision for."""
    costs: Mapping[int, float]

    def cost_per_edit(self) -> float | None:
        return sum(self.costs.values()) / len(self.predictions) if self.predictions else None


EMPTY = Side({}, {})


@dataclass(frozen=True)
class CompareRow:
    """A model or committee rule in both runs: accuracy, agreement and cost in each, and the paired difference."""

    subject: str
    kind: str
    edits_a: int
    edits_b: int
    accuracy_a: float | None
    accuracy_b: float | None
    paired: int
    """Labelled edits both runs answered: the edits McNemar compares."""
    paired_accuracy_a: float | None
    paired_accuracy_b: float | None
    difference: float | None
    """paired_accuracy_b - paired_accuracy_a."""
    difference_low: float | None
    difference_high: float | None
    """Its 95 % interval (Newcombe's hybrid score interval for paired proportions)."""
    coverage: float | None
    """Share of the edits both runs label alike that both answered (the pairs the difference rests on)."""
    only_a_right: int
    only_b_right: int
    p_value: float | None
    distinguishable: bool
    agreement_a: float | None
    """A model's mean Cohen's kappa with the run's other models; None for a committee rule."""
    agreement_b: float | None
    cost_per_edit_a: float | None
    cost_per_edit_b: float | None
    cost_per_correct_a: float | None
    cost_per_correct_b: float | None
    in_a: bool = True
    """Whether run A has this subject (a model it asked); False: its cells read "not in this run"."""
    in_b: bool = True


@dataclass(frozen=True)
class FlipRow:
    """An edit whose decision differs between the runs."""

    rcid: int
    qid: str
    decision_a: str | None
    decision_b: str | None
    outcome_a: str
    outcome_b: str
    truth: str | None


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    shared: int
    rows: list[CompareRow]
    flips: list[FlipRow]
    notes: list[str]
    names: dict[str, str]

    def table(self) -> Table[CompareRow]:
        return Table(compare_columns(self.names), self.rows)

    def flip_table(self) -> Table[FlipRow]:
        return Table(FLIP_COLUMNS, self.flips)

    def to_json(self) -> dict[str, Any]:
        return {"run_a": self.run_a, "run_b": self.run_b, "shared_edits": self.shared, "notes": self.notes,
                "subjects": self.table().json(), "flipped": self.flip_table().json()}


NOT_IN_RUN = "not in this run"


def compare_columns(names: Mapping[str, str]) -> tuple[Column[CompareRow], ...]:
    def side(key: str, header: str, short: str, fmt: Callable[[Scalar], str], run: str) -> Column[CompareRow]:
        def show(r: CompareRow) -> str:
            return fmt(getattr(r, key)) if getattr(r, f"in_{run}") else NOT_IN_RUN
        return Column(key, header, short=short, show=show, value=lambda r: getattr(r, key))

    return (
        Column("subject", "subject", left=True, show=lambda r: subject_name(r.subject, dict(names))),
        Column("kind", "kind", short="", left=True),
        side("accuracy_a", "accuracy A", "acc A", fixed(2), "a"),
        side("accuracy_b", "accuracy B", "acc B", fixed(2), "b"),
        Column("paired", "labelled edits both answered", short="n both"),
        Column("coverage", "coverage", short="cov", fmt=share),
        Column("difference", "B − A (paired) [95 %]", short="B-A [95%]",
               show=lambda r: with_interval({"d": r.difference, "d_low": r.difference_low,
                                             "d_high": r.difference_high}, "d") if r.difference is not None else "–"),
        Column("p_value", "McNemar p", short="p", fmt=fixed(3)),
        side("agreement_a", "mean κ A", "κ A", fixed(2), "a"),
        side("agreement_b", "mean κ B", "κ B", fixed(2), "b"),
        side("cost_per_edit_a", "$/edit A", "$/edit A", money(4), "a"),
        side("cost_per_edit_b", "$/edit B", "$/edit B", money(4), "b"),
        side("cost_per_correct_a", "$/correct A", "$/correct A", money(4), "a"),
        side("cost_per_correct_b", "$/correct B", "$/correct B", money(4), "b"),
    )


FLIP_COLUMNS: tuple[Column[FlipRow], ...] = (
    Column("rcid", "rcid", left=True),
    Column("qid", "item", short="qid", left=True),
    Column("decision_a", "decision A", left=True, show=lambda f: f.decision_a or "–",
           html=lambda f: stance_html(f.decision_a)),
    Column("decision_b", "decision B", left=True, show=lambda f: f.decision_b or "–",
           html=lambda f: stance_html(f.decision_b)),
    Column("outcome_a", "outcome A", left=True),
    Column("outcome_b", "outcome B", left=True),
    Column("truth", "truth", left=True, show=lambda f: f.truth or "–", html=lambda f: truth_html(f.truth)),
)


def compare_reports(a: Report, b: Report, results_keys: Collection[str] | None = None) -> Comparison:
    """Every model and committee rule of either run, on the edits both judged; each run scored with its own labels
    (the same file when --labels gave one), paired on the edits both label alike. `results_keys`: the manifest's
    settings that change results (fanout.engine.settings.RunSettings.results_keys(), which the command line
    passes in); the others are not listed as differences. None lists every setting that differs."""
    shared = [e.rcid for e in a.run.edits if e.rcid in {x.rcid for x in b.run.edits}]
    labels = Labelled(_truth(a), _truth(b))
    side_a, side_b = _sides(a, shared), _sides(b, shared)
    kappa_a, kappa_b = _kappas(a), _kappas(b)
    subjects = list(dict.fromkeys([*a.models, *b.models]))
    rows = [_row(s, "model", side_a.get(s), side_b.get(s), labels, kappa_a.get(s), kappa_b.get(s)) for s in subjects]
    rows += [_row(rule, "committee", side_a[rule], side_b[rule], labels, None, None)
             for rule in (*COMMITTEE_RULES, DECISION)]
    flips = _flips(a, b, shared, labels.alike)
    names = short_names(subjects)
    notes = (_notes(a, b, shared, labels) + labels_notes(a, b) + people_notes(a, b) + evidence_notes(a, b)
             + setting_notes(a.run.manifest, b.run.manifest, both_simulated=a.run.simulated() and b.run.simulated(),
                             results_keys=results_keys))
    return Comparison(str(a.run.run_dir), str(b.run.run_dir), len(shared), rows, flips, notes, names)


class Labelled(NamedTuple):
    """Each run's truth, and the edits both label alike (what the pairs are scored on)."""

    a: Mapping[int, str]
    b: Mapping[int, str]

    @property
    def alike(self) -> dict[int, str]:
        return {r: t for r, t in self.a.items() if self.b.get(r) == t}

    @property
    def differ(self) -> list[int]:
        return sorted(r for r, t in self.a.items() if r in self.b and self.b[r] != t)


def _truth(report: Report) -> dict[int, str]:
    return dict(report.labels.truth) if report.labels is not None else {}


def labels_notes(a: Report, b: Report) -> list[str]:
    """Which labels file scored which run: never one run's labels for the other without saying so."""
    def named(report: Report) -> str:
        if report.labels is None:
            return "no labels"
        how = "given by --labels" if report.options.labels_path is not None else "found in its run directory"
        return f"{report.labels.path} ({how})"
    if a.labels is not None and b.labels is not None and a.labels.path == b.labels.path:
        return [f"Labels: both runs scored with {named(a)}."]
    return [f"Labels: A scored with {named(a)}, B with {named(b)}."]


def people_notes(a: Report, b: Report) -> list[str]:
    """How many edits people decided in each run (reviews.jsonl), as the report, the queue and the desk count them."""
    def decided(report: Report) -> str:
        s = report.to_json()["human_decisions"]
        return (f"{s['edits_decided']} of {s['edits']} edits decided by people, "
                f"{report.totals['waiting_for_human']} paused edits waiting")
    return [f"Human decisions: A {decided(a)}; B {decided(b)}."]


def _sides(report: Report, shared: Sequence[int]) -> dict[str, Side]:
    """Each model, committee rule and the decision acted on, over the edits both runs judged."""
    keep = set(shared)
    by_edit = {r: recs for r, recs in report.run.by_edit().items() if r in keep}
    evidence = report.run.investigation_usd  # shared or team evidence: paid once per edit, in no model's record
    edit_cost = {r: sum(x.cost_usd or 0.0 for x in recs.values()) + evidence.get(r, 0.0) for r, recs in by_edit.items()}
    decided = [d for d in report.decisions if d.rcid in keep]
    return {**{m: _model_side(by_edit, m) for m in report.models}, **_rule_sides(decided, edit_cost)}


def _rule_sides(decided: list[EditDecision], edit_cost: Mapping[int, float]) -> dict[str, Side]:
    """Each committee rule, and the decision each edit was acted on by, at the cost of all of the edit's records
    (and of its shared or team evidence)."""
    sides = {rule: Side(rule_predictions(decided, rule), edit_cost) for rule in COMMITTEE_RULES}
    sides[DECISION] = Side({d.rcid: d.decision for d in decided}, edit_cost)
    return sides


def _model_side(by_edit: Mapping[int, Mapping[str, VerdictRecord]], model: str) -> Side:
    mine = {r: recs[model] for r, recs in by_edit.items() if model in recs}
    return Side({r: stance(x.verdict) for r, x in mine.items()}, {r: x.cost_usd or 0.0 for r, x in mine.items()})


def _kappas(report: Report) -> dict[str, float | None]:
    return {str(r["model"]): r.get("mean_kappa") for r in report.table("model_agreement")}


def _row(subject: str, kind: str, a: Side | None, b: Side | None, labels: Labelled,
         kappa_a: float | None, kappa_b: float | None) -> CompareRow:
    in_a, in_b = a is not None, b is not None
    a, b = a or EMPTY, b or EMPTY
    score_a = score(subject, kind, a.predictions, labels.a, a.costs)
    score_b = score(subject, kind, b.predictions, labels.b, b.costs)
    alike = labels.alike
    pair = paired(a.predictions, b.predictions, alike)
    acc_a, acc_b = _share(pair.right_a, pair.edits), _share(pair.right_b, pair.edits)
    p = mcnemar_exact_p(pair.only_a_right, pair.only_b_right) if pair.edits else None
    both_right = pair.right_a - pair.only_a_right
    interval = paired_difference_interval(both_right, pair.only_a_right, pair.only_b_right,
                                          pair.edits - both_right - pair.only_a_right - pair.only_b_right)
    labelled = sum(r in alike for r in a.predictions.keys() | b.predictions.keys())
    return CompareRow(
        subject=subject, kind=kind, edits_a=len(a.predictions), edits_b=len(b.predictions),
        accuracy_a=_float(score_a["accuracy"]), accuracy_b=_float(score_b["accuracy"]), paired=pair.edits,
        paired_accuracy_a=acc_a, paired_accuracy_b=acc_b, difference=_difference(acc_a, acc_b),
        difference_low=None if interval is None else interval[0],
        difference_high=None if interval is None else interval[1],
        coverage=_share(pair.edits, labelled),
        only_a_right=pair.only_a_right, only_b_right=pair.only_b_right, p_value=p,
        distinguishable=p is not None and p < DISTINGUISHABLE_P, agreement_a=kappa_a, agreement_b=kappa_b,
        cost_per_edit_a=a.cost_per_edit(), cost_per_edit_b=b.cost_per_edit(),
        cost_per_correct_a=_float(score_a["cost_per_correct_usd"]),
        cost_per_correct_b=_float(score_b["cost_per_correct_usd"]), in_a=in_a, in_b=in_b,
    )


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _difference(a: float | None, b: float | None) -> float | None:
    """b - a, where both are known."""
    return None if a is None or b is None else b - a


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _flips(a: Report, b: Report, shared: Sequence[int], truth: Mapping[int, str]) -> list[FlipRow]:
    da, db = {d.rcid: d for d in a.decisions}, {d.rcid: d for d in b.decisions}
    qids = {e.rcid: e.qid for e in a.run.edits}
    return [FlipRow(r, qids[r], da[r].decision, db[r].decision, da[r].outcome, db[r].outcome, truth.get(r))
            for r in shared if da[r].decision != db[r].decision]


def _notes(a: Report, b: Report, shared: Sequence[int], labels: Labelled) -> list[str]:
    notes = [f"{len(shared)} edits judged in both runs; every figure counts only those. Accuracy A and B score "
             "each run's answers with its own labels; B − A, its 95 % interval (Newcombe's, for paired shares) and "
             "McNemar's p pair them on the edits both runs label alike and both answered (n both; coverage: their "
             "share of those labelled edits)."]
    only_a, only_b = len(a.run.edits) - len(shared), len(b.run.edits) - len(shared)
    if only_a or only_b:
        notes.append(f"Left out: {only_a} edit(s) only in A, {only_b} only in B.")
    if not any(r in labels.alike for r in shared):
        notes.append("No edit both runs label alike (give --labels to score both with one file, or keep labels.yaml "
                     "in each run directory): the paired difference is undefined.")
    if labels.differ:
        notes.append(f"{len(labels.differ)} edit(s) the two runs' labels disagree on are left out of the pairs: "
                     f"{', '.join(map(str, labels.differ[:10]))}{' …' if len(labels.differ) > 10 else ''}.")
    return notes


def evidence_notes(a: Report, b: Report) -> list[str]:
    """How each run's evidence was made and what it cost, when either paid for evidence apart from its verdicts
    (shared investigations, team steps): that cost counts once per edit, in the committee rules' cost per edit,
    never in a model's (a judge of shared or team evidence paid only for its verdict)."""
    if not any(_evidence_usd(r) or r.run.evidence.get("mode", "own") != "own" for r in (a, b)):
        return []
    said = [f"{side}: {describe_evidence(report.run.evidence)}"
            + (f", {usd(_evidence_usd(report), 4)}" if _evidence_usd(report) else "") for side, report in (("A", a), ("B", b))]
    return ["; ".join(said) + ". The evidence's cost (investigations, team steps) counts once per edit in the "
            "committee rules' cost per edit, not in each model's: a model's row is its verdicts alone."]


def _evidence_usd(report: Report) -> float:
    return sum(report.run.investigation_usd.values())


def describe_evidence(evidence: Mapping[str, Any]) -> str:
    mode = evidence.get("mode", "own")
    if mode == "shared":
        return f"shared evidence, investigated by {evidence.get('investigator')}"
    if mode == "team":
        aggregator = f", aggregator {evidence.get('aggregator')}" if evidence.get("aggregator") else ""
        return (f"a research team's evidence (planner {evidence.get('planner')}, workers "
                f"{', '.join(evidence.get('workers') or [])}{aggregator}, up to {evidence.get('rounds')} rounds)")
    return "each model's own investigation"


SIMULATOR_ADDRESSES = ("base_url", "searxng_url")
"""Where a simulator listened: a port chosen per start, so two simulated runs differ there by nothing that matters."""


ALWAYS_COMPARED = ("snapshot_sha256", "prompt_sha256", "models")
"""What the edits were, what the models were told and who they were: these change results in any run."""


def setting_notes(manifest_a: Mapping[str, Any], manifest_b: Mapping[str, Any], *, both_simulated: bool = False,
                  results_keys: Collection[str] | None = None) -> list[str]:
    """One line per setting that differs between the runs' manifests (snapshot, prompt, models, settings); with
    `results_keys`, only those settings (and ALWAYS_COMPARED): how a run went (concurrency, lead) is no difference."""
    flat_a, flat_b = _flatten(_compared(manifest_a)), _flatten(_compared(manifest_b))
    keep = None if results_keys is None else {*results_keys, *ALWAYS_COMPARED}
    changed = [key for key in dict.fromkeys([*flat_a, *flat_b]) if flat_a.get(key) != flat_b.get(key)
               and not (both_simulated and key in SIMULATOR_ADDRESSES)
               and (keep is None or key.split(".", 1)[0] in keep)]
    notes = ["Both runs are simulated models (fanout sim)."] if both_simulated else []
    return notes + [f"Settings differ: {key}: {_shown(flat_a.get(key))} in A, {_shown(flat_b.get(key))} in B."
                    for key in changed]


def _compared(manifest: Mapping[str, Any]) -> dict[str, Any]:
    settings = manifest.get("settings") if isinstance(manifest.get("settings"), dict) else {}
    models = manifest.get("models")
    return {
        "snapshot_sha256": manifest.get("snapshot_sha256"),
        "prompt_sha256": manifest.get("prompt_sha256"),
        "models": [m.get("name") if isinstance(m, dict) else m for m in models] if isinstance(models, list) else None,
        **{k: v for k, v in (settings or {}).items() if k != "models"},
    }


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _shown(value: Any) -> str:
    if value is None:
        return "not set"
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    text = str(value)
    return text[:12] if len(text) == 64 else text  # a sha256: its first 12 hex digits


def render_comparison(c: Comparison) -> str:
    """The terminal's comparison: the runs, the notes, the table, the flipped edits."""
    lines = [f"A: {c.run_a}", f"B: {c.run_b}", "", *map(for_terminal, c.notes), "", c.table().terminal(), ""]
    if c.flips:
        lines += [f"{len(c.flips)} edit(s) whose decision flipped:", c.flip_table().terminal()]
    else:
        lines.append("No edit's decision flipped.")
    return "\n".join(lines) + "\n"


def comparison_html(c: Comparison) -> str:
    flipped = (f"<h2>{len(c.flips)} edit(s) whose decision flipped</h2>{c.flip_table().html()}" if c.flips
               else "<p>No edit's decision flipped.</p>")
    body = (f"<header><h1>fanout compare</h1><p class=\"sub\">A: {esc(c.run_a)} · B: {esc(c.run_b)} · "
            f"{c.shared} shared edits</p></header><main><section><h2>Models and committee rules</h2>"
            f"{notes_html(c.notes)}{c.table().html()}</section><section>{flipped}</section></main>")
    return page(f"fanout compare · {c.run_a} vs {c.run_b}", body)



