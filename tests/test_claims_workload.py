"""The claims workload's parts: its input, the extraction and its repair turn, claim keys, the matching of
extracted claims to labelled ones, the factuality arithmetic, and the seam it must not cross.

Whole runs against the simulator (extraction, every model, report, desk, compare, the gate, kill -9) are
tests/test_claims_run.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
import respx
from scripted_chat import LOCAL, ScriptedChat, completion

from fanout.base.errors import ConfigError
from fanout.base.item import Aspect, RecordKeys
from fanout.llm.chat import ChatClient
from fanout.llm.models import ModelSpec
from fanout.stats.factuality import Judgement, group_factuality
from fanout.store.prepared import PreparedLine
from fanout.workloads import get_workload, workload_for
from fanout.workloads.claims.align import align, coverage
from fanout.workloads.claims.claim import Claim
from fanout.workloads.claims.split_text import ExtractedClaim, extract_claims, extraction_request, parse_claims
from fanout.workloads.claims.extraction_log import text_numbers
from fanout.workloads.claims.prompt import load_extraction_prompt
from fanout.workloads.claims.texts import Text, read_texts
from fanout.workloads.settings import WorkloadSettings

pytestmark = pytest.mark.timeout(60)
SRC = Path(__file__).resolve().parent.parent / "src" / "fanout"


# --- the input ---------------------------------------------------------------------------------------


def test_texts_read_from_json_lines_with_their_labels_in_any_of_the_words_for_them(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text(
        json.dumps({"id": 7, "text": " Paris is in France. ", "label": "true", "source_url": "https://a.example/x"})
        + "\n\n" + json.dumps({"id": "b", "text": "Water boils at 50 C.", "question": "At what?",
                               "claims": [{"claim": "Water boils at  50 C.", "label": "refuted"}]}) + "\n",
        encoding="utf-8")
    texts = read_texts(path)
    assert [(t.id, t.text, t.position, t.truth, t.source_url, t.question, t.claims) for t in texts.texts] == [
        ("7", "Paris is in France.", 1, "correct", "https://a.example/x", None, ()),
        ("b", "Water boils at 50 C.", 2, None, None, "At what?", (("Water boils at 50 C.", "incorrect"),))]
    assert len(texts.sha256) == 64


def test_every_bad_record_is_named_in_one_line_before_anything_runs(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([
        json.dumps({"id": "a", "text": "fine"}),
        "{not json",
        json.dumps({"id": "a", "text": "again"}),
        json.dumps({"text": "no id"}),
        json.dumps({"id": "c", "text": "x", "label": "maybe"}),
        json.dumps({"id": "d", "text": "x", "source_url": "ftp://x"}),
        json.dumps({"id": "e", "text": "x", "colour": "red"}),
    ]) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError) as bad:
        read_texts(path)
    assert str(bad.value) == (
        f"the texts file {path}: 6 bad record(s); fix or remove them:\n"
        "  line 2: not a JSON object (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))\n"
        "  line 3: id 'a' repeats line 1; give each text its own id\n"
        "  line 4: id is missing (a text or a number)\n"
        "  line 5: label 'maybe' is not a label; use correct, incorrect, unverifiable\n"
        "  line 6: source_url must be an http:// or https:// URL with a host (got 'ftp://x')\n"
        "  line 7: unknown field 'colour'; known: claims, context, id, label, question, source_url, text")


def test_a_yaml_input_is_a_list_or_a_mapping_with_texts(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("texts:\n  - {id: one, text: The Moon orbits the Earth.}\n", encoding="utf-8")
    assert [t.id for t in read_texts(path).texts] == ["one"]
    path.write_text("- {id: one}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"texts\[0\]: text is missing or empty"):
        read_texts(path)
    path.write_text("edits: []\n", encoding="utf-8")
    with pytest.raises(ConfigError) as snapshot:
        read_texts(path)
    assert str(snapshot.value) == (f"the texts file {path} is a snapshot of Wikidata edits, not texts: leave out "
                                   "--workload claims")


# --- the extraction --------------------------------------------------------------------------------


def test_an_extractor_reply_is_read_with_bare_strings_and_unknown_topics_as_other() -> None:
    claims, problem, warnings = parse_claims(
        'Sure: {"claims": [{"claim": "A  b.", "topic": "Date"}, "C d.", {"claim": "E.", "topic": "gossip"}, '
        '{"claim": "  "}]}')
    assert (claims, problem) == ([ExtractedClaim("A b.", "date"), ExtractedClaim("C d.", "other"),
                                  ExtractedClaim("E.", "other")], None)
    assert warnings == ["topic 'gossip' is not one of date, number, place, person, organisation, work, science, "
                        "health, event, other; read as other"]
    assert parse_claims('{"claims": "all of them"}')[1] == "claims must be a list"
    assert parse_claims("no json here")[1] == 'the reply contains no JSON object with "claims"'
    assert parse_claims('{"claims": [{"topic": "date"}]}')[1] == (
        "claims[0]: must be an object with a claim (text) and a topic")


async def test_a_reply_that_does_not_fit_gets_one_repair_turn_and_both_calls_are_paid_for() -> None:
    text = Text("t1", "It rains in Bergen.", 1, question="Weather?")
    server = ScriptedChat([completion("I think there are two claims.", cost=0.001),
                           completion('{"claims": [{"claim": "It rains in Bergen.", "topic": "place"}]}', cost=0.002)])
    async with httpx.AsyncClient() as http:
        chat = ChatClient(base_url=LOCAL, api_key=None, http=http)
        with respx.mock:
            respx.post(f"{LOCAL}/chat/completions").mock(side_effect=server)
            done = await extract_claims(text, ModelSpec("m/x"), chat, load_extraction_prompt(), timeout_s=30)
    first, repair = server.requests
    assert first["messages"][1] == {"role": "user", "content": extraction_request(text)}
    assert first["response_format"] == {"type": "json_object"}
    assert repair["messages"][-1]["content"].startswith(
        'That answer could not be used: the reply contains no JSON object with "claims".')
    assert (done.status, done.claims, done.cost_usd, done.cost_source, done.warnings) == (
        "ok", [ExtractedClaim("It rains in Bergen.", "place")], 0.003, "reported",
        ["a repair turn fixed the extractor's first reply"])


def test_the_extraction_request_starts_with_the_marker_and_holds_the_text_whole() -> None:
    text = Text("t9", "One. Two.", 3, question="Q?", context="C.", source_url="https://s.example/")
    assert extraction_request(text) == ("Split the text below into atomic, self-contained claims.\nText id: t9\n"
                                        "The text answers this question: Q?\nGiven with the text: C.\n"
                                        "Source: https://s.example/\n\n<<<\nOne. Two.\n>>>")


# --- keys and the item ----------------------------------------------------------------------------


def _line(unit: str, number: int) -> PreparedLine:
    return PreparedLine(unit, "m/x", "ok", 0.0, "reported", {"number": number})


def test_a_text_keeps_the_number_it_was_logged_with_and_a_new_text_takes_a_free_one() -> None:
    texts = [Text("a", "x", 1), Text("new", "y", 2), Text("b", "z", 3)]
    # an earlier start logged b as text 2 (the input has changed since): `new` cannot have 2 too
    assert text_numbers(texts, [_line("a", 1), _line("b", 2)]) == {"a": 1, "new": 4, "b": 2}
    assert text_numbers(texts, []) == {"a": 1, "new": 2, "b": 3}


def test_a_claim_fills_the_record_keys_with_its_own_meanings() -> None:
    claim = Claim(3, 4, "Python 3.0 was released in 2008.", "date", "python", "Python ... 2008.", 5,
                  "2026-12-01T10:00:00Z", "A short history?", None, "https://a.example/q")
    assert claim.key == 3004 and claim.label_key == 3004
    assert claim.aspect == Aspect("date", "claim") and str(claim.aspect) == "date/claim"
    assert claim.record_keys() == RecordKeys(edit_rcid=3004, edit_revid=3, qid="python", property=None,
                                             diff_type="claim", edit_timestamp="2026-12-01T10:00:00Z")
    assert claim.question() == 'Is this claim true? "Python 3.0 was released in 2008."'
    assert claim.context().splitlines()[:5] == [
        "Claim to verify: Python 3.0 was released in 2008.", "Topic: date",
        "It is claim 4 of 5 split from the text 'python' below; it was rewritten to stand on its own, so judge the "
        "claim as written.", "The text's source: https://a.example/q", "The text answered this question: A short history?"]
    assert claim.prefetched_urls() == []


def test_the_claims_workload_describes_a_claim_with_its_source_as_its_link() -> None:
    claim = Claim(1, 2, "B.", "place", "t", "A. B.", 2, "2026-12-01T10:00:00Z", source_url="https://s.example/")
    change = get_workload("claims").describe(claim)
    assert (change.item_label, change.what, change.old, change.new, change.link, change.link_text) == (
        "text t", "claim 2 of 2 (place)", None, "B.", "https://s.example/", "source")


def test_patrol_refuses_the_settings_only_claims_has() -> None:
    with pytest.raises(ConfigError) as refused:
        workload_for(WorkloadSettings(gate=0.8))
    assert str(refused.value) == ("--gate is a setting of --workload claims; the patrol workload has none. Leave it "
                                  "out, or add --workload claims.")
    assert workload_for(WorkloadSettings(workload="claims", extractor="m/x")).extractor == "m/x"  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"--gate is a share of claims, from 0 to 1 \(got 1.5\)"):
        WorkloadSettings(workload="claims", gate=1.5)


# --- matching extracted claims to labelled ones ----------------------------------------------------


def test_merged_missed_and_pronoun_claims_show_in_precision_and_recall_and_take_the_right_labels() -> None:
    labelled = [("The Eiffel Tower was completed in 1889.", "correct"),
                ("The Eiffel Tower is in Paris.", "correct"),
                ("The Eiffel Tower is 500 metres tall.", "incorrect"),
                ("The Eiffel Tower weighs 10,000 tonnes.", "correct")]
    extracted = ["The Eiffel Tower was completed in 1889.",                 # atomic
                 "The Eiffel Tower is in Paris, and is 500 metres tall.",   # merged: covers two, one false
                 "It weighs 10,000 tonnes."]                                # a pronoun: covers nothing
    found = align(labelled, extracted)
    assert found.covers == [[0], [1, 2], []]
    assert found.truths == ["correct", "incorrect", None]
    assert (found.atomic, found.found, found.precision, found.recall) == (1, 3, 1 / 3, 0.75)
    assert coverage("Douglas Adams was born in 1952.", "He was born in 1952.") == 0.5
    assert align([], ["Anything."], text_truth="correct").truths == ["correct"]


# --- the factuality of a text ----------------------------------------------------------------------


def test_a_text_s_factuality_is_the_share_of_judged_claims_supported_with_the_refuted_ones_named() -> None:
    given = [Judgement("t", 1, "A.", "accept", 0.9, sources=("https://a/",)),
             Judgement("t", 2, "B.", "reject", 0.8, sources=("https://b/", "https://c/")),
             Judgement("t", 3, "C.", "unsure", None),
             Judgement("t", 4, "D.", None, None)]
    row = group_factuality("t", "committee", given)
    assert (row.claims, row.judged, row.supported, row.refuted, row.unsure) == (4, 3, 1, 1, 1)
    assert row.factuality == pytest.approx(1 / 3)
    assert (round(row.low or 0, 4), round(row.high or 0, 4)) == (0.0615, 0.7923)
    assert (row.confidence, row.sources_consulted) == (pytest.approx(0.85), 3)
    assert row.explanation == ('1 of 4 claim(s) supported, 1 refuted, 1 unsure, 1 not judged. Refuted: "B." '
                               '(sources: https://b/, https://c/). Unsure: "C.".')


# --- the seam ----------------------------------------------------------------------------------------


WORKLOAD_NAMED = re.compile(r"workloads[./]claims|\bClaimsWorkload\b|\bClaimsSource\b|get_workload\(\s*[\"']claims")


def test_no_module_of_the_engine_judging_store_research_or_statistics_names_the_claims_workload() -> None:
    named = [f"{path.relative_to(SRC)}:{n}" for package in ("engine", "judging", "store", "research", "stats")
             for path in sorted((SRC / package).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if WORKLOAD_NAMED.search(line) or re.search(r"[\"']claims[\"']", line)]
    assert named == []
