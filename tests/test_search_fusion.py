"""Canonical URLs and reciprocal rank fusion (tools/fusion.py), with hand-computed values."""

from __future__ import annotations

import pytest

from fanout.tools.fusion import FusedHit, Source, canonical_url, fuse
from fanout.tools.providers.base import SearchHit


def hit(url: str, title: str = "", engines: tuple[str, ...] = (), published: str | None = None) -> SearchHit:
    return SearchHit(title or url, url, f"about {url}", engines, published)


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTPS://Example.ORG/Path", "https://example.org/Path"),  # scheme and host case; path case kept
        ("https://www.bbc.co.uk/news/1/", "https://bbc.co.uk/news/1"),  # www. and trailing slash
        ("https://en.m.wikipedia.org/wiki/Ada_Lovelace", "https://en.wikipedia.org/wiki/Ada_Lovelace"),
        ("https://www.wikidata.org/wiki/Q42", "https://wikidata.org/wiki/Q42"),
        ("https://m.wikidata.org/wiki/Q42", "https://wikidata.org/wiki/Q42"),
        ("https://de.m.wiktionary.org/wiki/Haus", "https://de.wiktionary.org/wiki/Haus"),
        ("https://en.wikipedia.org/wiki/X?wprov=srpw1", "https://en.wikipedia.org/wiki/X"),
        ("https://a.example/p?utm_source=x&id=7&UTM_Medium=y&fbclid=z", "https://a.example/p?id=7"),
        ("https://a.example/p?b=2&a=1", "https://a.example/p?a=1&b=2"),  # order of the rest does not matter
        ("https://a.example:443/p#section", "https://a.example/p"),  # default port, fragment
        ("http://127.0.0.1:8080/web/x/", "http://127.0.0.1:8080/web/x"),  # another port is kept
        ("https://a.example/", "https://a.example"),
        ("http://[::1", "http://[::1"),  # unparseable: itself
    ],
)
def test_canonical_url(url: str, canonical: str) -> None:
    assert canonical_url(url) == canonical


def test_two_spellings_of_one_page_share_a_canonical_url() -> None:
    assert canonical_url("https://EN.m.Wikipedia.org/wiki/Ada/?utm_campaign=a") == canonical_url(
        "https://en.wikipedia.org/wiki/Ada?wprov=srpw1")


def test_rrf_orders_a_hand_made_pair_of_lists_with_k_60() -> None:
    # searxng: a b c; wikipedia: c a d.  a = 1/61 + 1/62, c = 1/63 + 1/61, b = 1/62, d = 1/63.
    fused = fuse([("searxng", [hit("https://a.example"), hit("https://b.example"), hit("https://c.example")]),
                  ("wikipedia", [hit("https://c.example"), hit("https://a.example"), hit("https://d.example")])])

    assert [f.hit.url for f in fused] == ["https://a.example", "https://c.example", "https://b.example",
                                          "https://d.example"]
    assert [f.score for f in fused] == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62, 1 / 63])
    assert fused[0].sources == (Source("searxng", 1), Source("wikipedia", 2))
    assert fused[1].sources == (Source("searxng", 3), Source("wikipedia", 1))
    assert fused[3].sources == (Source("wikipedia", 3),)


def test_a_page_two_providers_rank_second_beats_one_ranked_first_by_one_provider() -> None:
    fused = fuse([("searxng", [hit("https://x.example"), hit("https://y.example")]),
                  ("brave", [hit("https://y.example"), hit("https://z.example")])])

    assert [f.hit.url for f in fused] == ["https://y.example", "https://x.example", "https://z.example"]


def test_k_changes_the_weight_of_the_first_ranks() -> None:
    # x: first in one list; y: third in both. k=1: x=1/2 > y=2/4; equal, then best rank wins -> x first.
    # k=60: y = 2/63 > x = 1/61 -> y first.
    lists = [("a", [hit("https://x.example"), hit("https://p.example"), hit("https://y.example")]),
             ("b", [hit("https://q.example"), hit("https://r.example"), hit("https://y.example")])]

    assert fuse(lists, k=60)[0].hit.url == "https://y.example"
    assert fuse(lists, k=1)[0].hit.url == "https://x.example"


def test_hits_merge_by_canonical_url_and_keep_every_provider_and_engine() -> None:
    fused = fuse([
        ("searxng", [hit("https://www.bbc.co.uk/news/1/", "BBC one", ("google", "bing")),
                     hit("https://bbc.co.uk/news/1?utm_source=rss", "BBC again", ("brave",))]),
        ("wikipedia", [hit("https://other.example"), hit("https://BBC.co.uk/news/1", "BBC two",
                                                         published="2020-01-01")]),
    ])

    assert len(fused) == 2
    first = fused[0]
    assert first == FusedHit(
        SearchHit("BBC one", "https://www.bbc.co.uk/news/1/", "about https://www.bbc.co.uk/news/1/",
                  ("google", "bing"), "2020-01-01"),
        pytest.approx(1 / 61 + 1 / 62),
        (Source("searxng", 1, ("google", "bing", "brave")), Source("wikipedia", 2)),
    )


def test_a_tie_in_rank_is_described_by_the_provider_asked_first() -> None:
    fused = fuse([("searxng", [hit("https://a.example/", "from searxng")]),
                  ("wikipedia", [hit("https://a.example", "from wikipedia")])])

    assert [(f.hit.title, f.hit.url) for f in fused] == [("from searxng", "https://a.example/")]


def test_fusing_nothing_is_empty() -> None:
    assert fuse([("searxng", []), ("wikipedia", [])]) == []
