"""The text fanout reads from a page is trafilatura's, with its justext stoplist kept hashable (fanout.tools.extract)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trafilatura
from trafilatura import external

from fanout.tools.extract import article_text

PAGE = (Path(__file__).parent / "fixtures" / "pages" / "short-article.html").read_bytes()
URL = "https://www.britannica.com/biography/Albert-Einstein"
OPTIONS = {"url": URL, "favor_recall": True, "include_comments": False, "include_tables": True}
EXPECTED = (
    "Albert Einstein | Biography, Education, Discoveries, & Facts\n"
    "By The Editors of Encyclopaedia Britannica ·\n"
    "Albert Einstein (born March 14, 1879, Ulm, Württemberg, Germany—died April 18, 1955, Princeton, New Jersey, "
    "U.S.) was a German-born physicist who developed the special and general theories of relativity and won the "
    "Nobel Prize for Physics in 1921."
)


def trafilatura_own(monkeypatch: pytest.MonkeyPatch, stoplist: tuple[str, ...] | None) -> str | None:
    """The page's text from trafilatura with the stoplist as it builds it (None: its own tuple), or another."""
    with monkeypatch.context() as patched:
        patched.setattr(external, "JT_STOPLIST", None)
        words = external.jt_stoplist_init() if stoplist is None else stoplist
        patched.setattr(external, "JT_STOPLIST", words)
        return trafilatura.extract(PAGE.decode("utf-8"), **OPTIONS)


def test_a_short_page_gets_the_text_trafilatura_gives_with_its_own_stoplist(monkeypatch: pytest.MonkeyPatch):
    own = trafilatura_own(monkeypatch, None)

    assert article_text(PAGE, "utf-8", URL) == own == EXPECTED
    # The page is one whose text depends on the stoplist: with no real word in it, justext chooses differently.
    assert trafilatura_own(monkeypatch, ("zzzz",)) != EXPECTED


def test_the_stoplist_justext_is_handed_keeps_trafilatura_s_words_in_a_set_that_keeps_its_hash(
        monkeypatch: pytest.MonkeyPatch):
    article_text(PAGE, "utf-8", URL)
    kept = external.JT_STOPLIST
    with monkeypatch.context() as patched:
        patched.setattr(external, "JT_STOPLIST", None)
        built = external.jt_stoplist_init()

    assert type(built) is tuple
    assert type(kept) is frozenset and kept == frozenset(built)
