"""The human decisions' part of the report, for the terminal and the HTML page.

Its tables are built like every other (fanout.report.builders, from the figures of fanout.stats.human_decisions).

Kept apart from terminal.py and first_page.py so that each of them calls it in one
line: the source named, each model's and each committee rule's accuracy
against the decisions that stand, how often each rule decided as the human
did, and how many of the paused edits a human has already decided.
"""

from __future__ import annotations

from fanout.report.charts import esc
from fanout.report.page_shell import notes_html
from fanout.report.document import Report
from fanout.stats.judged_by_people import percent


def source_line(report: Report) -> str:
    """`human decisions: PATH (N of M edits; a accept, r reject, u unsure; by ...)`, or "" before any review."""
    s = report.to_json()["human_decisions"]
    if not s["edits_decided"]:
        return ""
    who = f"; by {', '.join(s['reviewers'])}" if s["reviewers"] else ""
    return (f"human decisions: {s['path']} ({s['edits_decided']} of {s['edits']} edits; {s['accept']} accept, "
            f"{s['reject']} reject, {s['unsure']} unsure{who})")


def waiting(report: Report, *more: str) -> str:
    """`2 of 12 edits wait for a human (4 paused, 2 of them decided by a human)`: the paused edits nobody decided
    yet, the count every view gives (the queue, the desk, compare); `more` goes inside the brackets."""
    t = report.totals
    left, paused, edits = t["waiting_for_human"], t["paused"], t["edits"]
    head = f"{left} of {edits} edits wait for a human" if left else "no edit waits for a human"
    done = paused - left
    said = [] if not done else [f"{paused} paused, all decided by a human" if not left
                                else f"{paused} paused, {done} of them decided by a human"]
    said += more
    return f"{head} ({'; '.join(said)})" if said else head


def paused_decided(report: Report) -> tuple[int, int]:
    """(paused edits a human has decided, paused edits)."""
    queue = report.table("human_queue")
    return sum(row["human"] is not None for row in queue), len(queue)


def human_summary(report: Report) -> str:
    """The terminal's section; "" when nobody has reviewed an edit of the run."""
    line = source_line(report)
    if not line:
        return ""
    done, paused = paused_decided(report)
    parts = [f"Against human decisions\n{line}\nqueue: {done} of {paused} paused edits decided by a human"]
    if report.tables["human_scores"]:
        parts.append(report.tables["human_scores"].terminal())
        parts.append(report.tables["human_agreement"].terminal())
    return "\n".join(parts)


def human_section(report: Report) -> str:
    """The HTML page's section (id `human`); "" when nobody has reviewed an edit of the run."""
    line = source_line(report)
    if not line:
        return ""
    done, paused = paused_decided(report)
    body = f'<p class="stat">{esc(line)}. Queue: {done} of {paused} paused edits decided by a human.</p>'
    if report.tables["human_scores"]:
        body += report.tables["human_scores"].html()
        body += f"<h3>Committee and humans</h3>{report.tables['human_agreement'].html()}"
    return f'<section id="human"><h2>Against human decisions</h2>{body}{notes_html(report.notes_on["human"])}</section>'


def guarantee_heading(report: Report) -> str:
    """What the certificates are at and whether they decide, in one line."""
    g = report.options.guarantee
    level = f"at {percent(g.target)} agreement, risk {g.risk:g}"
    if g.applied:
        return f"Decisions with a guarantee ({level}; they decide what passes alone, in place of --autopass)"
    return f"Decisions with a guarantee ({level}; shown only: --target-agreement {g.target:g} makes them decide)"


def guarantee_summary(report: Report) -> str:
    """The terminal's section: the certificates, then each model's and rule's accuracy from few labels; "" when
    nobody decided an edit and no certificate was asked for."""
    certificates = report.tables["certificates"]
    if not certificates.rows:
        return ""
    parts = [guarantee_heading(report), f"from {_people(report)}", certificates.terminal(),
             *(f"  {row.why}" for row in certificates.rows)]
    accuracy = report.tables["accuracy_ppi"]
    if accuracy.rows:
        parts += ["", ACCURACY_HEADING, accuracy.terminal()]
    return "\n".join(parts)


ACCURACY_HEADING = "Accuracy from few labels (95 % intervals: the random human decisions alone, and PPI++ with every verdict)"


def guarantee_section(report: Report) -> str:
    """The page's section (id `guarantee`); "" as in guarantee_summary."""
    certificates = report.tables["certificates"]
    if not certificates.rows:
        return ""
    body = f'<p class="stat">{esc(guarantee_heading(report))}: from {esc(_people(report))}.</p>{certificates.html()}'
    accuracy = report.tables["accuracy_ppi"]
    if accuracy.rows:
        body += f"<h3>{esc(ACCURACY_HEADING)}</h3>{accuracy.html()}"
    return (f'<section id="guarantee"><h2>Decisions with a guarantee</h2>{body}'
            f'{notes_html(report.notes_on["guarantee"])}</section>')


def _people(report: Report) -> str:
    return report.people.describe() if report.people is not None else "no human decisions yet"

