"""A research team's run as a person reads it: the terminal's section, the page's section, an edit page's part.

The tables are the registered ones (fanout.report.builders_team); what is
here is what only a view says: who was on the team, the sentence on what the
second round added, and on an edit's page the brief, each pooled page with
the workers that found it and the judges that cited it, each worker's notes
and the aggregator's summary, marked as a model's summary (it was shown to
the judges after the evidence).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from fanout.base.records import EvidenceRecord, TeamEvidence
from fanout.report.charts import esc
from fanout.report.document import Report
from fanout.report.page_shell import link
from fanout.report.run_data import RunData
from fanout.report.team_figures import verified_citations
from fanout.tools.fusion import canonical_url


def is_team(run: RunData) -> bool:
    return run.evidence.get("mode") == "team"


def evidence_noun(run: RunData) -> str:
    """What the cost table's investigation column counts: shared investigations, or a team's steps."""
    return "team step(s)" if is_team(run) else "shared investigation(s)"


def team_line(evidence: Mapping[str, Any]) -> str:
    """Who was on the team, as the manifest pinned it."""
    aggregator = evidence.get("aggregator") or "none"
    return (f"planner {evidence.get('planner')}; workers {', '.join(evidence.get('workers') or [])}; "
            f"aggregator {aggregator}; up to {evidence.get('rounds')} round(s)")


def rounds_sentence(report: Report) -> str:
    rows = report.tables["team_rounds"].rows
    if not rows:
        return "No edit's pooled evidence is logged yet."
    r = rows[0]
    failed = f" {r.briefs_failed} brief(s) stayed invalid; those edits' workers researched alone." if r.briefs_failed else ""
    shown = f" {r.summaries} edit(s)' judges were shown the aggregator's summary." if r.summaries else ""
    return (f"The planner reviewed {r.reviewed} of {r.edits} edits and sent the workers out again on "
            f"{r.second_rounds}; that second round added {r.pages_added} page(s), {r.pages_added_cited} of them cited "
            f"as verified, by {r.verdicts_citing_added} verdict(s).{failed}{shown}")


def team_terminal(report: Report) -> str:
    if not is_team(report.run):
        return ""
    return ("Research team (" + team_line(report.run.evidence) + ")\n" + report.tables["team_roles"].terminal()
            + "\n\nWorkers: what each read, and its share of the sources the judges cited as verified\n"
            + report.tables["team_workers"].terminal() + "\n" + rounds_sentence(report))


def team_section(report: Report) -> str:
    """The page's section on the team: its members, each role's cost, the workers, the sources cited."""
    if not is_team(report.run):
        return ""
    return (f'<section id="team"><h2>Research team</h2><p class="stat">{esc(team_line(report.run.evidence))}. '
            "Every judge read the same pooled evidence, so the workers' share of the sources the judges cited as "
            f"verified measures research, apart from judging.</p><h3>Roles</h3>{report.tables['team_roles'].html()}"
            f"<h3>Workers</h3>{report.tables['team_workers'].html()}<p class=\"note\">{esc(rounds_sentence(report))}"
            f"</p><h3>Sources the judges cited as verified</h3>{report.tables['team_sources'].html()}</section>")


def team_edit_html(report: Report, rcid: int) -> str:
    """An edit page's part on the team's research: the briefs, the pooled pages, the notes, the summary."""
    evidence = report.run.team_evidence.get(rcid)
    if evidence is None or evidence.team is None:
        return ""
    team = evidence.team
    cited = Counter(url for url, _, _ in verified_citations(report.run.by_edit().get(rcid, {})))
    parts = [f"<p class=\"stat\">{esc(_who(team))} Evidence {esc(evidence.evidence_id)}, {esc(evidence.status)}.</p>",
             _brief_html("The planner's brief", team.brief, team.brief_status),
             _brief_html("The second brief, after the workers reported", team.second_brief, None) if team.second_brief
             else "", _pages_html(team, cited), _notes_html(team), _summary_html(team), _warnings_html(evidence)]
    return '<section id="team"><h2>The research team</h2>' + "".join(parts) + "</section>"


def _who(team: TeamEvidence) -> str:
    rounds = "in two rounds" if team.rounds > 1 else "in one round"
    return f"{team.planner} planned; {', '.join(team.workers)} researched at the same time, {rounds}."


def _brief_html(title: str, brief: Mapping[str, Sequence[str]] | None, status: str | None) -> str:
    if brief is None:
        return f"<h3>{esc(title)}</h3><p class=\"note\">It failed ({esc(status or '')}): the workers researched alone.</p>"
    items = "".join(f"<dt>{esc(key.replace('_', ' '))}</dt><dd>{'<br>'.join(esc(v) for v in values)}</dd>"
                    for key, values in brief.items() if values)
    return f'<h3>{esc(title)}</h3><dl class="edit">{items}</dl>'


def _pages_html(team: TeamEvidence, cited: Counter[str]) -> str:
    if not team.pages:
        return "<h3>Pages read</h3><p class=\"note\">No worker read a page.</p>"
    rows = "".join(f"<tr><td>{link(p.fetched)}</td><td>{esc(', '.join(p.found_by))}</td><td>{p.round}</td>"
                   f"<td>{cited.get(canonical_url(p.fetched), 0) or cited.get(p.url, 0)}</td></tr>" for p in team.pages)
    return ("<h3>Pages read</h3><table><thead><tr><th>page</th><th>found by</th><th>round</th>"
            f"<th>judges citing it as verified</th></tr></thead><tbody>{rows}</tbody></table>")


def _notes_html(team: TeamEvidence) -> str:
    notes = "".join(f"<h4>{esc(n.model)}, round {n.round} ({esc(n.status)}; {n.searches} search(es), "
                    f"{n.fetches} page(s))</h4><pre>{esc(n.notes or n.error or '(no notes)')}</pre>"
                    for n in team.workers_notes)
    return f"<h3>The workers' notes</h3>{notes}"


def _summary_html(team: TeamEvidence) -> str:
    if team.aggregator is None:
        return ""
    if team.summary is None:
        return f"<h3>The aggregator's summary</h3><p class=\"note\">{esc(team.aggregator)} gave none " \
               f"({esc(team.summary_status or 'not asked: no notes')}).</p>"
    return (f"<h3>The aggregator's summary</h3><p class=\"note\">Written by {esc(team.aggregator)}: a model's summary "
            f"of the notes, shown to the judges after the evidence.</p><pre>{esc(team.summary)}</pre>")


def _warnings_html(evidence: EvidenceRecord) -> str:
    if not evidence.warnings:
        return ""
    return "<h3>Warnings</h3><ul>" + "".join(f"<li>{esc(w)}</li>" for w in evidence.warnings) + "</ul>"
