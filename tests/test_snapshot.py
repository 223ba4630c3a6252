"""Loading enriched snapshots: what is accepted, and the one message each mistake gets."""

from __future__ import annotations

import copy
import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fanout.base.validate import package_data
from fanout.base.errors import ConfigError
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.edit_fields import EditedItem, ParsedEdit, Reference
from fanout.workloads.patrol.snapshot import Snapshot, load_snapshot
from edits import edit_data


def write_yaml(tmp_path: Path, data: Any, name: str = "snap.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def sources(snapshot: Snapshot) -> list[dict[str, Any]]:
    return [dict(edit.source) for edit in snapshot.edits]


def test_a_mapping_with_an_edits_list_loads_with_the_sha256_of_its_bytes(tmp_path: Path) -> None:
    path = write_yaml(tmp_path, {"edits": [edit_data(1), edit_data(2)]})
    snapshot = load_snapshot(path)
    assert (snapshot.path, snapshot.sha256) == (path, hashlib.sha256(path.read_bytes()).hexdigest())
    assert sources(snapshot) == [edit_data(1), edit_data(2)]


def test_each_edit_comes_out_typed_with_every_field_of_its_entry(tmp_path: Path) -> None:
    entry = edit_data(1, prefetched_references=[{"url": "https://example.org/adams", "text": "Born 1952."}])
    [edit] = load_snapshot(write_yaml(tmp_path, [entry])).edits
    assert edit == Edit(
        rcid=1,
        revid=2464598906,
        parent_revid=2464598000,
        title="Q42",
        user="Example User",
        timestamp="2026-02-19T12:34:56Z",
        tags=("wikidata-ui",),
        comment="/* wbsetclaim-update:2||1 */ [[Property:P569]]: 12 March 1953",
        parsed=ParsedEdit("wbsetclaim-update", "P569", "date of birth", "+1953-03-12T00:00:00Z", "12 March 1953",
                          entry["parsed_edit"]),
        diff_type="value_changed",
        diff={"type": "value_changed", "old": "+1952-03-11T00:00:00Z", "new": "+1953-03-12T00:00:00Z"},
        item=EditedItem("Douglas Adams", "English author and humourist", {"P31": [{"value": "Q5", "label": "human"}]}),
        references=(Reference("https://example.org/adams", "Born 1952."),),
        source=entry,
    )
    assert edit.is_term_edit is False


def test_optional_fields_left_out_come_out_as_none_or_empty(tmp_path: Path) -> None:
    entry = edit_data(1)
    del entry["parent_revid"], entry["comment"], entry["item"]["description_en"]
    [edit] = load_snapshot(write_yaml(tmp_path, [entry])).edits
    assert (edit.parent_revid, edit.comment, edit.item.description_en, edit.references) == (None, None, None, ())


def test_a_bare_list_of_edits_loads_too(tmp_path: Path) -> None:
    path = write_yaml(tmp_path, [edit_data(7)])
    assert sources(load_snapshot(str(path))) == [edit_data(7)]


def test_an_unquoted_yaml_timestamp_is_kept_as_the_wikidata_string(tmp_path: Path) -> None:
    path = tmp_path / "snap.yaml"
    text = yaml.safe_dump([edit_data(7)], sort_keys=False).replace(
        "timestamp: '2026-02-19T12:34:56Z'", "timestamp: 2026-02-19T12:34:56Z"
    )
    assert "timestamp: 2026-02-19T12:34:56Z" in text
    path.write_text(text)
    edit = load_snapshot(path).edits[0]
    assert (edit.timestamp, edit.source["timestamp"]) == ("2026-02-19T12:34:56Z", "2026-02-19T12:34:56Z")


def test_a_label_edit_may_have_a_null_property_and_value(tmp_path: Path) -> None:
    edit = edit_data(
        parsed_edit={
            "operation": "wbsetlabel-remove",
            "property": None,
            "property_label": None,
            "value_raw": None,
            "value_label": None,
        },
        edit_diff={"type": "label_removed", "old": "Douglas Adams", "new": None},
    )
    snapshot = load_snapshot(write_yaml(tmp_path, [edit]))
    assert sources(snapshot) == [edit]
    assert (snapshot.edits[0].parsed.property, snapshot.edits[0].is_term_edit) == (None, True)


def test_the_shipped_sample_has_twelve_edits_with_unique_rcids() -> None:
    snapshot = load_snapshot(package_data("sample_snapshot.yaml"))
    rcids = [e.rcid for e in snapshot.edits]
    assert len(rcids) == 12
    assert len(set(rcids)) == 12


def test_the_shipped_sample_covers_the_edit_kinds_the_demo_needs() -> None:
    snapshot = load_snapshot(package_data("sample_snapshot.yaml"))
    kinds = Counter(e.diff_type for e in snapshot.edits)
    assert kinds == Counter(
        value_added=5, value_changed=3, value_removed=1, qualifier_added=1, reference_added=1, label_changed=1
    )
    properties = {e.parsed.property for e in snapshot.edits}
    assert {"P569", "P31", "P345", "P106", "P39", None, "P1082", "P19", "P27", "P570"} == properties


def test_the_shipped_truth_covers_every_sample_rcid_with_six_four_two() -> None:
    snapshot = load_snapshot(package_data("sample_snapshot.yaml"))
    truth = yaml.safe_load(package_data("sample_truth.yaml").read_text(encoding="utf-8"))["truth"]
    assert [t["rcid"] for t in truth] == [e.rcid for e in snapshot.edits]
    assert Counter(t["truth"] for t in truth) == Counter(correct=6, incorrect=4, unverifiable=2)
    assert all(t["facts"].strip() and t["evidence_hint"].strip() for t in truth)


def drop(path: str) -> Callable[[dict[str, Any]], None]:
    def mutate(edit: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        holder = edit
        for part in parents:
            holder = holder[part]
        del holder[leaf]

    return mutate


def put(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(edit: dict[str, Any]) -> None:
        *parents, leaf = path.split(".")
        holder = edit
        for part in parents:
            holder = holder[part]
        holder[leaf] = value

    return mutate


INVALID_EDITS = [
    pytest.param(drop("rcid"), "(rcid unknown): field rcid is missing; add an integer (the recent-changes id)", id="no-rcid"),
    pytest.param(
        put("rcid", "123"),
        "(rcid unknown): field rcid must be an integer (the recent-changes id), got '123' (str)",
        id="rcid-text",
    ),
    pytest.param(put("rcid", True), "(rcid unknown): field rcid must be an integer (the recent-changes id), got True (bool)", id="rcid-bool"),
    pytest.param(drop("revid"), "(rcid 123): field revid is missing; add an integer (the revision id)", id="no-revid"),
    pytest.param(put("parent_revid", "x"), "(rcid 123): field parent_revid must be an integer or null, got 'x' (str)", id="parent-text"),
    pytest.param(drop("title"), "(rcid 123): field title is missing; add the item's QID, like Q42", id="no-title"),
    pytest.param(put("title", None), "(rcid 123): field title must be the item's QID, like Q42, got null", id="title-null"),
    pytest.param(put("title", ""), "(rcid 123): field title must be the item's QID, like Q42, got '' (str)", id="title-empty"),
    pytest.param(put("title", "Douglas Adams"), "(rcid 123): field title must be the item's QID, like Q42, got 'Douglas Adams' (str)", id="title-label"),
    pytest.param(put("title", "Property:P31"),
                 "(rcid 123): field title must be the item's QID, like Q42, got 'Property:P31' (str)", id="title-pid"),
    pytest.param(
        put("user", 12345),
        "(rcid 123): field user must be the editor's user name as a string (quote it if it looks like a number), got 12345 (int)",
        id="user-number",
    ),
    pytest.param(
        put("timestamp", "19 Feb 2026"),
        "(rcid 123): field timestamp must be an ISO 8601 UTC time like 2026-02-19T08:02:14Z, got '19 Feb 2026' (str)",
        id="timestamp-prose",
    ),
    pytest.param(put("tags", "mobile edit"), "(rcid 123): field tags must be a list of tag names ([] when there are none), got 'mobile edit' (str)", id="tags-text"),
    pytest.param(drop("tags"), "(rcid 123): field tags is missing; add a list of tag names ([] when there are none)", id="no-tags"),
    pytest.param(
        drop("parsed_edit"),
        "(rcid 123): field parsed_edit is missing; add a mapping with operation, property, property_label, value_raw, value_label",
        id="no-parsed-edit",
    ),
    pytest.param(
        drop("parsed_edit.operation"),
        "(rcid 123): field parsed_edit.operation is missing; add the summary's operation, like wbsetclaim-update",
        id="no-operation",
    ),
    pytest.param(
        drop("parsed_edit.property"),
        "(rcid 123): field parsed_edit.property is missing; add a property id like P569 "
        "(null only for label, description or alias edits)",
        id="no-property",
    ),
    pytest.param(
        put("parsed_edit.property", "date of birth"),
        "(rcid 123): field parsed_edit.property must be a property id like P569 "
        "(null only for label, description or alias edits), got 'date of birth' (str)",
        id="property-label",
    ),
    pytest.param(
        put("parsed_edit.property", None),
        "(rcid 123): field parsed_edit.property is null, but edit_diff.type value_changed changes a statement; "
        "give a property id like P569",
        id="property-null-on-statement",
    ),
    pytest.param(
        put("parsed_edit.value_raw", None),
        "(rcid 123): field parsed_edit.value_raw is null, but edit_diff.type value_changed changes a statement; "
        "give the new (or removed) value",
        id="value-null-on-statement",
    ),
    pytest.param(
        drop("parsed_edit.value_label"),
        "(rcid 123): field parsed_edit.value_label is missing; add the value's readable label, or null",
        id="no-value-label",
    ),
    pytest.param(
        put("parsed_edit.value_raw", {"time": "+1953"}),
        "(rcid 123): field parsed_edit.value_raw must be the new (or removed) value as a string or number, got a mapping",
        id="value-mapping",
    ),
    pytest.param(
        drop("edit_diff.type"),
        "(rcid 123): field edit_diff.type is missing; add the kind of change, like value_added, value_changed or label_changed",
        id="no-diff-type",
    ),
    pytest.param(drop("item"), "(rcid 123): field item is missing; add a mapping with label_en and claims", id="no-item"),
    pytest.param(
        drop("item.label_en"),
        "(rcid 123): field item.label_en is missing; add the item's English label, or null if it has none",
        id="no-label",
    ),
    pytest.param(
        put("item.claims", [{"P31": "Q5"}]),
        "(rcid 123): field item.claims must be a mapping from property id to a list of {value, label}, got a list",
        id="claims-list",
    ),
    pytest.param(
        put("item.claims", {"instance of": [{"value": "Q5"}]}),
        "(rcid 123): field item.claims.instance of has a key that is not a property id; claims are keyed like P31",
        id="claims-key",
    ),
    pytest.param(
        put("item.claims", {"P31": "Q5"}),
        "(rcid 123): field item.claims.P31 must be a list of {value, label} mappings, got 'Q5' (str)",
        id="claims-scalar",
    ),
    pytest.param(
        put("item.claims", {"P31": [{"label": "human"}]}),
        "(rcid 123): field item.claims.P31[0] must be a mapping with a value, got a mapping",
        id="claim-without-value",
    ),
    pytest.param(
        put("prefetched_references", {"url": "https://example.org"}),
        "(rcid 123): field prefetched_references must be a list of {url, text} mappings, got a mapping",
        id="refs-mapping",
    ),
    pytest.param(
        put("prefetched_references", [{"url": "ftp://example.org/a", "text": "x"}]),
        "(rcid 123): field prefetched_references[0].url must be an http(s) URL, got 'ftp://example.org/a' (str)",
        id="ref-ftp",
    ),
    pytest.param(
        put("prefetched_references", [{"url": "https://example.org/a"}]),
        "(rcid 123): field prefetched_references[0].text must be the page text as a string, got null",
        id="ref-no-text",
    ),
]


@pytest.mark.parametrize(("mutate", "expected"), INVALID_EDITS)
def test_an_invalid_edit_is_named_by_index_rcid_and_field(tmp_path: Path, mutate: Any, expected: str) -> None:
    bad = copy.deepcopy(edit_data(123))
    mutate(bad)
    path = write_yaml(tmp_path, {"edits": [edit_data(1), bad]})
    with pytest.raises(ConfigError) as info:
        load_snapshot(path)
    assert str(info.value) == f"snapshot {path}: edit #2 {expected}"


def test_a_duplicate_rcid_names_both_edits(tmp_path: Path) -> None:
    path = write_yaml(tmp_path, [edit_data(5), edit_data(6), edit_data(5)])
    with pytest.raises(ConfigError) as info:
        load_snapshot(path)
    assert str(info.value) == (
        f"snapshot {path}: edit #3 (rcid 5): field rcid repeats edit #1; "
        "each rcid must appear once, so remove the duplicate"
    )


def test_an_edit_that_is_not_a_mapping_is_named_by_index(tmp_path: Path) -> None:
    path = write_yaml(tmp_path, [edit_data(5), "rcid 6"])
    with pytest.raises(ConfigError) as info:
        load_snapshot(path)
    assert str(info.value) == (
        f"snapshot {path}: edit #2 must be a mapping with rcid, revid, title, ..., got 'rcid 6' (str)"
    )


def test_a_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    path = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        load_snapshot(path)
    assert str(info.value) == (
        f"snapshot file not found: {path}; pass the path of an enriched snapshot YAML "
        "(`fanout fetch-edits --enrich -o FILE` writes one)"
    )


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_snapshot(tmp_path)
    assert str(info.value) == f"snapshot {tmp_path} is a directory; pass the snapshot YAML file inside it"


def test_broken_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text("edits:\n  - rcid: 1\n    tags: [a, b\n")
    with pytest.raises(ConfigError) as info:
        load_snapshot(path)
    assert str(info.value) == (
        f"snapshot {path} is not valid YAML: expected ',' or ']', but got '<stream end>' "
        "at line 4, column 1; fix the syntax there"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        pytest.param("", "is empty; it needs an `edits:` list of enriched edits", id="empty"),
        pytest.param("# only a comment\n", "is empty; it needs an `edits:` list of enriched edits", id="comment-only"),
        pytest.param("items: []\n", "has no `edits:` key; put the edits in a list under `edits:`", id="no-edits-key"),
        pytest.param("edits: []\n", "has no edits; the `edits:` list is empty", id="empty-list"),
    ],
)
def test_a_snapshot_without_edits_is_refused(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_snapshot(path)
    assert str(info.value) == f"snapshot {path} {problem}"


def test_edits_that_are_not_a_list_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "snap.yaml"
    path.write_text("edits: 12\n")
    with pytest.raises(ConfigError) as info:
        load_snapshot(path)
    assert str(info.value) == (
        f"snapshot {path}: `edits` must be a list of edits, got 12 (int); write each edit as a `- rcid: ...` list item"
    )
