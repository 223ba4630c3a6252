"""A research team's parts as the simulated models play them: the planner, a worker's notes, the aggregator.

What makes a team differ from one investigator here is only what already
differs between the models, plus what each part reads:

- **The planner's queries** are its own wording habits (its query styles)
  and the two a plan naturally holds, the claim and the question; a planner
  that reads carefully (careful, sceptical) also names sites worth trying.
  A worker starts from its share of those queries, so the planner
  changes what is found (fanout.sim.investigation.team_plan_for), and opens
  results from the sites named first: the sites of the references the edit
  shows, the only pages of this web a planner knows without searching.
- **Workers of different families** search with their own wording and open
  pages by their own habits (fanout.sim.models): each family's blind spots
  are the pages its wording never reaches and the results it never opens.
- **A worker's notes** say what each page it read says, as it read it (its
  misreadings are the ones its verdicts make: fanout.sim.verdicts.gather).
- **The planner's review** reads those notes: the edit is settled for it when
  a note says a page contradicts the edit, or when pages confirm it (a
  careful or sceptical planner wants two, or one from a site that keeps
  records); otherwise it names what is missing and queries not yet run.
- **The aggregator** summarises the notes: it can leave a page out (each
  leaning drops what it likes least: OMISSIONS) and its overall reading is
  bent by its leaning, as its verdicts are (fanout.sim.verdicts.lean).
- **A judge shown the summary** may take its overall reading instead of its
  own (fanout.sim.verdicts.ANCHORING, by leaning: a credulous model takes a
  summary at its word more often than a careful one): the summary's risk.

These are parameters of the stand-in, set from what each leaning means, not
fitted to any outcome; bench/judging_team.py measures what they add up to.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any
from urllib.parse import urlsplit

from fanout.sim.conversation import URL, Conversation
from fanout.sim.corpus import Corpus
from fanout.sim.dice import dice
from fanout.sim.investigation import AUTHORITATIVE, Subject, _query, subject_for
from fanout.sim.models import SimModel
from fanout.sim.verdicts import DIRECTION, OVERALL, gather, lean

PLAN_STYLES = ("{label} {prop}", "{label} {prop} {value}")
"""The question and the claim: what any planner's brief holds besides its own wording."""
STANCE_WORDS = {"supports": "confirms the edit", "contradicts": "contradicts the edit",
                "vague": "mentions the subject but not the edited value", "namesake": "is about a namesake",
                "offtopic": "says nothing about the edit"}
NOTE_LINE = re.compile(r"^(?:Notes: )?Read (\S+): it (.+)\.$", re.MULTILINE)
OMISSIONS: dict[str, dict[str, float]] = {
    "credulous": {"contradicts": 0.3},
    "sceptical": {"supports": 0.2},
    "snippets": {"supports": 0.2, "contradicts": 0.2, "vague": 0.2},
    "careful": {"supports": 0.05, "contradicts": 0.05},
}
"""Chance that the aggregator leaves a page of this stance out of its summary, by its leaning."""


def plan_brief(conv: Conversation, model: SimModel, corpus: Corpus, seed: int) -> dict[str, Any]:
    """The planner's first brief: sub-questions, its queries, sites worth trying."""
    subject = subject_for(conv, corpus)
    rng = dice(seed, "brief", model.id, conv.key)
    styles = list(dict.fromkeys([*model.query_styles, *PLAN_STYLES]))
    rng.shuffle(styles)
    queries = [q for q in dict.fromkeys(_query(style, subject) for style in styles) if q][: rng.choice((3, 4))]
    return {"sub_questions": questions(subject), "queries": queries, "pages": cited_sites(conv, model), "missing": []}


def cited_sites(conv: Conversation, model: SimModel) -> list[str]:
    """The sites a careful or sceptical planner names: those of the references the edit itself shows (it knows no
    other page of this web); the others name none."""
    if model.bias not in ("careful", "sceptical"):
        return []
    hosts = (_host(url) for url in URL.findall(conv.first_user_text))
    return list(dict.fromkeys(h for h in hosts if h))[:2]


def questions(subject: Subject) -> list[str]:
    claim = f"{subject.prop} {subject.value}".strip() or "the edited statement"
    return [f"Is it right that {subject.label} has {claim}?",
            f"Which independent source states the {subject.prop or 'value'} of {subject.label}?"]


def review_brief(conv: Conversation, model: SimModel, corpus: Corpus, seed: int) -> dict[str, Any]:
    """The planner's review of the workers' reports: settled, or what is missing and queries not yet run."""
    subject = subject_for(conv, corpus)
    readings = NOTE_LINE.findall(conv.first_user_text)
    if settled(readings, model):
        return {"sub_questions": [], "queries": [], "pages": [], "missing": []}
    searched = {q.strip().lower() for line in re.findall(r"^Searched: (.+)$", conv.first_user_text, re.MULTILINE)
                for q in line.split(";")}
    rng = dice(seed, "review", model.id, conv.key)
    styles = list(dict.fromkeys([*model.query_styles, *PLAN_STYLES, "{label} {desc}", "{label} {value}"]))
    rng.shuffle(styles)
    fresh = [q for q in dict.fromkeys(_query(s, subject) for s in styles) if q and q.lower() not in searched][:2]
    if not fresh:
        return {"sub_questions": [], "queries": [], "pages": [], "missing": []}
    missing = [f"a page that states the {subject.prop or 'value'} of {subject.label}"]
    return {"sub_questions": questions(subject)[1:], "queries": fresh, "pages": cited_sites(conv, model),
            "missing": missing}


def settled(readings: list[tuple[str, str]], model: SimModel) -> bool:
    """Whether the notes settle the edit for this planner: a contradiction, or enough confirmation."""
    said = [(url, words) for url, words in readings]
    if any(words == STANCE_WORDS["contradicts"] for _, words in said):
        return True
    confirmed = [url for url, words in said if words == STANCE_WORDS["supports"]]
    if model.bias in ("credulous", "snippets"):
        return bool(confirmed)
    return len(confirmed) >= 2 or any(host in url for url in confirmed for host in AUTHORITATIVE)


def worker_notes(conv: Conversation, model: SimModel, corpus: Corpus, seed: int) -> str:
    """A worker's closing notes: each page it read and what it says, as this model reads it."""
    read = [seen for seen in gather(conv, corpus, model, seed) if seen.read]
    if not read:
        return (f"Searched {len(conv.searches)} quer{'y' if len(conv.searches) == 1 else 'ies'} and read no page; "
                "the search results alone do not settle the edit.")
    lines = [f"Read {seen.url}: it {STANCE_WORDS.get(seen.stance, STANCE_WORDS['offtopic'])}." for seen in read]
    return "\n".join([*lines, f"Searched {len(conv.searches)} time(s); read {len(read)} page(s)."])


def summary(conv: Conversation, model: SimModel, seed: int) -> str:
    """The aggregator's summary of the notes: pages it kept, and its overall reading, bent by its leaning."""
    kept = _kept_notes(conv, model, seed)
    stances = [stance for _, stance in kept]
    reading = "incorrect" if "contradicts" in stances else "verified-low" if "supports" in stances else "unverifiable"
    leaned = lean(reading, model, dice(seed, "summary-lean", model.id, conv.key))
    lines = [f"{_host(url)}: it {STANCE_WORDS[stance]}." for url, stance in kept if stance != "offtopic"]
    return "\n".join([*(lines or ["No page in the notes says anything decisive."]), OVERALL[DIRECTION.get(leaned)]])


def _kept_notes(conv: Conversation, model: SimModel, seed: int) -> list[tuple[str, str]]:
    """Each page the notes name once, with its stance, unless this aggregator's leaning drops it (seeded per page)."""
    kept = []
    for url, words in dict.fromkeys(NOTE_LINE.findall(conv.first_user_text)):
        stance = next((s for s, w in STANCE_WORDS.items() if w == words), "offtopic")
        if dice(seed, "omit", model.id, conv.key, url).random() >= OMISSIONS.get(model.bias, {}).get(stance, 0.0):
            kept.append((url, stance))
    return kept


def _host(url: str) -> str:
    path = urlsplit(url).path
    return path.split("/web/", 1)[1].split("/", 1)[0] if "/web/" in path else urlsplit(url).netloc


def invalid_brief(content: str, rng: random.Random) -> str:
    """A brief that does not fit, in the ways models get one wrong: Python quotes, a list written as one string,
    prose."""
    brief = json.loads(content)
    variants = (
        content.replace('"', "'"),
        json.dumps({**brief, "queries": "; ".join(brief.get("queries") or [])}, ensure_ascii=False),
        "I would search for: " + ", ".join(brief.get("queries") or []),
    )
    return rng.choice(variants)


def team_content(conv: Conversation, model: SimModel, corpus: Corpus, seed: int) -> str:
    """The reply of a planner (JSON) or an aggregator (text)."""
    if conv.team_role == "plan":
        return json.dumps(plan_brief(conv, model, corpus, seed), ensure_ascii=False)
    if conv.team_role == "review":
        return json.dumps(review_brief(conv, model, corpus, seed), ensure_ascii=False)
    return summary(conv, model, seed)
