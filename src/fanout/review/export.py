"""`fanout review RUN_DIR --export FILE`: the decisions that stand, in the `--labels` format.

accept becomes the truth `correct` and reject `incorrect`. An unsure decision
is left out: the format's third truth, `unverifiable`, says the edit cannot be
verified, which is a finding; a reviewer who is unsure has found nothing yet.
Each entry keeps the reviewer's note, name and time beside rcid and truth
(fanout.report.truth reads rcid and truth and ignores the rest).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from fanout.store.atomic import dump_yaml
from fanout.store.reviews import read_reviews, reviews_path


class Exported(NamedTuple):
    text: str
    """The labels file, for the one output writer (fanout.store.outputs) to write."""
    labels: int
    unsure: int
    """Decisions left out because they are unsure."""


SOURCE_HEAD = "human decisions of `fanout review`"
"""How an export's `source` starts: the first bytes that tell an earlier export from a file it must not replace."""


def is_export(head: bytes) -> bool:
    """What export_labels writes: YAML whose first key is `source`, saying it holds the desk's decisions."""
    return head.startswith(f"source: {SOURCE_HEAD}".encode())


def exported_labels(run_dir: Path) -> Exported:
    """The labels file of the decisions that stand; written by the caller through the output writer, which
    refuses a run's files and inputs and, without --force, a file that is not an earlier export (is_export)."""
    log = read_reviews(run_dir)
    latest, truth = log.latest, log.truth()
    labels = [{"rcid": r.rcid, "truth": truth[r.rcid], "note": r.note, "reviewer": r.reviewer, "time": r.time}
              for r in latest.values() if r.rcid in truth]
    data = {"source": f"{SOURCE_HEAD} ({reviews_path(run_dir)})", "labels": labels}
    return Exported(dump_yaml(data), len(labels), len(latest) - len(labels))
