"""English labels via wbgetentities: batches of 50, a cache, mul and redirects."""

from __future__ import annotations

import httpx
import respx

from fanout.wikidata.api import ApiSettings, WikidataClient
from fanout.wikidata.labels import LabelCache
from test_wikidata_world import API_URL, FakeWikidata, load, request_params


async def test_a_hundred_and_twenty_ids_are_asked_for_in_batches_of_fifty_fifty_and_twenty() -> None:
    ids = [f"Q{n}" for n in range(1000, 1120)]
    with respx.mock(assert_all_called=False) as router:
        fake = FakeWikidata(router)
        fake.labels.update({i: f"item {i}" for i in ids})
        async with httpx.AsyncClient() as http:
            labels = LabelCache(WikidataClient(http, ApiSettings(contact="me@example.org")))
            found = await labels.resolve(ids)
    assert [len(batch) for batch in fake.label_batches] == [50, 50, 20]
    assert found["Q1119"] == "item Q1119"
    assert len(found) == 120
    assert request_params(fake.requests[0])["props"] == "labels"
    assert request_params(fake.requests[0])["languages"] == "en|mul"


async def test_labels_already_known_or_already_asked_for_are_not_fetched_again() -> None:
    with respx.mock(assert_all_called=False) as router:
        fake = FakeWikidata(router)
        async with httpx.AsyncClient() as http:
            labels = LabelCache(WikidataClient(http, ApiSettings(contact="me@example.org")))
            assert await labels.resolve(["Q5", "P31", "Q404404404"]) == {"Q5": "human", "P31": "instance of"}
            assert await labels.resolve(["Q5", "Q404404404", "Q84"]) == {"Q5": "human", "Q84": "London"}
    assert fake.label_batches == [["Q5", "P31", "Q404404404"], ["Q84"]]


async def test_a_mul_label_stands_in_for_english_and_a_redirected_id_keeps_the_label_it_was_asked_for() -> None:
    with respx.mock(assert_all_called=False) as router:
        router.get(url__startswith=API_URL).mock(return_value=httpx.Response(200, json=load("wbgetentities_example.json")))
        async with httpx.AsyncClient() as http:
            labels = LabelCache(WikidataClient(http, ApiSettings(contact="me@example.org")))
            found = await labels.resolve(["Q5", "P31", "Q26212910", "Q4115189999"])
    assert found == {"Q5": "human", "P31": "instance of", "Q26212910": "Timár Péter"}
