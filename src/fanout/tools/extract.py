"""Turning a fetched page into the text a model reads.

trafilatura keeps an HTML page's main text and drops navigation, ads and
footers. It is CPU work (lxml parsing: milliseconds on a normal page,
minutes and hundreds of MB on a malformed one), so it never runs in the
run's process: extract_pool hands it to a worker process (extract_worker)
that is bounded in time and memory. Plain text and JSON are only decoded.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType


def article_text(html: bytes, encoding: str | None, url: str) -> str | None:
    """The page's main text, or None when trafilatura finds none."""
    text = _trafilatura().extract(
        _decoded(html, encoding), url=url, favor_recall=True, include_comments=False, include_tables=True
    )
    stripped = (text or "").strip()
    return stripped or None


@cache
def _trafilatura() -> ModuleType:
    """trafilatura, imported when a page is first read (a heavy import), its justext stoplist put in a set
    that keeps its hash.

    A page whose own extraction comes out short (under 250 characters: a
    stub, a consent wall, most of the simulator's pages) goes to trafilatura's
    justext fallback, and trafilatura hands justext its stoplist of every
    language as a tuple of 154,484 words (`trafilatura.external.JT_STOPLIST`,
    built on first use). justext looks that list up in an lru_cache, which
    hashes a tuple anew on every call: about 3 ms of CPU a page, half or
    more of what such a page costs (trafilatura 2.3.1, justext 3.0.2). The
    same words as a frozenset keep their hash, and justext makes the same
    frozenset of either, so the text found is the same. Should a later
    trafilatura drop that name, nothing is set and only the cost comes back.
    """
    import trafilatura
    from trafilatura import external

    if hasattr(external, "JT_STOPLIST") and hasattr(external, "jt_stoplist_init"):
        words = frozenset(external.JT_STOPLIST or external.jt_stoplist_init())
        external.JT_STOPLIST = words  # type: ignore[assignment]  # typed as its first value, None
    return trafilatura


def _decoded(html: bytes, encoding: str | None) -> str | bytes:
    """The declared charset wins; without one, trafilatura guesses from the bytes."""
    if encoding:
        try:
            return html.decode(encoding, errors="replace")
        except LookupError:
            pass
    return html


def decode_plain_text(body: bytes, encoding: str | None) -> str:
    try:
        return body.decode(encoding or "utf-8", errors="replace").strip()
    except LookupError:
        return body.decode("utf-8", errors="replace").strip()


def truncate(text: str, max_chars: int) -> str:
    """Cut long pages so one fetch cannot flood the model's context; say so plainly."""
    if len(text) <= max_chars:
        return text
    return f"{text[:max_chars]}\n\n[truncated: showing the first {max_chars:,} of {len(text):,} characters]"
