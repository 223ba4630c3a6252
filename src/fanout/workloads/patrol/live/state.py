"""What a watch says about itself (watch.state.json), and the lines `fanout status` makes of it.

The watch replaces the file every few seconds and when it stops: how far
behind real time it reads the stream, what waits in its queue and since when,
why the run is not taking edits (the budget, the pace), what it skipped and
why, what it dropped, backfilled, prefiltered and learnt from reverts, and
how long its recent edits took from the edit to the last verdict. Counts are
over the whole run, every session.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fanout.base.reading import SIDE_FILE_BOUNDS, read_bounded
from fanout.base.errors import ConfigError
from fanout.store.atomic import write_atomically
from fanout.store.layout import WATCH_STATE_NAME
from fanout.wikidata.stream_events import epoch_seconds, iso_seconds

STATE_VERSION = 1


@dataclass
class WatchState:
    updated: str = ""
    running: bool = False
    read_up_to: str = ""
    """meta.dt of the last event read from the stream."""
    behind_s: float | None = None
    """How far the stream read lags real time (now - read_up_to), when it was written."""
    accepted: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    """Events left out, by reason (the patrol filter's, `seen already`)."""
    queued: int = 0
    oldest_queued: str | None = None
    """When the edit waiting longest was made."""
    enriching: int = 0
    offered: int = 0
    """Enriched, waiting for the run to take them (it is held back, or busy)."""
    handed_over: int = 0
    """Edits handed to the jury, all sessions."""
    judged: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    prefiltered: int = 0
    prefilter_unscored: int = 0
    unusable: int = 0
    gaps: int = 0
    missing: int = 0
    backfilled: int = 0
    outcomes: int = 0
    holding: str | None = None
    """Why the run takes no edit now (its --max-cost-per-hour, --max-edits-per-minute), or None."""
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    """Edit made to its last verdict logged, over the recent judged edits."""
    stream: dict[str, int] = field(default_factory=dict)
    """The reader's tally this session: connections, drops, stalls, duplicates."""
    version: int = STATE_VERSION

    def count_skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def count_drop(self, why: str) -> None:
        self.dropped[why] = self.dropped.get(why, 0) + 1


def latency_figures(latencies: list[float]) -> tuple[float | None, float | None]:
    if not latencies:
        return None, None
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return round(statistics.median(ordered), 1), round(p95, 1)


def state_text(state: WatchState, *, now: float | None = None) -> str:
    """The state as the file holds it, stamped with `now` and how far behind real time the stream read is."""
    moment = time.time() if now is None else now
    state.updated = iso_seconds(moment)
    if state.read_up_to:
        state.behind_s = round(max(moment - epoch_seconds(state.read_up_to), 0.0), 1)
    return json.dumps(asdict(state), indent=1, ensure_ascii=False) + "\n"


def write_state(run_dir: Path, text: str) -> None:
    write_atomically(run_dir / WATCH_STATE_NAME, text)


def read_state(run_dir: Path) -> WatchState | None:
    """The state a watch left, None when the run was never watched; a damaged file is a ConfigError."""
    path = run_dir / WATCH_STATE_NAME
    if not path.exists():
        return None
    raw = read_bounded(path, f"the run's {WATCH_STATE_NAME} {path}", SIDE_FILE_BOUNDS, fix="run `fanout watch` again")
    try:
        data = json.loads(raw)
        known = {k: v for k, v in data.items() if k in WatchState.__dataclass_fields__}
        return WatchState(**known)
    except (ValueError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path} is not a watch's state ({exc}); `fanout watch` replaces it when it runs") from None


def status_lines(state: WatchState, *, holder: int | None) -> list[str]:
    """What `fanout status` adds for a watched run."""
    now_running = state.running and holder is not None
    behind = f"{_duration(state.behind_s)} behind real time" if state.behind_s is not None else "not read yet"
    lines = [f"watch: {'reading' if now_running else 'stopped'}, the stream read up to {state.read_up_to or '-'} "
             f"({behind} as of {state.updated})"]
    waiting = f"{state.queued} edit(s) waiting in the queue"
    if state.offered and now_running:
        waiting += f" and {state.offered} enriched, waiting for the jury"
    if state.oldest_queued:
        waiting += f", the oldest made {state.oldest_queued}"
    if state.holding and now_running:
        waiting += f"; held back by {state.holding}"
    lines.append(f"watch: {state.accepted} edit(s) accepted, {state.handed_over} handed to the jury, "
                 f"{state.judged} judged; {waiting}")
    lines.append("watch: " + _losses(state))
    if state.latency_p50_s is not None:
        lines.append(f"watch: edit to last verdict {_duration(state.latency_p50_s)} (median), "
                     f"{_duration(state.latency_p95_s)} (95th percentile) over the recent edits")
    if state.skipped:
        top = Counter(state.skipped).most_common()
        lines.append("watch: skipped " + ", ".join(f"{n} {reason}" for reason, n in top))
    return lines


def _losses(state: WatchState) -> str:
    dropped = sum(state.dropped.values())
    parts = [f"{dropped} dropped" + (f" ({', '.join(f'{n} {w}' for w, n in state.dropped.items())})" if dropped else ""),
             f"{state.backfilled} backfilled from {state.gaps} gap(s) in the stream ({state.missing} event(s) missed)",
             f"{state.prefiltered} prefiltered past the jury ({state.prefilter_unscored} not scored, so judged)",
             f"{state.unusable} unusable (enriching failed for good)",
             f"{state.outcomes} reverted as seen in the stream"]
    return "; ".join(parts)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m"
    return f"{seconds / 3600:.1f}h"
