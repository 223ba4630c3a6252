"""Phase A: what a simulated model does next in its SIFT investigation.

Each (seed, model, edit) fixes a plan: how many searches, in which wording,
how many pages to read, whether to stop early. The conversation so far says
how far along the plan the model is; a turn spoiled by a malformed call does
not count, so the model simply tries that step again, as real models do.
"""

from __future__ import annotations

import functools
import json
import random
import re
from dataclasses import dataclass, field
from typing import Literal

from fanout.sim.claims import claim_in
from fanout.sim.conversation import Conversation, WorkerBrief
from fanout.sim.corpus import Corpus, tokens
from fanout.sim.corpus_types import EditFacts
from fanout.sim.dice import dice
from fanout.sim.models import SimModel

MAX_TURNS = 12
ID_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
AUTHORITATIVE = ("bnf.fr", "d-nb.info", "nobelprize.org", "archives.gov", "statice.is", "britannica.com", "imdb.com")


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass
class Reply:
    """What the model says this turn, before any fault bends it."""

    content: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: Literal["stop", "tool_calls", "length", "error"] = "stop"


@dataclass(frozen=True)
class Step:
    kind: Literal["search", "fetch"]
    query: str = ""
    fetches: int = 1


@dataclass(frozen=True)
class Subject:
    """The words a model searches with: from the corpus if it knows the edit, else the message."""

    label: str
    prop: str
    value: str
    description: str
    qid: str


def subject_for(conv: Conversation, corpus: Corpus) -> Subject:
    claim = claim_in(conv.first_user_text)
    if claim is not None:  # a claim is searched for as the model reads it, unresolved pronouns and all
        return Subject(claim, "", "", "", "")
    facts: EditFacts | None = corpus.facts(conv.rcid)
    if facts is not None:
        return Subject(facts.label, facts.prop, facts.value, facts.description, facts.qid)
    return _subject_from_text(conv.first_user_text, conv.qid)


@functools.lru_cache(maxsize=1024)
def _subject_from_text(text: str, qid: str | None) -> Subject:
    """Read from the edit context; cached because every turn of a conversation sends the same one."""
    label = _field(text, ("label", "item", "entity", "title")) or qid or "Wikidata item"
    return Subject(
        label=label,
        prop=_field(text, ("property_label", "property")) or "",
        value=_field(text, ("value_label", "new value", "value")) or "",
        description=_field(text, ("description",)) or "",
        qid=qid or "",
    )


def _field(text: str, names: tuple[str, ...]) -> str | None:
    for name in names:
        match = re.search(rf"^\W*{re.escape(name)}[^:\n]*:\s*(.+)$", text, re.IGNORECASE | re.MULTILINE)
        if match and match.group(1).strip():
            return match.group(1).strip().strip("\"'")[:80]
    return None


def plan_for(model: SimModel, subject: Subject, seed: int, conv_key: str) -> list[Step]:
    rng = dice(seed, "plan", model.id, conv_key)
    searches = rng.choice(model.searches)
    fetches = rng.choice(model.fetches)
    if rng.random() < model.early_stop:
        searches, fetches = 1, min(fetches, 1)
    styles = list(model.query_styles)
    rng.shuffle(styles)
    queries = [_query(style, subject) for style in styles][:searches]
    search_steps = [Step("search", q) for q in dict.fromkeys(queries)]
    fetch_steps = [Step("fetch")] * fetches
    if fetches == 2 and rng.random() < model.parallel_calls:
        fetch_steps = [Step("fetch", fetches=2)]
    if rng.random() < 0.5:
        return search_steps + fetch_steps
    interleaved: list[Step] = []
    for i in range(max(len(search_steps), len(fetch_steps))):
        interleaved += search_steps[i : i + 1] + fetch_steps[i : i + 1]
    return interleaved


def _query(style: str, subject: Subject) -> str:
    text = style.format(
        label=subject.label, prop=subject.prop, value=subject.value, qid=subject.qid, desc=subject.description
    )
    return " ".join(text.replace('""', "").split())


def team_plan_for(model: SimModel, subject: Subject, seed: int, conv_key: str, brief: WorkerBrief) -> list[Step]:
    """A research team's worker's plan: its share of the brief's queries first, then its own wording, as many
    searches as its habits make (at least its share), the pages as its habits read them."""
    rng = dice(seed, "team-plan", model.id, conv_key, brief.digest)
    searches = rng.choice(model.searches)
    fetches = rng.choice(model.fetches)
    if rng.random() < model.early_stop:
        searches, fetches = 1, min(fetches, 1)
    styles = list(model.query_styles)
    rng.shuffle(styles)
    queries = list(dict.fromkeys([*brief.share, *(_query(style, subject) for style in styles)]))
    search_steps = [Step("search", q) for q in queries[:max(searches, len(brief.share))]]
    return search_steps + [Step("fetch")] * fetches


def investigate(conv: Conversation, model: SimModel, corpus: Corpus, seed: int) -> Reply:
    """The next turn: tool calls for the next step of the plan, or a closing remark."""
    subject = subject_for(conv, corpus)
    brief = conv.brief
    plan = plan_for(model, subject, seed, conv.key) if brief is None else team_plan_for(model, subject, seed, conv.key, brief)
    if conv.turn >= MAX_TURNS or conv.completed_steps >= len(plan):
        return Reply(content=closing_remark(conv, model, seed))
    step = plan[conv.completed_steps]
    rng = dice(seed, "step", model.id, conv.key, conv.completed_steps, conv.turn)
    if step.kind == "fetch":
        urls = choose_urls(conv, model, subject, step.fetches, seed)
        if urls:
            calls = [_call(model, rng, "web_fetch", {"url": url}) for url in urls]
            return Reply(content="", tool_calls=calls, finish_reason="tool_calls")
        if len(conv.searches) >= 3:
            return Reply(content=closing_remark(conv, model, seed))
        step = Step("search", _query(rng.choice(("{label}", "{label} {prop}", "{label} {desc}")), subject))
    return Reply(content="", tool_calls=[_call(model, rng, "web_search", {"query": step.query})], finish_reason="tool_calls")


def choose_urls(conv: Conversation, model: SimModel, subject: Subject, count: int, seed: int) -> list[str]:
    """Results the model got back and has not opened yet, ranked by its own habits (and a team worker's brief: the
    sites it names first, and none the team read already)."""
    brief = conv.brief
    tried = set(conv.fetch_attempts) | set(brief.read if brief else ())
    candidates = [r for r in conv.seen if r.url not in tried]
    if not candidates:
        return []
    rng = dice(seed, "pick", model.id, conv.key, len(conv.fetch_attempts))
    label_words = set(tokens(subject.label))

    def rank(index: int) -> float:
        result = candidates[index]
        score = -index * 0.5
        if model.bias in ("careful", "sceptical"):
            score += 2.0 * len(label_words & set(tokens(result.title)))
            score += 3.0 * any(host in result.url for host in AUTHORITATIVE)
        if brief is not None:
            score += 3.0 * any(site and site in result.url for site in brief.sites)
        return score + rng.random()

    order = sorted(range(len(candidates)), key=rank, reverse=True)
    return [candidates[i].url for i in order[:count]]


def closing_remark(conv: Conversation, model: SimModel, seed: int) -> str:
    rng = dice(seed, "closing", model.id, conv.key)
    read = len(conv.fetched)
    if not conv.seen:
        return "The searches returned nothing usable, so I will have to judge from the edit context alone."
    options = (
        f"I have looked at {len(conv.seen)} search results and read {read} page(s); that is enough to judge the edit.",
        f"Research done: {len(conv.searches)} search(es), {read} page(s) read. Ready to give my verdict.",
        "I think I have enough evidence now to assess this change.",
    )
    return rng.choice(options)


def _call(model: SimModel, rng: random.Random, name: str, arguments: dict[str, str]) -> ToolCall:
    suffix = "".join(rng.choice(ID_ALPHABET) for _ in range(22))
    return ToolCall(id=model.tool_call_prefix + suffix, name=name, arguments=json.dumps(arguments, ensure_ascii=False))
