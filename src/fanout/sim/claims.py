"""The simulator's claims: texts whose claims are true, false or unverifiable, pages about them, and an extractor.

Built from the bundled sample texts (src/fanout/data/sample_texts.yaml: each
text's claims and their truth) and the simulator's world for them
(src/fanout/data/sim/claims_world.yaml: each claim's topic, what a reliable
page says about it and where that page is, and how it reads with its
subject left as a pronoun). From them:

- pages: per text, an encyclopedia page and a second source holding the
  facts of its web claims, one PubMed-style article per claim only the
  literature holds, one arXiv-style preprint per text whose claims only it
  holds, and the world's own namesakes and pages that merely mention the
  subject. A page supports a true claim and contradicts a false one (it
  states the truth); an unverifiable claim has no page.
- the extractor: asked to split a sample text (fanout.workloads.claims.split_text's
  request), a simulated model answers with the text's labelled claims, bent by
  its own extraction habits (fanout.sim.models: a merged pair of claims, a
  missed claim, a claim whose subject stays a pronoun), each drawn per text,
  model and seed. A text it does not know it splits into sentences. The
  habits are parameters, not a target: the benchmark measures what they do.
- judging a claim: the claim a model is asked about (the context's first
  line) is matched to the labelled claim it covers best
  (fanout.workloads.claims.align, at least MATCH of its content words); that
  labelled claim's pages then take their stances. A claim with an unresolved
  pronoun, or one that is no labelled claim, matches none, and every page is
  off topic for it: the simulated models find it unverifiable, as extraction
  errors should show.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fanout.base.validate import package_data
from fanout.base.yamlio import SAFE_LOADER
from fanout.sim.corpus_types import EditFacts, Page
from fanout.sim.dice import dice, short_hash
from fanout.workloads.claims.align import MATCH, content_words, words_covered
from fanout.workloads.claims.claim import CLAIM_LINE
from fanout.workloads.claims.split_text import EXTRACTION_MARKER

RCID_BASE = 9_100_000_000_000
"""Where the labelled claims' own ids start (text n's claim k is RCID_BASE + n * 1000 + k): far from any edit's."""
STANCE = {"correct": "supports", "incorrect": "contradicts"}
SECOND_SOURCE = "www.nationalgeographic.com"
ENCYCLOPEDIA = "www.britannica.com"
TEXT_BLOCK = re.compile(r"<<<\n(.*)\n>>>", re.DOTALL)
SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class PlantedClaim:
    rcid: int
    text_id: str
    number: int
    claim: str
    truth: str
    topic: str
    pronoun: str | None


@dataclass(frozen=True)
class PlantedText:
    id: str
    text: str
    claims: tuple[PlantedClaim, ...]


class ClaimsWorld:
    """The texts, their labelled claims and the pages about them."""

    def __init__(self, texts: Sequence[PlantedText], pages: Sequence[Page]) -> None:
        self.texts = {t.id: t for t in texts}
        self.by_text = {_plain(t.text): t for t in texts}
        self.claims = {c.rcid: c for t in texts for c in t.claims}
        self.pages = list(pages)
        self._words = {rcid: content_words(c.claim) for rcid, c in self.claims.items()}
        """Each labelled claim's content words, read once: `match` compares every judge's claim with all of them."""

    def facts(self) -> dict[int, EditFacts]:
        """Each labelled claim as the simulated models know a subject (its words are the claim's)."""
        return {c.rcid: EditFacts(c.rcid, "", c.claim, "", "", "", c.truth) for c in self.claims.values()}

    def match(self, claim: str) -> int | None:
        """The labelled claim `claim` covers best, when it covers one at all."""
        found = content_words(claim)
        best = max(((words_covered(wanted, found), rcid) for rcid, wanted in self._words.items()), default=(0.0, None))
        return best[1] if best[0] >= MATCH else None

    def text_for(self, request: str) -> PlantedText | None:
        found = TEXT_BLOCK.search(request)
        return self.by_text.get(_plain(found.group(1))) if found else None


def _plain(text: str) -> str:
    return " ".join(text.split())


def claim_in(first_user_text: str) -> str | None:
    """The claim a judge is asked about, from the context's first line; None for any other conversation."""
    if not first_user_text.startswith(CLAIM_LINE):
        return None
    return first_user_text.split("\n", 1)[0][len(CLAIM_LINE):].strip()


def is_extraction(first_user_text: str) -> bool:
    return first_user_text.startswith(EXTRACTION_MARKER)


# --- the extractor ----------------------------------------------------------------------------------


def extraction_answer(world: ClaimsWorld, request: str, habits: Any, seed: int, model_id: str) -> dict[str, Any]:
    """The claims a simulated extractor gives for the text in `request`, with its habits' mistakes."""
    text = world.text_for(request)
    if text is None:
        found = TEXT_BLOCK.search(request)
        body = _plain(found.group(1)) if found else ""
        return {"claims": [{"claim": s, "topic": "other"} for s in SENTENCE.split(body) if s.strip()]}
    rng = dice(seed, "extract", model_id, text.id)
    written: list[tuple[str, str]] = []
    for claim in text.claims:
        if rng.random() < habits.extract_miss:
            continue
        words = claim.pronoun if claim.pronoun and rng.random() < habits.extract_pronoun else claim.claim
        written.append((words, claim.topic))
    return {"claims": [{"claim": c, "topic": t} for c, t in _merged(written, habits.extract_merge, rng)]}


def _merged(claims: list[tuple[str, str]], chance: float, rng: Any) -> list[tuple[str, str]]:
    """Each pair of neighbours merged into one claim with `chance` (a claim is merged at most once)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(claims):
        if i + 1 < len(claims) and rng.random() < chance:
            (first, topic), (second, _) = claims[i], claims[i + 1]
            joined = second[0].lower() + second[1:] if second.split(" ", 1)[0] in ("The", "A", "An") else second
            out.append((f"{first.rstrip('.')}, and {joined}", topic))
            i += 2
            continue
        out.append(claims[i])
        i += 1
    return out


def extraction_reply(world: ClaimsWorld, request: str, habits: Any, seed: int, model_id: str) -> str:
    return json.dumps(extraction_answer(world, request, habits, seed, model_id), ensure_ascii=False)


# --- the world --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def load_claims_world(texts_path: Path | None = None, world_path: Path | None = None) -> ClaimsWorld:
    """The bundled sample's world (cached: read-only)."""
    texts = _read(texts_path or package_data("sample_texts.yaml")).get("texts") or []
    world = _read(world_path or package_data("sim/claims_world.yaml")).get("texts") or {}
    planted, pages = [], []
    for index, entry in enumerate(texts, start=1):
        text, about = _text_world(index, entry, world)
        planted.append(text)
        pages += about
    return ClaimsWorld(planted, pages)


def _text_world(index: int, entry: Mapping[str, Any], world: Mapping[str, Any]) -> tuple[PlantedText, list[Page]]:
    """One sample text as planted, and its pages; a text the world file leaves out gets no pages of its own."""
    about = world.get(entry["id"]) or {}
    text = _planted(index, entry, about.get("claims") or [])
    return text, _pages(text, str(about.get("subject") or text.id), about.get("claims") or [], about.get("pages") or [])


def _read(path: Path) -> dict[str, Any]:
    data = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=SAFE_LOADER)
    return data if isinstance(data, dict) else {}


def _planted(index: int, entry: Mapping[str, Any], about: Sequence[Mapping[str, Any]]) -> PlantedText:
    claims = []
    for number, labelled in enumerate(entry.get("claims") or [], start=1):
        extra = about[number - 1] if number - 1 < len(about) else {}
        claims.append(PlantedClaim(RCID_BASE + index * 1000 + number, entry["id"], number, labelled["claim"],
                                   labelled["label"], str(extra.get("topic") or "other"), extra.get("pronoun")))
    return PlantedText(entry["id"], _plain(entry["text"]), tuple(claims))


def _pages(text: PlantedText, subject: str, about: Sequence[Mapping[str, Any]],
           extra: Sequence[Mapping[str, Any]]) -> list[Page]:
    """The pages about one text's claims (see the module's docstring)."""
    placed = [(claim, about[i] if i < len(about) else {}) for i, claim in enumerate(text.claims)]
    web = [(c, a) for c, a in placed if a.get("where", "web") == "web" and a.get("fact")]
    arxiv = [(c, a) for c, a in placed if a.get("where") == "arxiv" and a.get("fact")]
    return (_web_pages(subject, web) + _pubmed_pages(subject, placed) + _arxiv_pages(text, subject, arxiv)
            + [_extra(text, entry) for entry in extra])


def _web_pages(subject: str, web: Sequence[tuple[PlantedClaim, Mapping[str, Any]]]) -> list[Page]:
    """An encyclopedia's page with every web fact, and a second source's with every other one (so some stand alone)."""
    if not web:
        return []
    return [_page(f"{ENCYCLOPEDIA}/topic/{_slug(subject)}", f"{subject} | Facts & History", subject, web),
            _page(f"{SECOND_SOURCE}/history/article/{_slug(subject)}", f"{subject}: what to know", subject,
                  web[::2], template="article", byline="National Geographic staff")]


def _pubmed_pages(subject: str, placed: Sequence[tuple[PlantedClaim, Mapping[str, Any]]]) -> list[Page]:
    """A journal article per fact placed in PubMed, found only through the PubMed-style search."""
    pages = []
    for claim, a in placed:
        if a.get("where") == "pubmed" and a.get("fact"):
            pmc = 3_000_000 + claim.rcid % 1_000_000
            pages.append(_page(f"www.ncbi.nlm.nih.gov/pmc/articles/PMC{pmc}", f"{subject}: {_title(a['fact'])}", subject,
                               [(claim, a)], only="pubmed", byline="Journal article"))
    return pages


def _arxiv_pages(text: PlantedText, subject: str, arxiv: Sequence[tuple[PlantedClaim, Mapping[str, Any]]]) -> list[Page]:
    """One preprint with every fact placed on arXiv, at an id fixed by the text's id."""
    if not arxiv:
        return []
    return [_page(f"arxiv.org/abs/{1700 + len(text.id)}.{int(short_hash(text.id), 16) % 100000:05d}", subject, subject,
                  arxiv, only="arxiv", byline="arXiv preprint")]


def _page(address: str, title: str, subject: str, facts: Sequence[tuple[PlantedClaim, Mapping[str, Any]]], *,
          template: str = "article", byline: str = "Editors", only: str | None = None) -> Page:
    return Page(address=address, template=template, title=title, section="Reference", byline=byline,
                summary=f"has a page on {subject}", body=(" ".join(str(a["fact"]) for _, a in facts),),
                keywords=(subject, *sorted({c.topic for c, _ in facts})),
                stances={c.rcid: STANCE.get(c.truth, "vague") for c, _ in facts}, generated=True, only=only)


def _extra(text: PlantedText, entry: Mapping[str, Any]) -> Page:
    """A page of the world's own: a namesake, or one that mentions the subject without settling anything."""
    stances = {RCID_BASE + _index(text) * 1000 + int(k): str(v) for k, v in (entry.get("stances") or {}).items()}
    return Page(address=str(entry["url"]), template="article", title=str(entry["title"]), section="",
                byline="", summary=f"mentions {entry['title']}", body=tuple(entry.get("body") or ()),
                keywords=(), stances=stances, generated=True)


def _index(text: PlantedText) -> int:
    return (text.claims[0].rcid - RCID_BASE) // 1000 if text.claims else 0


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _title(fact: str) -> str:
    words = fact.split()
    return " ".join(words[:8]) + ("..." if len(words) > 8 else "")
