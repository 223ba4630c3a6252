"""A research team's steps pooled into the one evidence record every judge of the item reads.

The workers' tool calls are put together in the team's order (round 1's
workers, then round 2's): a search or a fetch that two workers made is kept
once, with both names; pages are the same page when their canonical URLs are
(fanout.tools.fusion.canonical_url: `www.`, tracking parameters and trailing
slashes do not tell pages apart); a fetch that failed for one worker and
worked for another keeps the text that came back. Each pooled call keeps its
whole result (the judges read what the workers read) and who made it.

A search's hits that an earlier pooled search listed already are left out of
its result (it says how many), so the judges read each hit once.

The record's `tool_calls` are the pooled calls, numbered 1.. in the order the
judges read them, so the provenance check of a judge's sources is against
every page any worker read, and a sample's evidence order names the same
turns the judge was shown.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from fanout.base.item import Item
from fanout.base.records import (
    EvidenceRecord, PooledPage, TeamEvidence, TeamStep, ToolCallLog, Usage, WorkerNotes, utc_now,
)
from fanout.llm.cost import COST_SOURCES, weakest
from fanout.research.roster import Team
from fanout.research.shared import TEAM_PROTOCOL
from fanout.tools.fusion import canonical_url

TEAM_INVESTIGATOR = "team"
"""EvidenceRecord.investigator of a team's pooled evidence (who did what is in its `team`)."""


class Pool:
    """The pooled calls so far, by what makes two calls the same call."""

    def __init__(self) -> None:
        self.steps: list[dict[str, str]] = []
        self.calls: list[ToolCallLog] = []
        self.by: list[list[str]] = []
        self.rounds: list[int] = []
        self._index: dict[tuple[str, str], int] = {}

    def add(self, step: dict[str, str], call: ToolCallLog, worker: str, round_: int) -> None:
        key = call_key(call)
        at = self._index.get(key)
        if at is None:
            self._index[key] = len(self.steps)
            self.steps.append(dict(step))
            self.calls.append(call)
            self.by.append([worker])
            self.rounds.append(round_)
            return
        if worker not in self.by[at]:
            self.by[at].append(worker)
        if call.ok and not self.calls[at].ok:  # the page came back for this worker: its text is what counts
            self.steps[at], self.calls[at] = dict(step), call

    def pooled_steps(self) -> list[dict[str, str]]:
        """The steps as the judges read them: who made each, the round, and each search hit shown once."""
        listed: set[str] = set()
        return [{**step, "result": once(step, listed), "by": ", ".join(by), "round": str(round_)}
                for step, by, round_ in zip(self.steps, self.by, self.rounds)]

    def pooled_calls(self) -> list[ToolCallLog]:
        return [replace(call, turn=i) for i, call in enumerate(self.calls, start=1)]

    def pages(self) -> list[PooledPage]:
        return [PooledPage(url=key_url, fetched=_argument(call.arguments, "url") or call.final_url or key_url,
                           found_by=list(by), round=round_)
                for (tool, key_url), call, by, round_ in zip(self._index, self.calls, self.by, self.rounds)
                if tool == "web_fetch" and call.ok]


def once(step: dict[str, str], listed: set[str]) -> str:
    """A search's result without the hits an earlier pooled search listed (by canonical URL), and how many were left
    out: several workers searching one subject get many of the same hits, which the judges need read only once
    (the seed's "so we don't drown in raw snippets"). Any other result, or one that is not a hit list, as it is."""
    if step.get("tool") != "web_search":
        return step["result"]
    try:
        found: Any = json.loads(step["result"])
    except ValueError:
        return step["result"]
    hits = found.get("results") if isinstance(found, dict) else None
    if not isinstance(hits, list):
        return step["result"]
    kept = _unlisted(hits, listed)
    if len(kept) == len(hits):
        return step["result"]
    return json.dumps({**found, "results": kept, "already_listed_above": len(hits) - len(kept)}, ensure_ascii=False)


def _unlisted(hits: list[Any], listed: set[str]) -> list[Any]:
    """The hits not listed before, each now listed; a hit without a URL is always kept (nothing to match it by)."""
    kept = []
    for hit in hits:
        url = canonical_url(str(hit.get("url") or "")) if isinstance(hit, dict) else ""
        if not url or url not in listed:
            kept.append(hit)
        listed.add(url)
    return kept


def call_key(call: ToolCallLog) -> tuple[str, str]:
    """What makes two workers' calls one: the page's canonical URL, the query's words, else the raw arguments."""
    if call.tool == "web_fetch":
        url = _argument(call.arguments, "url")
        if url:
            return (call.tool, canonical_url(url))
    if call.tool == "web_search":
        query = _argument(call.arguments, "query")
        if query:
            return (call.tool, " ".join(query.lower().split()))
    return (call.tool, call.arguments)


def _argument(arguments: str, key: str) -> str:
    try:
        value: Any = json.loads(arguments)
    except ValueError:
        return ""
    return str(value.get(key) or "") if isinstance(value, dict) else ""


def pool_evidence(item: Item, team: Team, steps: Sequence[TeamStep], evidence_id: str) -> EvidenceRecord:
    """The item's one evidence record, from every finished step of its team (in the order they were run)."""
    workers = sorted((s for s in steps if s.role == "worker"), key=lambda s: (s.round, s.step))
    pool = Pool()
    for worker in workers:
        for step, call in zip(worker.steps, worker.tool_calls):
            pool.add(step, call, worker.model, worker.round)
    status, error = pooled_status(workers)
    return EvidenceRecord(
        evidence_id=evidence_id, edit_rcid=item.key, investigator=TEAM_INVESTIGATOR, status=status,
        timestamp=utc_now(), steps=pool.pooled_steps(), tool_calls=pool.pooled_calls(),
        references=item.prefetched_urls(), tool_protocol=TEAM_PROTOCOL, token_usage=total_usage(steps),
        cost_usd=known_cost(steps), cost_source=weakest_source(steps),
        error=error, warnings=team_warnings(steps), duration_s=round(sum(s.duration_s or 0.0 for s in steps), 3),
        team=team_part(team, steps, pool),
    )


def team_part(team: Team, steps: Sequence[TeamStep], pool: Pool) -> TeamEvidence:
    by_id = {s.step: s for s in steps}
    brief, brief_status, brief_error = _brief_part(by_id.get("plan-1"))
    summary, summary_status = _summary_part(by_id.get("aggregate"))
    worked = [s for s in steps if s.role == "worker"]
    return TeamEvidence(
        planner=team.planner, workers=list(team.workers), aggregator=team.aggregator,
        brief=brief, brief_status=brief_status, brief_error=brief_error,
        second_brief=_second_brief(by_id.get("plan-2")),
        rounds=max((s.round for s in worked), default=1), pages=pool.pages(),
        workers_notes=[notes_of(s) for s in sorted(worked, key=lambda s: (s.round, s.step))],
        summary=summary, summary_status=summary_status, step_ids=[s.step for s in steps], role_costs=_role_costs(steps),
    )


def _brief_part(plan: TeamStep | None) -> tuple[dict[str, Any] | None, str, str | None]:
    """The planner's first brief, its status and error; `missing` when no plan step was run (or logged)."""
    brief = plan.brief if plan is not None and plan.status == "ok" else None
    return brief, plan.status if plan is not None else "missing", plan.error if plan else None


def _second_brief(review: TeamStep | None) -> dict[str, Any] | None:
    """The review's brief only when it names something still missing: a review that found nothing adds no round."""
    if review is not None and review.status == "ok" and (review.brief or {}).get("missing"):
        return review.brief
    return None


def _summary_part(summary: TeamStep | None) -> tuple[str | None, str | None]:
    """The aggregator's summary when it finished ok (a failed one is not shown to the judges), and its status."""
    return (summary.notes if summary is not None and summary.status == "ok" else None,
            summary.status if summary is not None else None)


def _role_costs(steps: Sequence[TeamStep]) -> dict[str, float]:
    """Known cost per role, in the order roles first appear; a step of unknown cost adds nothing."""
    costs: dict[str, float] = {}
    for step in steps:
        costs[step.role] = costs.get(step.role, 0.0) + (step.cost_usd or 0.0)
    return costs


def notes_of(step: TeamStep) -> WorkerNotes:
    return WorkerNotes(model=step.model, round=step.round, status=step.status, notes=step.notes,
                       searches=sum(c.tool == "web_search" for c in step.tool_calls),
                       fetches=sum(c.tool == "web_fetch" and c.ok for c in step.tool_calls), error=step.error)


def pooled_status(workers: Sequence[TeamStep]) -> tuple[str, str | None]:
    """ok when a worker finished; else timeout or incomplete (what was gathered is judged); else the failure."""
    statuses = [w.status for w in workers]
    for status in ("ok", "incomplete", "timeout"):
        if status in statuses:
            return status, None
    failures = "; ".join(f"{w.model}: {w.status} ({w.error})" for w in workers) or "no worker researched"
    return ("refused" if statuses and all(s == "refused" for s in statuses) else "error"), failures


def team_warnings(steps: Sequence[TeamStep]) -> list[str]:
    """What the judges' records should say about the team's work: failed steps, and each step's own warnings."""
    said = []
    for step in steps:
        if step.status not in ("ok",):
            said.append(f"the {step.role} {step.model} ({step.step}) ended {step.status}"
                        + (f": {step.error}" if step.error else ""))
        said += [f"{step.step}: {w}" for w in step.warnings]
    return said


def known_cost(steps: Sequence[TeamStep]) -> float | None:
    known = [s.cost_usd for s in steps if s.cost_usd is not None]
    return sum(known) if known else None


def total_usage(steps: Sequence[TeamStep]) -> Usage:
    usage = Usage()
    for step in steps:
        for name in ("prompt_tokens", "completion_tokens", "turns", "cached_tokens", "cache_write_tokens"):
            setattr(usage, name, getattr(usage, name) + getattr(step.token_usage, name))
    return usage


def weakest_source(steps: Sequence[TeamStep]) -> str:
    """The weakest source of the steps' costs (unknown when a step's is unknown or none was priced)."""
    sources = [source for s in steps for source in COST_SOURCES if s.cost_source == source]
    return weakest(sources) or "unknown"
