"""The report as one self-contained HTML file: inline CSS, inline SVG, no script, no network.

Model output (rationales, URLs, transcripts) is untrusted: everything is
escaped, links are made only for http(s) URLs, and a Content-Security-Policy
forbids scripts and every outside fetch, so even a slip in escaping could not
load anything or run code when the file is opened.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from fanout.analysis.charts import (
    STANCE_COLOURS,
    VERDICT_COLOURS,
    Point,
    bars,
    esc,
    heatmap,
    scatter,
    stacked_bars,
)
from fanout.analysis.cost import cost_notes
from fanout.analysis.fmt import number, percent, ratio, short_names, subject_name, usd
from fanout.analysis.health import claimed_unfetched, fetched_urls, normalise_url
from fanout.analysis.load import EditInfo
from fanout.analysis.report import Report
from fanout.analysis.scales import STANCE_OF_TRUTH, stance
from fanout.records import VERDICTS, VerdictRecord

TEXT_LIMIT = 4000
"""Characters of one transcript message shown; the YAML view in verdicts/ has the rest."""
RESULT_LIMIT = 600
ROLE_LIMITS = {"system": 300, "tool": RESULT_LIMIT}
"""The system prompt is the same in every record and tool output is long: both are cut short
so a 2,000-verdict report stays a file a browser opens quickly."""

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

CSS = """
:root { --ink:#1f2328; --muted:#59636e; --line:#d0d7de; --soft:#f6f8fa; --accent:#0969da; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif; color:var(--ink); background:#fff; }
header { background:linear-gradient(135deg,#0b3d91,#0969da); color:#fff; padding:24px 32px 18px; }
header h1 { margin:0 0 4px; font-size:24px; }
header .sub { margin:0; opacity:.85; font-size:13px; word-break:break-all; }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin-top:16px; }
.card { background:rgba(255,255,255,.14); border-radius:8px; padding:8px 14px; min-width:120px; }
.card b { display:block; font-size:20px; }
.card span { font-size:12px; opacity:.9; }
nav { position:sticky; top:0; z-index:2; background:#fff; border-bottom:1px solid var(--line); padding:8px 32px; }
nav a { margin-right:16px; color:var(--accent); text-decoration:none; font-weight:500; }
main { padding:8px 32px 40px; max-width:1500px; }
section { margin-top:28px; }
h2 { font-size:19px; border-bottom:1px solid var(--line); padding-bottom:4px; }
h3 { font-size:15px; margin:18px 0 6px; }
.charts { display:flex; flex-wrap:wrap; gap:28px; align-items:flex-start; }
.chart { background:#fff; border:1px solid var(--line); border-radius:8px; padding:12px; }
.stat { color:var(--muted); }
table { border-collapse:collapse; margin:8px 0; font-size:13px; }
th, td { border-bottom:1px solid var(--line); padding:5px 10px; text-align:right; vertical-align:top; }
th { background:var(--soft); font-weight:600; }
.scroll { overflow-x:auto; }
.scroll td.l:first-child { white-space:nowrap; }
td.l, th.l { text-align:left; }
tr.human td { background:#fff8c5; }
table.edits { table-layout:fixed; width:100%; }
table.edits td, table.edits th { text-align:left; overflow-wrap:anywhere; }
.v { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; font-weight:600; white-space:nowrap; }
.v-verified-high { background:#116329; color:#fff; } .v-verified-low { background:#2da44e; color:#fff; }
.v-plausible { background:#8fd6a1; } .v-unverifiable { background:#d0d7de; }
.v-suspect { background:#f0883e; color:#fff; } .v-incorrect { background:#cf222e; color:#fff; }
.v-none { background:#fff; border:1px dashed #8c959f; color:var(--muted); }
.s-accept { color:#1a7f37; font-weight:600; } .s-reject { color:#cf222e; font-weight:600; } .s-unsure { color:#59636e; font-weight:600; }
.badge { display:inline-block; background:#fff8c5; border:1px solid #d4a72c; border-radius:10px; padding:0 6px; font-size:11px; }
.warn { color:#9a6700; font-weight:600; }
details summary { cursor:pointer; }
details .body { margin-top:6px; padding:8px; background:var(--soft); border-radius:6px; font-size:12.5px; }
details .body p { margin:4px 0 8px; }
pre { white-space:pre-wrap; overflow-wrap:anywhere; margin:2px 0 6px; font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,monospace; }
.msg { border-left:3px solid var(--line); padding-left:8px; margin:6px 0; }
.msg.role-assistant { border-color:#0969da; } .msg.role-tool { border-color:#8c959f; } .msg.role-user { border-color:#2da44e; }
ul.sources, ol.calls { padding-left:18px; margin:4px 0 8px; }
.muted { color:var(--muted); }
footer { padding:16px 32px 32px; color:var(--muted); font-size:12px; }
"""


def render_html(report: Report) -> str:
    names = short_names(report.models)
    sections = [
        _agreement_section(report, names),
        _verdict_section(report, names),
        _cost_section(report, names),
        _health_section(report, names),
        _committee_section(report, names),
        _edits_section(report, names),
    ]
    title = f"fanout report · {report.run.run_dir.name}"
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        + _header(report)
        + _nav(report)
        + "<main>" + "".join(sections) + "</main>"
        + _footer(report)
        + "</body></html>\n"
    )


def _header(report: Report) -> str:
    t = report.totals
    cards = [
        (str(t["edits"]), "edits"),
        (str(len(report.models)), "models"),
        (f"{t['with_verdict']}/{t['records']}", "verdicts / records"),
        (usd(t["total_cost_usd"], 4), "spent"),
        (usd(t["projected_cost_usd"], 2), f"next {t['projected_edits']} edits"),
        (str(t["needs_human"]), "need a human"),
    ]
    if report.labels is not None:
        best = _best_accuracy(report)
        if best is not None:
            cards.append((f"{best[1]:.2f}", f"best accuracy ({best[0]})"))
    card_html = "".join(f'<div class="card"><b>{esc(v)}</b><span>{esc(k)}</span></div>' for v, k in cards)
    labels = ""
    if report.labels is not None:
        labels = f" · labels: {esc(report.labels.path)} ({esc(report.labels.kind)})"
    return (
        f'<header><h1>fanout report</h1><p class="sub">{esc(report.run.run_dir)}{labels} · '
        f"generated {esc(report.generated_at)}</p><div class=\"cards\">{card_html}</div></header>"
    )


def _best_accuracy(report: Report) -> tuple[str, float] | None:
    names = short_names(report.models)
    scored = [(r["subject"], r["accuracy"]) for r in report.table("scores")
              if r["kind"] == "model" and r["accuracy"] is not None]
    if not scored:
        return None
    subject, accuracy = max(scored, key=lambda s: s[1])
    return names.get(subject, subject), accuracy


def _nav(report: Report) -> str:
    links = [("agreement", "Agreement"), ("verdicts", "Verdicts"), ("cost", "Cost & accuracy"),
             ("health", "Health"), ("committee", "Committee"), ("edits", "Edits")]
    return "<nav>" + "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in links) + "</nav>"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, left: Sequence[int] = (0,),
           raw: bool = False) -> str:
    """A table of text cells (escaped), or of ready-made HTML when raw=True; `left` = text columns."""
    def cell(tag: str, i: int, value: str) -> str:
        cls = ' class="l"' if i in left else ""
        return f"<{tag}{cls}>{value if raw else esc(value)}</{tag}>"

    head = "<tr>" + "".join(cell("th", i, esc(h) if raw else h) for i, h in enumerate(headers)) + "</tr>"
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f'<div class="scroll"><table><thead>{head}</thead><tbody>{body}</tbody></table></div>'


def _agreement_section(report: Report, names: dict[str, str]) -> str:
    models = report.models
    index = {m: i for i, m in enumerate(models)}
    exact: dict[tuple[int, int], tuple[float | None, int]] = {}
    three: dict[tuple[int, int], tuple[float | None, int]] = {}
    for r in report.table("pairwise_agreement"):
        i, j = index[r["model_a"]], index[r["model_b"]]
        exact[(i, j)] = exact[(j, i)] = (r["kappa"], r["n"])
        three[(i, j)] = three[(j, i)] = (r["kappa_three_way"], r["n"])
    labels = [names[m] for m in models]
    charts = ""
    if len(models) > 1:
        charts = (
            '<div class="charts">'
            f'<div class="chart">{heatmap("Cohen’s kappa, exact verdicts", labels, exact)}</div>'
            f'<div class="chart">{heatmap("Cohen’s kappa, accept / unsure / reject", labels, three)}</div>'
            "</div>"
        )
    overall = _table(
        ["scale", "edits (2+ verdicts)", "unanimous", "Fleiss’ kappa", "Krippendorff’s alpha"],
        [[r["scale"].replace("_", "-"), str(r["edits"]), percent(r["unanimous"]), ratio(r["fleiss_kappa"]),
          ratio(r["krippendorff_alpha"])] for r in report.table("overall_agreement")],
    )
    pairs = _table(
        ["pair", "edits both answered", "exact agreement", "3-way agreement", "kappa", "kappa 3-way"],
        [[f"{names[r['model_a']]} × {names[r['model_b']]}", str(r["n"]), percent(r["exact_agreement"]),
          percent(r["three_way_agreement"]), ratio(r["kappa"]), ratio(r["kappa_three_way"])]
         for r in report.table("pairwise_agreement")],
    )
    note = ('<p class="stat">Kappa: 0 is chance agreement, 1 perfect. When every rating falls in one '
            "category the value is 0/0; it is shown as 1.00 (they agreed on everything). "
            "Missing verdicts are left out, not counted as a category.</p>")
    return (f'<section id="agreement"><h2>Agreement</h2>{charts}<h3>All models</h3>{overall}'
            f"<h3>Pairs</h3>{pairs}{note}</section>")


def _verdict_section(report: Report, names: dict[str, str]) -> str:
    rows = report.table("verdict_distribution")
    labels = [names[r["model"]] for r in rows]
    exact = stacked_bars("Verdicts per model", labels,
                         [{k: r[k] for k in (*VERDICTS, "missing")} for r in rows], VERDICT_COLOURS)
    three_colours = {k: v for k, v in STANCE_COLOURS.items() if k is not None} | {"missing": "#ffffff"}
    three = stacked_bars("Stances per model", labels,
                         [{k: r[k] for k in ("accept", "unsure", "reject", "missing")} for r in rows], three_colours)
    return (f'<section id="verdicts"><h2>Verdicts</h2><div class="charts"><div class="chart">{exact}</div>'
            f'<div class="chart">{three}</div></div></section>')


def _cost_section(report: Report, names: dict[str, str]) -> str:
    scores = report.table("scores")
    by_subject = {r["subject"]: r for r in scores}
    edits = max(report.totals["edits"], 1)
    if scores:
        points = [Point(names[c.model], c.mean_cost_usd or 0.0, by_subject[c.model]["accuracy"], "model")
                  for c in report.costs if by_subject.get(c.model, {}).get("accuracy") is not None]
        per_edit = report.totals["total_cost_usd"] / edits
        points += [Point(subject_name(rule, names), per_edit, by_subject[rule]["accuracy"], "committee")
                   for rule in ("majority", "weighted", "dawid_skene") if by_subject[rule]["accuracy"] is not None]
        chart = scatter("Cost per edit against accuracy (3-way)", points,
                        "USD per edit (a model: its verdict; a committee: all verdicts)", "accuracy")
    else:
        chart = bars("Cost per model (USD, known costs)", [(names.get(c.model, c.model), c.total_cost_usd)
                                                           for c in report.costs])
    t = report.totals
    cost_rows = [[names.get(c.model, c.model), str(c.records), usd(c.total_cost_usd), usd(c.mean_cost_usd, 5),
                  number(c.mean_prompt_tokens, 0), number(c.mean_completion_tokens, 0),
                  str(c.cost_unknown), usd(c.projected_cost_usd, 2)] for c in report.costs]
    cost_rows.append(["total", str(t["records"]), usd(t["total_cost_usd"]), "",
                      "", "", str(t["cost_unknown"]), usd(t["projected_cost_usd"], 2)])
    cost_table = _table(["model", "verdicts", "total", "per verdict", "mean tokens in", "mean tokens out",
                         "cost unknown", f"next {t['projected_edits']} edits"], cost_rows)
    notes = "".join(f'<p class="stat">{esc(note)}</p>' for note in cost_notes(report.costs))
    score_table = ""
    if scores:
        score_table = "<h3>Accuracy against labels</h3>" + _table(
            ["subject", "kind", "answered / labelled", "accuracy", "reject precision", "reject recall",
             "cost", "cost per correct"],
            [[subject_name(r["subject"], names), r["kind"], f"{r['answered']}/{r['labelled']}",
              ratio(r["accuracy"]), ratio(r["reject_precision"]), ratio(r["reject_recall"]), usd(r["cost_usd"]),
              usd(r["cost_per_correct_usd"])] for r in scores],
            left=(0, 1),
        ) + ('<p class="stat">Rates are over the edits each subject answered; reject = suspect or incorrect, '
             "scored against edits whose truth is incorrect (or reverted).</p>")
    return (f'<section id="cost"><h2>Cost &amp; accuracy</h2><div class="charts"><div class="chart">{chart}</div></div>'
            f"{score_table}<h3>Cost</h3>{cost_table}{notes}</section>")


def _health_section(report: Report, names: dict[str, str]) -> str:
    rows = [[names[r["model"]], str(r["records"]), str(r["ok"]), str(r["timeout"]), str(r["incomplete"]),
             str(r["invalid_json"]), str(r["error"]), str(r["refused"]), number(r["mean_turns"]), number(r["mean_tool_calls"]),
             f"{r['web_search']}/{r['web_fetch']}", str(r["failed_tool_calls"]),
             f"{r['sources_verified']}/{r['sources_reported']}", str(r["verified_never_fetched"]),
             number(r["mean_duration_s"])]
            for r in report.table("health")]
    table = _table(["model", "records", "ok", "timeout", "incomplete", "invalid JSON", "error", "refused", "mean turns",
                    "mean tool calls", "search/fetch", "failed calls", "sources verified/reported",
                    "“verified” never fetched", "mean seconds"], rows)
    return ('<section id="health"><h2>Health</h2>' + table +
            '<p class="stat">“Verified” never fetched: sources the model said it read whose URL has no '
            "successful web_fetch in its own transcript.</p></section>")


def _committee_section(report: Report, names: dict[str, str]) -> str:
    rel = _table(["model", "Dawid–Skene reliability", "accuracy on labels", "vote weight", "weight from"],
                 [[names[r["model"]], ratio(r["dawid_skene_reliability"]), ratio(r["label_accuracy"]),
                   ratio(r["weight"]), r["weight_source"].replace("_", "–")] for r in report.table("reliability")])
    queue = report.table("human_queue")
    policy = report.options.policy
    rows = [[f'<a href="#edit-{q["rcid"]}">{esc(q["rcid"])}</a>', esc(q["qid"]), esc(q["property"] or ""),
             _stance_html(q["majority"]), ratio(q["majority_share"]), _stance_html(q["dawid_skene"]),
             ratio(q["dawid_skene_confidence"]), esc(q["reasons"])] for q in queue]
    queue_html = _table(["rcid", "item", "property", "majority", "share", "Dawid–Skene", "confidence", "why"],
                        rows, left=(0, 1, 2, 7), raw=True) if rows else "<p>None: the committee can decide every edit.</p>"
    return (
        '<section id="committee"><h2>Committee</h2>'
        f"<h3>Needs a human ({len(queue)} of {report.totals['edits']} edits)</h3>"
        f'<p class="stat">Queued when the majority holds less than {policy.min_agreement:.2f} of the votes, '
        f"ties, or the Dawid–Skene posterior is below {policy.min_confidence:.2f}.</p>{queue_html}"
        f"<h3>Model reliability</h3>{rel}</section>"
    )


def _stance_html(value: str | None) -> str:
    if value is None:
        return '<span class="muted">tie / none</span>'
    return f'<span class="s-{esc(value)}">{esc(value)}</span>'


def _edits_section(report: Report, names: dict[str, str]) -> str:
    by_edit = report.run.by_edit()
    committee = {row["rcid"]: row for row in report.table("committee")}
    has_truth = report.labels is not None
    headers = ["edit", *(["truth"] if has_truth else []), "committee", *[names[m] for m in report.models]]
    body = "".join(
        _edit_row(edit, committee[edit.rcid], by_edit[edit.rcid], report.models, has_truth)
        for edit in report.run.edits
    )
    widths = "".join(f'<col style="width:{w}">' for w in _column_widths(len(report.models), has_truth))
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    return (
        '<section id="edits"><h2>Edits</h2><p class="stat">Click a verdict for its rationale, sources, '
        "tool calls and transcript. Highlighted rows need a human.</p>"
        f'<table class="edits"><colgroup>{widths}</colgroup><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></section>"
    )


def _edit_row(edit: EditInfo, row: dict[str, Any], records: dict[str, VerdictRecord],
              models: list[str], has_truth: bool) -> str:
    cells = [_edit_cell(edit)]
    if has_truth:
        cells.append(_truth_html(row["truth"]))
    cells.append(_committee_cell(row))
    cells += [_record_cell(records[m]) if m in records else '<span class="muted">not run</span>' for m in models]
    cls = ' class="human"' if row["needs_human"] else ""
    return f'<tr id="edit-{esc(edit.rcid)}"{cls}>' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _column_widths(models: int, has_truth: bool) -> list[str]:
    fixed = ["150px", *(["100px"] if has_truth else []), "150px"]
    return fixed + [f"calc((100% - {sum(int(w[:-2]) for w in fixed)}px) / {max(models, 1)})"] * models


def _truth_html(truth: str | None) -> str:
    if truth is None:
        return '<span class="muted">–</span>'
    return f'<span class="s-{esc(STANCE_OF_TRUTH[truth])}">{esc(truth)}</span>'


def _edit_cell(edit: EditInfo) -> str:
    item = esc(edit.qid)
    if _is_entity_id(edit.qid):
        item = f'<a href="https://www.wikidata.org/wiki/{item}" rel="noopener noreferrer">{item}</a>'
    detail = " · ".join(esc(x) for x in (edit.property, edit.diff_type) if x)
    return f'<b>{item}</b> <span class="muted">{detail}</span><br><span class="muted">rcid {esc(edit.rcid)}</span>'


def _is_entity_id(text: str) -> bool:
    return len(text) > 1 and text[0] in "QPL" and text[1:].isdigit()


def _committee_cell(row: dict[str, Any]) -> str:
    parts = [f"{_stance_html(row['dawid_skene'])} <span class=\"muted\">DS {ratio(row['dawid_skene_confidence'])}</span>",
             f"<span class=\"muted\">majority</span> {_stance_html(row['majority'])} "
             f"<span class=\"muted\">{ratio(row['majority_share'])}</span>"]
    if row["needs_human"]:
        parts.append(f'<span class="badge">{esc(row["reasons"])}</span>')
    return "<br>".join(parts)


def _record_cell(record: VerdictRecord) -> str:
    verdict = record.verdict or "none"
    label = record.verdict or record.status
    status = "" if record.status == "ok" or record.verdict is None else f' <span class="warn">{esc(record.status)}</span>'
    summary = (f'<span class="v v-{esc(verdict)}">{esc(label)}</span>{status} '
               f'<span class="muted">{esc(usd(record.cost_usd, 4))}</span>')
    body = [
        f"<p>{esc(record.rationale or '(no rationale)')}</p>" if record.rationale or record.verdict else "",
        f'<p class="warn">{esc(record.error)}</p>' if record.error else "",
        _sources_html(record),
        _calls_html(record),
        _transcript_html(record),
        f'<p class="muted">stance {esc(stance(record.verdict) or "–")} · {record.token_usage.turns} turns · '
        f"{record.token_usage.prompt_tokens:,}+{record.token_usage.completion_tokens:,} tokens · "
        f"{esc(record.served_model or record.model)}</p>",
    ]
    return f'<details><summary>{summary}</summary><div class="body">{"".join(body)}</div></details>'


def _link(url: str) -> str:
    if urlsplit(url.strip()).scheme.lower() in ("http", "https"):
        return f'<a href="{esc(url.strip())}" rel="noopener noreferrer nofollow">{esc(url)}</a>'
    return esc(url)


def _sources_html(record: VerdictRecord) -> str:
    if not record.sources:
        return ""
    unfetched = {normalise_url(u) for u in claimed_unfetched(record)}
    items = []
    for s in record.sources:
        support = "supports" if s.supports_claim else "contradicts"
        flag = ' <span class="warn">claimed verified, never fetched</span>' if normalise_url(s.url) in unfetched else ""
        items.append(f"<li>{_link(s.url)} <span class=\"muted\">{esc(support)} · {esc(s.provenance)}</span>{flag}</li>")
    return f"<b>Sources</b><ul class=\"sources\">{''.join(items)}</ul>"


def _calls_html(record: VerdictRecord) -> str:
    if not record.tool_calls:
        return ""
    items = []
    for c in record.tool_calls:
        outcome = "ok" if c.ok else '<span class="warn">failed</span>'
        items.append(f"<li><b>{esc(c.tool)}</b> <code>{esc(_clip(c.arguments, 300))}</code> → {outcome}"
                     f"<pre>{esc(_clip(c.result, RESULT_LIMIT))}</pre></li>")
    fetched = len(fetched_urls(record))
    return (f"<details><summary>Tool calls ({len(record.tool_calls)}, {fetched} pages fetched)</summary>"
            f"<ol class=\"calls\">{''.join(items)}</ol></details>")


def _transcript_html(record: VerdictRecord) -> str:
    if not record.transcript:
        return ""
    messages = []
    for m in record.transcript:
        calls = "".join(f"<pre>→ {esc(c.get('name', '?'))}({esc(_clip(str(c.get('arguments', '')), 300))})</pre>"
                        for c in m.tool_calls)
        limit = ROLE_LIMITS.get(m.role, TEXT_LIMIT)
        content = f"<pre>{esc(_clip(m.content, limit))}</pre>" if m.content else ""
        messages.append(f'<div class="msg role-{esc(m.role)}"><b>{esc(m.role)}</b>{content}{calls}</div>')
    return f"<details><summary>Transcript ({len(record.transcript)} messages)</summary>{''.join(messages)}</details>"


def _clip(text: str | None, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit:,} more characters]"


def _footer(report: Report) -> str:
    notes = report.run.warnings + report.notes
    items = "".join(f"<li>{esc(n)}</li>" for n in notes)
    return (f"<footer>{'<b>Notes</b><ul>' + items + '</ul>' if items else ''}"
            f"<p>fanout report of {esc(report.run.run_dir)} · {len(report.run.records)} records · "
            f"generated {esc(report.generated_at)}</p></footer>")
