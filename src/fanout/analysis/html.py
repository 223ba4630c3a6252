"""The report's first page: every table and chart, and one row per edit, in one self-contained file.

Each edit's row links to its own page (fanout.analysis.html_edit), which holds
the models' whole investigations; this page holds none of them, so it stays
small and quick to open however many edits the run has (issue 14: a
500-edit, four-model run gave an 11 MB page when the transcripts were
inline). Shared parts and the Content-Security-Policy are in html_page: the
one script, which sorts and filters the edit table, runs because the policy
names its sha256; anything else a page might carry would not.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fanout.analysis.change import Change, diff_url
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
from fanout.analysis.cost import cache_columns, cost_notes
from fanout.analysis.health import refused_column
from fanout.analysis.fmt import (
    number,
    percent,
    ratio,
    settled_steps,
    short_names,
    subject_name,
    usd,
    with_interval,
)
from fanout.analysis.html_edit import change_html, committee_html, model_anchor
from fanout.analysis.human_view import human_section
from fanout.analysis.html_page import entity_link, notes_html, page, stance_html
from fanout.analysis.load import EditInfo
from fanout.analysis.report import Report
from fanout.judging.scales import STANCE_OF_TRUTH, stance
from fanout.records import VERDICTS, VerdictRecord

TOOLTIP_LIMIT = 300
"""Characters of a rationale shown when the pointer rests on a verdict; its edit page has the rest."""

EDIT_TABLE_SCRIPT = """(function () {
  var table = document.getElementById("edit-table"), tools = document.getElementById("edit-tools");
  if (!table || !tools) return;
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var show = document.getElementById("edit-show"), order = document.getElementById("edit-order");
  var find = document.getElementById("edit-find"), count = document.getElementById("edit-count");
  var keys = {
    logged: function (r) { return +r.dataset.n; },
    confidence: function (r) { return +r.dataset.conf; },
    cost: function (r) { return -r.dataset.cost; },
    item: function (r) { return r.dataset.item; }
  };
  function update() {
    var want = show.value, text = find.value.trim().toLowerCase(), key = keys[order.value], shown = 0;
    rows.slice().sort(function (a, b) {
      var x = key(a), y = key(b);
      return x < y ? -1 : x > y ? 1 : a.dataset.n - b.dataset.n;
    }).forEach(function (r) {
      var keep = (want === "all" || r.dataset[want] === "1") &&
                 (!text || r.textContent.toLowerCase().indexOf(text) >= 0);
      r.hidden = !keep;
      if (keep) shown++;
      body.appendChild(r);
    });
    count.textContent = shown + " of " + rows.length + " edits";
  }
  show.addEventListener("change", update);
  order.addEventListener("change", update);
  find.addEventListener("input", update);
  count.textContent = rows.length + " of " + rows.length + " edits";
  tools.hidden = false;
})();"""
"""Sorts and filters the edit table in place; without it (scripts off) the table is simply all edits in order.

It touches the table only when the reader asks: moving 500 rows as the page opens took 0.4 s (make bench-report)."""


def render_html(report: Report, edit_pages: str = "report/edits") -> str:
    """The first page; `edit_pages` is the folder of the edit pages, as a link from this page reaches it."""
    names = short_names(report.models)
    sections = [
        _agreement_section(report, names),
        _verdict_section(report, names),
        _cost_section(report, names),
        _health_section(report, names),
        _committee_section(report, names),
        human_section(report, names),
        _edits_section(report, names, edit_pages),
    ]
    body = _header(report) + _nav(report) + "<main>" + "".join(sections) + "</main>" + _footer(report)
    return page(f"fanout report · {report.run.run_dir.name}", body, scripts=[EDIT_TABLE_SCRIPT])


def _header(report: Report) -> str:
    t = report.totals
    cards: list[tuple[str, ...]] = [
        (str(t["edits"]), "edits"),
        (str(len(report.models)), "models"),
        (f"{t['with_verdict']}/{t['records']}", "verdicts / records"),
        (usd(t["total_cost_usd"], 4), "spent"),
        (usd(t["projected_cost_usd"], 2), f"next {t['projected_edits']} edits"),
        (f"{t['auto_passed']} / {t['decided']} / {t['paused']}", "auto-passed / decided / paused"),
    ]
    if report.table("model_comparison"):
        cards.append(_best_card(report))
    cards += _cheapest_card(report) + _agreeable_card(report)
    card_html = "".join(f'<div class="card"><b>{esc(c[0])}</b><span>{esc(c[1])}</span>'
                        + (f'<span class="who">{esc(c[2])}</span>' if len(c) > 2 else "") + "</div>" for c in cards)
    labels = ""
    if report.labels is not None:
        labels = f" · labels: {esc(report.labels.path)} ({esc(report.labels.kind)})"
    notes = "".join(f"<li>{esc(n)}</li>" for n in report.run.warnings + report.notes_on["sample"])
    return (
        f'<header><h1>fanout report</h1><p class="sub">{esc(report.run.run_dir)}{labels} · '
        f"generated {esc(report.generated_at)}</p><div class=\"cards\">{card_html}</div>"
        + (f'<ul class="notes">{notes}</ul>' if notes else "") + "</header>"
    )


def _cheapest_card(report: Report) -> list[tuple[str, ...]]:
    model = report.totals["cheapest_model"]
    if model is None or len(report.models) < 2:
        return []
    cost = next(c for c in report.costs if c.model == model)
    return [(usd(cost.mean_cost_usd, 5), "cheapest, per verdict", short_names(report.models)[model])]


def _agreeable_card(report: Report) -> list[tuple[str, ...]]:
    """The model that agrees most with the others, with the 95 % interval of its mean kappa."""
    model = report.totals["most_agreeable_model"]
    if model is None:
        return []
    row = next(r for r in report.table("model_agreement") if r["model"] == model)
    return [(with_interval(row, "mean_kappa"), "most agreeable: mean kappa [95 %]", short_names(report.models)[model])]


def _best_card(report: Report) -> tuple[str, str]:
    """The best model only when McNemar tells it apart from every other; otherwise say none is."""
    names = short_names(report.models)
    best = report.totals["best_model"]
    if best is None:
        return "none", "best model: none told apart (McNemar p ≥ 0.05)"
    row = next(r for r in report.table("scores") if r["subject"] == best)
    return with_interval(row, "accuracy"), f"best accuracy ({names[best]}, 95 % interval)"


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
        ["scale", "edits (2+ verdicts)", "unanimous", "every model answered", "unanimous there", "Fleiss’ kappa",
         "Krippendorff’s alpha [95 %]", "ordinal alpha [95 %]"],
        [[r["scale"].replace("_", "-"), str(r["edits"]), percent(r["unanimous"]), str(r["complete_edits"]),
          percent(r["unanimous_complete"]), ratio(r["fleiss_kappa"]), with_interval(r, "krippendorff_alpha"),
          with_interval(r, "krippendorff_alpha_ordinal")] for r in report.table("overall_agreement")],
    )
    pairs = _table(
        ["pair", "edits both answered", "exact agreement", "3-way agreement", "kappa [95 %]",
         "quadratic kappa [95 %]", "kappa 3-way [95 %]"],
        [[f"{names[r['model_a']]} × {names[r['model_b']]}", str(r["n"]), percent(r["exact_agreement"]),
          percent(r["three_way_agreement"]), with_interval(r, "kappa"), with_interval(r, "kappa_quadratic"),
          with_interval(r, "kappa_three_way")]
         for r in report.table("pairwise_agreement")],
    )
    note = ('<p class="stat">Kappa and alpha: 0 is chance agreement, 1 perfect; intervals are 95 % percentile '
            "bootstraps over edits (1 000 resamples, fixed seed). Quadratic kappa and ordinal alpha weigh a "
            "disagreement by its distance on the ordered scale (verified-high … incorrect). When every rating "
            "falls in one category the value is 0/0 and shown as undefined. Fleiss’ kappa takes each edit "
            "with its own number of verdicts. Missing verdicts are left out, not counted as a category.</p>")
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
    cache = cache_columns(report.costs)
    cost_rows = [[names.get(c.model, c.model), str(c.records), usd(c.total_cost_usd), usd(c.mean_cost_usd, 5),
                  number(c.mean_prompt_tokens, 0), number(c.mean_completion_tokens, 0), *cache(c),
                  str(c.cost_unknown), usd(c.projected_cost_usd, 2)] for c in report.costs]
    cost_rows.append(["total", str(t["records"]), usd(t["total_cost_usd"]), "",
                      "", "", *cache(t), str(t["cost_unknown"]), usd(t["projected_cost_usd"], 2)])
    cost_table = _table(["model", "verdicts", "total", "per verdict", "mean tokens in", "mean tokens out", *cache(None),
                         "cost unknown", f"next {t['projected_edits']} edits"], cost_rows)
    notes = "".join(f'<p class="stat">{esc(note)}</p>' for note in cost_notes(report.costs))
    score_table = ""
    if scores:
        score_table = "<h3>Accuracy against labels</h3>" + _table(
            ["subject", "kind", "answered / labelled", "coverage", "accuracy [95 % Wilson]", "reject precision",
             "reject recall", "cost", "cost per correct"],
            [[subject_name(r["subject"], names), r["kind"], f"{r['answered']}/{r['labelled']}", percent(r["coverage"]),
              with_interval(r, "accuracy"), ratio(r["reject_precision"]), ratio(r["reject_recall"]), usd(r["cost_usd"]),
              usd(r["cost_per_correct_usd"])] for r in scores],
            left=(0, 1),
        ) + ('<p class="stat">Rates are over the edits each subject answered (coverage: the share of labelled '
             "edits it answered; a committee abstains on ties); reject = suspect or incorrect, scored against "
             "edits whose truth is incorrect (or reverted).</p>") + notes_html(report.notes_on["accuracy"]) \
            + _comparison_table(report, names)
    return (f'<section id="cost"><h2>Cost &amp; accuracy</h2><div class="charts"><div class="chart">{chart}</div></div>'
            f"{score_table}{_replay_table(report, names)}<h3>Cost</h3>{cost_table}{notes}</section>")


def _replay_table(report: Report, names: dict[str, str]) -> str:
    """The --policy replay: each policy beside each model and committee rule, on the same edits."""
    rows = report.table("policy_replay")
    if not rows:
        return ""
    table = _table(
        ["subject", "kind", "edits", "cost", "per edit", "answered / labelled", "accuracy [95 %]", "escalated", "unagreed",
         "settled at step 1/2/…"],
        [[subject_name(r["subject"], names), r["kind"], str(r["edits"]), usd(r["cost_usd"]),
          usd(r["cost_per_edit_usd"], 5), f"{r['answered']}/{r['labelled']}", with_interval(r, "accuracy"), percent(r["escalation_rate"]),
          percent(r["unagreed"]), settled_steps(r)] for r in rows],
        left=(0, 1),
    )
    return "<h3>Policy replay</h3>" + table + notes_html(report.notes_on["replay"])


def _comparison_table(report: Report, names: dict[str, str]) -> str:
    rows = report.table("model_comparison")
    if not rows:
        return ""
    table = _table(
        ["pair", "labelled edits both answered", "only the first right", "only the second right", "McNemar p"],
        [[f"{names[r['model_a']]} × {names[r['model_b']]}", str(r["edits"]), str(r["only_a_right"]),
          str(r["only_b_right"]), f"{r['p_value']:.3f}"] for r in rows],
    )
    return ("<h3>Is one model better than another?</h3>" + table +
            '<p class="stat">McNemar’s exact test on the edits where exactly one of the two is right. '
            "A model is named best only when p &lt; 0.05 against every other.</p>")


def _health_section(report: Report, names: dict[str, str]) -> str:
    health = report.table("health")
    refused = refused_column(health)
    rows = [[names[r["model"]], r["tool_protocol"], str(r["records"]), str(r["ok"]), str(r["timeout"]), str(r["incomplete"]),
             str(r["invalid_json"]), str(r["error"]), *refused(r), number(r["mean_turns"]), number(r["mean_tool_calls"]),
             f"{r['web_search']}/{r['web_fetch']}", str(r["failed_tool_calls"]),
             f"{r['sources_verified']}/{r['sources_reported']}", str(r["verified_never_fetched"]),
             str(r["rule_violations"]), number(r["mean_duration_s"])]
            for r in health]
    table = _table(["model", "tools via", "records", "ok", "timeout", "incomplete", "invalid JSON", "error", *refused(None), "mean turns",
                    "mean tool calls", "search / fetch", "failed calls", "sources verified / reported",
                    "“verified” never fetched", "rule violations", "mean seconds"], rows)
    return ('<section id="health"><h2>Health</h2>' + table +
            '<p class="stat">“Verified” never fetched: sources the model said it read whose URL has no '
            "successful web_fetch in its own transcript. Tools via: native tool calling, or prompted "
            "(one JSON action per reply, for models without tool calling). Rule violations: verified-high/verified-low "
            "verdicts with no verified source.</p></section>")


def _committee_section(report: Report, names: dict[str, str]) -> str:
    rel = _table(["model", "Dawid–Skene reliability", "accuracy on labels", "vote weight", "weight from"],
                 [[names[r["model"]], ratio(r["dawid_skene_reliability"]), ratio(r["label_accuracy"]),
                   ratio(r["weight"]), r["weight_source"].replace("_", "–")] for r in report.table("reliability")])
    queue = report.table("human_queue")
    policy, limits, t = report.options.policy, report.options.thresholds, report.totals
    rows = [[f'<a href="#edit-{q["rcid"]}">{esc(q["rcid"])}</a>', _item_html(report.changes.get(q["rcid"]), q["qid"]),
             esc(q["property"] or ""),
             stance_html(q["majority"]), ratio(q["majority_share"]), stance_html(q["dawid_skene"]),
             ratio(q["dawid_skene_confidence"]), esc(q["reasons"])] for q in queue]
    queue_html = _table(["rcid", "item", "property", "majority", "share", "Dawid–Skene", "confidence", "why"],
                        rows, left=(0, 1, 2, 7), raw=True) if rows else "<p>None: the committee can decide every edit.</p>"
    return (
        '<section id="committee"><h2>Committee</h2>'
        f"<h3>Needs a human ({len(queue)} of {report.totals['edits']} edits)</h3>"
        f'<p class="stat">Queued when the majority holds less than {policy.min_agreement:.2f} of the votes, '
        f"ties, the Dawid–Skene posterior is below {policy.min_confidence:.2f}, the models’ mean confidence "
        f"is below {limits.pause:.2f} (--pause), or the top two stances’ vote shares are closer than "
        f"{limits.delta:.2f} (--delta). {t['auto_passed']} edits passed on their own (mean confidence at "
        f"least {limits.autopass:.2f}, --autopass), {t['decided']} were decided by the committee, "
        f"{t['paused']} paused.</p>{queue_html}"
        f"<h3>Model reliability</h3>{rel}{notes_html(report.notes_on['committee'])}</section>"
    )


def _item_html(change: Change | None, qid: str) -> str:
    label = change.item_label if change is not None else None
    return f"{esc(label)} ({entity_link(qid)})" if label else entity_link(qid)


def _edits_section(report: Report, names: dict[str, str], pages: str) -> str:
    by_edit = report.run.by_edit()
    committee = {row["rcid"]: row for row in report.table("committee")}
    has_truth = report.labels is not None
    headers = ["edit", *(["truth"] if has_truth else []), "committee", *[names[m] for m in report.models]]
    body = "".join(
        _edit_row(n, edit, report.changes.get(edit.rcid), committee[edit.rcid], by_edit[edit.rcid], report.models,
                  pages, has_truth)
        for n, edit in enumerate(report.run.edits)
    )
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    return (
        '<section id="edits"><h2>Edits</h2><p class="stat">An edit’s link opens its page: every model’s rationale, '
        "sources, tool calls and transcript. Highlighted rows need a human; rest the pointer on a verdict for "
        f"the start of its rationale.</p>{notes_html(report.notes_on['edits'])}{_edit_tools(has_truth)}"
        f'<div class="scroll"><table class="edits" id="edit-table"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div></section>"
    )


def _edit_tools(has_truth: bool) -> str:
    """The controls EDIT_TABLE_SCRIPT drives; hidden until it runs, so a page without scripts shows none."""
    shows = [("all", "all edits"), ("queued", "queued for a human"), ("split", "models disagree"),
             ("gap", "a model gave no verdict")] + ([("wrong", "committee wrong")] if has_truth else [])
    orders = [("logged", "as logged"), ("confidence", "least sure first"), ("cost", "costliest first"),
              ("item", "item")]
    show = "".join(f'<option value="{v}">{esc(t)}</option>' for v, t in shows)
    order = "".join(f'<option value="{v}">{esc(t)}</option>' for v, t in orders)
    return (f'<div class="tools" id="edit-tools" hidden><label>show <select id="edit-show">{show}</select></label>'
            f'<label>sort <select id="edit-order">{order}</select></label>'
            '<label>find <input id="edit-find" type="search" placeholder="item, property, value, verdict"></label>'
            '<span id="edit-count" class="muted"></span></div>')


def _edit_row(n: int, edit: EditInfo, change: Change | None, row: dict[str, Any], records: dict[str, VerdictRecord],
              models: list[str], pages: str, has_truth: bool) -> str:
    page_href = f"{pages}/{edit.rcid}.html"
    cells = [f'<td class="edit">{_edit_cell(edit, change, page_href)}</td>']
    cells += [f"<td>{_truth_html(row['truth'])}</td>"] if has_truth else []
    cells.append(f"<td>{committee_html(row)}</td>")
    cells += [f"<td>{_verdict_cell(records[m], f'{page_href}#{model_anchor(i)}')}</td>" if m in records
              else '<td><span class="muted">not run</span></td>' for i, m in enumerate(models)]
    attrs = "".join(f' data-{k}="{esc(v)}"' for k, v in _row_data(n, edit, change, row, records, models).items())
    cls = ' class="human"' if row["needs_human"] else ""
    return f'<tr id="edit-{esc(edit.rcid)}"{cls}{attrs}>' + "".join(cells) + "</tr>"


def _row_data(n: int, edit: EditInfo, change: Change | None, row: dict[str, Any], records: dict[str, VerdictRecord],
              models: list[str]) -> dict[str, object]:
    """What EDIT_TABLE_SCRIPT sorts and filters the row by (flags are "1" or "0")."""
    stances = {stance(r.verdict) for r in records.values() if r.verdict is not None}
    truth = row["truth"]
    wrong = truth is not None and row["dawid_skene"] is not None and row["dawid_skene"] != STANCE_OF_TRUTH[truth]
    confidence = row["dawid_skene_confidence"]
    return {
        "n": n,
        "queued": int(row["needs_human"]),
        "split": int(len(stances) > 1),
        "gap": int(any(m not in records or records[m].verdict is None for m in models)),
        "wrong": int(wrong),
        "conf": -1 if confidence is None else round(confidence, 4),
        "cost": round(sum(r.cost_usd or 0.0 for r in records.values()), 6),
        "item": ((change.item_label if change else None) or edit.qid).lower(),
    }


def _edit_cell(edit: EditInfo, change: Change | None, page_href: str) -> str:
    """The item, what was edited, old → new, and the links: the edit's page, the item, the diff."""
    title = change.item_label if change and change.item_label else edit.qid
    lines = [f'<a href="{esc(page_href)}"><b>{esc(title)}</b></a>'
             + (f" {entity_link(edit.qid)}" if title != edit.qid else "")]
    if change is not None:
        lines.append(esc(change.what))
        lines.append(change_html(change, edit.diff_type))
    else:
        lines.append(esc(edit.property or ""))
    kind = esc((edit.diff_type or "").replace("_", " "))
    parent = change.parent_revid if change is not None else None
    diff = f' · <a href="{esc(diff_url(edit.revid, parent))}" rel="noopener noreferrer">diff</a>' if edit.revid else ""
    lines.append(f'<span class="muted">{kind}{diff} · rcid {esc(edit.rcid)}</span>')
    return "<br>".join(lines)


def _verdict_cell(record: VerdictRecord, href: str) -> str:
    """The verdict, linked to its section of the edit page, the start of its rationale on hover, and its cost."""
    tip = (record.rationale or record.error or "")[:TOOLTIP_LIMIT]
    tip += "…" if len(record.rationale or record.error or "") > TOOLTIP_LIMIT else ""
    label = record.verdict or record.status
    badge = (f'<a class="v v-{esc(record.verdict or "none")}" href="{esc(href)}" title="{esc(tip)}">{esc(label)}</a>')
    if record.status != "ok" and record.verdict is not None:
        badge += f' <span class="warn">{esc(record.status)}</span>'
    return f'{badge} <span class="muted nowrap">{esc(usd(record.cost_usd, 4))}</span>'


def _truth_html(truth: str | None) -> str:
    if truth is None:
        return '<span class="muted">–</span>'
    return f'<span class="s-{esc(STANCE_OF_TRUTH[truth])}">{esc(truth)}</span>'


def _footer(report: Report) -> str:
    return (f"<footer><p>fanout report of {esc(report.run.run_dir)} · {len(report.run.records)} records · "
            f"generated {esc(report.generated_at)}</p></footer>")
