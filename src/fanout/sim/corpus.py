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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from fanout.base.validate import package_data
from fanout.base.errors import ConfigError
from fanout.base.yamlio import SAFE_LOADER
from fanout.sim.dice import dice

STANCES: tuple[str, ...] = ("supports", "contradicts", "vague", "namesake", "offtopic")
TRUTHS: tuple[str, ...] = ("correct", "incorrect", "unverifiable")
WEB_PREFIX = "/web/"
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
class Page:
    """One page of the offline web, served at {base}/web/{address}."""

    address: str
    """host/path, e.g. www.bbc.co.uk/news/entertainment-arts/1331105."""
    template: str
    title: str
    section: str = ""
    date: str | None = None
    byline: str = ""
    summary: str = ""
    """What the page says about the claim, for simulated rationales."""
    body: tuple[str, ...] = ()
    facts: tuple[tuple[str, str], ...] = ()
    keywords: tuple[str, ...] = ()
    stances: dict[int, str] = field(default_factory=dict)
    status: int = 200
    generated: bool = False

    @property
    def host(self) -> str:
        return self.address.split("/", 1)[0]

    def stance(self, rcid: int | None) -> str:
        return self.stances.get(rcid, "offtopic") if rcid is not None else "offtopic"

    def url(self, base_url: str) -> str:
        return f"{base_url}{WEB_PREFIX}{self.address}"

    def snippet(self, limit: int = 220) -> str:
        """The search-result text: the opening of the article, as engines show it."""
        text = " ".join(self.body) or "; ".join(f"{k}: {v}" for k, v in self.facts)
        if len(text) <= limit:
            return text
        cut = text[:limit].rsplit(" ", 1)[0]
        return cut.rstrip(",;:") + " …"


@dataclass(frozen=True)
class EditFacts:
    """What the simulator knows about one sample edit: its claim and the truth."""

    rcid: int
    qid: str
    label: str
    description: str
    prop: str
    """The property (or qualifier) as words, for queries and rationales."""
    value: str
    """The edited value as words."""
    truth: str
    facts: str = ""
    evidence_hint: str = ""


@dataclass(frozen=True)
class Hit:
    page: Page
    score: float


class Corpus:
    """Pages plus an inverted index; search is deterministic token overlap.

    Pages can be added while the simulator runs (`add`): the simulated
    Wikidata's edits get theirs as they are made (fanout.sim.world_pages), through
    `growing`, which gives a simulator its own corpus so the bundled one, shared
    and cached, never changes. A search scores only the pages that hold one of
    its words, so a corpus that grows with every edit stays fast.
    """

    def __init__(self, pages: list[Page], edits: dict[int, EditFacts]) -> None:
        self._pages: dict[str, Page] = {}
        self._edits: dict[int, EditFacts] = {}
        self._fields: dict[str, tuple[set[str], set[str], set[str]]] = {}
        self._pairs: dict[str, set[tuple[str, str]]] = {}
        self._doc_freq: Counter[str] = Counter()
        self._postings: dict[str, set[str]] = {}
        self._by_pmid: dict[int, Page] = {}
        self._grow: Callable[[Corpus], None] | None = None
        self.add(pages, edits)

    def add(self, pages: list[Page], edits: dict[int, EditFacts]) -> None:
        """More pages and edit facts (an address already known is replaced in place)."""
        self._edits.update(edits)
        for page in pages:
            if page.address in self._fields:  # a page listed again replaces the first, as a dict by address would
                old = self._fields[page.address]
                self._doc_freq.subtract(old[0] | old[1] | old[2])
                for token in old[0] | old[1] | old[2]:
                    self._postings[token].discard(page.address)
            fields = _page_tokens(page)
            self._doc_freq.update(fields[0] | fields[1] | fields[2])
            for token in fields[0] | fields[1] | fields[2]:
                self._postings.setdefault(token, set()).add(page.address)
            self._pages[page.address] = page
            self._fields[page.address] = fields
            self._pairs[page.address] = _word_pairs(page)
            self._by_pmid[pubmed_id(page.address)] = page
            """The PMID the PubMed-style API gives each page (fixed per page, whatever the seed)."""

    def growing(self, grow: Callable[[Corpus], None]) -> Corpus:
        """A corpus of its own with these pages, which `grow` adds to before each use."""
        own = Corpus(list(self._pages.values()), dict(self._edits))
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
        self, query: str, limit: int = 10, weights: tuple[float, float, float, float] = SEARXNG_WEIGHTS
    ) -> list[Hit]:
        """Pages by token overlap with the query, best first; `weights` (title, keywords, body, word pair)
        make the two search stand-ins rank the same pages differently."""
        terms = list(dict.fromkeys(tokens(query)))
        if not terms:
            return []
        self._synced()
        n = max(1, len(self._pages))
        idf = {t: math.log(1 + n / self._doc_freq[t]) for t in terms if self._doc_freq[t]}
        pairs = set(zip(terms, terms[1:]))
        candidates = set().union(*(self._postings.get(t, ()) for t in terms))
        hits = [hit for address in candidates if (hit := self._hit(address, terms, idf, pairs, weights)) is not None]
        if not hits:
            return []
        best = max(h.score for h in hits)
        hits = [h for h in hits if h.score >= 0.15 * best]
        hits.sort(key=lambda h: (-h.score, h.page.address))
        return hits[:limit]

    def _hit(self, address: str, terms: list[str], idf: dict[str, float], pairs: set[tuple[str, str]],
             weights: tuple[float, float, float, float]) -> Hit | None:
        in_title, in_keywords, in_body, per_pair = weights
        title, keywords, body = self._fields[address]
        score = 0.0
        for term in terms:
            weight = in_title * (term in title) + in_keywords * (term in keywords) + in_body * (term in body)
            score += weight * idf.get(term, 0.0)
        if score and pairs and per_pair:
            text_pairs = self._pairs[address]
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
    pages = [_page(entry, i) for i, entry in enumerate(_read_yaml(corpus_path or package_data("sim/corpus.yaml")).get("pages") or [])]
    covered = {rcid for page in pages for rcid in page.stances}
    pages += [generated_page(facts) for rcid, facts in sorted(edits.items()) if rcid not in covered]
    return Corpus(pages, edits)


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
    label = str(item.get("label_en") or edit.get("title") or rcid)
    if parsed.get("qualifier_property_label"):
        prop = f"{parsed.get('value_label', '')} {parsed['qualifier_property_label']}".strip()
        value = str(parsed.get("qualifier_value_label") or parsed.get("qualifier_value_raw") or "")
    elif parsed.get("reference_property_label"):
        prop = str(parsed.get("property_label") or "")
        value = str(parsed.get("value_label") or "")
    else:
        prop = str(parsed.get("property_label") or ("label" if parsed.get("language") else "statement"))
        value = str(parsed.get("value_label") or parsed.get("value_raw") or "")
    return EditFacts(
        rcid=rcid,
        qid=str(edit.get("title") or ""),
        label=label,
        description=str(item.get("description_en") or ""),
        prop=prop,
        value=value,
        truth=truth,
        facts=" ".join(str(entry.get("facts") or "").split()),
        evidence_hint=str(entry.get("evidence_hint") or ""),
    )


GENERATED_STANCE = {"correct": "supports", "incorrect": "contradicts", "unverifiable": "vague"}


def generated_page(edit: EditFacts) -> Page:
    """A reference page written from a truth entry's facts, for edits corpus.yaml lacks."""
    slug = re.sub(r"[^a-z0-9]+", "-", " ".join(tokens(edit.label)) or str(edit.rcid)).strip("-")
    hint = edit.evidence_hint.lower()
    host, template = ("www.britannica.com", "article")
    if "obituar" in hint or "newspaper" in hint:
        host, template = ("www.theguardian.com", "obituary")
    elif "authority" in hint or "library" in hint:
        host, template = ("catalogue.bnf.fr", "record")
    elif "statistic" in hint or "census" in hint:
        host, template = ("www.ons.gov.uk", "table")
    elif "museum" in hint:
        host, template = ("www.sciencemuseum.org.uk", "article")
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


def _page(entry: dict[str, Any], index: int) -> Page:
    where = f"corpus page {index} ({entry.get('url', '?')})"
    try:
        stances = {int(k): str(v) for k, v in (entry.get("stances") or {}).items()}
        bad = sorted(set(stances.values()) - set(STANCES))
        if bad:
            raise ConfigError(f"{where}: unknown stance {bad[0]!r}")
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
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from exc


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.load(Path(path).read_text(encoding="utf-8"), Loader=SAFE_LOADER) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
