"""Every table of the report: its row type and its columns, each column named once (fanout.report.table).

The terminal summary, the HTML page, `report --json` and `report --csv` all
render these definitions; none writes a column of its own. A table no page
shows (the per-verdict rows, the confusion matrices) has no columns: its data
is its rows' fields. A new column of the cost table, say, is one `Column`
in `cost_columns` and reaches the terminal, the page, the JSON and the CSV.

The rows built here (committee, verdicts, reliability, the edit table) are
frozen dataclasses; the statistics modules (agreement, scoring, health,
replay) return flat dicts (`Row`), read by key, whose keys vary with the run
(a replay's steps, intervals); their columns are defined here all the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fanout.stats.calibration import BINS, CalibrationRow
from fanout.report.change import Change, change_text, item_link, link_text
from fanout.report.charts import esc
from fanout.judging.policy import confidence, confidence_kind
from fanout.stats.decisions import set_aside_rule
from fanout.stats.spend import ModelCost, uses_cache
from fanout.report.fmt import percent, ratio, settled_steps, subject_name, usd, with_interval
from fanout.report.page_shell import (
    change_html,
    entity_link,
    model_anchor,
    stance_html,
    truth_html,
    verdict_badge,
)
from fanout.report.run_data import EditInfo
from fanout.report.table import NOT_DATA, Column, Row, Scalar, Table, amount, check_fields, fixed, money, share
from fanout.base.records import VerdictRecord


@dataclass(frozen=True)
class Context:
    """What a column needs beyond its row: the models' short names, the projection, what each edit changed."""

    names: Mapping[str, str]
    project_edits: int
    changes: Mapping[int, Change]
    edit_pages: str = "report/edits"
    """The folder of the edit pages, as a link from the first page reaches it."""
    rule_violations: str = "abstain"
    """The report's --rule-violations: under `abstain` a verdict that breaks a rule is marked set aside."""
    confidence_read: str = "stated"
    """What the models' mean confidence averages in this run (`confidence_read`), so its columns say so."""

    def name(self, model: object) -> str:
        return self.names.get(str(model), str(model))


@dataclass(frozen=True)
class VerdictRow:
    """One record: what a model said about an edit, at what cost and effort."""

    rcid: int
    qid: str
    property: str | None
    model: str
    status: str
    verdict: str | None
    stance: str | None
    confidence: float | None
    """The confidence the thresholds read: stated with the verdict, or its samples' stability (`confidence_kind`)."""
    confidence_kind: str
    truth: str | None
    cost_usd: float | None
    prompt_tokens: int
    completion_tokens: int
    turns: int
    tool_calls: int
    sources: int
    verified_never_fetched: int
    duration_s: float | None


@dataclass(frozen=True)
class CommitteeRow:
    """One edit as the committee decided it; `accept`, `unsure`, `reject` count the votes for each stance."""

    rcid: int
    qid: str
    property: str | None
    votes: int
    accept: int
    unsure: int
    reject: int
    majority: str | None
    majority_share: float | None
    weighted: str | None
    weighted_share: float | None
    dawid_skene: str | None
    dawid_skene_confidence: float | None
    needs_human: bool
    reasons: str
    mean_confidence: float | None
    top_share: float | None
    second_share: float | None
    outcome: str
    why: str
    truth: str | None
    human: str | None = None
    """The reviewer's decision that stands (accept, reject, unsure; reviews.jsonl), None before any."""
    decision: str | None = None
    """The stance acted on: what a cascade or router settled, else the Dawid–Skene consensus."""
    settled_by: str | None = None
    """The strategy whose settlement `decision` is (a cascade or router run); None: the committee's."""
    set_aside: str = ""
    """The verdicts given that cast no vote, and the rule each broke (`set aside: olmo (…)`), or empty."""


@dataclass(frozen=True)
class TrustRow:
    """A model on the report's first screen: how often it is right, at what price, and how well its stated
    confidence matches (ECE); what a reader decides whom to trust by."""

    model: str
    accuracy: float | None
    accuracy_low: float | None
    accuracy_high: float | None
    answered: int
    labelled: int
    cost_per_correct_usd: float | None
    mean_cost_usd: float | None
    ece: float | None = None
    """Expected calibration error of its stated confidence against the labels (fanout.stats.calibration, where
    present); None until that is measured."""


def trust_columns(ctx: Context) -> tuple[Column[TrustRow], ...]:
    return (
        Column("model", "model", left=True, show=lambda r: ctx.name(r.model)),
        Column("accuracy", "accuracy [95 %]", short="accuracy [95%]",
               show=lambda r: with_interval({"accuracy": r.accuracy, "accuracy_low": r.accuracy_low,
                                             "accuracy_high": r.accuracy_high}, "accuracy") if r.accuracy is not None
               else "–", value=lambda r: r.accuracy),
        Column("answered", "answered / labelled", short="answered",
               show=lambda r: f"{r.answered}/{r.labelled}" if r.labelled else "no labels"),
        Column("cost_per_correct_usd", "$/correct", fmt=money(4)),
        Column("mean_cost_usd", "$/verdict", fmt=money(5)),
        Column("ece", "ECE", fmt=fixed(3)),
    )


@dataclass(frozen=True)
class ReliabilityRow:
    model: str
    dawid_skene_reliability: float | None
    label_accuracy: float | None
    weight: float
    weight_source: str


@dataclass(frozen=True)
class ConfusionRow:
    """P(the model says `given` | the edit's consensus stance is `true`), Dawid–Skene's estimate."""

    model: str
    true: str
    given: str
    probability: float


@dataclass(frozen=True)
class EditRow:
    """One edit for a spreadsheet (`report --csv`): what changed, then (its columns) the truth, each model's
    verdict and cost, and the committee's decision and why."""

    rcid: int
    qid: str
    item: str | None
    property: str | None
    what: str | None
    change: str
    diff_url: str | None
    committee: CommitteeRow = field(metadata=NOT_DATA)
    records: Mapping[str, VerdictRecord] = field(metadata=NOT_DATA)
    edit: EditInfo = field(metadata=NOT_DATA)
    described: Change | None = field(metadata=NOT_DATA)
    """What the snapshot says the edit changed (None: the snapshot no longer describes it)."""
    position: int = field(metadata=NOT_DATA)
    """Its place in the run's order, which the page's table can be sorted back to."""


def _pair(ctx: Context) -> Column[Row]:
    """`alpha x beta`: a pair of models, `×` on the page (the terminal keeps to ASCII)."""
    return Column("pair", "pair", left=True, show=lambda r: f"{ctx.name(r['model_a'])} x {ctx.name(r['model_b'])}",
                  html=lambda r: esc(f"{ctx.name(r['model_a'])} × {ctx.name(r['model_b'])}"))


def _interval(key: str, header: str, short: str | None = None) -> Column[Row]:
    """A value with its 95 % interval from the row's `key_low` / `key_high`."""
    return Column(key, header, short=short, show=lambda r: with_interval(r, key))


def _answered(short: str = "answered") -> Column[Row]:
    return Column("answered_of_labelled", "answered / labelled", short=short,
                  show=lambda r: f"{r['answered']}/{r['labelled']}")


def health_columns(ctx: Context) -> tuple[Column[Row], ...]:
    return (
        Column("model", "model", left=True, show=lambda r: ctx.name(r["model"])),
        Column("tool_protocol", "tools via"),
        Column("records", "records", short="recs"),
        Column("ok", "ok"),
        Column("timeout", "timeout", short="t/o"),
        Column("incomplete", "incomplete", short="incompl"),
        Column("invalid_json", "invalid JSON", short="bad json"),
        Column("error", "error"),
        Column("refused", "refused", when=lambda rows: any(r["refused"] for r in rows)),
        Column("mean_turns", "mean turns", short="turns", fmt=amount(1)),
        Column("mean_tool_calls", "mean tool calls", short="tools", fmt=amount(1)),
        Column("search_fetch", "search / fetch", short="", show=lambda r: f"{r['web_search']}/{r['web_fetch']}"),
        Column("failed_tool_calls", "failed calls", short=""),
        Column("sources_verified_reported", "sources verified / reported", short="src ver/rep",
               show=lambda r: f"{r['sources_verified']}/{r['sources_reported']}"),
        Column("verified_never_fetched", "“verified” never fetched", short="ver. unfetched"),
        Column("rule_violations", "rule violations", short="rule viol."),
        Column("mean_duration_s", "mean seconds", short="", fmt=amount(1)),
    )


def pairwise_columns(ctx: Context) -> tuple[Column[Row], ...]:
    return (
        _pair(ctx),
        Column("n", "edits both answered", short="n"),
        Column("exact_agreement", "exact agreement", short="exact", fmt=share),
        Column("three_way_agreement", "3-way agreement", short="3-way", fmt=share),
        _interval("kappa", "kappa [95 %]", "kappa"),
        _interval("kappa_quadratic", "quadratic kappa [95 %]", "kappa quadratic"),
        _interval("kappa_three_way", "kappa 3-way [95 %]", "kappa 3-way"),
    )


def distribution_columns(ctx: Context) -> tuple[Column[Row], ...]:
    """In the terminal only: the page draws the same counts as two stacked bar charts."""
    return (
        Column("model", short="model", left=True, show=lambda r: ctx.name(r["model"])),
        *(Column[Row](key, short=short) for key, short in (
            ("verified-high", "ver-high"), ("verified-low", "ver-low"), ("plausible", "plausible"),
            ("unverifiable", "unverif"), ("suspect", "suspect"), ("incorrect", "incorrect"), ("missing", "none"))),
    )


OVERALL_COLUMNS: tuple[Column[Row], ...] = (
    Column("scale", "scale", left=True, show=lambda r: str(r["scale"]).replace("_", "-")),
    Column("edits", "edits (2+ verdicts)"),
    Column("unanimous", "unanimous", fmt=share),
    Column("complete_edits", "every model answered"),
    Column("unanimous_complete", "unanimous there", fmt=share),
    Column("fleiss_kappa", "Fleiss’ kappa", fmt=fixed(2)),
    _interval("krippendorff_alpha", "Krippendorff’s alpha [95 %]"),
    _interval("krippendorff_alpha_ordinal", "ordinal alpha [95 %]"),
)
"""On the page only: the terminal says the same in two sentences (fanout.report.terminal)."""


def score_columns(ctx: Context) -> tuple[Column[Row], ...]:
    return (
        Column("subject", "subject", left=True, show=lambda r: subject_name(str(r["subject"]), dict(ctx.names))),
        Column("kind", "kind", short="", left=True),
        _answered(),
        Column("coverage", "coverage", short="", fmt=share),
        _interval("accuracy", "accuracy [95 % Wilson]", "accuracy [95% Wilson]"),
        Column("reject_precision", "reject precision", short="reject P", fmt=fixed(2)),
        Column("reject_recall", "reject recall", short="reject R", fmt=fixed(2)),
        Column("cost_usd", "cost", short="", fmt=money(4)),
        Column("cost_per_correct_usd", "cost per correct", short="$/correct", fmt=money(4)),
    )


def comparison_columns(ctx: Context) -> tuple[Column[Row], ...]:
    return (
        _pair(ctx),
        Column("answered_a", "first answered", short="n first"),
        Column("answered_b", "second answered", short="n second"),
        Column("edits", "labelled edits both answered", short="n both"),
        Column("only_a_right", "only the first right"),
        Column("only_b_right", "only the second right"),
        Column("p_value", "McNemar p", fmt=fixed(3)),
    )


def replay_columns(ctx: Context) -> tuple[Column[Row], ...]:
    return (
        Column("subject", "subject", left=True, show=lambda r: subject_name(str(r["subject"]), dict(ctx.names))),
        Column("kind", "kind", left=True),
        Column("edits", "edits"),
        Column("cost_usd", "cost", fmt=money(4)),
        Column("cost_per_edit_usd", "per edit", fmt=money(5)),
        _answered(),
        _interval("accuracy", "accuracy [95 %]", "accuracy [95% Wilson]"),
        Column("escalation_rate", "escalated", fmt=share),
        Column("unagreed", "unagreed", fmt=share),
        Column("settled_at_step", "settled at step 1/2/…", short="settled at step 1/2/...", show=settled_steps),
    )


def cost_columns(ctx: Context) -> tuple[Column[ModelCost], ...]:
    """A model's costs; the same columns read the totals row (model `total`), where a mean stays blank."""
    return (
        Column("model", "model", left=True, show=lambda c: ctx.name(c.model)),
        Column("records", "verdicts"),
        Column("total_cost_usd", "total", fmt=money(4)),
        Column("mean_cost_usd", "per verdict", fmt=money(5), total=False),
        Column("tokens", "", short="tokens in/out", show=lambda c: f"{c.prompt_tokens:,}/{c.completion_tokens:,}"),
        Column("mean_prompt_tokens", "mean tokens in", short="", fmt=amount(0), total=False),
        Column("mean_completion_tokens", "mean tokens out", short="", fmt=amount(0), total=False),
        Column("cache_hit_rate", "cache hit", fmt=share, when=uses_cache),
        Column("cache_saved_usd", "cache saved", show=cache_saved_text, value=lambda c: c.cache_saved_usd,
               when=uses_cache),
        Column("investigation_cost_usd", "investigation", fmt=money(4),  # shared evidence: apart from the verdicts
               show=lambda c: money(4)(c.investigation_cost_usd) if c.investigations else "",
               when=lambda costs: any(c.investigations for c in costs)),
        Column("cost_unknown", "cost unknown", short=""),
        Column("projected_cost_usd", f"next {ctx.project_edits} edits", fmt=money(2)),
    )


def cache_saved_text(c: ModelCost) -> str:
    """What the cache saved; a model that only wrote to it has saved nothing yet, and its writes are a cost,
    not a negative saving (the JSON keeps the signed figure)."""
    if c.cache_write_tokens and not c.cached_tokens:
        spent = "" if c.cache_saved_usd is None else f" (writes cost {usd(-c.cache_saved_usd, 4)})"
        return f"no reads yet{spent}"
    return money(4)(c.cache_saved_usd)


def confidence_read(records: Sequence[VerdictRecord], calibrated: bool) -> str:
    """What the thresholds read in a run, in words: `stated` (each verdict's stated confidence), `stability`
    (with --samples, the share of a model's samples that agree), both, and `calibrated` when a model's
    calibrated confidence replaced its own (--calibrate). A column headed "confidence (stated)" in a run asked
    with --samples 3 would name the wrong figure."""
    kinds = {confidence_kind(r) for r in records if confidence(r) is not None}
    read = "stated or stability" if len(kinds) > 1 else "stability" if kinds == {"stability"} else "stated"
    return f"{read}, calibrated" if calibrated else read


def mean_confidence_words(read: str) -> str:
    """`mean stated confidence`, or `mean confidence (stability)` and the like (confidence_read's words)."""
    return "mean stated confidence" if read == "stated" else f"mean confidence ({read})"


def queue_columns(ctx: Context) -> tuple[Column[CommitteeRow], ...]:
    """The edits that need a human, least sure first: the terminal lists them by QID, the page by item, linked to
    their rows. Two confidences, each named: Dawid–Skene's posterior of its decision, and the models' mean
    confidence (stated with each verdict, or its samples' stability), which --pause reads and the queue is
    ordered by."""
    return (
        Column("rcid", "rcid", left=True, html=lambda q: f'<a href="#edit-{q.rcid}">{esc(q.rcid)}</a>'),
        Column("qid", "", short="qid", left=True),
        Column("item", "item", short="", left=True, show=lambda q: q.qid, html=lambda q: _item_html(ctx, q)),
        Column("property", "property", short="prop", left=True, show=lambda q: q.property or ""),
        Column("decision", "decision", left=True, show=lambda q: q.decision or "–",
               html=lambda q: stance_html(q.decision)),
        Column("majority", "majority", left=True, show=lambda q: q.majority or ("tie" if q.votes else "–"),
               html=lambda q: stance_html(q.majority)),
        Column("majority_share", "share", short="", fmt=fixed(2)),
        Column("dawid_skene", "Dawid–Skene", short="", html=lambda q: stance_html(q.dawid_skene)),
        Column("dawid_skene_confidence", "Dawid–Skene posterior", short="", fmt=fixed(2)),
        Column("mean_confidence", f"mean confidence ({ctx.confidence_read})", short="mean conf", fmt=fixed(2)),
        Column("reasons", "why", left=True),
        Column("human", "human", left=True, when=lambda rows: any(q.human is not None for q in rows)),
    )


def _item_html(ctx: Context, q: CommitteeRow) -> str:
    change = ctx.changes.get(q.rcid)
    label = change.item_label if change is not None else None
    return f"{esc(label)} ({entity_link(q.qid)})" if label else entity_link(q.qid)


def reliability_columns(ctx: Context) -> tuple[Column[ReliabilityRow], ...]:
    return (
        Column("model", "model", left=True, show=lambda r: ctx.name(r.model)),
        Column("dawid_skene_reliability", "Dawid–Skene reliability", fmt=fixed(2)),
        Column("label_accuracy", "accuracy on labels", fmt=fixed(2)),
        Column("weight", "vote weight", fmt=fixed(2)),
        Column("weight_source", "weight from", show=lambda r: r.weight_source.replace("_", "–")),
    )


HUMAN_RULE_NAMES = {"majority": "majority", "weighted": "weighted", "dawid_skene": "Dawid–Skene"}
HUMAN_AGREEMENT_COLUMNS: tuple[Column[Row], ...] = (
    Column("rule", "committee rule", left=True, show=lambda r: HUMAN_RULE_NAMES[str(r["rule"])]),
    Column("agree", "agrees with the human", short="agrees", show=lambda r: f"{r['agree']}/{r['both_decided']}"),
    Column("agreement", "share", fmt=fixed(2)),
    Column("paused_agree", "of them paused", short="paused",
           show=lambda r: f"{r['paused_agree']}/{r['paused_both_decided']}"),
)
"""How often each committee rule decided as the human did (fanout.stats.human_decisions.human_agreement)."""


@dataclass(frozen=True)
class CertificateRow:
    """A rule that may decide alone (auto-accept, auto-reject) and its certificate (fanout.stats.certify)."""

    rule: str
    stance: str
    target_agreement: float
    risk: float
    applied: bool
    """Whether the certificate decides (--target-agreement given), or is only shown."""
    certified: bool
    threshold: float | None
    """The certified confidence threshold (the models' mean confidence); None: nothing is certified."""
    coverage: float
    """Share of the run's edits the rule decides alone at the threshold."""
    decided_alone: int
    rests_on: int
    """Random human decisions at or above the threshold."""
    disagreements: int
    agreement_bound: float | None
    """The agreement the certificate vouches for at level 1 - risk."""
    decisions: int
    """Random human decisions on the rule's edits, at any confidence."""
    observed_agreement: float | None
    more_needed: int | None
    """More random decisions that would certify it if they agreed as often as those so far (0 when certified;
    None when no number would)."""
    why: str


def certificate_columns() -> tuple[Column[CertificateRow], ...]:
    return (
        Column("rule", "rule", left=True),
        Column("threshold", "certified at", short="certified at", left=True,
               show=lambda c: f"confidence >= {c.threshold:.2f}" if c.threshold is not None else "not certified"),
        Column("coverage", "decides alone", short="decides alone",
               show=lambda c: f"{percent(c.coverage)} ({c.decided_alone} edits)" if c.certified else "nothing"),
        Column("rests_on", "rests on", short="rests on",
               show=lambda c: f"{c.rests_on} ({c.disagreements} disagree)" if c.certified else f"{c.decisions} decided"),
        Column("agreement_bound", f"agreement ≥ (at 1 − risk)", short="agreement >=", fmt=fixed(3)),
        Column("more_needed", "more decisions to certify", short="more to certify",
               show=lambda c: "–" if c.certified or c.more_needed is None else f"about {c.more_needed}"),
        Column("why", "why", short="", left=True),
    )


@dataclass(frozen=True)
class PpiRow:
    """A model's or a committee rule's accuracy over the run from the random human decisions: labels only,
    and prediction-powered (PPI, PPI++) with every verdict's proxy (fanout.stats.ppi). Intervals unclipped."""

    subject: str
    kind: str
    proxy: str
    labelled: int
    """n: random human decisions on edits the subject answered."""
    unlabelled: int
    """N: the other edits it answered, known through the proxy only."""
    labels_only: float | None
    labels_only_low: float | None
    labels_only_high: float | None
    ppi: float | None
    ppi_low: float | None
    ppi_high: float | None
    ppi_plus: float | None
    ppi_plus_low: float | None
    ppi_plus_high: float | None
    lam: float | None
    narrower: float | None
    """1 - PPI++ width / labels-only width: 0.3 = 30 % narrower."""
    worth: float | None
    """The labels-only n that would give PPI++'s width."""
    few: bool
    """Fewer than FEW_RANDOM random decisions: a normal interval may cover less than 95 %."""
    why: str


def ppi_columns(ctx: Context) -> tuple[Column[PpiRow], ...]:
    return (
        Column("subject", "subject", left=True, show=lambda r: subject_name(r.subject, dict(ctx.names))),
        Column("labelled", "random decisions", short="n", show=lambda r: f"{r.labelled}{'*' if r.few else ''}"),
        Column("labels_only", "labels only [95 %]", short="labels only",
               show=lambda r: clipped(r.labels_only, r.labels_only_low, r.labels_only_high)),
        Column("ppi_plus", "PPI++ [95 %]", short="PPI++",
               show=lambda r: clipped(r.ppi_plus, r.ppi_plus_low, r.ppi_plus_high)),
        Column("narrower", "narrower", fmt=share),
        Column("worth", "worth (labels)", short="worth", fmt=amount(0)),
        Column("why", "", short="", left=True, show=lambda r: r.why),
    )


def clipped(value: float | None, low: float | None, high: float | None) -> str:
    """`0.82 [0.71, 0.93]`, the interval clipped to [0, 1] for reading (the data keeps it as computed)."""
    if value is None:
        return "–"
    if low is None or high is None:
        return f"{value:.2f}"
    return f"{value:.2f} [{max(0.0, low):.2f}, {min(1.0, high):.2f}]"


def calibration_columns(ctx: Context) -> tuple[Column[CalibrationRow], ...]:
    """Each model's confidence against the labels (fanout.stats.calibration): ECE over BINS bins, Brier."""
    return (
        Column("model", "model", left=True, show=lambda r: ctx.name(r.model)),
        Column("n", "n"),
        Column("source", "confidence"),
        Column("mean_confidence", "mean confidence", fmt=fixed(2)),
        Column("accuracy", "accuracy", fmt=fixed(2)),
        Column("ece", f"ECE ({BINS} bins)", fmt=fixed(3)),
        Column("brier", "Brier", fmt=fixed(3)),
        Column("calibrated_ece", "ECE calibrated", fmt=fixed(3)),
        Column("calibrated_brier", "Brier calibrated", fmt=fixed(3)),
    )


TOOLTIP_LIMIT = 300
"""Characters of a rationale shown when the pointer rests on a verdict; its edit page has the rest."""


def edit_columns(ctx: Context, models: Sequence[str], has_truth: bool,
                 truth_sources: Mapping[int, str] | None = None) -> tuple[Column[EditRow], ...]:
    """The page's edit table and `report --csv`: the edit, the truth (with labels), the committee's decision
    (Dawid–Skene, as the page shows it) with the models' mean confidence (what --pause and --autopass read) and
    Dawid–Skene's posterior, each model's verdict (its status when it gave none), cost and confidence, whether
    the edit passed on its own, was decided or paused (`outcome`), and why. The page shows the edit, the
    truth, the committee and the models in a cell each; the CSV has each part in its own column. No column
    is `left`: the page's edit table aligns every cell left by its style, and `td.l` would keep the edit
    cell from wrapping. With `truth_sources` (a watched run's), where each label came from follows the truth."""
    def verdict(i: int, model: str) -> Column[EditRow]:
        def value(e: EditRow) -> Scalar:
            record = e.records.get(model)
            return None if record is None else record.verdict or record.status

        def html(e: EditRow) -> str:
            record = e.records.get(model)
            if record is None:
                return '<span class="muted">not run</span>'
            return verdict_cell(record, f"{_page_href(ctx, e)}#{model_anchor(i)}",
                                set_aside_rule(record, ctx.rule_violations))
        return Column(f"{model} verdict", ctx.name(model), value=value, html=html)

    def cost(model: str) -> Column[EditRow]:
        def value(e: EditRow) -> Scalar:
            record = e.records.get(model)
            return None if record is None else record.cost_usd
        return Column(f"{model} cost_usd", fmt=money(4), value=value)

    def sure(model: str) -> Column[EditRow]:
        def value(e: EditRow) -> Scalar:
            record = e.records.get(model)
            return None if record is None else confidence(record)
        return Column(f"{model} confidence", fmt=fixed(2), value=value)

    return (
        Column("item", "edit", cls="edit", show=lambda e: f"{e.item} ({e.qid})" if e.item else e.qid,
               html=lambda e: edit_cell(e.edit, e.described, _page_href(ctx, e))),
        *([Column[EditRow]("truth", "truth", value=lambda e: e.committee.truth,
                           html=lambda e: truth_html(e.committee.truth))] if has_truth else []),
        *([Column[EditRow]("truth_source", "truth from", value=lambda e: (truth_sources or {}).get(e.rcid))]
          if truth_sources else []),
        Column("decision", "committee", value=lambda e: e.committee.decision,
               html=lambda e: committee_html(e.committee, ctx.confidence_read)),
        Column("mean_confidence", value=lambda e: e.committee.mean_confidence),
        Column("dawid_skene_posterior", value=lambda e: e.committee.dawid_skene_confidence),
        *(c for i, m in enumerate(models) for c in (verdict(i, m), cost(m), sure(m))),
        Column("outcome", value=lambda e: e.committee.outcome),
        Column("reason", value=lambda e: e.committee.reasons if e.committee.needs_human else e.committee.why),
    )


def _page_href(ctx: Context, e: EditRow) -> str:
    return f"{ctx.edit_pages}/{e.rcid}.html"


def edit_rows(edits: Sequence[EditInfo], committee: Sequence[CommitteeRow],
              records: Mapping[int, Mapping[str, VerdictRecord]], changes: Mapping[int, Change]) -> list[EditRow]:
    decided = {row.rcid: row for row in committee}
    return [_edit_row(n, edit, decided[edit.rcid], records[edit.rcid], changes.get(edit.rcid))
            for n, edit in enumerate(edits)]


def _edit_row(n: int, edit: EditInfo, row: CommitteeRow, records: Mapping[str, VerdictRecord],
              change: Change | None) -> EditRow:
    return EditRow(
        rcid=edit.rcid, qid=edit.qid, item=change.item_label if change else None, property=edit.property,
        what=change.what if change else None, change=change_text(change, edit.diff_type),
        diff_url=item_link(edit, change), committee=row, records=records, edit=edit, described=change,
        position=n,
    )


def committee_html(row: CommitteeRow, read: str = "stated") -> str:
    """Each figure named: Dawid–Skene's posterior, the majority's share, the models' mean confidence (`read`:
    what it averages, confidence_read)."""
    if row.settled_by is not None:
        return (f"{esc(row.settled_by)} {stance_html(row.decision)} · " + (f'<span class="badge">needs a human: {esc(row.reasons)}</span>'
                if row.needs_human else f'<span class="muted">{esc(row.outcome)}: {esc(row.why)}</span>'))
    text = (f"Dawid–Skene {stance_html(row.dawid_skene)} <span class=\"muted\">posterior "
            f"{ratio(row.dawid_skene_confidence)}</span> · majority {stance_html(row.majority)} "
            f"<span class=\"muted\">share {ratio(row.majority_share)}</span> · <span class=\"muted\">"
            f"{esc(mean_confidence_words(read))} {ratio(row.mean_confidence)}</span>")
    if row.needs_human:
        text += f' <span class="badge">needs a human: {esc(row.reasons)}</span>'
    else:
        text += f' <span class="muted">{esc(row.outcome)}: {esc(row.why)}</span>'
    return text



def edit_cell(edit: EditInfo, change: Change | None, page_href: str) -> str:
    """The item, what was edited, old → new, and the links: the edit's page, the item, the diff."""
    title = change.item_label if change and change.item_label else edit.qid
    lines = [f'<a href="{esc(page_href)}"><b>{esc(title)}</b></a>'
             + (f" {entity_link(edit.qid) if edit.diffable else esc(edit.qid)}" if title != edit.qid else "")]
    if change is not None:
        lines.append(esc(change.what))
        lines.append(change_html(change, edit.diff_type))
    else:
        lines.append(esc(edit.property or ""))
    kind = esc((edit.diff_type or "").replace("_", " "))
    url = item_link(edit, change)
    diff = f' · <a href="{esc(url)}" rel="noopener noreferrer">{esc(link_text(change))}</a>' if url else ""
    lines.append(f'<span class="muted">{kind}{diff} · rcid {esc(edit.rcid)}</span>')
    return "<br>".join(lines)


def verdict_cell(record: VerdictRecord, href: str, set_aside: str | None = None) -> str:
    """The verdict, linked to its section of the edit page, the start of its rationale on hover, and its cost."""
    tip = (record.rationale or record.error or "")[:TOOLTIP_LIMIT]
    tip += "…" if len(record.rationale or record.error or "") > TOOLTIP_LIMIT else ""
    return f'{verdict_badge(record, href, tip, set_aside)} <span class="muted nowrap">{esc(usd(record.cost_usd, 4))}</span>'


_NO_CONTEXT = Context({}, 0, {})
check_fields(ModelCost, cost_columns(_NO_CONTEXT))
check_fields(ReliabilityRow, reliability_columns(_NO_CONTEXT))
check_fields(TrustRow, trust_columns(_NO_CONTEXT))
check_fields(CommitteeRow, queue_columns(_NO_CONTEXT))
check_fields(CertificateRow, certificate_columns())
check_fields(PpiRow, ppi_columns(_NO_CONTEXT))
check_fields(EditRow, edit_columns(_NO_CONTEXT, [], True))
