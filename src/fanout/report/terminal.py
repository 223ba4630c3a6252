"""The terminal summary: the few tables a person reads right after a run.

The tables' columns are defined once (fanout.report.columns), for this and the page alike; what is
here is what only the terminal says: its headings, and the sentences between the tables."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from fanout.base.safe_text import for_terminal
from fanout.report.team_views import evidence_noun, team_line, team_terminal
from fanout.stats.spend import cost_notes
from fanout.report.fmt import short_names, with_interval
from fanout.report.human_section import guarantee_summary, human_summary, waiting
from fanout.report.claims_rows import COMMITTEE
from fanout.report.document import Report
from fanout.report.table import fixed, share
from fanout.judging.scales import STANCES

QUEUE_SHOWN = 10


def render_summary(report: Report) -> str:
    names = short_names(report.models)
    parts = [
        _header(report),
        _factuality(report),
        _health(report),
        _distribution(report),
        _agreement(report),
        _committee(report),
        _scores(report, names),
        human_summary(report),
        guarantee_summary(report),
        _replay(report),
        _prefilter(report),
        _cost(report),
        team_terminal(report),
    ]
    notes = report.run.warnings + report.notes
    if notes:
        parts.append("Notes\n" + "\n".join(f"- {for_terminal(n)}" for n in notes))
    return "\n\n".join(p for p in parts if p) + "\n"


def _header(report: Report) -> str:
    t = report.totals
    scope = f" of {report.run.edits_in_scope} in scope" if report.run.edits_in_scope else ""
    line = (
        f"fanout report: {report.run.run_dir}\n"
        f"{_count(t['edits'], 'edit')}{scope} x {_count(len(report.models), 'model')}: {t['records']} records, "
        f"{t['with_verdict']} with a verdict"
    )
    if report.run.evidence.get("mode") == "shared":
        line += f"\nevidence: shared, investigated by {report.run.evidence.get('investigator')}"
    elif report.run.evidence.get("mode") == "team":
        line += f"\nevidence: team ({team_line(report.run.evidence)})"
    if report.labels is not None:
        line += f"\nlabels: {report.labels.path} ({report.labels.kind}, {t['labelled_edits']} edits labelled)"
    if report.run.simulated():
        line += "\nSIMULATED MODELS: the verdicts come from fanout's offline simulator, not from real LLMs."
    line += f"\n{waiting(report, f'fanout queue {report.run.run_dir}')}"
    if report.labels is not None:
        line += "\n\nWhom to trust\n" + report.tables["trust"].terminal()
    return line


def _factuality(report: Report) -> str:
    """A claims run's first table: each text's factuality as the committee (or a reviewer) judged its claims."""
    texts = report.tables["factuality"]
    if not texts.rows:
        return ""
    committee = [row for row in texts.rows if row.subject == COMMITTEE]
    refuted = [f"- {row.text_id}: {row.explanation}" for row in committee if row.refuted]
    return ("Factuality per text (committee: the share of each text's claims supported; per model in --json)\n"
            + replace(texts, rows=committee).terminal() + ("\n" + "\n".join(refuted) if refuted else ""))


def _prefilter(report: Report) -> str:
    """A watched run's first stage (`fanout watch --prefilter`), by revert-risk score; nothing without one."""
    prefilter = report.tables.get("prefilter")
    if prefilter is None or not len(prefilter):
        return ""
    return "Prefilter (revert risk): what went past the jury, and what the jury and the stream found\n" + \
        prefilter.terminal()


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _health(report: Report) -> str:
    return "Health (per model)\n" + report.tables["health"].terminal()


def _distribution(report: Report) -> str:
    return "Verdicts\n" + report.tables["verdict_distribution"].terminal()


def _agreement(report: Report) -> str:
    pairs = report.tables["pairwise_agreement"]
    text = "Agreement (pairs; Cohen's kappa with 95% bootstrap intervals; quadratic = ordinal)\n"
    text += pairs.terminal() if pairs.rows else "(one model)"
    overall = {r["scale"]: r for r in report.tables["overall_agreement"].rows}
    ex, tw = overall["exact"], overall["three_way"]
    text += (
        f"\nAll models: Krippendorff's alpha {with_interval(ex, 'krippendorff_alpha')}, "
        f"ordinal {with_interval(ex, 'krippendorff_alpha_ordinal')}; "
        f"3-way {with_interval(tw, 'krippendorff_alpha')}, ordinal {with_interval(tw, 'krippendorff_alpha_ordinal')}"
        f"\nFleiss' kappa {fixed(2)(ex['fleiss_kappa'])} (3-way {fixed(2)(tw['fleiss_kappa'])}); unanimous on "
        f"{share(ex['unanimous_complete'])} of the {ex['complete_edits']} edits every model answered "
        f"(3-way {share(tw['unanimous_complete'])})"
    )
    return text


def _committee(report: Report) -> str:
    committee = report.tables["committee"].rows
    lines = ["Committee (accept / unsure / reject / no decision)"]
    for rule, label in (("majority", "majority"), ("weighted", "weighted"), ("dawid_skene", "Dawid–Skene")):
        counts = Counter(getattr(row, rule) for row in committee)
        lines.append(f"  {label:<12} " + " / ".join(str(counts.get(s, 0)) for s in (*STANCES, None)))
    queue = report.tables["human_queue"]
    policy, limits, t = report.options.policy, report.options.thresholds, report.totals
    lines.append(
        f"Thresholds (--pause {limits.pause:.2f}, --delta {limits.delta:.2f}, {_passing(report)}): "
        f"{t['auto_passed']} auto-passed / {t['decided']} decided / {t['paused']} paused"
    )
    if report.options.sources:
        lines.append("  from the environment: " + ", ".join(f"--{name} from {variable}" for name, variable
                                                            in report.options.sources.items()))
    lines.append(
        f"Needs a human: {len(queue)} of {len(committee)} edits "
        f"(agreement < {policy.min_agreement:.2f}, tie, "
        + (f"Dawid–Skene confidence < {policy.min_confidence:.2f}, " if report.dawid_skene_queues else "") +
        f"mean confidence < {limits.pause:.2f}, or top two closer than {limits.delta:.2f})"
    )
    if queue.rows:
        lines.append(replace(queue, rows=queue.rows[:QUEUE_SHOWN]).terminal())
        if len(queue) > QUEUE_SHOWN:
            lines.append(f"... and {len(queue) - QUEUE_SHOWN} more (see --json or --html)")
    return "\n".join(lines)


def _passing(report: Report) -> str:
    """What lets an edit pass alone: --autopass, or the certificates in its place."""
    g = report.options.guarantee
    if g.applied:
        return f"auto-decisions certified at {g.target:g} agreement, risk {g.risk:g}"
    return f"--autopass {report.options.thresholds.autopass:.2f}"


def _scores(report: Report, names: dict[str, str]) -> str:
    scores = report.tables["scores"]
    if not scores.rows:
        return ""
    calibration = report.tables["calibration"]
    shown = "\n\nCalibration against labels (ECE over 10 equal-width bins)\n" + calibration.terminal()
    return ("Accuracy against labels (3-way)\n" + scores.terminal() + _best_line(report, names)
            + (shown if calibration.rows else ""))


def _replay(report: Report) -> str:
    replay = report.tables["policy_replay"]
    if not replay.rows:
        return ""
    return "Policy replay (--policy; every row on the same edits)\n" + replay.terminal()


def _best_line(report: Report, names: dict[str, str]) -> str:
    if len(report.table("model_comparison")) == 0:
        return ""
    best = report.totals["best_model"]
    if best:
        return f"\nBest model: {names[best]} (McNemar p < 0.05 against every other model)."
    return "\nNo model is told apart from every other (McNemar p >= 0.05 for some pair): none is named best."


def _cost(report: Report) -> str:
    return "\n".join(["Cost\n" + report.tables["cost"].terminal(),
                      *cost_notes(report.costs, evidence_noun(report.run), report.run.preparations)])
