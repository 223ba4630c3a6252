"""`fanout review RUN_DIR --export FILE`: the decisions that stand, in the `--labels` format.

accept becomes the truth `correct` and reject `incorrect`. An unsure decision
is left out: the format's third truth, `unverifiable`, says the edit cannot be
verified, which is a finding; a reviewer who is unsure has found nothing yet.
Each entry keeps the reviewer's note, name and time beside rcid and truth
(fanout.analysis.labels reads rcid and truth and ignores the rest).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from fanout.errors import ConfigError
from fanout.store.atomic import dump_yaml, write_atomically
from fanout.store.layout import refuse_run_file
from fanout.store.manifest import run_inputs
from fanout.store.reviews import TRUTH_OF_DECISION, read_reviews, reviews_path


class Exported(NamedTuple):
    labels: int
    unsure: int
    """Decisions left out because they are unsure."""


SOURCE_HEAD = b"source: human decisions of `fanout review`"
"""How an exported file starts (dump_yaml keeps the keys in order): what --export may replace without --force."""


def export_labels(run_dir: Path, path: Path, *, force: bool = False) -> Exported:
    """Write the labels file (atomically); ConfigError when `path` is a file of a run, one of the run's inputs
    (`--export today.yaml` once replaced the run's snapshot), or, without `force`, a file it did not export."""
    refuse_run_file(path, "--export", inputs=run_inputs(run_dir), ours=lambda head: head.startswith(SOURCE_HEAD),
                    force=force)
    latest = read_reviews(run_dir).latest
    labels = [{"rcid": r.rcid, "truth": TRUTH_OF_DECISION[r.decision], "note": r.note, "reviewer": r.reviewer,
               "time": r.time} for r in latest.values() if r.decision in TRUTH_OF_DECISION]
    data = {"source": f"human decisions of `fanout review` ({reviews_path(run_dir)})", "labels": labels}
    try:
        write_atomically(path, dump_yaml(data))
    except OSError as exc:
        raise ConfigError(f"--export {path}: cannot write it: {exc.strerror or exc}") from None
    return Exported(len(labels), len(latest) - len(labels))
