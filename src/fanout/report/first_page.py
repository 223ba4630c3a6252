"""The report's first page: every table and chart, and one row per edit, in one self-contained file.

Each edit's row links to its own page (fanout.report.edit_pages), which holds
the models' whole investigations; this page holds none of them, so it stays
small and quick to open however many edits the run has (issue 14: a
500-edit, four-model run gave an 11 MB page when the transcripts were
inline). Shared parts and the Content-Security-Policy are in page_shell: the
one script, which sorts and filters the edit table, runs because the policy
names its sha256; anything else a page might carry would not.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fanout.report.charts import (
    STANCE_COLOURS,
    VERDICT_COLOURS,
    Point,
    bars,
    esc,
    heatmap,
    reliability_chart,
    scatter,
    stacked_bars,
)
from fanout.report.team_views import evidence_noun, is_team, team_section
from fanout.stats.spend import cost_notes
from fanout.report.fmt import (
    short_names,
    subject_name,
    usd,
    with_interval,
)
from fanout.report.page_shell import notes_html, page
from fanout.report.human_section import guarantee_section, human_section, waiting
from fanout.report.claims_rows import COMMITTEE
from fanout.report.document import Report
from fanout.report.columns import CommitteeRow, EditRow
from fanout.judging.scales import STANCE_OF_TRUTH, stance
from fanout.stats.decisions import least_sure_first
from fanout.base.records import VERDICTS

EDIT_TABLE_SCRIPT = """(function () {
  var table = document.getElementById("edit-table"), tools = document.getElementById("edit-tools");
  if (!table || !tools) return;
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var show = document.getElementById("edit-show"), order = document.getElementById("edit-order");
  var find = document.getElementById("edit-find"), count = document.getElementById("edit-count");
  var keys = {
    logged: function (r) { return +r.dataset.n; },
    doubt: function (r) { return +r.dataset.doubt; },
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
        _factuality_section(report),
        _agreement_section(report, names),
        _verdict_section(report, names),
        _cost_section(report, names),
        _health_section(report, names),
        _committee_section(report, names),
        team_section(report),
        human_section(report),
        guarantee_section(report),
        _edits_section(report, edit_pages),
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
    simulated = (f'<p class="simulated" title="{esc(SIMULATED_WHY)}">{esc(SIMULATED)}</p>' if report.run.simulated()
                 else "")
    return (
        f'<header><h1>fanout report</h1><p class="sub">{esc(report.run.run_dir)}{labels} · '
        f"generated {esc(report.generated_at)}</p>{simulated}{_first_screen(report)}"
        f"<div class=\"cards\">{card_html}</div>"
        + (f'<ul class="notes">{notes}</ul>' if notes else "") + "</header>"
    )


SIMULATED = "Simulated models: these verdicts come from fanout's offline simulator, not from real LLMs."
SIMULATED_WHY = "The run's manifest shows one loopback server answering the chat API and search: `fanout sim`."


def _first_screen(report: Report) -> str:
    """Whom to trust, before anything else: each model's accuracy with its interval, $/correct, $/verdict and
    calibration, and the queue's count linked to the queue."""
    queue = f'<a href="#queue">{esc(waiting(report))}</a>' if report.totals["paused"] else esc(waiting(report))
    without = "" if report.labels is not None else (" · no labels: accuracy needs --labels FILE (or labels.yaml in "
                                                   "the run directory)")
    return (f'<div class="first" id="trust"><p class="queue-count">{queue}{esc(without)}</p>'
            f"{report.tables['trust'].html()}</div>")


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
             ("health", "Health"), ("committee", "Committee")]
    if report.tables["factuality"].rows:
        links.insert(0, ("factuality", "Factuality"))
    if is_team(report.run):
        links.append(("team", "Research team"))
    if report.tables["certificates"].rows:
        links.append(("guarantee", "Guarantee"))
    links.append(("edits", "Edits"))
    return "<nav>" + "".join(f'<a href="#{a}">{esc(t)}</a>' for a, t in links) + "</nav>"


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
    overall = report.tables["overall_agreement"].html()
    pairs = report.tables["pairwise_agreement"].html()
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
    chart = _cost_chart(report, names, scores)
    cost_table = report.tables["cost"].html()
    notes = "".join(f'<p class="stat">{esc(note)}</p>'
                    for note in cost_notes(report.costs, evidence_noun(report.run), report.run.preparations))
    score_table = ""
    if scores:
        score_table = "<h3>Accuracy against labels</h3>" + report.tables["scores"].html(
        ) + ('<p class="stat">Rates are over the edits each subject answered (coverage: the share of labelled '
             "edits it answered; a committee abstains on ties); reject = suspect or incorrect, scored against "
             "edits whose truth is incorrect (or reverted).</p>") + notes_html(report.notes_on["accuracy"]) \
            + _comparison_table(report, names)
    return (f'<section id="cost"><h2>Cost &amp; accuracy</h2><div class="charts"><div class="chart">{chart}</div></div>'
            f"{score_table}{_replay_table(report, names)}<h3>Cost</h3>{cost_table}{notes}</section>")


def _cost_chart(report: Report, names: dict[str, str], scores: list[dict[str, Any]]) -> str:
    """With labels, each model and committee rule's cost per edit against its accuracy; else each model's cost."""
    if not scores:
        return bars("Cost per model (USD, known costs)", [(names.get(c.model, c.model), c.total_cost_usd)
                                                          for c in report.costs])
    by_subject = {r["subject"]: r for r in scores}
    points = [Point(names[c.model], c.mean_cost_usd or 0.0, by_subject[c.model]["accuracy"], "model")
              for c in report.costs if by_subject.get(c.model, {}).get("accuracy") is not None]
    per_edit = report.totals["total_cost_usd"] / max(report.totals["edits"], 1)
    points += [Point(subject_name(rule, names), per_edit, by_subject[rule]["accuracy"], "committee")
               for rule in ("majority", "weighted", "dawid_skene") if by_subject[rule]["accuracy"] is not None]
    return scatter("Cost per edit against accuracy (3-way)", points,
                   "USD per edit (a model: its verdict; a committee: all verdicts)", "accuracy")


def _replay_table(report: Report, names: dict[str, str]) -> str:
    """The --policy replay: each policy beside each model and committee rule, on the same edits."""
    replay = report.tables["policy_replay"]
    if not replay.rows:
        return ""
    table = replay.html()
    return "<h3>Policy replay</h3>" + table + notes_html(report.notes_on["replay"])


def _comparison_table(report: Report, names: dict[str, str]) -> str:
    comparison = report.tables["model_comparison"]
    if not comparison.rows:
        return ""
    table = comparison.html()
    return ("<h3>Is one model better than another?</h3>" + table +
            '<p class="stat">McNemar’s exact test on the edits where exactly one of the two is right. '
            "A model is named best only when p &lt; 0.05 against every other.</p>")


def _factuality_section(report: Report) -> str:
    """A claims run's texts as the committee judged them: the share of each text's claims supported (nothing for
    another workload's run)."""
    texts = report.tables["factuality"]
    if not texts.rows:
        return ""
    committee = replace(texts, rows=[row for row in texts.rows if row.subject == COMMITTEE])
    explained = "".join(f"<li><b>{esc(row.text_id)}</b>: {esc(row.explanation)}</li>" for row in committee.rows
                        if row.refuted or row.unsure)
    return ('<section id="factuality"><h2>Factuality per text</h2>' + committee.html()
            + '<p class="stat">Committee: the reviewer\'s decision where one stands, else the committee\'s; the '
            "factuality is the share of the text's judged claims supported, with its 95 % Wilson interval. Each "
            "model's view is in <code>report --json</code> (<code>factuality</code>).</p>"
            + (f"<ul>{explained}</ul>" if explained else "") + "</section>")


def _health_section(report: Report, names: dict[str, str]) -> str:
    table = report.tables["health"].html()
    return ('<section id="health"><h2>Health</h2>' + table +
            '<p class="stat">“Verified” never fetched: sources the model said it read whose URL has no '
            "successful web_fetch in its own transcript. Tools via: native tool calling, or prompted "
            "(one JSON action per reply, for models without tool calling). Rule violations: verified-high/verified-low "
            "verdicts with no verified source.</p></section>")


def _calibration_html(report: Report, names: dict[str, str]) -> str:
    """Each model's confidence against the labels: the table and the reliability diagram (with labels only)."""
    table = report.tables["calibration"]
    if not table.rows:
        return ""
    series = [(names.get(m, m), [(b.mean_confidence, b.accuracy, b.n) for b in bins
                                 if b.mean_confidence is not None and b.accuracy is not None])
              for m, bins in report.calibration_bins.items()]
    return ('<h3 id="calibration">Calibration: is a model as sure as it is right?</h3>' + table.html()
            + '<div class="chart">' + reliability_chart("Reliability (10 equal-width bins)", series) + "</div>"
            + '<p class="stat">Confidence is what each model stated with its verdict (or, with --samples 2 or '
            "more, its samples’ stability). ECE: over 10 equal-width bins of confidence, |mean confidence − share "
            "right| weighted by the bin’s share of verdicts; Brier: mean (confidence − right)². Calibrated: through "
            "the model’s isotonic map fitted on its other labelled edits. Dots below the diagonal: overconfident.</p>")


def _dawid_skene_clause(report: Report) -> str:
    if not report.dawid_skene_queues:
        return ""
    return f"the Dawid–Skene posterior is below {report.options.policy.min_confidence:.2f}, "


def _committee_section(report: Report, names: dict[str, str]) -> str:
    rel = report.tables["reliability"].html()
    queue = report.tables["human_queue"]
    policy, limits, t = report.options.policy, report.options.thresholds, report.totals
    queue_html = queue.html() if queue.rows else "<p>None: the committee can decide every edit.</p>"
    return (
        '<section id="committee"><h2>Committee</h2>'
        f"<h3 id=\"queue\">Needs a human ({len(queue)} of {report.totals['edits']} edits)</h3>"
        f'<p class="stat">Queued when the majority holds less than {policy.min_agreement:.2f} of the votes, '
        f"ties, {_dawid_skene_clause(report)}the models’ mean confidence "
        f"is below {limits.pause:.2f} (--pause), or the top two stances’ vote shares are closer than "
        f"{limits.delta:.2f} (--delta). {t['auto_passed']} edits passed on their own (mean confidence at "
        f"least {limits.autopass:.2f}, --autopass), {t['decided']} were decided by the committee, "
        f"{t['paused']} paused.</p>{queue_html}"
        f"<h3>Model reliability</h3>{rel}{_calibration_html(report, names)}"
        f"{notes_html(report.notes_on['committee'])}</section>"
    )


def _edits_section(report: Report, pages: str) -> str:
    has_truth = report.labels is not None
    doubt = {d.rcid: i for i, d in enumerate(least_sure_first(report.decisions))}
    table = report.edit_table(pages).html(lambda e: _row_attrs(e, report.models, doubt[e.rcid]),
                                          ' class="edits" id="edit-table"')
    return (
        '<section id="edits"><h2>Edits</h2><p class="stat">An edit’s link opens its page: every model’s rationale, '
        "sources, tool calls and transcript. Highlighted rows need a human; rest the pointer on a verdict for "
        f"the start of its rationale.</p>{notes_html(report.notes_on['edits'])}{_edit_tools(has_truth)}"
        f"{table}</section>"
    )


def _edit_tools(has_truth: bool) -> str:
    """The controls EDIT_TABLE_SCRIPT drives; hidden until it runs, so a page without scripts shows none."""
    shows = [("all", "all edits"), ("queued", "queued for a human"), ("split", "models disagree"),
             ("gap", "a model gave no verdict")] + ([("wrong", "committee wrong")] if has_truth else [])
    orders = [("logged", "as logged"), ("doubt", "least sure first (mean confidence)"), ("cost", "costliest first"),
              ("item", "item")]
    show = "".join(f'<option value="{v}">{esc(t)}</option>' for v, t in shows)
    order = "".join(f'<option value="{v}">{esc(t)}</option>' for v, t in orders)
    return (f'<div class="tools" id="edit-tools" hidden><label>show <select id="edit-show">{show}</select></label>'
            f'<label>sort <select id="edit-order">{order}</select></label>'
            '<label>find <input id="edit-find" type="search" placeholder="item, property, value, verdict"></label>'
            '<span id="edit-count" class="muted"></span></div>')


def _row_attrs(e: EditRow, models: list[str], doubt: int) -> str:
    """The row's id (the edit pages link back to it), its highlight when queued, and what the script reads."""
    cls = ' class="human"' if e.committee.needs_human else ""
    data = "".join(f' data-{k}="{esc(v)}"' for k, v in (_row_data(e, models) | {"doubt": doubt}).items())
    return f' id="edit-{esc(e.rcid)}"{cls}{data}'


def _row_data(e: EditRow, models: list[str]) -> dict[str, object]:
    """What EDIT_TABLE_SCRIPT sorts and filters the row by (flags are "1" or "0")."""
    records, row = e.records, e.committee
    stances = {stance(r.verdict) for r in records.values() if r.verdict is not None}
    return {
        "n": e.position,
        "queued": int(row.needs_human),
        "split": int(len(stances) > 1),
        "gap": int(any(m not in records or records[m].verdict is None for m in models)),
        "wrong": int(_committee_wrong(row)),
        "cost": round(sum(r.cost_usd or 0.0 for r in records.values()), 6),
        "item": (e.item or e.qid).lower(),
    }


def _committee_wrong(row: CommitteeRow) -> bool:
    """Whether the Dawid–Skene consensus decided against the label (False without either)."""
    truth = row.truth
    return truth is not None and row.dawid_skene is not None and row.dawid_skene != STANCE_OF_TRUTH[truth]


def _footer(report: Report) -> str:
    return (f"<footer><p>fanout report of {esc(report.run.run_dir)} · {len(report.run.records)} records · "
            f"generated {esc(report.generated_at)}</p></footer>")
