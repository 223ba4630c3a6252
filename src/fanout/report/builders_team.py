"""The report's tables of a research team (--evidence team), each registered as the report's builders are.

`team_roles` (each role's steps and cost), `team_workers` (what each worker
read and its share of the sources the judges cited as verified: research
skill apart from judging skill), `team_sources` (each cited source and the
workers that found it) and `team_rounds` (the planner's part: failed briefs,
reviews, what the second round added). Each is empty for a run without a
team. The figures are fanout.report.team_figures'.
"""

from __future__ import annotations

from typing import Any

from fanout.report.basis import Basis
from fanout.report.builders import table
from fanout.report.columns import Context
from fanout.report.table import Column, Table, money, share
from fanout.report.team_figures import (
    TeamCitation,
    TeamRoleRow,
    TeamRoundsRow,
    TeamWorkerRow,
    team_citations,
    team_roles,
    team_rounds,
    team_workers,
)


def role_columns(ctx: Context) -> tuple[Column[TeamRoleRow], ...]:
    return (
        Column("role", "role", left=True),
        Column("model", "model", left=True, show=lambda r: ctx.name(r.model)),
        Column("steps", "steps"),
        Column("not_ok", "not ok"),
        Column("cost_usd", "cost", fmt=money(4)),
        Column("cost_per_edit_usd", "per edit", fmt=money(5)),
    )


def worker_columns(ctx: Context) -> tuple[Column[TeamWorkerRow], ...]:
    return (
        Column("worker", "worker", left=True, show=lambda r: ctx.name(r.worker)),
        Column("edits", "edits"),
        Column("searches", "searches"),
        Column("pages", "pages read"),
        Column("alone", "only it read"),
        Column("round2_pages", "in round 2"),
        Column("cited", "cited as verified"),
        Column("cited_share", "share of cited", fmt=share),
        Column("cited_alone", "cited, only it read"),
        Column("cost_usd", "cost", fmt=money(4)),
    )


def citation_columns(ctx: Context) -> tuple[Column[TeamCitation], ...]:
    return (
        Column("rcid", "rcid", left=True),
        Column("qid", "item", short="qid", left=True),
        Column("url", "source", left=True),
        Column("found_by", "found by", left=True,
               show=lambda c: ", ".join(ctx.name(w) for w in c.found_by.split(", ")) if c.round else c.found_by),
        Column("round", "round"),
        Column("cited_by", "judges citing it"),
        Column("supports", "of them, supports"),
    )


ROUNDS_COLUMNS: tuple[Column[TeamRoundsRow], ...] = (
    Column("edits", "edits"),
    Column("briefs_failed", "briefs failed"),
    Column("reviewed", "reviewed"),
    Column("second_rounds", "second rounds"),
    Column("pages_added", "pages added"),
    Column("pages_added_cited", "of them cited"),
    Column("verdicts_citing_added", "verdicts citing them"),
    Column("summaries", "summaries shown"),
)


@table("team_roles")
def roles(b: Basis) -> Table[Any]:
    """Each role of the research team as each model played it: steps, failures, cost (every step once)."""
    return Table(role_columns(b.ctx), team_roles(b.run))


@table("team_workers")
def workers(b: Basis) -> Table[Any]:
    """Each worker's pages and its share of the sources the judges cited as verified."""
    return Table(worker_columns(b.ctx), team_workers(b.run))


@table("team_sources")
def sources(b: Basis) -> Table[Any]:
    """Each source an edit's judges cited as verified, with the workers that found it."""
    return Table(citation_columns(b.ctx), team_citations(b.run))


@table("team_rounds")
def rounds(b: Basis) -> Table[Any]:
    """The planner's part: briefs that failed, reviews, and what the second round added."""
    return Table(ROUNDS_COLUMNS, team_rounds(b.run))
