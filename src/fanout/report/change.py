"""What each edit changed, as a reader wants to see it: the item, the property's label, old → new.

A record keeps only an item's keys (for an edit: rcid, revid, QID, property
id, kind of change); what the item said is in the input the run started
from. The run's workload (the manifest names it; fanout.workloads) opens that
input, from the run directory's copy (snapshot.cache) when that still matches,
else from the file the manifest names, and describes each item in words
(fanout.base.item.Change; SIFT-Patrol's edits: fanout.workloads.patrol.describe).
Either may be gone or changed since, so an item is described only when its
key and revision match the record's, and a note says when the input could
not be read at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from fanout.report.run_data import EditInfo, RunData
from fanout.base.errors import FanoutError
from fanout.base.item import Change as Change, Item, item_keys
from fanout.workloads import get_workload

DIFF_URL = "https://www.wikidata.org/w/index.php?diff={revid}"
DIFF_URL_FROM = DIFF_URL + "&oldid={parent}"


def diff_url(revid: int, parent: int | None = None) -> str:
    """The edit's diff on Wikidata: what a patroller opens first (against its parent revision when known)."""
    if parent is None:
        return DIFF_URL.format(revid=int(revid))
    return DIFF_URL_FROM.format(revid=int(revid), parent=int(parent))


def change_text(change: Change | None, diff_type: str | None) -> str:
    """`old → new` in plain text (the HTML report colours the same parts)."""
    kind = (diff_type or "change").replace("_", " ")
    if change is None:
        return kind
    if change.detail is not None:
        return f"{change.new}: {change.detail}" if change.new is not None else change.detail
    if change.old is not None and change.new is not None:
        return f"{change.old} → {change.new}"
    if change.old is not None:
        return f"{change.old} removed"
    return change.new or kind


def edit_diff_url(revid: int | None, change: Change | None) -> str | None:
    """The diff of the revision an edit made, against its parent when the snapshot names it; None without a revision."""
    if revid is None:
        return None
    return diff_url(revid, change.parent_revid if change else None)


def item_link(edit: EditInfo, change: Change | None) -> str | None:
    """Where a reader checks the item by hand: the link its workload names (a claim's source), else an edit's
    diff on Wikidata; None for an item with neither (no Wikidata link is made for what is no Wikidata edit)."""
    if change is not None and change.link is not None:
        return change.link
    if not edit.diffable:
        return None
    return edit_diff_url(edit.revid, change)


def link_text(change: Change | None) -> str:
    """What item_link's link is, in a word: `diff` for an edit, the workload's word otherwise (`source`)."""
    return change.link_text if change is not None and change.link is not None and change.link_text else "diff"


def describe_run(run: RunData) -> tuple[dict[int, Change], list[str]]:
    """Each edit of the run the snapshot still describes, and a note when it could not be read."""
    path = run.snapshot_path
    if path is None:  # no manifest: a run directory assembled by hand, with nothing more to read
        return {}, []
    revids = {e.rcid: e.revid for e in run.edits}
    try:
        workload = get_workload(run.manifest.get("workload"))
        with workload.open(path, cache_dir=run.run_dir) as source:
            return {e.key: workload.describe(e) for e in _run_edits(source.items, revids)}, []
    except (FanoutError, OSError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else exc.__class__.__name__
        return {}, [f"The snapshot {path} could not be read ({reason}): edits show their ids only, "
                    "not what they changed."]


def _run_edits(items: Sequence[Item], revids: dict[int, int | None]) -> list[Item]:
    """The input's items that are the run's: same key and same revision (the file may have changed since).

    Only those are read from the spool: a run of 500 edits may come from a snapshot of 250 000.
    """
    wanted = [items[i] for i, key in enumerate(item_keys(items)) if key in revids]
    return [e for e in wanted if revids[e.key] == e.record_keys()["edit_revid"]]

