"""The simulator's offline web agrees with the sample snapshot's truth, and looks like the web."""

from __future__ import annotations

import pytest
import yaml

from fanout.base.validate import package_data
from fanout.sim.corpus import load_corpus, tokens
from fanout.sim.pages import render_page
from fanout.workloads.patrol.snapshot import load_snapshot
from parsed_yaml import package_yaml
from test_sim import extract_text

CORPUS = load_corpus()
TRUTH = package_yaml("sample_truth.yaml")["truth"]
SNAPSHOT_RCIDS = [edit.rcid for edit in load_snapshot(package_data("sample_snapshot.yaml")).edits]
CHROME = ("Accept all cookies", "Advertisement", "Most read", "All rights reserved", "Sign up", "Share on", "Sport")


def stances_for(rcid: int) -> list[str]:
    return [page.stance(rcid) for page in CORPUS.pages.values() if page.status == 200]


@pytest.mark.parametrize("entry", TRUTH, ids=lambda e: str(e["rcid"]))
def test_the_corpus_holds_the_evidence_that_makes_each_sample_edit_right_wrong_or_unverifiable(entry):
    stances = stances_for(entry["rcid"])
    if entry["truth"] == "correct":
        assert "supports" in stances and "contradicts" not in stances
    elif entry["truth"] == "incorrect":
        assert "contradicts" in stances and "supports" not in stances
    else:
        assert "supports" not in stances and "contradicts" not in stances
        assert "vague" in stances


def test_every_sample_edit_has_a_truth_label_and_no_label_is_for_an_unknown_edit():
    assert sorted(e["rcid"] for e in TRUTH) == sorted(SNAPSHOT_RCIDS)
    assert [label["rcid"] for label in CORPUS.labels()] == sorted(SNAPSHOT_RCIDS)


@pytest.mark.parametrize("rcid", SNAPSHOT_RCIDS)
def test_searching_the_entitys_name_finds_pages_about_that_edit_first(rcid):
    facts = CORPUS.edits[rcid]
    hits = CORPUS.search(f"{facts.label} {facts.prop}")
    assert hits, facts.label
    assert hits[0].page.stance(rcid) != "offtopic"
    assert len(hits) <= 10


def test_search_ignores_case_accents_and_plurals():
    assert tokens("Margit ÅKESSON's Authors") == ["margit", "akesson", "author"]
    plain = [h.page.address for h in CORPUS.search("margit akesson")]
    accented = [h.page.address for h in CORPUS.search("Margit Åkesson")]
    assert plain == accented and plain


def test_search_ranks_deterministically_and_finds_nothing_for_unrelated_words():
    # Equal scores fall back to address order, so the ranking never depends on dict or set order.
    assert [hit.page.address for hit in CORPUS.search("Iceland population")] == [
        "www.britannica.com/place/Iceland",
        "statice.is/statistics/population/inhabitants/overview/",
        "www.bbc.co.uk/news/world-europe/old-story",
        "www.iceland.co.uk/about-us",
        "www.ons.gov.uk/visualisations/censuspopulationchange/E07000008",
    ]
    assert CORPUS.search("zyzzyva quokka") == []
    assert CORPUS.search("") == []


@pytest.mark.parametrize("address", sorted(a for a, p in CORPUS.pages.items() if p.status == 200))
def test_every_page_is_full_html_whose_extraction_is_the_article_alone(address):
    page = CORPUS.pages[address]
    html = render_page(page)
    assert html.startswith("<!DOCTYPE html>") and "<article" in html and "<footer" in html
    text = extract_text(html)
    assert text and page.body[0][:40] in text
    for chrome in CHROME:
        assert chrome not in text


def test_a_truth_entry_without_written_pages_gets_a_generated_page_that_agrees_with_it(tmp_path):
    snapshot = tmp_path / "snapshot.yaml"
    truth = tmp_path / "truth.yaml"
    snapshot.write_text(
        yaml.safe_dump(
            {
                "edits": [
                    {
                        "rcid": 7,
                        "title": "Q99",
                        "parsed_edit": {"property_label": "date of birth", "value_label": "1 May 1900"},
                        "item": {"label_en": "Ann Example", "description_en": "Welsh poet"},
                    }
                ]
            }
        )
    )
    truth.write_text(
        yaml.safe_dump(
            {
                "truth": [
                    {
                        "rcid": 7,
                        "truth": "incorrect",
                        "facts": "Ann Example was born on 1 May 1901 in Bangor. The edit is a year off.",
                        "evidence_hint": "a newspaper obituary",
                    }
                ]
            }
        )
    )
    corpus = load_corpus(package_data("sim/corpus.yaml"), snapshot, truth)
    [page] = [p for p in corpus.pages.values() if p.generated]
    assert page.stance(7) == "contradicts"
    assert page.address == "www.theguardian.com/reference/ann-example-7"
    assert "born on 1 May 1901" in extract_text(render_page(page))
    assert corpus.search("Ann Example date of birth")[0].page == page
    assert corpus.labels() == [{"rcid": 7, "truth": "incorrect"}]


def test_a_page_url_is_found_again_whatever_host_and_port_served_it():
    page = CORPUS.pages["www.imdb.com/name/nm0000158/"]
    assert CORPUS.page_for_url("http://127.0.0.1:9/web/www.imdb.com/name/nm0000158/") is page
    assert CORPUS.page_for_url("http://localhost:8765/web/www.imdb.com/name/nm0000158") is page
    assert CORPUS.page_for_url("https://www.imdb.com/name/nm0000158/") is None
