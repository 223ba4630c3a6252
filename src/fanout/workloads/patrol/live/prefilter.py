"""A first stage that costs nothing: Lift Wing's revert-risk score, before the jury (`--prefilter revertrisk`).

Each edit's revision is scored (fanout.wikidata.revertrisk.RevertRiskClient,
which never raises); an edit scored below the threshold goes past the jury as
`prefiltered`, a stage of the cascade that asks no model. An edit the model
cannot score (Lift Wing down, a revision it cannot see) is judged: a
failing prefilter never drops an edit. Every decision is a line of
prefilter.jsonl:

    {"rcid", "revid", "qid", "score": P or null, "threshold", "passed": bool, "reason": null or why not scored}

which the report reads (fanout.report.builders_watch) to show, by score, what
the prefilter let through, what the jury found among those, and what the
stream later showed of the ones it sent past (reverts): the data to set the
threshold from.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fanout.store.layout import PREFILTER_NAME, run_file
from fanout.wikidata.revertrisk import RevertRiskClient
from fanout.wikidata.stream_events import RecentChangeEvent
from fanout.store.append_lines import AppendLines
from fanout.store.lines import ReadLines, each_record


@dataclass(frozen=True)
class PrefilterDecision:
    rcid: int
    revid: int
    qid: str
    score: float | None
    threshold: float
    passed: bool
    """Sent to the jury: scored at or above the threshold, or not scored at all."""
    reason: str | None = None

    def entry(self) -> dict[str, Any]:
        return {"rcid": self.rcid, "revid": self.revid, "qid": self.qid, "score": self.score,
                "threshold": self.threshold, "passed": self.passed, "reason": self.reason}


class Prefilter:
    """The stage, writing each decision down."""

    def __init__(self, client: RevertRiskClient, threshold: float, run_dir: Path) -> None:
        self._client = client
        self.threshold = threshold
        self._file = AppendLines(run_dir / PREFILTER_NAME)

    async def decide(self, event: RecentChangeEvent) -> PrefilterDecision:
        risk = await self._client.score(event.revision_new or 0)
        passed = risk.probability is None or risk.probability >= self.threshold
        decision = PrefilterDecision(event.rcid, event.revision_new or 0, event.entity_id, risk.probability,
                                     self.threshold, passed, risk.reason)
        self._file.write([decision.entry()], sync=False)
        return decision

    def close(self) -> None:
        self._file.close()


def read_prefilter(run_dir: Path) -> Iterator[PrefilterDecision]:
    """Every decision in the run's prefilter.jsonl (the latest per rcid wins for a reader keyed on it)."""
    path = run_dir / PREFILTER_NAME
    for entry in each_record(path, run_file(PREFILTER_NAME), ReadLines(path)):
        try:
            score = entry.get("score")
            yield PrefilterDecision(int(entry["rcid"]), int(entry.get("revid") or 0), str(entry.get("qid") or ""),
                                    float(score) if isinstance(score, (int, float)) else None,
                                    float(entry.get("threshold") or 0.0), entry.get("passed") is True,
                                    entry.get("reason") if isinstance(entry.get("reason"), str) else None)
        except (KeyError, TypeError, ValueError):
            continue
