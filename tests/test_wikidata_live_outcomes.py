"""Outcomes as they happen: recorded reverts settle watched edits, as `fanout outcomes` labels read."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import yaml

from fanout.report.truth import load_labels
from fanout.wikidata.live_outcomes import RevertSeen, RevertWatch, WatchedEdit, outcome_record, revert_seen
from fanout.wikidata.stream_events import EventMeta, RecentChangeEvent, TagChangeEvent, parse_event
from fanout.wikidata.autocomment import parse_summary

from parsed_yaml import package_yaml

EVENTS = Path(__file__).parent / "fixtures" / "eventstreams"
SAMPLE = {e["rcid"]: e for e in package_yaml("sample_snapshot.yaml")["edits"]}
META = EventMeta(id="m", dt="2026-02-19T09:00:00Z", stream="mediawiki.recentchange")


def undo_events() -> list[RecentChangeEvent]:
    events = [parse_event(json.loads(line)) for line in (EVENTS / "editgroups-eg_revert.json").read_text().splitlines()]
    return [e for e in events if isinstance(e, RecentChangeEvent)]


def tag_event(name: str) -> TagChangeEvent:
    event = parse_event(json.loads((EVENTS / name).read_text(encoding="utf-8")))
    assert isinstance(event, TagChangeEvent)
    return event


def later_edit(title: str, revid: int, comment: str, *, user: str = "Patroller", old: int | None = None,
               tags: tuple[str, ...] = ()) -> RecentChangeEvent:
    return RecentChangeEvent(meta=META, rcid=revid + 1, type="edit", wiki="wikidatawiki", namespace=0, title=title,
                             user=user, timestamp=1771491600, comment=comment, revision_old=old or revid - 1,
                             revision_new=revid, tags=tags, summary=parse_summary(comment))


def quickstatements_edit(revid: int) -> WatchedEdit:
    return WatchedEdit(rcid=revid - 1000, revid=revid, title="Q18720640", user="QuickStatementsBot")


def test_a_recorded_undo_settles_the_edit_it_names_with_the_evidence_outcomes_keep() -> None:
    watched, undo = quickstatements_edit(647477898), undo_events()[0]
    revert = revert_seen(watched, undo)
    assert revert == RevertSeen("undo of the edit", 647483346, (), "Pintoch", "2018-03-11T00:08:41Z",
                                "/* undo:0||647477898|QuickStatementsBot */ this was just dumb "
                                "([[:toollabs:editgroups/b/EG/d6f5146|details]])")
    assert outcome_record(watched, revert) == {
        "rcid": 647476898, "revid": 647477898, "qid": "Q18720640", "outcome": "reverted",
        "evidence": {"via": "undo of the edit", "reverting_revid": 647483346, "reverting_tags": [],
                     "reverting_user": "Pintoch", "reverting_timestamp": "2018-03-11T00:08:41Z",
                     "reverting_comment": revert.reverting_comment, "source": "stream"},
    }
    assert revert_seen(quickstatements_edit(647477888), undo) is None


def test_a_watch_settles_each_of_four_undone_edits_once_and_then_holds_none() -> None:
    watch = RevertWatch()
    for revid in (647477883, 647477888, 647477893, 647477898, 647477900):
        watch.watch(quickstatements_edit(revid))
    settled = [record for event in undo_events() for record in watch.observe(event)]
    assert [r["revid"] for r in settled] == [647477898, 647477888, 647477893, 647477883]
    assert [record for event in undo_events() for record in watch.observe(event)] == []
    assert len(watch) == 1  # 647477900 was never undone


def test_the_recorded_rollback_tag_settles_the_edit_before_it_and_mw_reverted_settles_it_alone() -> None:
    watched = WatchedEdit(rcid=1, revid=1379235224, title="Torrington, Connecticut", user="BibiNetHoo")
    rollback, reverted = tag_event("pulse-tags-rollback.json"), tag_event("pulse-tags-reverted.json")
    found = revert_seen(watched, rollback)
    assert found is not None and (found.via, found.reverting_revid, found.reverting_user) == (
        "mw-rollback on the revision after the edit", 1379235231, "ClueBot NG")
    assert revert_seen(watched, reverted) == RevertSeen("mw-reverted tag added to the edit")
    watch = RevertWatch()
    watch.watch(watched)
    assert [r["evidence"]["via"] for e in (rollback, reverted) for r in watch.observe(e)] == [
        "mw-rollback on the revision after the edit"]


def test_recorded_undo_and_manual_revert_tags_settle_the_edits_they_undid() -> None:
    undo = tag_event("pulse-tags-undo.json")
    manual = tag_event("pulse-tags-manual-revert.json")
    undone = WatchedEdit(rcid=2, revid=1379234995, title="Musselroe Wind Farm", user="Augmented Seventh")
    restored = WatchedEdit(rcid=3, revid=1379232238, title="Other Mommy")
    assert (revert_seen(undone, undo) or RevertSeen("")).via == "mw-undo of the edit"
    assert (revert_seen(restored, manual) or RevertSeen("")).via == "mw-manual-revert on the revision after the edit"
    assert revert_seen(dataclasses.replace(undone, revid=1379234990), undo) is None


def test_putting_back_the_replaced_value_settles_the_edit_and_an_unrelated_edit_does_not() -> None:
    birth = WatchedEdit.from_snapshot_edit(SAMPLE[2540801101])  # Q42's date of birth, 1952 -> 1852
    assert birth.old_values == {"+1952-03-11T00:00:00Z", "11 March 1952"}
    put_back = later_edit("Q42", 2464599200, "/* wbsetclaim-update:2||1 */ [[Property:P569]]: 11 March 1952")
    other = later_edit("Q42", 2464599201, "/* wbsetclaim-update:2||1 */ [[Property:P570]]: 11 March 1952")
    earlier = later_edit("Q42", 2464599000, "/* wbsetclaim-update:2||1 */ [[Property:P569]]: 11 March 1952")
    assert (revert_seen(birth, put_back) or RevertSeen("")).via == "a later edit puts back the value the edit replaced"
    assert revert_seen(birth, other) is None
    assert revert_seen(birth, earlier) is None


def test_a_removed_value_added_again_and_a_label_set_back_settle_their_edits() -> None:
    removal = WatchedEdit.from_snapshot_edit(SAMPLE[2540801105])  # Q937 loses occupation physicist
    label = WatchedEdit.from_snapshot_edit(SAMPLE[2540801107])  # Q7259's English label
    readded = later_edit("Q937", 2464599500, "/* wbcreateclaim-create:1| */ [[Property:P106]]: [[Q169470]]")
    relabelled = later_edit("Q7259", 2464599600, "/* wbsetlabel-set:1|en */ Ada Lovlace")
    french = later_edit("Q7259", 2464599601, "/* wbsetlabel-set:1|fr */ Ada Lovlace")
    assert (revert_seen(removal, readded) or RevertSeen("")).via == "a later edit puts back the value the edit replaced"
    assert (revert_seen(label, relabelled) or RevertSeen("")).via == "a later edit puts back the value the edit replaced"
    assert revert_seen(label, french) is None


def test_an_added_value_removed_later_settles_the_edit() -> None:
    added = WatchedEdit.from_snapshot_edit(SAMPLE[2540801110])  # Q7186 citizenship France
    removed = later_edit("Q7186", 2464599900, "/* wbremoveclaims-remove:1| */ [[Property:P27]]: [[Q142]]")
    assert (revert_seen(added, removed) or RevertSeen("")).via == "a later edit removes the value the edit added"


def test_a_rollback_settles_the_watched_edit_while_its_user_still_holds_the_top_of_the_page() -> None:
    rollback = "Reverted edits by [[Special:Contributions/81.107.44.12|81.107.44.12]] ([[User talk:81.107.44.12|talk]]) " \
               "to last revision by [[User:Example|Example]]"
    for between, settled in (("81.107.44.12", True), ("Someone Else", False)):
        watch = RevertWatch()
        watch.watch(WatchedEdit(rcid=1, revid=100, title="Q42", user="81.107.44.12"))
        assert watch.observe(later_edit("Q42", 101, "/* wbsetlabel-set:1|en */ x", user=between, old=100)) == []
        outcomes = watch.observe(later_edit("Q42", 102, rollback, old=101, tags=("mw-rollback",)))
        assert [o["evidence"]["via"] for o in outcomes] == (
            ["rollback of the user's edits, the watched one among them"] if settled else [])


def test_stream_outcomes_read_as_an_outcomes_file_whose_reverted_edits_are_incorrect(tmp_path: Path) -> None:
    watched, undo = quickstatements_edit(647477898), undo_events()[0]
    record = outcome_record(watched, revert_seen(watched, undo) or RevertSeen(""))
    path = tmp_path / "stream-outcomes.yaml"
    path.write_text(yaml.safe_dump({"outcomes": [record]}), encoding="utf-8")
    labels = load_labels(path)
    assert (labels.kind, labels.truth) == ("outcomes", {647476898: "incorrect"})


def test_a_watch_forgets_the_oldest_edits_past_its_bounds() -> None:
    watch = RevertWatch(max_edits=2, max_age_s=3600)
    for revid, when in ((1, 1000), (2, 5000), (3, 6000)):
        watch.watch(dataclasses.replace(quickstatements_edit(revid), timestamp=when))
    assert len(watch) == 2
    watch.observe(dataclasses.replace(later_edit("Q1", 50, "x"), timestamp=9000))
    assert len(watch) == 1  # revid 2 is older than an hour behind the newest event
