"""The terminal summary: the few tables a person reads right after a run."""

from __future__ import annotations

from collections import Counter

from fanout.analysis.fmt import (
    number,
    percent,
    ratio,
    settled_steps,
    with_interval,
    short_names,
    subject_name,
    text_table,
    usd,
)
from fanout.analysis.cost import cache_columns, cost_notes
from fanout.analysis.health import refused_column
from fanout.analysis.human_view import human_summary
from fanout.analysis.report import Report
from fanout.judging.scales import STANCES

QUEUE_SHOWN = 10


def render_summary(report: Report) -> str:
    names = short_names(report.models)
    parts = [
        _header(report),
        _health(report, names),
        _distribution(report, names),
        _agreement(report, names),
        _committee(report),
        _scores(report, names),
        human_summary(report, names),
        _replay(report, names),
        _cost(report, names),
    ]
    notes = report.run.warnings + report.notes
    if notes:
        parts.append("Notes\n" + "\n".join(f"- {n}" for n in notes))
    return "\n\n".join(p for p in parts if p) + "\n"


def _header(report: Report) -> str:
    t = report.totals
    scope = f" of {report.run.edits_in_scope} in scope" if report.run.edits_in_scope else ""
    line = (
        f"fanout report: {report.run.run_dir}\n"
        f"{_count(t['edits'], 'edit')}{scope} x {_count(len(report.models), 'model')}: {t['records']} records, "
        f"{t['with_verdict']} with a verdict"
    )
    if report.labels is not None:
        line += f"\nlabels: {report.labels.path} ({report.labels.kind}, {t['labelled_edits']} edits labelled)"
    return line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _health(report: Report, names: dict[str, str]) -> str:
    health = report.table("health")
    refused = refused_column(health)
    rows = [
        [
            names[r["model"]], r["tool_protocol"], str(r["records"]), str(r["ok"]), str(r["timeout"]), str(r["incomplete"]),
            str(r["invalid_json"]), str(r["error"]), *refused(r), number(r["mean_turns"]), number(r["mean_tool_calls"]),
            f"{r['sources_verified']}/{r['sources_reported']}", str(r["verified_never_fetched"]),
            str(r["rule_violations"]),
        ]
        for r in health
    ]
    headers = ["model", "tools via", "recs", "ok", "t/o", "incompl", "bad json", "error", *refused(None), "turns", "tools",
               "src ver/rep", "ver. unfetched", "rule viol."]
    return "Health (per model)\n" + text_table(headers, rows)


def _distribution(report: Report, names: dict[str, str]) -> str:
    keys = ["verified-high", "verified-low", "plausible", "unverifiable", "suspect", "incorrect", "missing"]
    headers = ["model", "ver-high", "ver-low", "plausible", "unverif", "suspect", "incorrect", "none"]
    rows = [[names[r["model"]]] + [str(r[k]) for k in keys] for r in report.table("verdict_distribution")]
    return "Verdicts\n" + text_table(headers, rows)


def _agreement(report: Report, names: dict[str, str]) -> str:
    pairs = report.table("pairwise_agreement")
    rows = [
        [f"{names[r['model_a']]} x {names[r['model_b']]}", str(r["n"]), percent(r["exact_agreement"]),
         percent(r["three_way_agreement"]), with_interval(r, "kappa"), with_interval(r, "kappa_quadratic"),
         with_interval(r, "kappa_three_way")]
        for r in pairs
    ]
    text = "Agreement (pairs; Cohen's kappa with 95% bootstrap intervals; quadratic = ordinal)\n"
    headers = ["pair", "n", "exact", "3-way", "kappa", "kappa quadratic", "kappa 3-way"]
    text += text_table(headers, rows) if rows else "(one model)"
    overall = {r["scale"]: r for r in report.table("overall_agreement")}
    ex, tw = overall["exact"], overall["three_way"]
    text += (
        f"\nAll models: Krippendorff's alpha {with_interval(ex, 'krippendorff_alpha')}, "
        f"ordinal {with_interval(ex, 'krippendorff_alpha_ordinal')}; "
        f"3-way {with_interval(tw, 'krippendorff_alpha')}, ordinal {with_interval(tw, 'krippendorff_alpha_ordinal')}"
        f"\nFleiss' kappa {ratio(ex['fleiss_kappa'])} (3-way {ratio(tw['fleiss_kappa'])}); unanimous on "
        f"{percent(ex['unanimous_complete'])} of the {ex['complete_edits']} edits every model answered "
        f"(3-way {percent(tw['unanimous_complete'])})"
    )
    return text


def _committee(report: Report) -> str:
    committee = report.table("committee")
    lines = ["Committee (accept / unsure / reject / no decision)"]
    for rule, label in (("majority", "majority"), ("weighted", "weighted"), ("dawid_skene", "Dawid–Skene")):
        counts = Counter(row[rule] for row in committee)
        lines.append(f"  {label:<12} " + " / ".join(str(counts.get(s, 0)) for s in (*STANCES, None)))
    queue = report.table("human_queue")
    policy, limits, t = report.options.policy, report.options.thresholds, report.totals
    lines.append(
        f"Thresholds (--pause {limits.pause:.2f}, --delta {limits.delta:.2f}, --autopass {limits.autopass:.2f}): "
        f"{t['auto_passed']} auto-passed / {t['decided']} decided / {t['paused']} paused"
    )
    lines.append(
        f"Needs a human: {len(queue)} of {len(committee)} edits "
        f"(agreement < {policy.min_agreement:.2f}, tie, confidence < {policy.min_confidence:.2f}, "
        f"mean confidence < {limits.pause:.2f}, or top two closer than {limits.delta:.2f})"
    )
    if queue:
        rows = [[str(q["rcid"]), q["qid"], q["property"] or "", q["majority"] or ("tie" if q["votes"] else "–"), q["reasons"]]
                for q in queue[:QUEUE_SHOWN]]
        lines.append(text_table(["rcid", "qid", "prop", "majority", "why"], rows, left=5))
        if len(queue) > QUEUE_SHOWN:
            lines.append(f"... and {len(queue) - QUEUE_SHOWN} more (see --json or --html)")
    return "\n".join(lines)


def _scores(report: Report, names: dict[str, str]) -> str:
    scores = report.table("scores")
    if not scores:
        return ""
    rows = [
        [subject_name(r["subject"], names), f"{r['answered']}/{r['labelled']}",
         with_interval(r, "accuracy"), ratio(r["reject_precision"]), ratio(r["reject_recall"]),
         usd(r["cost_per_correct_usd"])]
        for r in scores
    ]
    headers = ["subject", "answered", "accuracy [95% Wilson]", "reject P", "reject R", "$/correct"]
    return "Accuracy against labels (3-way)\n" + text_table(headers, rows) + _best_line(report, names)


def _replay(report: Report, names: dict[str, str]) -> str:
    rows = report.table("policy_replay")
    if not rows:
        return ""
    table = [[subject_name(r["subject"], names), r["kind"], str(r["edits"]), usd(r["cost_usd"]),
              usd(r["cost_per_edit_usd"], 5), f"{r['answered']}/{r['labelled']}", with_interval(r, "accuracy"), percent(r["escalation_rate"]),
              percent(r["unagreed"]), settled_steps(r)] for r in rows]
    headers = ["subject", "kind", "edits", "cost", "per edit", "answered", "accuracy [95% Wilson]", "escalated", "unagreed",
               "settled at step 1/2/..."]
    return "Policy replay (--policy; every row on the same edits)\n" + text_table(headers, table, left=2)


def _best_line(report: Report, names: dict[str, str]) -> str:
    if len(report.table("model_comparison")) == 0:
        return ""
    best = report.totals["best_model"]
    if best:
        return f"\nBest model: {names[best]} (McNemar p < 0.05 against every other model)."
    return "\nNo model is told apart from every other (McNemar p >= 0.05 for some pair): none is named best."


def _cost(report: Report, names: dict[str, str]) -> str:
    t = report.totals
    n = report.options.project_edits
    cache = cache_columns(report.costs)
    rows = [
        [names.get(c.model, c.model), str(c.records), usd(c.total_cost_usd), usd(c.mean_cost_usd, 5),
         f"{c.prompt_tokens:,}/{c.completion_tokens:,}", *cache(c), usd(c.projected_cost_usd, 2)]
        for c in report.costs
    ]
    rows.append(["total", str(t["records"]), usd(t["total_cost_usd"]), "",
                 f"{t['prompt_tokens']:,}/{t['completion_tokens']:,}", *cache(t), usd(t["projected_cost_usd"], 2)])
    headers = ["model", "verdicts", "total", "per verdict", "tokens in/out", *cache(None), f"next {n} edits"]
    text = "Cost\n" + text_table(headers, rows)
    return "\n".join([text, *cost_notes(report.costs)])
