"""The human decisions' part of the report, for the terminal and the HTML page (tables: fanout.analysis.human).

Kept apart from summary.py and html.py so that each of them calls it in one
line: the source named, each model's and each committee rule's accuracy
against the decisions that stand, how often each rule decided as the human
did, and how many of the paused edits a human has already decided.
"""

from __future__ import annotations

from typing import Any

from fanout.analysis.charts import esc
from fanout.analysis.fmt import ratio, subject_name, text_table, with_interval
from fanout.analysis.html_page import notes_html
from fanout.analysis.report import Report

LEFT = ' class="l"'
RULE_NAMES = {"majority": "majority", "weighted": "weighted", "dawid_skene": "Dawid–Skene"}


def source_line(report: Report) -> str:
    """`human decisions: PATH (N of M edits; a accept, r reject, u unsure; by ...)`, or "" before any review."""
    s = report.to_json()["human_decisions"]
    if not s["edits_decided"]:
        return ""
    who = f"; by {', '.join(s['reviewers'])}" if s["reviewers"] else ""
    return (f"human decisions: {s['path']} ({s['edits_decided']} of {s['edits']} edits; {s['accept']} accept, "
            f"{s['reject']} reject, {s['unsure']} unsure{who})")


def paused_decided(report: Report) -> tuple[int, int]:
    """(paused edits a human has decided, paused edits)."""
    queue = report.table("human_queue")
    return sum(row["human"] is not None for row in queue), len(queue)


def _score_rows(report: Report, names: dict[str, str]) -> list[list[str]]:
    return [[subject_name(r["subject"], names), f"{r['answered']}/{r['labelled']}", with_interval(r, "accuracy"),
             ratio(r["reject_precision"]), ratio(r["reject_recall"])] for r in report.table("human_scores")]


def _agreement_rows(report: Report) -> list[list[str]]:
    return [[RULE_NAMES[r["rule"]], f"{r['agree']}/{r['both_decided']}", ratio(r["agreement"]),
             f"{r['paused_agree']}/{r['paused_both_decided']}"] for r in report.table("human_agreement")]


SCORE_HEADERS = ["subject", "answered", "accuracy [95% Wilson]", "reject P", "reject R"]
AGREEMENT_HEADERS = ["committee rule", "agrees with human", "share", "of them paused"]


def human_summary(report: Report, names: dict[str, str]) -> str:
    """The terminal's section; "" when nobody has reviewed an edit of the run."""
    line = source_line(report)
    if not line:
        return ""
    done, paused = paused_decided(report)
    parts = [f"Against human decisions\n{line}\nqueue: {done} of {paused} paused edits decided by a human"]
    if report.table("human_scores"):
        parts.append(text_table(SCORE_HEADERS, _score_rows(report, names)))
        parts.append(text_table(AGREEMENT_HEADERS, _agreement_rows(report)))
    return "\n".join(parts)


def human_section(report: Report, names: dict[str, str]) -> str:
    """The HTML page's section (id `human`); "" when nobody has reviewed an edit of the run."""
    line = source_line(report)
    if not line:
        return ""
    done, paused = paused_decided(report)
    body = f'<p class="stat">{esc(line)}. Queue: {done} of {paused} paused edits decided by a human.</p>'
    if report.table("human_scores"):
        body += _html_table(SCORE_HEADERS, _score_rows(report, names))
        body += "<h3>Committee and humans</h3>" + _html_table(AGREEMENT_HEADERS, _agreement_rows(report))
    return f'<section id="human"><h2>Against human decisions</h2>{body}{notes_html(report.notes_on["human"])}</section>'


def _html_table(headers: list[str], rows: list[list[str]]) -> str:
    def row(tag: str, cells: list[Any]) -> str:
        return "<tr>" + "".join(f"<{tag}{LEFT if i == 0 else ''}>{esc(c)}</{tag}>" for i, c in enumerate(cells)) + "</tr>"

    return (f'<div class="scroll"><table><thead>{row("th", headers)}</thead>'
            f'<tbody>{"".join(row("td", r) for r in rows)}</tbody></table></div>')
