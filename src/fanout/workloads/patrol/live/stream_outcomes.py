"""Outcomes as they happen: the watched edits the stream later shows reverted, written to the run's outcomes.jsonl.

fanout.wikidata.live_outcomes recognises a revert (the `mw-reverted` tag,
an undo, a rollback, a later edit putting the old value back); here every
accepted edit is watched, and each revert becomes one line of the shape
`fanout outcomes` writes ({rcid, revid, qid, outcome: reverted, evidence}
with `evidence.source: stream`), within seconds of the revert reaching the
stream. The report reads the file as it reads an outcomes file
(fanout.report.truth), saying where each label came from. A restart watches
again the accepted edits not yet settled: the stream, resumed from the saved
position, replays what came meanwhile.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from fanout.store.layout import STREAM_OUTCOMES_NAME, run_file
from fanout.wikidata.live_outcomes import RevertWatch, WatchedEdit
from fanout.wikidata.stream_events import RecentChangeEvent, StreamEvent
from fanout.store.append_lines import AppendLines
from fanout.store.lines import ReadLines, each_record


class StreamOutcomes:
    """The revert watch of a run, and its outcomes file."""

    def __init__(self, run_dir: Path, accepted: Iterable[RecentChangeEvent]) -> None:
        self._file = AppendLines(run_dir / STREAM_OUTCOMES_NAME)
        self.known = settled_rcids(run_dir)
        self._watch = RevertWatch()
        for event in accepted:
            self.watch(event)

    def watch(self, event: RecentChangeEvent) -> None:
        if event.rcid not in self.known:
            self._watch.watch(WatchedEdit.from_event(event))

    def observe(self, event: StreamEvent) -> int:
        """The outcomes this event settles, written down; how many."""
        settled = [entry for entry in self._watch.observe(event) if entry["rcid"] not in self.known]
        if settled:
            self._file.write(settled, sync=False)
            self.known.update(entry["rcid"] for entry in settled)
        return len(settled)

    @property
    def watching(self) -> int:
        return len(self._watch)

    def close(self) -> None:
        self._file.close()


def settled_rcids(run_dir: Path) -> set[int]:
    """The edits the stream has shown reverted so far: the revert watch has nothing left to learn of them."""
    return {entry["rcid"] for entry in read_outcomes(run_dir)}


def read_outcomes(run_dir: Path) -> Iterator[dict[str, Any]]:
    """The outcome entries learnt from the stream (those with an integer rcid), in the order they were learnt."""
    path = run_dir / STREAM_OUTCOMES_NAME
    for entry in each_record(path, run_file(STREAM_OUTCOMES_NAME), ReadLines(path)):
        if isinstance(entry.get("rcid"), int) and not isinstance(entry.get("rcid"), bool):
            yield entry
