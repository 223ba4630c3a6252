"""The simulator's offline web: pages, what each says about each edit, and search.

The corpus is built from three files that must agree: the sample snapshot (what
each edit claims), its truth file (whether the claim is right) and corpus.yaml
(pages written from the truth's facts). A truth entry with no hand-written
pages still gets one, generated from its `facts`, so a new sample edit never
leaves the corpus silently out of step with the labels the report scores.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from fanout.base.validate import package_data
from fanout.base.errors import ConfigError
from fanout.base.yamlio import SAFE_LOADER
from fanout.sim.claims import load_claims_world
from fanout.sim.corpus_types import WEB_PREFIX, EditFacts, Page
from fanout.sim.dice import dice

STANCES: tuple[str, ...] = ("supports", "contradicts", "vague", "namesake", "offtopic")
TRUTHS: tuple[str, ...] = ("correct", "incorrect", "unverifiable")
PUBMED_PREFIX = "/pubmed/"
"""Where the PubMed-style API's articles are served: /pubmed/{pmid}/, one per page it indexes."""

SEARXNG_WEIGHTS = (3.0, 2.0, 1.0, 1.0)
"""Weights of a query word in a page's title, keywords and body, and of each query word pair the page holds:
the simulator's SearXNG, which favours titles."""
WIKI_WEIGHTS = (1.0, 0.5, 2.5, 0.0)
"""The Wikipedia-style API's full-text ranking of the same pages: body words count most, word pairs not at all,
so its order overlaps SearXNG's without repeating it."""

STOPWORDS = frozenset(
    "a an and are as at be by for from has have he her his in is it its of on or she that the "
    "their this to was were what when where which who whom why with about source official record".split()
)


@dataclass(frozen=True)
class Hit:
    page: Page
    score: float


class _Index:
    """One world's pages as search sees them: their words and word pairs, each word's pages (its postings) and
    how many pages hold it. Pages can be added (a growing world); a search scores only the pages that hold one of
    its words, so an index that grows with every edit stays fast."""

    def __init__(self, pages: list[Page] | None = None) -> None:
        self.fields: dict[str, tuple[set[str], set[str], set[str]]] = {}
        self.pairs: dict[str, set[tuple[str, str]]] = {}
        self.doc_freq: Counter[str] = Counter()
        self.postings: dict[str, set[str]] = {}
        self.add(pages or [])

    def add(self, pages: list[Page]) -> None:
        for page in pages:
            if page.address in self.fields:  # a page listed again replaces the first, as a dict by address would
                old = self.fields[page.address]
                self.doc_freq.subtract(old[0] | old[1] | old[2])
                for token in old[0] | old[1] | old[2]:
                    self.postings[token].discard(page.address)
            fields = _page_tokens(page)
            self.doc_freq.update(fields[0] | fields[1] | fields[2])
            for token in fields[0] | fields[1] | fields[2]:
                self.postings.setdefault(token, set()).add(page.address)
            self.fields[page.address] = fields
            self.pairs[page.address] = _word_pairs(page)

    def candidates(self, terms: list[str]) -> set[str]:
        return set().union(*(self.postings.get(t, ()) for t in terms))

    def idf(self, terms: list[str]) -> dict[str, float]:
        n = max(1, len(self.fields))
        return {t: math.log(1 + n / self.doc_freq[t]) for t in terms if self.doc_freq[t]}


class Corpus:
    """Pages plus an inverted index; search is deterministic token overlap.

    The sample texts' pages (fanout.sim.claims) are a second world with an
    index of its own: a query is answered from the edits' pages, and the
    claims' pages join (ranked together) only when they answer it better. So
    what the simulated models find about the sample edits is what it was
    before the claims were added, page for page.

    Pages can be added while the simulator runs (`add`): the simulated
    Wikidata's edits get theirs as they are made (fanout.sim.world_pages), through
    `growing`, which gives a simulator its own corpus so the bundled one, shared
    and cached, never changes.
    """

    def __init__(self, pages: list[Page], edits: dict[int, EditFacts], claims: dict[int, EditFacts] | None = None,
                 claim_pages: list[Page] | None = None) -> None:
        self._pages: dict[str, Page] = {}
        self._edits: dict[int, EditFacts] = {}
        self._by_pmid: dict[int, Page] = {}
        self._grow: Callable[[Corpus], None] | None = None
        self.claims = claims or {}
        """The labelled claims of the sample texts (fanout.sim.claims), known as subjects are; never in `labels()`."""
        self._claim_pages = list(claim_pages or [])
        self._indexes = [_Index()] + ([_Index(self._claim_pages)] if self._claim_pages else [])
        self._remember(self._claim_pages)
        self.add(pages, edits)

    def add(self, pages: list[Page], edits: dict[int, EditFacts]) -> None:
        """More pages of the edits' world and edit facts (an address already known is replaced in place)."""
        self._edits.update(edits)
        self._indexes[0].add(pages)
        self._remember(pages)

    def _remember(self, pages: list[Page]) -> None:
        for page in pages:
            self._pages[page.address] = page
            self._by_pmid[pubmed_id(page.address)] = page
            """The PMID the PubMed-style API gives each page (fixed per page, whatever the seed)."""

    def growing(self, grow: Callable[[Corpus], None]) -> Corpus:
        """A corpus of its own with these pages, which `grow` adds to before each use."""
        claim_addresses = {p.address for p in self._claim_pages}
        own = Corpus([p for a, p in self._pages.items() if a not in claim_addresses], dict(self._edits), self.claims,
                     self._claim_pages)
        own._grow = grow
        return own

    def _synced(self) -> Corpus:
        if self._grow is not None:
            self._grow(self)
        return self

    @property
    def pages(self) -> dict[str, Page]:
        return self._synced()._pages

    @property
    def edits(self) -> dict[int, EditFacts]:
        return self._synced()._edits

    @property
    def by_pmid(self) -> dict[int, Page]:
        return self._synced()._by_pmid

    def facts(self, rcid: int | None) -> EditFacts | None:
        """What the simulator knows of an edit or a labelled claim (None: of nothing it knows)."""
        if rcid is None:
            return None
        return self.edits.get(rcid) or self.claims.get(rcid)

    def labels(self) -> list[dict[str, Any]]:
        return [{"rcid": e.rcid, "truth": e.truth} for e in sorted(self.edits.values(), key=lambda e: e.rcid)]

    def page_for_url(self, url: str) -> Page | None:
        """The page a simulator URL points at (a page, or a PubMed-style article), whatever host and port."""
        path = unquote(urlsplit(url).path)
        if path.startswith(PUBMED_PREFIX):
            pmid = path[len(PUBMED_PREFIX):].strip("/")
            return self.by_pmid.get(int(pmid)) if pmid.isdigit() and len(pmid) <= 12 else None
        if not path.startswith(WEB_PREFIX):
            return None
        return self.page_at(path[len(WEB_PREFIX):])

    def page_at(self, address: str) -> Page | None:
        pages = self.pages
        return pages.get(address) or pages.get(address.rstrip("/")) or pages.get(address + "/")

    def search(
        self, query: str, limit: int = 10, weights: tuple[float, float, float, float] = SEARXNG_WEIGHTS,
        source: str | None = None,
    ) -> list[Hit]:
        """Pages by token overlap with the query, best first; `weights` (title, keywords, body, word pair)
        make the two search stand-ins rank the same pages differently. `source` (pubmed, arxiv) adds the pages
        only that search finds (Page.only); arxiv's finds only those."""
        terms = list(dict.fromkeys(tokens(query)))
        if not terms:
            return []
        self._synced()
        found = [self._scored(index, terms, weights, source) for index in self._indexes]
        hits = found[0]
        if len(found) > 1 and found[1] and (not hits or max(h.score for h in found[1]) > max(h.score for h in hits)):
            hits = hits + found[1]
        if not hits:
            return []
        best = max(h.score for h in hits)
        hits = [h for h in hits if h.score >= 0.15 * best]
        hits.sort(key=lambda h: (-h.score, h.page.address))
        return hits[:limit]

    def _scored(self, index: _Index, terms: list[str], weights: tuple[float, float, float, float],
                source: str | None) -> list[Hit]:
        """The index's pages that hold one of the terms, scored; `source` keeps a search's own pages (Page.only)."""
        idf, pairs = index.idf(terms), set(zip(terms, terms[1:]))
        hits = []
        for address in index.candidates(terms):
            only = self._pages[address].only
            if (only is not None and only != source) or (source == "arxiv" and only != "arxiv"):
                continue
            hit = self._hit(index, address, terms, idf, pairs, weights)
            if hit is not None:
                hits.append(hit)
        return hits

    def _hit(self, index: _Index, address: str, terms: list[str], idf: dict[str, float], pairs: set[tuple[str, str]],
             weights: tuple[float, float, float, float]) -> Hit | None:
        in_title, in_keywords, in_body, per_pair = weights
        title, keywords, body = index.fields[address]
        score = 0.0
        for term in terms:
            weight = in_title * (term in title) + in_keywords * (term in keywords) + in_body * (term in body)
            score += weight * idf.get(term, 0.0)
        if score and pairs and per_pair:
            text_pairs = index.pairs[address]
            score += per_pair * sum(1 for pair in pairs if pair in text_pairs)
        return Hit(self._pages[address], round(score, 4)) if score > 0 else None


def pubmed_id(address: str) -> int:
    """An eight-digit PMID for a page, fixed by its address."""
    return dice("pmid", address).randrange(10_000_000, 40_000_000)


def tokens(text: str) -> list[str]:
    """Lower-case words without accents or stopwords: Åkesson matches akesson."""
    folded = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = (_stem(w) for w in re.findall(r"\w+", plain))
    return [w for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def _stem(word: str) -> str:
    """Just enough stemming for plurals and possessives: authors -> author."""
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _word_pairs(page: Page) -> set[tuple[str, str]]:
    words = tokens(" ".join([page.title, *page.keywords, *page.body, *(v for _, v in page.facts)]))
    return set(zip(words, words[1:]))


def _page_tokens(page: Page) -> tuple[set[str], set[str], set[str]]:
    title = set(tokens(page.title))
    keywords = set(tokens(" ".join(page.keywords)))
    body = set(tokens(" ".join([*page.body, *(f"{k} {v}" for k, v in page.facts), page.section])))
    return title, keywords, body


@functools.lru_cache(maxsize=8)
def load_corpus(
    corpus_path: Path | None = None,
    snapshot_path: Path | None = None,
    truth_path: Path | None = None,
) -> Corpus:
    """The bundled corpus, or one built from other files in the same formats (cached: it is read-only)."""
    edits = load_edit_facts(
        snapshot_path or package_data("sample_snapshot.yaml"),
        truth_path or package_data("sample_truth.yaml"),
    )
    pages = _pages_for(_read_yaml(corpus_path or package_data("sim/corpus.yaml")).get("pages") or [], edits)
    if corpus_path is None and snapshot_path is None and truth_path is None:  # the bundled corpus: with the claims
        world = load_claims_world()
        return Corpus(pages, edits, world.facts(), world.pages)
    return Corpus(pages, edits)


def _pages_for(entries: list[dict[str, Any]], edits: dict[int, EditFacts]) -> list[Page]:
    """The corpus file's pages, then a generated one for each edit no page takes a stance on (by rcid)."""
    pages = [_page(entry, i) for i, entry in enumerate(entries)]
    covered = {rcid for page in pages for rcid in page.stances}
    return pages + [generated_page(facts) for rcid, facts in sorted(edits.items()) if rcid not in covered]


def load_edit_facts(snapshot_path: Path, truth_path: Path) -> dict[int, EditFacts]:
    snapshot = _read_yaml(snapshot_path)
    raw_edits = snapshot.get("edits", []) if isinstance(snapshot, dict) else snapshot
    edits = {int(e["rcid"]): e for e in raw_edits or [] if isinstance(e, dict) and "rcid" in e}
    facts: dict[int, EditFacts] = {}
    for entry in _read_yaml(truth_path).get("truth") or []:
        rcid = int(entry["rcid"])
        truth = str(entry.get("truth"))
        if truth not in TRUTHS:
            raise ConfigError(f"{truth_path}: rcid {rcid}: truth must be one of {', '.join(TRUTHS)}, got {truth!r}")
        facts[rcid] = _edit_facts(rcid, edits.get(rcid, {}), truth, entry)
    return facts


def _edit_facts(rcid: int, edit: dict[str, Any], truth: str, entry: dict[str, Any]) -> EditFacts:
    parsed = edit.get("parsed_edit") or {}
    item = edit.get("item") or {}
    prop, value = _claimed(parsed)
    return EditFacts(
        rcid=rcid,
        qid=str(edit.get("title") or ""),
        label=str(item.get("label_en") or edit.get("title") or rcid),
        description=str(item.get("description_en") or ""),
        prop=prop,
        value=value,
        truth=truth,
        facts=" ".join(str(entry.get("facts") or "").split()),
        evidence_hint=str(entry.get("evidence_hint") or ""),
    )


def _claimed(parsed: dict[str, Any]) -> tuple[str, str]:
    """(property, value) the edit states: a qualifier's under its statement's value, a reference's statement's
    own, else the statement's (or a label's, or a bare `statement`)."""
    if parsed.get("qualifier_property_label"):
        prop = f"{parsed.get('value_label', '')} {parsed['qualifier_property_label']}".strip()
        return prop, str(parsed.get("qualifier_value_label") or parsed.get("qualifier_value_raw") or "")
    if parsed.get("reference_property_label"):
        return str(parsed.get("property_label") or ""), str(parsed.get("value_label") or "")
    return _statement_claimed(parsed)


def _statement_claimed(parsed: dict[str, Any]) -> tuple[str, str]:
    prop = str(parsed.get("property_label") or ("label" if parsed.get("language") else "statement"))
    return prop, str(parsed.get("value_label") or parsed.get("value_raw") or "")


GENERATED_STANCE = {"correct": "supports", "incorrect": "contradicts", "unverifiable": "vague"}


def generated_page(edit: EditFacts) -> Page:
    """A reference page written from a truth entry's facts, for edits corpus.yaml lacks."""
    slug = re.sub(r"[^a-z0-9]+", "-", " ".join(tokens(edit.label)) or str(edit.rcid)).strip("-")
    host, template = _reference_site(edit.evidence_hint.lower())
    sentences = [s for s in re.split(r"(?<=[.;])\s+", edit.facts) if s]
    return Page(
        address=f"{host}/reference/{slug}-{edit.rcid}",
        template=template,
        title=f"{edit.label}: {edit.description}" if edit.description else edit.label,
        section="Reference",
        date=None,
        byline="Staff",
        summary=sentences[0].rstrip(".") if sentences else f"mentions {edit.label}",
        body=tuple(sentences) or (f"{edit.label}.",),
        keywords=(edit.label, edit.prop, edit.description),
        stances={edit.rcid: GENERATED_STANCE[edit.truth]},
        generated=True,
    )


def _reference_site(hint: str) -> tuple[str, str]:
    """(host, template) of the kind of source the truth's evidence hint names; an encyclopedia by default."""
    if "obituar" in hint or "newspaper" in hint:
        return "www.theguardian.com", "obituary"
    if "authority" in hint or "library" in hint:
        return "catalogue.bnf.fr", "record"
    if "statistic" in hint or "census" in hint:
        return "www.ons.gov.uk", "table"
    if "museum" in hint:
        return "www.sciencemuseum.org.uk", "article"
    return "www.britannica.com", "article"


def _page(entry: dict[str, Any], index: int) -> Page:
    where = f"corpus page {index} ({entry.get('url', '?')})"
    try:
        stances = {int(k): str(v) for k, v in (entry.get("stances") or {}).items()}
        bad = sorted(set(stances.values()) - set(STANCES))
        if bad:
            raise ConfigError(f"{where}: unknown stance {bad[0]!r}")
        return _page_of(entry, stances)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _page_of(entry: dict[str, Any], stances: dict[int, str]) -> Page:
    """The page an entry describes; a missing or malformed field raises for `_page` to name the entry."""
    return Page(
        address=str(entry["url"]),
        template=str(entry.get("template", "article")),
        title=str(entry["title"]),
        section=str(entry.get("section", "")),
        date=str(entry["date"]) if entry.get("date") else None,
        byline=str(entry.get("byline", "")),
        summary=str(entry.get("summary", "")),
        body=tuple(str(p) for p in entry.get("body") or ()),
        facts=tuple((str(k), str(v)) for k, v in (entry.get("facts") or {}).items()),
        keywords=tuple(str(k) for k in entry.get("keywords") or ()),
        stances=stances,
        status=int(entry.get("status", 200)),
    )


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=SAFE_LOADER) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
