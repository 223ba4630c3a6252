"""A research team's words: the planner's brief (its schema and its checks), and the texts each role reads.

The planner (fanout.research.team_steps.plan_step) reads the item as any
model does and answers with a brief, one JSON object:

    {"sub_questions": [...], "queries": [...], "pages": [...], "missing": [...]}

checked here (`brief_problems`): every key a list of short strings, at least
one query in a first brief, at most MAX_BRIEF_ITEMS of each (more are cut,
and the step says so). After the workers report, the planner reviews their
reports with the same schema; a review whose `missing` names something sends
the workers out once more (the second round).

The texts: what the planner is asked (`plan_request`, `review_request`), what
a worker reads after the item's context (`worker_brief`: the whole brief, its
own share of the queries first, and in the second round what the team has
read already), what the aggregator is asked (`aggregate_request`), and what a
judge reads (`judge_note`, `summary_preface`). Each says plainly who wrote
what, so no model takes another's words for evidence; the phrases the
simulator recognises are named constants here (fanout.sim.team reads them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

BRIEF_KEYS = ("sub_questions", "queries", "pages", "missing")
MAX_BRIEF_ITEMS = 6
"""Of each list of a brief: a budget on what the workers are sent to do."""
MAX_BRIEF_TEXT = 300
"""Characters of one entry of a brief (a query, a question, a page)."""

PLANNER_OPENING = "You are the planner of a research team"
REVIEW_OPENING = "The workers of your research team have reported"
WORKER_OPENING = "You are worker"
SHARE_HEADING = "Start with these queries:"
PAGES_HEADING = "Pages or sites worth trying:"
READ_HEADING = "Already read by the team (do not read these again):"
MISSING_HEADING = "Still missing, says the planner:"
AGGREGATOR_OPENING = "You are the aggregator of a research team"
SUMMARY_OPENING = "Summary of the workers' notes, written by"
LONE_BRIEF = "The planner's brief failed, so research the {item} as you would alone."


def brief_problems(found: Any, *, first: bool) -> list[str]:
    """What keeps a reply from being a brief; empty when it is one."""
    if not isinstance(found, dict):
        return ["the brief must be one JSON object"]
    problems = [f"{key} must be a list of non-empty strings" for key in BRIEF_KEYS if not _strings(found, key)]
    if first and not problems and not found["queries"]:
        problems.append("queries must name at least one web search query")
    return problems


def _strings(found: dict[Any, Any], key: str) -> bool:
    """Whether the brief's `key` is a list of non-empty strings (`missing` may be left out: nothing is)."""
    value = found.get(key, [] if key == "missing" else None)
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def normalised_brief(found: Mapping[str, Any]) -> tuple[dict[str, list[str]], list[str]]:
    """A checked brief in the record's shape, each list cut to the budget, and warnings for what was cut."""
    brief: dict[str, list[str]] = {}
    warnings = []
    for key in BRIEF_KEYS:
        entries = [" ".join(str(v).split())[:MAX_BRIEF_TEXT] for v in found.get(key) or []]
        if len(entries) > MAX_BRIEF_ITEMS:
            warnings.append(f"the brief listed {len(entries)} {key.replace('_', ' ')}; the first {MAX_BRIEF_ITEMS} "
                            "were kept")
        brief[key] = list(dict.fromkeys(entries))[:MAX_BRIEF_ITEMS]
    return brief, warnings


def plan_request(item_noun: str) -> str:
    return (
        f"{PLANNER_OPENING} that will check this {item_noun}. Do not research it yourself and do not judge it: "
        "write a research brief for the workers, who will search the web and read pages at the same time. Reply "
        "with one JSON object with exactly these keys:\n"
        "- sub_questions: what the research must establish (1 to 6 strings)\n"
        "- queries: web search queries worth trying, best first (1 to 6 strings)\n"
        "- pages: pages or sites worth trying, as URLs or site names (0 to 6 strings)\n"
        "- missing: [] (empty in a first brief)"
    )


def review_request(item_noun: str, brief: Mapping[str, Sequence[str]] | None, reports: str) -> str:
    """The planner's second look: its brief, what each worker did, and whether anything is still missing."""
    first = brief_text(brief) if brief else "(your first brief could not be read; the workers researched alone)"
    return (
        f"{PLANNER_OPENING} checking this {item_noun}. Your first brief was:\n{first}\n\n"
        f"{REVIEW_OPENING}:\n{reports}\n\n"
        f"If something needed to judge the {item_noun} is still missing, reply with a second brief (the same JSON "
        "keys: sub_questions, queries, pages, missing) whose `missing` names it, with queries or pages that could "
        "find it: the workers will research once more. If nothing is missing, reply with the same keys and "
        "`missing` empty."
    )


def brief_text(brief: Mapping[str, Sequence[str]]) -> str:
    """A brief as the workers and the judges read it."""
    parts = [("Sub-questions:", brief.get("sub_questions") or []), ("Queries worth trying:", brief.get("queries") or []),
             (PAGES_HEADING, brief.get("pages") or []), (MISSING_HEADING, brief.get("missing") or [])]
    return "\n".join(f"{heading}\n" + "\n".join(f"- {entry}" for entry in entries)
                     for heading, entries in parts if entries)


def share_of(queries: Sequence[str], index: int, workers: int) -> list[str]:
    """A worker's share of the brief's queries, dealt round the team in turn: each worker starts elsewhere, so two
    workers do not run the same searches first (every worker still reads the whole brief)."""
    if not queries:
        return []
    return list(queries[index::workers]) or [queries[index % len(queries)]]


def worker_brief(item_noun: str, brief: Mapping[str, Sequence[str]] | None, index: int, workers: int,
                 read: Sequence[str] = ()) -> str:
    """What worker `index` (from 0) of `workers` reads after the item's context; `read`: pages the team has read
    (a second round)."""
    opening = f"{WORKER_OPENING} {index + 1} of {workers} in a research team checking this {item_noun}."
    if brief is None:
        task = LONE_BRIEF.format(item=item_noun)
    else:
        share = share_of(brief.get("queries") or [], index, workers)
        task = "The planner wrote this brief:\n" + brief_text(brief)
        if share:
            task += f"\n{SHARE_HEADING}\n" + "\n".join(f"- {q}" for q in share)
    if read:
        task += f"\n{READ_HEADING}\n" + "\n".join(f"- {url}" for url in read)
    closing = (f"Research with the tools. You do not give the verdict: when you are done, reply without a tool call "
               f"with your notes: each page you read, what it says about the {item_noun}, and what is still missing.")
    return f"{opening}\n{task}\n\n{closing}"


def aggregate_request(item_noun: str, notes: Sequence[tuple[str, int, str]]) -> str:
    """The aggregator's task: the workers' notes, each with who wrote it and in which round."""
    shown = "\n\n".join(f"### {model} (round {round_})\n{text}" for model, round_, text in notes)
    return (f"{AGGREGATOR_OPENING} checking this {item_noun}. Summarise the workers' notes below for the judges: "
            f"which pages say what about the {item_noun}, where the notes agree or differ, and what is missing. "
            f"Give no verdict label.\n\n{shown}")


def judge_note(item_noun: str, planner: str, workers: Sequence[str], rounds: int,
               brief: Mapping[str, Sequence[str]] | None, second: Mapping[str, Sequence[str]] | None) -> str:
    """Told to every judge after the item's context: who researched, and the brief they worked from."""
    rounds_text = " in two rounds" if rounds > 1 else ""
    note = (f"In this run the research is done by a team: {planner} planned it and {', '.join(workers)} researched "
            f"it at the same time{rounds_text}. Their pooled tool calls and results follow, one turn each, every page "
            "once, each turn naming the workers who made it. You cannot call tools now; judge the "
            f"{item_noun} from this evidence. Call a source verified only if it was fetched (web_fetch) in these "
            "turns or is a reference shown above.")
    if brief is not None:
        note += "\n\nThe planner's brief:\n" + brief_text(brief)
    else:
        note += "\n\nThe planner's brief failed; each worker researched as it would alone."
    if second is not None:
        note += "\n\nThe planner's second brief, after the workers reported:\n" + brief_text(second)
    return note


def summary_preface(aggregator: str, summary: str) -> str:
    """The aggregator's summary as a judge reads it: after the evidence, before the verdict request, marked."""
    return (f"{SUMMARY_OPENING} {aggregator}. It is a model's summary, not evidence: the tool results above are the "
            f"evidence, and where the two differ, the tool results win.\n{summary.strip()}")
