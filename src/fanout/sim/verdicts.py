"""Phase B: the verdict a simulated model gives, from what it saw and how it leans.

The honest reading follows the SIFT prompt's definitions: a page read that
contradicts the edit makes it incorrect, pages read that support it make it
verified, snippets alone make it plausible or suspect, nothing makes it
unverifiable. Each model's bias then bends that reading, and a seeded slip
(its error rate) moves it one step along the scale, so the committee the report
builds has the kinds of disagreement real models show.

The misreadings, the leaning, the slip and the pull of the label a request
lists first (fanout.sim.models) are the model's uncertain choices. Each is
drawn per conversation (per page for a misreading, per first label for the
pull), so a repeat of the question meets the same habits; sampling at
temperature redraws a share of them (the model's temperature_noise) from the
request's own text, so a sample with its evidence or labels in another order
can come out differently, while any one request still fires each habit with
its profile's probability.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit

from fanout.sim.confidence import stated_confidence
from fanout.sim.conversation import SCALE, Conversation
from fanout.sim.corpus import Corpus
from fanout.sim.corpus_types import Page
from fanout.sim.dice import dice
from fanout.sim.investigation import AUTHORITATIVE, Subject, subject_for
from fanout.sim.models import SimModel
from fanout.sim.pages import site_name

T = TypeVar("T")

DIRECTION = {
    "verified-high": "supports",
    "verified-low": "supports",
    "plausible": "supports",
    "suspect": "contradicts",
    "incorrect": "contradicts",
}

# stance -> (how the model misreads it, probability): a namesake taken for the subject,
# a page that merely mentions the subject taken as confirmation, good evidence discounted
MISREADINGS: dict[str, dict[str, tuple[str, float]]] = {
    "credulous": {"namesake": ("supports", 0.6), "vague": ("supports", 0.3)},
    "snippets": {"namesake": ("supports", 0.4), "vague": ("supports", 0.25)},
    "careful": {"vague": ("supports", 0.05), "namesake": ("supports", 0.05)},
    "sceptical": {"supports": ("vague", 0.15)},
}

# base verdict -> [(replacement, probability)]: how a bias bends an honest reading
LEANINGS: dict[str, dict[str, list[tuple[str, float]]]] = {
    "credulous": {
        "incorrect": [("plausible", 0.25), ("verified-low", 0.15)],
        "suspect": [("plausible", 0.4), ("verified-low", 0.2)],
        "unverifiable": [("plausible", 0.4), ("verified-low", 0.25)],
        "plausible": [("verified-high", 0.35), ("verified-low", 0.35)],
        "verified-low": [("verified-high", 0.6)],
    },
    "sceptical": {
        "verified-high": [("verified-low", 0.4), ("plausible", 0.15), ("unverifiable", 0.1)],
        "verified-low": [("plausible", 0.4), ("unverifiable", 0.2)],
        "plausible": [("unverifiable", 0.4), ("suspect", 0.25)],
        "unverifiable": [("suspect", 0.3)],
    },
}


OVERALL: dict[str | None, str] = {
    "supports": "Overall, the notes support the edit.", "contradicts": "Overall, the notes contradict the edit.",
    None: "Overall, the notes do not settle the edit."}
"""How a research team's simulated aggregator ends its summary (fanout.sim.team.summary)."""
ANCHORING = {"credulous": 0.5, "snippets": 0.4, "sceptical": 0.2, "careful": 0.1}
"""Chance that a judge shown a team's summary takes its overall reading for its own, by its leaning: a credulous
model takes a summary at its word more often than a careful one."""
ANCHORED = {"supports": "verified-low", "contradicts": "incorrect", None: "unverifiable"}
"""The reading a judge anchored on a summary starts from (its leaning and slip still apply)."""


@dataclass(frozen=True)
class Seen:
    """A page as the model met it: its URL, the corpus page (if any) and its stance as the model reads it."""

    url: str
    page: Page | None
    stance: str
    read: bool


def verdict_answer(conv: Conversation, model: SimModel, corpus: Corpus, seed: int) -> dict[str, object]:
    """The verdict JSON object: {verdict, confidence, rationale, sources}."""
    rng = dice(seed, "verdict", model.id, conv.key)
    evidence = gather(conv, corpus, model, seed)
    honest = judge([e for e in evidence if e.read or model.bias == "snippets"], [e for e in evidence if not e.read])
    if conv.summary is not None:  # a research team's aggregated summary, shown before the verdict request
        honest = anchored(honest, conv, model, seed)
    leaning = at_temperature(lambda r: lean(honest, model, r), rng, conv, model, seed, "lean")
    slipped = at_temperature(lambda r: slip(leaning, model, r), rng, conv, model, seed, "slip")
    verdict = pulled_to_first(slipped, conv, model, seed)
    subject = subject_for(conv, corpus)
    facts = corpus.facts(conv.rcid)
    sure = dice(seed, "confidence", model.id, conv.key, conv.request_digest)
    return {
        "verdict": verdict,
        "confidence": stated_confidence(verdict, facts.truth if facts else None, model, sure),
        "rationale": rationale(verdict, evidence, subject, model, conv),
        "sources": cite(evidence, model, rng),
    }


def gather(conv: Conversation, corpus: Corpus, model: SimModel, seed: int) -> list[Seen]:
    """Everything the model met, in order: pages it read, then results it only glimpsed.

    Whether a page is misread is drawn for that page, so the reading does not
    depend on the order the evidence is shown in (fanout.research.swap reorders it).
    """
    fetched = list(dict.fromkeys(conv.fetched))
    urls = [(url, True) for url in fetched] + [(r.url, False) for r in conv.seen if r.url not in fetched]
    evidence = []
    for url, read in urls:
        page = corpus.page_for_url(url)
        stance = page.stance(conv.rcid) if page else "offtopic"
        misread, chance = MISREADINGS.get(model.bias, {}).get(stance, (stance, 0.0))
        if page is not None and chance:
            shared = dice(seed, "misread", model.id, conv.key, page.address)
            if at_temperature(lambda r: r.random() < chance, shared, conv, model, seed, "misread", page.address):
                stance = misread
        evidence.append(Seen(url, page, stance, read))
    return evidence


def judge(read: list[Seen], glimpsed: list[Seen]) -> str:
    return _judged_on_read(read) or _judged_on_glimpses(glimpsed)


def _judged_on_read(read: list[Seen]) -> str | None:
    """A page read in full decides: one against refutes, two for (or one authoritative) verify well; else None."""
    if "contradicts" in [e.stance for e in read]:
        return "incorrect"
    supporting = [e for e in read if e.stance == "supports"]
    if supporting:
        strong = len(supporting) >= 2 or any(_authoritative(e.url) for e in supporting)
        return "verified-high" if strong else "verified-low"
    return None


def _judged_on_glimpses(glimpsed: list[Seen]) -> str:
    """With nothing read deciding, search results only lean a verdict (suspect, plausible), never settle it."""
    glimpsed_stances = [e.stance for e in glimpsed]
    if "contradicts" in glimpsed_stances:
        return "suspect"
    if "supports" in glimpsed_stances:
        return "plausible"
    return "unverifiable"


def lean(verdict: str, model: SimModel, rng: random.Random) -> str:
    draw = rng.random()
    for replacement, probability in LEANINGS.get(model.bias, {}).get(verdict, []):
        if draw < probability:
            return replacement
        draw -= probability
    return verdict


def slip(verdict: str, model: SimModel, rng: random.Random) -> str:
    if rng.random() >= model.error_rate:
        return verdict
    index = SCALE.index(verdict) + rng.choice((-2, -1, 1, 2))
    return SCALE[min(max(index, 0), len(SCALE) - 1)]


def at_temperature(draw: Callable[[random.Random], T], shared: random.Random, conv: Conversation, model: SimModel,
                   seed: int, *habit: str) -> T:
    """A habit as this request draws it: the conversation's draw, or with chance temperature_noise its own.

    The request's own dice are seeded by its text, so a repeat of it gets the same answer and a
    sample with another order may not. Either draw is a fresh uniform one, so any single request
    fires the habit with its profile's probability whatever the noise. The shared draw is made
    either way, so what is drawn after it from the same dice (the sources cited) does not move.
    """
    drawn = draw(shared)
    own = dice(seed, "redraw", model.id, conv.key, conv.request_digest, *habit)
    return draw(own) if own.random() < model.temperature_noise else drawn


def pulled_to_first(verdict: str, conv: Conversation, model: SimModel, seed: int) -> str:
    """The position bias: the first label listed instead, drawn once per edit and label listed first."""
    if not conv.label_order or model.label_position_bias <= 0:
        return verdict
    first = conv.label_order[0]
    shared = dice(seed, "position", model.id, conv.key, first)
    pulled = at_temperature(lambda r: r.random() < model.label_position_bias, shared, conv, model, seed, "position")
    return first if pulled else verdict


def cite(evidence: list[Seen], model: SimModel, rng: random.Random) -> list[dict[str, object]]:
    """Sources as the model reports them; the snippet reader claims to have read what it only glimpsed."""
    relevant = [e for e in evidence if e.stance != "offtopic"]
    read = _read_cited(evidence, relevant, model)
    glimpsed = [e for e in relevant if not e.read]
    return [_source(e, "verified") for e in read] + _glimpses_cited(glimpsed, bool(read), model, rng)


def _read_cited(evidence: list[Seen], relevant: list[Seen], model: SimModel) -> list[Seen]:
    """The pages read that bear on the edit; the credulous model, with none, cites the off-topic ones it read."""
    return [e for e in relevant if e.read] or ([e for e in evidence if e.read] if model.bias == "credulous" else [])


def _glimpses_cited(glimpsed: list[Seen], any_read: bool, model: SimModel,
                    rng: random.Random) -> list[dict[str, object]]:
    """Search results cited as well, by habit: the snippet reader's (drawn from `rng`), the sceptic's, the rest's."""
    if model.bias == "snippets":
        return [_source(e, "verified" if rng.random() < 0.6 else "reported") for e in glimpsed[:3]]
    if model.bias == "sceptical":
        return [_source(e, "reported") for e in glimpsed if e.stance == "contradicts"][:1]
    if not any_read:
        return [_source(e, "reported") for e in glimpsed[:2]]
    return []


def _source(seen: Seen, provenance: str) -> dict[str, object]:
    return {"url": seen.url, "supports_claim": seen.stance == "supports", "provenance": provenance}


def rationale(verdict: str, evidence: list[Seen], subject: Subject, model: SimModel, conv: Conversation) -> str:
    direction = DIRECTION.get(verdict)
    key = next((e for e in evidence if direction and e.stance == direction and e.page), None)
    claim = f"{subject.prop}: {subject.value}".strip(": ") or "the edited statement"
    if key is not None and key.page is not None:
        opening = _key_opening(key, key.page, claim)
    else:
        opening = _unkeyed_opening(direction, evidence, subject, claim)
    return f"{opening} {_voice(verdict, model, subject, conv)}".strip()


def _key_opening(key: Seen, page: Page, claim: str) -> str:
    """The rationale opens on the page that bears the verdict out, and says when it was only a search result."""
    site = site_name(page)
    seen_how = "" if key.read else " (in the search results)"
    return {
        "supports": f"{site}{seen_how} {page.summary}, which agrees with the edit ({claim}).",
        "contradicts": f"{site}{seen_how} {page.summary}, which contradicts the edit ({claim}).",
    }[key.stance]


def _unkeyed_opening(direction: str | None, evidence: list[Seen], subject: Subject, claim: str) -> str:
    """With no page bearing the verdict out: an impression, or a page that mentions the subject but not the value."""
    if direction == "supports":
        return f"The sources I saw about {subject.label} raise no obvious problem with the edit ({claim})."
    if direction == "contradicts":
        return f"The edit ({claim}) does not fit what the sources about {subject.label} suggest."
    mention = next((e.page for e in evidence if e.page and e.stance in ("vague", "namesake")), None)
    return (
        f"Pages about {subject.label} were found ({site_name(mention)} {mention.summary}), "
        f"but none states the edited value ({claim})."
        if mention
        else f"No source I found says anything about {claim} for {subject.label}."
    )


def _voice(verdict: str, model: SimModel, subject: Subject, conv: Conversation) -> str:
    if model.bias == "sceptical" and verdict in ("verified-low", "plausible", "unverifiable", "suspect"):
        return "Without a second, independent source I would not rate this any higher."
    if model.bias == "credulous":
        return f"The value looks consistent with what is generally known about {subject.label}."
    if model.bias == "snippets":
        return f"Based on {len(conv.seen)} search results."
    return f"Checked against {len(conv.fetched)} page(s) read in full."


def _authoritative(url: str) -> bool:
    path = urlsplit(url).path
    return any(host in path or host in url for host in AUTHORITATIVE)


def anchored(verdict: str, conv: Conversation, model: SimModel, seed: int) -> str:
    """A judge's honest reading, or the summary's overall reading when the judge takes it for its own."""
    direction = next((d for d, text in OVERALL.items() if conv.summary and text in conv.summary), None)
    shared = dice(seed, "anchor", model.id, conv.key)
    chance = ANCHORING.get(model.bias, 0.0)
    taken = at_temperature(lambda r: r.random() < chance, shared, conv, model, seed, "anchor")
    return ANCHORED[direction] if taken else verdict
