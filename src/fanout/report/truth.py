"""Ground truth for scoring, from the files that carry it.

A labels file (the simulator's `--labels-out`, or the sample truth shipped
with the package) says outright whether an edit is correct, incorrect or
unverifiable. The outcomes file of `fanout outcomes` only says what later
happened to the edit, which is a proxy: see OUTCOMES_BIAS. A watched run
(`fanout watch`) learns outcomes itself as the stream shows reverts, in its
outcomes.jsonl (entries of the same shape); the report reads them beside a
labels file (whose stated truth wins where both label an edit) and says
which source each label came from (`Labels.sources`).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fanout.base.reading import load_yaml
from fanout.base.errors import ConfigError
from fanout.judging.scales import TRUTHS
from fanout.store.layout import INPUT_LABELS_NAME, STREAM_OUTCOMES_NAME, run_file
from fanout.store.lines import ReadLines, each_record

TRUTH_OF_OUTCOME = {"reverted": "incorrect", "patrolled": "correct", "stands": "correct"}

OUTCOMES_BIAS = (
    "Truth from outcomes is a proxy: reverted counts as incorrect, patrolled or still standing "
    "as correct. An edit that stands may simply not have been checked yet, a revert can be for "
    "reasons other than the fact, and there is no 'unverifiable' truth, so an 'unsure' verdict "
    "always scores as wrong."
)


@dataclass(frozen=True)
class Labels:
    path: Path
    kind: str
    """`labels` (stated truth) or `outcomes` (what happened to the edit later)."""
    truth: dict[int, str]
    """rcid -> correct | incorrect | unverifiable."""
    skipped: int = 0
    """Outcome entries with no verdict on correctness yet (e.g. still pending)."""
    notes: list[str] = field(default_factory=list)
    sources: dict[int, str] = field(default_factory=dict)
    """rcid -> where its label came from, when the labels come from more than `path` (a watched run's stream
    outcomes beside a labels file, or alone); empty: every label is `path`'s."""


LABELS_IN_RUN_DIR = ("labels.yaml", "sim-labels.yaml", INPUT_LABELS_NAME)
"""Labels kept with the run they score (the demo writes the simulator's truth as sim-labels.yaml; a claims run
writes its input's labels as input-labels.yaml): a report without --labels reads the first of these the run
directory holds, and says so."""


def labels_in_run_dir(run_dir: Path) -> Path | None:
    """The run directory's own labels file, if it has one."""
    return next((path for name in LABELS_IN_RUN_DIR if (path := Path(run_dir) / name).is_file()), None)


def load_labels(path: Path) -> Labels:
    """Read either format (YAML or JSON); ConfigError names the entry that is wrong."""
    path = Path(path)
    data = _read(path)
    if isinstance(data.get("outcomes"), list):
        return _from_outcomes(path, data["outcomes"])
    for key in ("labels", "truth"):
        if isinstance(data.get(key), list):
            return _from_labels(path, key, data[key])
    raise ConfigError(
        f"{path}: expected a list under 'labels' (or 'truth') with rcid and truth, "
        "or under 'outcomes' as `fanout outcomes` writes it."
    )


def _read(path: Path) -> dict[str, Any]:
    data = load_yaml(path, f"labels file {path}", fix="pass a labels file, or one `fanout outcomes` wrote")
    if not isinstance(data, dict):
        raise ConfigError(f"labels file {path} is not a mapping at the top level.")
    return data


def _from_labels(path: Path, key: str, entries: list[Any]) -> Labels:
    truth: dict[int, str] = {}
    for index, entry in enumerate(entries):
        rcid = _rcid(path, key, index, entry)
        value = entry.get("truth")
        if value not in TRUTHS:
            raise ConfigError(
                f"{path}: {key}[{index}] (rcid {rcid}): truth must be one of {', '.join(TRUTHS)}, got {value!r}."
            )
        if truth.get(rcid, value) != value:
            # the last one silently won: a scoring input that changes every accuracy without a word
            raise ConfigError(f"{path}: {key}[{index}] labels rcid {rcid} {value}, but an earlier entry labels it "
                              f"{truth[rcid]}; keep one truth per edit.")
        truth[rcid] = value
    return Labels(path, "labels", truth)


def _from_outcomes(path: Path, entries: list[Any]) -> Labels:
    truth: dict[int, str] = {}
    skipped = 0
    for index, entry in enumerate(entries):
        rcid = _rcid(path, "outcomes", index, entry)
        mapped = TRUTH_OF_OUTCOME.get(entry.get("outcome"))
        if mapped is None:
            skipped += 1
            continue
        truth[rcid] = mapped
    return Labels(path, "outcomes", truth, skipped, [OUTCOMES_BIAS])


def _rcid(path: Path, key: str, index: int, entry: Any) -> int:
    rcid = entry.get("rcid") if isinstance(entry, dict) else None
    if isinstance(rcid, (str, int, float)):  # what YAML gives that int() takes
        with contextlib.suppress(ValueError):
            return int(rcid)
    raise ConfigError(f"{path}: {key}[{index}] has no integer rcid (got {rcid!r}).")


STREAM_SOURCE = f"reverts seen in the stream ({STREAM_OUTCOMES_NAME})"
"""What a label learnt by `fanout watch` is said to come from."""


def stream_outcomes(run_dir: Path) -> Labels | None:
    """The outcomes a watched run learnt from the stream (its outcomes.jsonl), as labels; None when it has none."""
    path = Path(run_dir) / STREAM_OUTCOMES_NAME
    found = ReadLines(path)
    entries = [entry for entry in each_record(path, run_file(STREAM_OUTCOMES_NAME), found)
               if isinstance(entry.get("rcid"), int)]
    if not entries:
        return None
    labels = _from_outcomes(path, entries)
    return Labels(path, "stream outcomes", labels.truth, labels.skipped + found.skipped, labels.notes,
                  dict.fromkeys(labels.truth, STREAM_SOURCE))


def with_stream_outcomes(labels: Labels | None, stream: Labels | None) -> Labels | None:
    """A labels file's truth and the stream's, each label with its source; the file's stated truth wins where both
    label an edit. Either alone is returned as it is."""
    if stream is None or labels is None:
        return labels or stream
    truth = {**stream.truth, **labels.truth}
    sources = {rcid: STREAM_SOURCE if rcid not in labels.truth else str(labels.path.name) for rcid in truth}
    notes = labels.notes + [n for n in stream.notes if n not in labels.notes]
    notes.append(f"Truth from two sources: {sum(s != STREAM_SOURCE for s in sources.values())} edit(s) from "
                 f"{labels.path} ({labels.kind}), {sum(s == STREAM_SOURCE for s in sources.values())} from "
                 f"{STREAM_SOURCE}; where both label an edit, {labels.path.name} wins.")
    return Labels(labels.path, f"{labels.kind} + stream outcomes", truth, labels.skipped + stream.skipped, notes,
                  sources)
