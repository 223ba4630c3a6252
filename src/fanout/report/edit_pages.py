"""One edit's page of the HTML report: what the edit changed, and each model's whole investigation.

The report's first page has a row per edit; the transcripts, which are most
of a run's text (about 40 KB a verdict), live here, one page per edit beside
it, so that the first page stays small and opens fast at any run size and a
reader gets the full width of the window for one edit's investigations.
Nothing is cut short here: the record already holds what fanout keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from fanout.report.change import Change, diff_url
from fanout.report.charts import esc
from fanout.stats.decisions import set_aside_rule
from fanout.report.fmt import ratio, short_names, usd
from fanout.stats.model_health import claimed_unfetched, fetched_urls, normalise_url
from fanout.report.page_shell import (
    change_html,
    entity_link,
    link,
    model_anchor,
    page,
    stance_html,
    truth_html,
    verdict_badge,
)
from fanout.report.run_data import EditInfo
from fanout.report.document import Report
from fanout.report.columns import CommitteeRow, committee_html
from fanout.report.table import Column, Table
from fanout.report.team_views import team_edit_html
from fanout.judging.policy import confidence, confidence_kind
from fanout.judging.scales import stance
from fanout.base.records import VerdictRecord


class Neighbours(NamedTuple):
    """Where an edit page's links lead: the report's row of this edit, and the edits before and after."""

    report_href: str
    previous: int | None
    following: int | None
    back: str = "the report"
    """What the link back names (the review desk serves these pages too)."""


def render_edit_pages(report: Report, report_href: str) -> Iterator[tuple[int, str]]:
    """(rcid, page) for every edit, in the report's order; `report_href` leads from a page back to the report."""
    by_edit = report.run.by_edit()
    committee = {row.rcid: row for row in report.tables["committee"].rows}
    rcids = [e.rcid for e in report.run.edits]
    for i, edit in enumerate(report.run.edits):
        around = Neighbours(report_href, rcids[i - 1] if i else None, rcids[i + 1] if i + 1 < len(rcids) else None)
        yield edit.rcid, _edit_page(report, edit, by_edit[edit.rcid], committee[edit.rcid], around)


def render_edit_page(report: Report, rcid: int, report_href: str, back: str = "the report") -> str | None:
    """One edit's page on its own (the review desk serves it), with a link back to this edit at `report_href`
    (`report_href#edit-RCID`, named `back`) and none to its neighbours; None for an rcid the run does not hold."""
    edit = next((e for e in report.run.edits if e.rcid == rcid), None)
    if edit is None:
        return None
    committee = next(row for row in report.tables["committee"].rows if row.rcid == rcid)
    return _edit_page(report, edit, report.run.by_edit()[rcid], committee, Neighbours(report_href, None, None, back))


def _edit_page(report: Report, edit: EditInfo, records: dict[str, VerdictRecord], committee: CommitteeRow,
               around: Neighbours) -> str:
    names = short_names(report.models)
    aside = {m: rule for m, r in records.items() if (rule := set_aside_rule(r, report.options.rule_violations))}
    change = report.changes.get(edit.rcid)
    label = change.item_label if change and change.item_label else edit.qid
    body = (
        f"<header><h1>{esc(label)} <span class=\"muted\">·</span> rcid {esc(edit.rcid)}</h1>"
        f'<p class="sub">{_navigation(edit, around)}</p></header><main>'
        + _edit_section(edit, change, committee, report.confidence_read)
        + team_edit_html(report, edit.rcid)
        + _verdict_table(report.models, names, records, aside)
        + "".join(_model_section(i, m, names[m], records[m], aside.get(m)) for i, m in enumerate(report.models)
                  if m in records)
        + "</main>"
    )
    return page(f"{label} · rcid {edit.rcid} · fanout report", body)


def _navigation(edit: EditInfo, around: Neighbours) -> str:
    parts = [f'<a href="{esc(around.report_href)}#edit-{esc(edit.rcid)}">← {esc(around.back)}</a>']
    if around.previous is not None:
        parts.append(f'<a href="{esc(around.previous)}.html">previous edit</a>')
    if around.following is not None:
        parts.append(f'<a href="{esc(around.following)}.html">next edit</a>')
    return " · ".join(parts)


def _edit_section(edit: EditInfo, change: Change | None, committee: CommitteeRow, read: str) -> str:
    shown = entity_link(edit.qid) if edit.diffable else esc(edit.qid)
    rows = [("item", shown + (f" {esc(change.item_label)}" if change and change.item_label else ""))]
    rows += _what_rows(edit, change)
    if edit.revid is not None and edit.diffable:
        url = diff_url(edit.revid, change.parent_revid if change is not None else None)
        rows.append(("revision", f"{esc(edit.revid)} · {link(url, 'the diff on Wikidata')}"))
    elif change is not None and change.link is not None:
        rows.append((change.link_text or "link", link(change.link)))
    rows.append(("edited at", esc(edit.edit_timestamp or "–")))
    if committee.truth is not None:
        rows.append(("truth", truth_html(committee.truth)))
    rows.append(("committee", committee_html(committee, read)))
    items = "".join(f"<dt>{esc(k)}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<section><h2>The edit</h2><dl class="edit">{items}</dl></section>'


def _what_rows(edit: EditInfo, change: Change | None) -> list[tuple[str, str]]:
    """What was edited, old → new and the question asked; the property and kind alone when the snapshot is silent."""
    if change is None:
        return [("edited", esc(" · ".join(x for x in (edit.property, edit.diff_type) if x)))]
    return [("edited", esc(change.what)), ("change", change_html(change, edit.diff_type)),
            ("question", esc(change.question))]


@dataclass(frozen=True)
class ModelVerdict:
    """A row of an edit page's verdict table: a model, where its section is, and its record (None: not run)."""

    position: int
    name: str
    record: VerdictRecord | None
    set_aside: str | None = None
    """The rule its verdict broke, when the verdict casts no committee vote."""


def _of(row: ModelVerdict, cell: Callable[[VerdictRecord], str]) -> str:
    return "" if row.record is None else cell(row.record)


VERDICT_COLUMNS: tuple[Column[ModelVerdict], ...] = (
    Column("model", "model", left=True, show=lambda m: m.name,
           html=lambda m: f'<a href="#{model_anchor(m.position)}">{esc(m.name)}</a>' if m.record else esc(m.name)),
    Column("verdict", "verdict", left=True, show=lambda m: _of(m, lambda r: r.verdict or r.status),
           html=lambda m: verdict_badge(m.record, set_aside=m.set_aside) if m.record
           else '<span class="muted">not run</span>'),
    Column("stance", "stance", left=True, show=lambda m: _of(m, lambda r: stance(r.verdict) or ""),
           html=lambda m: _of(m, lambda r: stance_html(stance(r.verdict)))),
    Column("confidence", "confidence", show=lambda m: _of(m, _confidence_text)),
    Column("cost", "cost", show=lambda m: _of(m, lambda r: usd(r.cost_usd, 4))),
    Column("turns", "turns", show=lambda m: _of(m, lambda r: str(r.token_usage.turns))),
    Column("tool_calls", "tool calls", show=lambda m: _of(m, lambda r: str(len(r.tool_calls)))),
    Column("tokens", "tokens in+out",
           show=lambda m: _of(m, lambda r: f"{r.token_usage.prompt_tokens:,}+{r.token_usage.completion_tokens:,}")),
    Column("seconds", "seconds", show=lambda m: _of(m, lambda r: ratio(r.duration_s, 1))),
)
"""The page only shows this table: it has no data of its own (the models' records are in `report --json`)."""


def _confidence_text(record: VerdictRecord) -> str:
    """The confidence the thresholds read, as the model stated it or as its samples measured it (stability)."""
    sure = confidence(record)
    if sure is None:
        return ""
    return f"{sure:.2f}" if confidence_kind(record) == "stated confidence" else f"{sure:.2f} (stability)"


def _verdict_table(models: list[str], names: dict[str, str], records: dict[str, VerdictRecord],
                   aside: Mapping[str, str]) -> str:
    rows = [ModelVerdict(i, names[m], records.get(m), aside.get(m)) for i, m in enumerate(models)]
    return f"<section><h2>Verdicts</h2>{Table(VERDICT_COLUMNS, rows).html()}</section>"


def _model_section(index: int, model: str, name: str, record: VerdictRecord, set_aside: str | None) -> str:
    parts = [
        f'<h2>{esc(name)} {verdict_badge(record, set_aside=set_aside)}</h2>',
        f'<p class="muted">{esc(record.served_model or model)} · {usd(record.cost_usd, 4)} · '
        f"{record.token_usage.turns} turns · finished {esc(record.timestamp)}</p>",
        f"<p>{esc(record.rationale)}</p>" if record.rationale else '<p class="muted">(no rationale)</p>',
        f'<p class="warn">{esc(record.error)}</p>' if record.error else "",
        "".join(f'<p class="warn">{esc(w)}</p>' for w in record.warnings),
        f"<h3>Verdict text that could not be read</h3><pre>{esc(record.raw_verdict)}</pre>" if record.raw_verdict else "",
        _sources_html(record),
        _calls_html(record),
        _transcript_html(record),
    ]
    return f'<section class="model" id="{model_anchor(index)}">{"".join(parts)}</section>'


def _sources_html(record: VerdictRecord) -> str:
    if not record.sources:
        return ""
    unfetched = {normalise_url(u) for u in claimed_unfetched(record)}
    items = []
    for s in record.sources:
        support = "supports" if s.supports_claim else "contradicts"
        flag = ' <span class="warn">claimed verified, never fetched</span>' if normalise_url(s.url) in unfetched else ""
        items.append(f"<li>{link(s.url)} <span class=\"muted\">{esc(support)} · {esc(s.provenance)}</span>{flag}</li>")
    return f"<h3>Sources</h3><ul class=\"sources\">{''.join(items)}</ul>"


def _calls_html(record: VerdictRecord) -> str:
    """The calls in order, as asked; what each returned is in the transcript below."""
    if not record.tool_calls:
        return ""
    items = []
    for c in record.tool_calls:
        outcome = "ok" if c.ok else '<span class="warn">failed</span>'
        where = f" → {link(c.final_url)}" if c.final_url else ""
        items.append(f"<li>turn {c.turn}: <b>{esc(c.tool)}</b> <code>{esc(c.arguments)}</code> {outcome}{where}</li>")
    fetched = len(fetched_urls(record))
    return f"<h3>Tool calls ({len(record.tool_calls)}, {fetched} pages fetched)</h3><ol class=\"calls\">{''.join(items)}</ol>"


def _transcript_html(record: VerdictRecord) -> str:
    if not record.transcript:
        return ""
    messages = []
    for m in record.transcript:
        calls = "".join(f"<pre>→ {esc(c.get('name', '?'))}({esc(str(c.get('arguments', '')))})</pre>" for c in m.tool_calls)
        content = f"<pre>{esc(m.content)}</pre>" if m.content else ""
        if m.role == "system" and content:  # the same SIFT prompt in every record: folded away
            content = f"<details><summary>the system prompt</summary>{content}</details>"
        messages.append(f'<div class="msg role-{esc(m.role)}"><b>{esc(m.role)}</b>{content}{calls}</div>')
    return f"<h3>Transcript ({len(record.transcript)} messages)</h3>{''.join(messages)}"
