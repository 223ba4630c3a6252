"""The offline web's records: a page, and what the simulator knows about one sample edit.

Both the bundled corpus (fanout.sim.corpus) and the claims' world
(fanout.sim.claims) make them, and the handlers read them; they sit below all
of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WEB_PREFIX = "/web/"
"""Where the offline web's pages are served: {base}/web/{address}."""


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
    only: str | None = None
    """`pubmed` or `arxiv`: found only by that search (the literature a general search engine misses); None: by all."""

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
