"""The edit-summary parser against real Wikibase summary forms.

The forms come from Wikibase's own formatter tests and docs (docs/topics/
summaries.md, EditSummaryFormatterTest) and from summaries seen on Wikidata
(QuickStatements batches, the merge gadget, client sitelink moves, rollback).
"""

from __future__ import annotations

import pytest

import json
from pathlib import Path

from fanout.wikidata.autocomment import FAMILIES, parse_summary, split_user_comment, summary_keys
from fanout.wikidata.recentchanges import OPERATION_GROUPS

REAL = Path(__file__).parent / "fixtures" / "wikidata-real"

QS = "#quickstatements; [[:toollabs:quickstatements/#/batch/9516|batch #9516]] by [[User:Sic19|]]"

# comment -> (operation, family, property, value_raw, language, user_comment)
CASES: list[tuple[str, tuple[object, ...]]] = [
    ("/* wbsetclaim-update:2||1 */ [[Property:P31]]: [[Q5]]",
     ("wbsetclaim-update", "statement", "P31", "Q5", None, None)),
    ("/* wbsetclaim-update:2||1|1 */ [[Property:P108]]: [[Q124375837]]",
     ("wbsetclaim-update", "statement", "P108", "Q124375837", None, None)),
    ("/* wbsetclaim-update:2||1 */ [[Property:P569]]: 21 January 1956",
     ("wbsetclaim-update", "statement", "P569", "21 January 1956", None, None)),
    ("/* wbsetclaim-create:2||1 */ [[Property:P27]]: [[Q142]]",
     ("wbsetclaim-create", "statement", "P27", "Q142", None, None)),
    ("/* wbsetclaim-create:1||1 */ [[Property:P123]]: no value, user comment",
     ("wbsetclaim-create", "statement", "P123", "no value", None, "user comment")),
    ("/* wbsetclaim-create:2||1 */ [[Property:P1082]]: 180 centimetre",
     ("wbsetclaim-create", "statement", "P1082", "180 centimetre", None, None)),
    ("/* wbsetclaim-create:2||1 */ [[Property:P625]]: 52°12′18″N, 0°7′8″E",
     ("wbsetclaim-create", "statement", "P625", "52°12′18″N, 0°7′8″E", None, None)),
    ('/* wbsetclaim-create:2||1 */ [[Property:P4839]]: Entity["FileFormat", "EVY-1"]',
     ("wbsetclaim-create", "statement", "P4839", 'Entity["FileFormat", "EVY-1"]', None, None)),
    ("/* wbsetclaim-create:2||1 */ [[Property:P1696]]: [[Property:P1697]]",
     ("wbsetclaim-create", "statement", "P1696", "P1697", None, None)),
    (f"/* wbcreateclaim-create:1| */ [[Property:P106]]: [[Q1650915]], {QS}",
     ("wbcreateclaim-create", "statement", "P106", "Q1650915", None, QS)),
    ("/* wbcreateclaim-create:1| */ [[Property:P345]]: nm0000158",
     ("wbcreateclaim-create", "statement", "P345", "nm0000158", None, None)),
    ("/* wbcreateclaim-create:1| */ [[Property:P214]]: 113230702, #quickstatements; #temporary_batch_1553059981737",
     ("wbcreateclaim-create", "statement", "P214", "113230702", None, "#quickstatements; #temporary_batch_1553059981737")),
    # Legacy forms: no count after the key, and the older key without a suffix.
    ("/* wbsetclaim-update: */ [[Property:P31]]: [[Q5]]",
     ("wbsetclaim-update", "statement", "P31", "Q5", None, None)),
    ("/* wbremoveclaims:1 */ [[Property:P31]]: [[Q5]]",
     ("wbremoveclaims", "statement", "P31", "Q5", None, None)),
    ("/* wbsetclaimvalue:1| */ [[Property:P1082]]: 3,837,260",
     ("wbsetclaimvalue", "statement", "P1082", "3,837,260", None, None)),
    ("/* wbremoveclaims-remove:1| */ [[Property:P321]]: unknown value, user comment 2",
     ("wbremoveclaims-remove", "statement", "P321", "unknown value", None, "user comment 2")),
    ("/* wbremoveclaims-remove:1| */ [[Property:P106]]: [[Q169470]], not a physicist",
     ("wbremoveclaims-remove", "statement", "P106", "Q169470", None, "not a physicist")),
    ("/* wbsetclaim-update-rank:2||1 */ [[Property:P569]]: 11 March 1952",
     ("wbsetclaim-update-rank", "rank", "P569", "11 March 1952", None, None)),
    ("/* wbsetqualifier-add:1| */ [[Property:P7452]]: [[Q71536040]]",
     ("wbsetqualifier-add", "qualifier", "P7452", "Q71536040", None, None)),
    ("/* wbsetqualifier-update:1| */ [[Property:P580]]: 20 January 2009",
     ("wbsetqualifier-update", "qualifier", "P580", "20 January 2009", None, None)),
    ("/* wbremovequalifiers-remove:1| */ [[Property:P582]]: 2017",
     ("wbremovequalifiers-remove", "qualifier", "P582", "2017", None, None)),
    ("/* wbsetclaim-update-qualifiers:2||1 */ [[Property:P39]]: [[Q11696]]",
     ("wbsetclaim-update-qualifiers", "qualifier", "P39", "Q11696", None, None)),
    ("/* wbsetreference-add:2| */ [[Property:P1433]]: [[Q3186921]], #quickstatements; #temporary_batch_1553059981737",
     ("wbsetreference-add", "reference", "P1433", "Q3186921", None, "#quickstatements; #temporary_batch_1553059981737")),
    ("/* wbsetreference-set:2| */ [[Property:P569]]: 8 June 1955",
     ("wbsetreference-set", "reference", "P569", "8 June 1955", None, None)),
    ("/* wbremovereferences-remove:1| */ [[Property:P106]]: [[Q36180]]",
     ("wbremovereferences-remove", "reference", "P106", "Q36180", None, None)),
    ("/* wbsetlabel-add:1|ja */ 大美和神社",
     ("wbsetlabel-add", "label", None, "大美和神社", "ja", None)),
    ("/* wbsetlabel-set:1|en */ Ada Lovelace",
     ("wbsetlabel-set", "label", None, "Ada Lovelace", "en", None)),
    # Wikibase joins a user comment with ", ": alone, the parser cannot tell it from the label.
    ("/* wbsetlabel-remove:1|en */ LABEL-TEXT, remove user comment",
     ("wbsetlabel-remove", "label", None, "LABEL-TEXT, remove user comment", "en", None)),
    ("/* wbsetlabel-add:1|mul */ La Partida",
     ("wbsetlabel-add", "label", None, "La Partida", "mul", None)),
    ("/* wbsetdescription-add:1|ja */ 神奈川県小田原市にある神社",
     ("wbsetdescription-add", "description", None, "神奈川県小田原市にある神社", "ja", None)),
    ("/* wbsetdescription-set:1|en */ English writer and humorist",
     ("wbsetdescription-set", "description", None, "English writer and humorist", "en", None)),
    ("/* wbsetdescription-remove:1|fr */ écrivain britannique",
     ("wbsetdescription-remove", "description", None, "écrivain britannique", "fr", None)),
    ("/* wbsetaliases-add:2|de */ Erdapfel, Grundbirne, added potato aliases",
     ("wbsetaliases-add", "alias", None, "Erdapfel, Grundbirne, added potato aliases", "de", None)),
    ("/* wbsetaliases-remove:1|sv */ DNA",
     ("wbsetaliases-remove", "alias", None, "DNA", "sv", None)),
    ("/* wbsetaliases-set:2|en */ Douglas Noel Adams, DNA",
     ("wbsetaliases-set", "alias", None, "Douglas Noel Adams, DNA", "en", None)),
    ("/* wbsetaliases-add-remove:1|en */ Doug Adams",
     ("wbsetaliases-add-remove", "alias", None, "Doug Adams", "en", None)),
    ("/* wbsetsitelink-add:1|ukwiki */ Астрономія",
     ("wbsetsitelink-add", "sitelink", None, "Астрономія", "ukwiki", None)),
    ("/* wbsetsitelink-set:1|enwiki */ Potato",
     ("wbsetsitelink-set", "sitelink", None, "Potato", "enwiki", None)),
    ("/* wbsetsitelink-remove:1|dewiki */ Kartoffel",
     ("wbsetsitelink-remove", "sitelink", None, "Kartoffel", "dewiki", None)),
    ("/* wbsetsitelink-add-both:2|enwiki */ Potato, Q123, Q345, user comment",
     ("wbsetsitelink-add-both", "sitelink", None, "Potato, Q123, Q345, user comment", "enwiki", None)),
    ("/* wbsetsitelink-set-badges:1|enwiki */ Q123, Q345",
     ("wbsetsitelink-set-badges", "sitelink", None, "Q123, Q345", "enwiki", None)),
    ("/* clientsitelink-update:0|enwiki|enwiki:Russian invasion of Ukraine|enwiki:Russo-Ukrainian war (2022–present) */",
     ("clientsitelink-update", "sitelink", None, "Russo-Ukrainian war (2022–present)", "enwiki", None)),
    ("/* clientsitelink-remove:1||enwiki */ Boris Kok",
     ("clientsitelink-remove", "sitelink", None, "Boris Kok", "enwiki", None)),
    ("/* wblinktitles-connect:2| */ [[enwiki:Hydrogen]], [[dewiki:Wasserstoff]]",
     ("wblinktitles-connect", "sitelink", None, "[[enwiki:Hydrogen]], [[dewiki:Wasserstoff]]", None, None)),
    ("/* wbeditentity-update:0| */ user comment",
     ("wbeditentity-update", "entity", None, None, None, "user comment")),
    ("/* wbeditentity-create-item:0| */ user comment",
     ("wbeditentity-create-item", "entity", None, None, None, "user comment")),
    ("/* wbeditentity-create:2|ja */ 琵琶島神社",
     ("wbeditentity-create", "entity", None, None, None, "琵琶島神社")),
    ("/* wbeditentity-override:0| */ Clearing item to prepare for redirect",
     ("wbeditentity-override", "entity", None, None, None, "Clearing item to prepare for redirect")),
    ("/* wbeditentity-update-languages-short:0||nl */ nl-description, [[User:Edoderoobot/Set-nl-description|python code]]",
     ("wbeditentity-update-languages-short", "terms", None, None, "nl",
      "nl-description, [[User:Edoderoobot/Set-nl-description|python code]]")),
    ("/* wbmergeitems-from:0||Q26212910 */ [[MediaWiki:Gadget-Merge.js|merge.js]]  duplicate entry",
     ("wbmergeitems-from", "merge", None, None, None, "[[MediaWiki:Gadget-Merge.js|merge.js]]  duplicate entry")),
    ("/* wbmergeitems-to:0||Q928543 */",
     ("wbmergeitems-to", "merge", None, None, None, None)),
    ("/* wbcreateredirect:0||Q26212910|Q1216649 */",
     ("wbcreateredirect", "merge", None, None, None, None)),
    ("/* undo:0||2464599101|81.107.44.12 */",
     ("undo", "revert", None, None, None, None)),
    ("/* restore:0||2463871150|Ely Mapper */ back to the sourced date",
     ("restore", "revert", None, None, None, "back to the sourced date")),
    ("Reverted edits by [[Special:Contributions/81.107.44.12|81.107.44.12]] ([[User talk:81.107.44.12|talk]]) "
     "to last revision by [[User:Ely Mapper|Ely Mapper]]",
     (None, None, None, None, None,
      "Reverted edits by [[Special:Contributions/81.107.44.12|81.107.44.12]] ([[User talk:81.107.44.12|talk]]) "
      "to last revision by [[User:Ely Mapper|Ely Mapper]]")),
    ("", (None, None, None, None, None, None)),
    # wbeditentity / REST API edits touching only statements (Wikibase's EditSummaryHelper).
    ("/* wbeditentity-statements-single-property-add:1||1 */ [[Property:P1448]]",
     ("wbeditentity-statements-single-property-add", "statement", "P1448", None, None, None)),
    ("/* wbeditentity-statements-single-property-update:1||2 */ [[Property:P31]], fixing the class",
     ("wbeditentity-statements-single-property-update", "statement", "P31", None, None, "fixing the class")),
    ("/* wbeditentity-statements-single-property-remove:1||1 */ [[Property:P569]]",
     ("wbeditentity-statements-single-property-remove", "statement", "P569", None, None, None)),
    ("/* wbeditentity-statements-multiple-properties-update:1||3 */",
     ("wbeditentity-statements-multiple-properties-update", "statement", None, None, None, None)),
    ("/* wbremovereferences-update:1||1 */ [[Property:P31]]: [[Q5]]",
     ("wbremovereferences-update", "reference", "P31", "Q5", None, None)),
    # WikibaseLexeme: `Added new Form $3 with representations`, `Changed glosses of Sense $3`.
    ("/* add-form:1||L525-F3 */ maisons",
     ("add-form", "form", None, "maisons", None, None)),
    ("/* update-sense-glosses:1||L525-S1 */ building for living",
     ("update-sense-glosses", "sense", None, "building for living", None, None)),
]


def test_every_kind_of_edit_the_parser_knows_has_a_real_summary_in_the_table() -> None:
    assert {family for _, (_, family, *_) in CASES if family} == set(FAMILIES.values())


def wikibase_summary_keys() -> list[str]:
    """Every autocomment key in Wikibase's message files (lib/ and repo/i18n/en.json) and WikibaseLexeme's."""
    keys: list[str] = []
    for name in ("wikibase-lib-i18n-en.json", "wikibase-repo-i18n-en.json", "wikibaselexeme-i18n-en.json"):
        keys += summary_keys(json.loads((REAL / name).read_text()))
    return list(dict.fromkeys(keys))


def test_no_summary_key_in_wikibases_own_message_list_is_unknown() -> None:
    keys = wikibase_summary_keys()
    # 68 distinct keys in lib/i18n (entity, item and property forms share some), undo and restore in repo/,
    # and 23 lexeme keys, one of them (wbeditentity-update) also in lib/
    assert len(keys) == 92
    assert [key for key in keys if parse_summary(f"/* {key}:1| */").family == "unknown"] == []


def test_the_statement_only_wbeditentity_forms_are_listed_with_the_statement_edits() -> None:
    statement_keys = [key for key in wikibase_summary_keys() if key.startswith("wbeditentity-statements-")]
    assert len(statement_keys) == 6
    assert {FAMILIES[key] for key in statement_keys} <= OPERATION_GROUPS["statements"]


def test_an_autocomment_the_parser_has_not_met_is_unknown_and_keeps_its_text_as_the_comment() -> None:
    parsed = parse_summary("/* wbsetsomething-new:1|en */ some text, more")
    assert (parsed.operation, parsed.family, parsed.args) == ("wbsetsomething-new", "unknown", ("1", "en"))
    assert parsed.language is None
    assert (parsed.property, parsed.value_raw, parsed.user_comment) == (None, None, "some text, more")


@pytest.mark.parametrize(("comment", "expected"), CASES, ids=[c[:48] or "empty" for c, _ in CASES])
def test_a_summary_is_taken_apart_into_operation_property_value_and_user_comment(
    comment: str, expected: tuple[object, ...]
) -> None:
    parsed = parse_summary(comment)
    got = (parsed.operation, parsed.family, parsed.property, parsed.value_raw, parsed.language, parsed.user_comment)
    assert got == expected


def test_merge_and_redirect_summaries_name_the_items_involved() -> None:
    assert parse_summary("/* wbmergeitems-from:0||Q26212910 */").entities == ("Q26212910",)
    assert parse_summary("/* wbcreateredirect:0||Q26212910|Q1216649 */").entities == ("Q26212910", "Q1216649")


def test_an_undo_summary_names_the_revision_it_undid() -> None:
    assert parse_summary("/* undo:0||2464599101|81.107.44.12 */").reverted_revid == 2464599101


def test_a_summary_that_is_not_text_is_read_as_no_comment() -> None:
    assert parse_summary(None).operation is None
    assert parse_summary(None).user_comment is None


@pytest.mark.parametrize(
    ("comment", "known", "expected"),
    [
        ("/* wbsetlabel-add:1|en */ LABEL-TEXT, add user comment", ["LABEL-TEXT"], "add user comment"),
        ("/* wbsetlabel-set:1|en */ Ada Lovelace", ["Ada Lovelace"], None),
        ("/* wbsetclaim-update:2||1 */ [[Property:P569]]: 11 March 1852, typo fixed", ["11 March 1852"], "typo fixed"),
        ("/* wbsetaliases-add:2|de */ Erdapfel, Grundbirne, added potato aliases", ["Erdapfel, Grundbirne"],
         "added potato aliases"),
        ("/* wbsetsitelink-add-both:2|enwiki */ Potato, Q123, Q345, user comment", ["Potato, Q123, Q345"],
         "user comment"),
        # Nothing known matches: the parser's own reading stands.
        ("/* wbcreateclaim-create:1| */ [[Property:P106]]: [[Q1650915]], #quickstatements", ["[[Q2]]"],
         "#quickstatements"),
    ],
)
def test_knowing_the_value_the_edit_set_splits_off_the_users_comment(
    comment: str, known: list[str], expected: str | None
) -> None:
    assert split_user_comment(parse_summary(comment), known) == expected
