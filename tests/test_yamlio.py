"""fanout.base.yamlio: the one fast path for plain data, in the records, the run's YAML files and the snapshot reader.

Speed must never change an output: each fast path gives exactly what the
general path (dataclasses.asdict, PyYAML) gives, and leaves everything else
to it (NotPlain).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import pytest
import yaml

from fanout.base.records import Source, Usage, VerdictRecord
from fanout.store.checkpoint import CheckpointWriter, log_path, read_index
from fanout.base.yamlio import SAFE_DUMPER, SAFE_LOADER, NotPlain, dump_yaml, dump_yaml_utf8, plain_asdict


@dataclasses.dataclass
class Leaf:
    name: str
    weights: dict[str, float]


@dataclasses.dataclass
class Tree:
    leaves: list[Leaf]
    note: str | None = None
    count: int = 0


@dataclasses.dataclass
class Dated:
    when: dt.date
    span: tuple[int, int]


def test_plain_asdict_is_dataclasses_asdict_for_any_dataclass_and_copies_its_containers():
    tree = Tree([Leaf("a", {"x": 0.5}), Leaf("b", {})], None, 2)

    data = plain_asdict(tree)

    assert data == dataclasses.asdict(tree) == {
        "leaves": [{"name": "a", "weights": {"x": 0.5}}, {"name": "b", "weights": {}}], "note": None, "count": 2}
    assert data["leaves"][0]["weights"] is not tree.leaves[0].weights


def test_a_date_or_a_tuple_is_not_plain_data():
    with pytest.raises(NotPlain):
        plain_asdict(Dated(dt.date(2026, 1, 2), (1, 2)))


VALUES = [
    {"model": "m/a", "cost_usd": 0.001, "sources": [{"url": "https://x.example/a", "read": True}], "verdict": "yes",
     "note": None, "tags": [], "big": 1e16, "text": "line one\nline two"},
    {"float": [0.1, -0.0, 1e-7, float("inf"), -float("inf"), 12345678901234567890.0], "ints": [0, -5, 10**20]},
    {"text": ["null", "1.5", "~", "", " lead", "a: b", "#", "\u2028", "emoji \U0001f600", "x" * 300], "n": None},
]


def test_dump_yaml_writes_exactly_this_block_yaml_for_plain_data():
    assert dump_yaml(VALUES[0]) == (
        "model: m/a\ncost_usd: 0.001\nsources:\n- url: https://x.example/a\n  read: true\nverdict: 'yes'\n"
        "note: null\ntags: []\nbig: 1.0e+16\ntext: 'line one\n\n  line two'\n"
    )


@pytest.mark.parametrize("value", VALUES)
def test_plain_data_dumped_reads_back_as_itself_and_as_pyyaml_writes_it(value):
    text = dump_yaml(value)

    assert yaml.load(text, Loader=SAFE_LOADER) == value
    assert text == yaml.dump(value, Dumper=SAFE_DUMPER, default_flow_style=False, allow_unicode=True,
                             sort_keys=False, width=100)


@pytest.mark.parametrize("value", VALUES)
def test_the_utf8_dump_is_the_text_dump_encoded(value):
    assert dump_yaml_utf8(value) == dump_yaml(value).encode("utf-8")


def test_keys_that_read_as_other_types_are_quoted_every_time_they_are_met():
    value = {"null": {"1.5": 1, "yes": [{"null": None, "k": "1.5"}]}, "k": {"k": "~"}}
    expected = yaml.dump(value, Dumper=SAFE_DUMPER, default_flow_style=False, allow_unicode=True, sort_keys=False,
                         width=100)

    assert [dump_yaml(value), dump_yaml(value)] == [expected, expected]
    assert expected == "'null':\n  '1.5': 1\n  'yes':\n  - 'null': null\n    k: '1.5'\nk:\n  k: '~'\n"


def test_what_is_not_plain_data_is_left_to_pyyaml_anchors_and_dates_included():
    shared = [1, 2]

    assert dump_yaml({"a": shared, "b": shared}) == "a: &id001\n- 1\n- 2\nb: *id001\n"
    assert dump_yaml({"date": dt.date(2026, 1, 2)}) == "date: 2026-01-02\n"


def test_a_verdict_view_on_disk_is_the_record_s_yaml_and_reads_back_as_its_dict(tmp_path: Path):
    record = VerdictRecord(model="m/a", edit_rcid=7, edit_revid=8, qid="Q42", property="P569",
                           diff_type="value_changed", timestamp="2026-02-19T12:34:56Z", status="ok",
                           verdict="plausible", rationale="Ünïcode: yes", cost_usd=0.0012,
                           sources=[Source("https://example.org/a", True, "verified", fetched=True)],
                           token_usage=Usage(12, 3, 1))
    writer = CheckpointWriter(tmp_path, read_index(log_path(tmp_path)))
    try:
        writer.append(record)
    finally:
        writer.close()

    text = (tmp_path / "verdicts" / record.file_name()).read_text(encoding="utf-8")
    assert text == dump_yaml(record.yaml_view())
    assert text.startswith("model: m/a\nedit_rcid: 7\nedit_revid: 8\nqid: Q42\nproperty: P569\n")
    assert yaml.load(text, Loader=SAFE_LOADER) == record.yaml_view()
