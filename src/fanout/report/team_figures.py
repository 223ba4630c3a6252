"""What a research team's run shows (--evidence team): who found what the judges cited, and what each role did.

Research skill apart from judging skill: every judge of an edit read the same
pooled evidence, so the pages the judges cited as verified are credited to
the workers that found them. A worker's share is the share of all verified
citations of pages the team read whose page it found (a page two workers
found counts for both, so the shares may sum past 1; `alone` counts the pages
only it found). The second round's worth is what it added: pages first read
then, and how often the judges cited them.

Pages are matched by canonical URL (fanout.tools.fusion.canonical_url), the
form the pooled record keeps, so a judge that cites `www.` or a redirect's
target is credited to the same page.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from fanout.base.records import EvidenceRecord, PooledPage, TeamEvidence, TeamStep, VerdictRecord
from fanout.report.run_data import RunData
from fanout.tools.fusion import canonical_url

REFERENCE = "a reference shown to every judge"
UNREAD = "not read by the team"


@dataclass(frozen=True)
class Found:
    """A page of the pooled evidence: who read it, and in which round first."""

    by: tuple[str, ...]
    round: int


@dataclass(frozen=True)
class TeamCitation:
    """A source the judges of an edit cited as verified, and who on the team found it."""

    rcid: int
    qid: str
    url: str
    found_by: str
    """The workers that read it (comma-separated), REFERENCE, or UNREAD."""
    round: int | None
    """The round it was first read in (2: the planner's second round found it)."""
    cited_by: int
    """Judges that cited it as verified."""
    supports: int
    """Of them, those that said it supports the claim."""


@dataclass(frozen=True)
class TeamWorkerRow:
    """One worker across the run: what it read, and how much of what the judges cited it found."""

    worker: str
    edits: int
    searches: int
    pages: int
    alone: int
    """Pages only this worker read."""
    round2_pages: int
    cited: int
    """Verified citations of pages it read."""
    cited_share: float | None
    """`cited` over every verified citation of a page the team read."""
    cited_alone: int
    """Verified citations of pages only it read."""
    cost_usd: float


@dataclass(frozen=True)
class TeamRoleRow:
    """One role as one model played it: its steps, how many did not end ok, what they cost."""

    role: str
    model: str
    steps: int
    not_ok: int
    cost_usd: float
    cost_per_edit_usd: float | None


@dataclass(frozen=True)
class TeamRoundsRow:
    """The planner's part across the run: briefs that failed, reviews, and what the second round added."""

    edits: int
    briefs_failed: int
    reviewed: int
    second_rounds: int
    pages_added: int
    """Pages first read in a second round."""
    pages_added_cited: int
    """Of them, pages some judge cited as verified."""
    verdicts_citing_added: int
    """Verdicts that cite a page the second round found."""
    summaries: int
    """Edits whose judges were shown an aggregator's summary."""


def pooled_pages(evidence: EvidenceRecord) -> dict[str, Found]:
    """Each page the team read, by canonical URL (the one asked for and the one landed on after redirects)."""
    found: dict[str, Found] = {}
    for step, call in zip(evidence.steps, evidence.tool_calls):
        if call.tool != "web_fetch" or not call.ok:
            continue
        page = Found(tuple(w for w in step.get("by", "").split(", ") if w), int(step.get("round") or 1))
        for url in (_url(call.arguments), call.final_url):
            if url:
                found.setdefault(canonical_url(url), page)
    return found


def _url(arguments: str) -> str:
    try:
        value = json.loads(arguments)
    except ValueError:
        return ""
    return str(value.get("url") or "") if isinstance(value, dict) else ""


def verified_citations(records: Mapping[str, VerdictRecord]) -> Iterator[tuple[str, VerdictRecord, bool]]:
    """(canonical URL, record, supports) for every source an edit's judges cited as verified."""
    for record in records.values():
        for source in record.sources:
            if source.provenance == "verified":
                yield canonical_url(source.url), record, source.supports_claim


def team_citations(run: RunData) -> list[TeamCitation]:
    rows = []
    qids = {e.rcid: e.qid for e in run.edits}
    for rcid, records in run.by_edit().items():
        evidence = run.team_evidence.get(rcid)
        if evidence is None:
            continue
        pages, references = pooled_pages(evidence), {canonical_url(u) for u in evidence.references}
        cited: Counter[str] = Counter()
        supports: Counter[str] = Counter()
        for url, _, says in verified_citations(records):
            cited[url] += 1
            supports[url] += says
        for url, count in cited.items():
            page = pages.get(url)
            by = ", ".join(page.by) if page else REFERENCE if url in references else UNREAD
            rows.append(TeamCitation(rcid, qids.get(rcid, ""), url, by, page.round if page else None, count,
                                     supports[url]))
    return rows


def team_workers(run: RunData) -> list[TeamWorkerRow]:
    read = [c for c in team_citations(run) if c.round is not None]
    total = sum(c.cited_by for c in read)
    return [_worker_row(run, worker, read, total) for worker in list(run.evidence.get("workers") or [])]


def _worker_row(run: RunData, worker: str, read: list[TeamCitation], total: int) -> TeamWorkerRow:
    """One worker's row: what it read and what it cost here, the credit for the judges' citations apart."""
    steps, pages = _worker_steps(run, worker), _worker_pages(run, worker)
    cited, cited_share, cited_alone = _credit(worker, read, total)
    return TeamWorkerRow(
        worker=worker, edits=len({s.edit_rcid for s in steps}),
        searches=sum(c.tool == "web_search" for s in steps for c in s.tool_calls), pages=len(pages),
        alone=sum(p.found_by == [worker] for p in pages), round2_pages=sum(p.round == 2 for p in pages),
        cited=cited, cited_share=cited_share, cited_alone=cited_alone,
        cost_usd=sum(s.cost_usd or 0.0 for s in steps))


def _worker_steps(run: RunData, worker: str) -> list[TeamStep]:
    return [s for s in run.team_steps if s.role == "worker" and s.model == worker]


def _worker_pages(run: RunData, worker: str) -> list[PooledPage]:
    """The pooled pages this worker read, over every edit (a page read for two edits counts twice)."""
    return [p for e in run.team_evidence.values() if e.team for p in e.team.pages if worker in p.found_by]


def _credit(worker: str, read: list[TeamCitation], total: int) -> tuple[int, float | None, int]:
    """A worker's verified citations, their share of all of them (`total`), and those of pages only it read."""
    mine = [c for c in read if worker in c.found_by.split(", ")]
    cited = sum(c.cited_by for c in mine)
    return cited, cited / total if total else None, sum(c.cited_by for c in mine if c.found_by == worker)


def team_roles(run: RunData) -> list[TeamRoleRow]:
    """Each (role, model) with steps, in the order roles act; a step a resume redid counts each time it was paid."""
    counted: dict[tuple[str, str], list[float | None]] = {}
    failed: Counter[tuple[str, str]] = Counter()
    for step in run.team_steps:
        counted.setdefault((step.role, step.model), []).append(step.cost_usd)
        failed[(step.role, step.model)] += step.status != "ok"
    edits = len(run.team_evidence) or None
    order = {"planner": 0, "worker": 1, "aggregator": 2}
    return [TeamRoleRow(role, model, len(costs), failed[(role, model)], sum(c or 0.0 for c in costs),
                        sum(c or 0.0 for c in costs) / edits if edits else None)
            for (role, model), costs in sorted(counted.items(), key=lambda kv: (order.get(kv[0][0], 3), kv[0][1]))]


def team_rounds(run: RunData) -> list[TeamRoundsRow]:
    if not run.team_evidence:
        return []
    teams = _teams(run)
    added = [c for c in team_citations(run) if c.round == 2]
    return [TeamRoundsRow(
        edits=len(teams), briefs_failed=sum(t.brief is None for t in teams), reviewed=_reviewed(run),
        second_rounds=sum(t.rounds > 1 for t in teams), pages_added=sum(p.round == 2 for t in teams for p in t.pages),
        pages_added_cited=len(added), verdicts_citing_added=_verdicts_citing(run, added),
        summaries=sum(t.summary is not None for t in teams))]


def _teams(run: RunData) -> list[TeamEvidence]:
    """The team part of each edit's pooled evidence (an edit researched without a team has none)."""
    return [e.team for e in run.team_evidence.values() if e.team is not None]


def _reviewed(run: RunData) -> int:
    """Edits whose plan the planner reviewed (a `plan-2` step), counted once however often a resume redid it."""
    return len({s.edit_rcid for s in run.team_steps if s.step == "plan-2"})


def _verdicts_citing(run: RunData, added: list[TeamCitation]) -> int:
    """Verdicts that cite a page the second round found: one verdict counts once however many it cites."""
    added_urls = {(c.rcid, c.url) for c in added}
    return sum(1 for rcid, records in run.by_edit().items() for r in records.values()
               if any((rcid, url) in added_urls for url, record, _ in verified_citations({r.model: r})))
