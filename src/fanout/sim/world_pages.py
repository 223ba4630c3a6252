"""The offline web's pages about the simulated Wikidata's people: evidence for the edits the live stream carries.

The world knows each edit's truth (fanout.sim.wikidata_world): a good edit
adds what is true of the person, vandalism says what is not. Each edit gets a
reference page, written from the person's real facts as a biography,
obituary or library record would state them, so it supports a good edit
(it states the value added) and contradicts vandalism (it states the value
the vandal replaced or denied). Some edits also get a profile page that
names the person but not the edited fact (vague), as the web has. The
people share names, so a search can also meet a namesake's pages, which say
nothing about this edit (off topic for it).

Pages are added to a simulator's own corpus (fanout.sim.corpus.Corpus.growing)
as the world makes the edits, so the stand-in models find evidence for the
live edits as they do for the bundled sample's.
"""

from __future__ import annotations

import re

from fanout.sim.corpus import Corpus, tokens
from fanout.sim.corpus_types import EditFacts, Page
from fanout.sim.dice import dice
from fanout.sim.wikidata_items import LABELS, Change, Person, person, printed_value
from fanout.sim.wikidata_world import World, WorldRevision

VAGUE_SHARE = 0.4
"""Share of edits with a second page that names the person but not the edited fact."""
STANCE = {"correct": "supports", "incorrect": "contradicts"}


class WorldPages:
    """Adds the pages of the edits the world has made since it was last asked (Corpus.growing's hook)."""

    def __init__(self, world: World) -> None:
        self._world = world
        self._done = 0

    def __call__(self, corpus: Corpus) -> None:
        revisions = self._world.revisions
        if self._done >= len(revisions):
            return
        pages: list[Page] = []
        facts: dict[int, EditFacts] = {}
        for revision in revisions[self._done:]:
            if revision.change is not None and revision.truth in STANCE:
                who = person(self._world.seed, revision.number)
                facts[revision.rcid] = edit_facts(revision, who)
                pages += edit_pages(self._world.seed, revision, who)
        self._done = len(revisions)
        corpus.add(pages, facts)


def edit_facts(revision: WorldRevision, who: Person) -> EditFacts:
    """What the stand-in models search with and are scored against for one world edit."""
    change = revision.change
    assert change is not None and revision.truth is not None
    prop = LABELS.get(change.property or "", "label") if change.property else "label"
    return EditFacts(rcid=revision.rcid, qid=revision.qid, label=who.name, description=_description(who), prop=prop,
                     value=_words(change.value or ""), truth=revision.truth, facts=" ".join(_biography(who, change)))


def edit_pages(seed: int, revision: WorldRevision, who: Person) -> list[Page]:
    """The reference page of an edit, and sometimes a vague profile page."""
    change = revision.change
    assert change is not None and revision.truth is not None
    rng = dice(seed, "world-page", revision.seq)
    host, template = _site(change, rng.random())
    slug = re.sub(r"[^a-z0-9]+", "-", " ".join(tokens(who.name))).strip("-")
    body = tuple(_biography(who, change))
    reference = Page(
        address=f"{host}/people/{slug}-{revision.number}", template=template,
        title=f"{who.name}: {_description(who)}", section="People", byline="Staff",
        summary=body[0].rstrip("."), body=body, keywords=(who.name, _description(who), _prop_words(change)),
        stances={revision.rcid: STANCE[revision.truth]}, generated=True,
    )
    pages = [reference]
    if rng.random() < VAGUE_SHARE:
        pages.append(Page(
            address=f"www.linkedpeople.example/profile/{slug}-{revision.number}", template="article",
            title=f"{who.name} profile", section="Profiles", byline="Community",
            summary=f"lists {who.name} among {who.nationality} people",
            body=(f"{who.name} is listed among notable {who.nationality} people.",
                  "Details of this profile have not been checked."),
            keywords=(who.name,), stances={revision.rcid: "vague"}, generated=True,
        ))
    return pages


def _biography(who: Person, change: Change) -> list[str]:
    """The person's real facts, those the edit is about first."""
    occupation = LABELS.get(who.occupation, "person")
    born = f"{who.name} was born on {printed_value(who.born)} in {LABELS.get(who.capital, who.capital)}."
    lines = [born, f"{who.name} is a {who.nationality} {occupation}, a citizen of "
                   f"{LABELS.get(who.country, who.country)}."]
    if change.property == "P570" and change.action == "add_claim":
        lines.insert(0, f"{who.name} died on {printed_value(change.value or '')}.")
    elif change.property == "P106" and change.action == "add_claim":
        lines.append(f"Besides being a {occupation}, {who.name} also worked as a "
                     f"{LABELS.get(change.value or '', 'professional')}.")
    elif change.action == "set_label" and change.language != "en":
        lines.append(f"In other languages the name is written {who.name} as well.")
    return lines


def _site(change: Change, draw: float) -> tuple[str, str]:
    if change.property == "P570":
        return "www.theguardian.com", "obituary"
    if draw < 0.5:
        return "www.britannica.com", "article"
    return "catalogue.bnf.fr", "record"


def _description(who: Person) -> str:
    return f"{who.nationality} {LABELS.get(who.occupation, 'person')}"


def _prop_words(change: Change) -> str:
    return LABELS.get(change.property or "", "name") if change.property else "name"


def _words(value: str) -> str:
    """A value as a reader knows it: `Q84` as London, a Wikibase time as a date, a label as itself."""
    if value.startswith("Q") and value[1:].isdigit():
        return LABELS.get(value, value)
    if value.startswith("+") and len(value) >= 11:
        return printed_value(value)
    return value
