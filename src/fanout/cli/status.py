"""`fanout status RUN_DIR`: progress, spend and errors from the log, without running anything."""

from __future__ import annotations

import argparse
from pathlib import Path

from collections import deque
from datetime import datetime

from fanout.store.checkpoint import iter_log, log_path, read_index
from fanout.errors import ConfigError
from fanout.store.manifest import load_manifest
from fanout.engine.progress import Tally, format_duration, status_table

RATE_WINDOW = 200
"""Records whose finish times give the recent rate: recent enough to reflect the current session."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, help="a run directory made by `fanout run`")
    parser.add_argument("--errors", type=int, default=5, metavar="N", help="show the last N error messages (default 5)")


def run(args: argparse.Namespace) -> int:
    manifest = load_manifest(args.run_dir)
    path = log_path(args.run_dir)
    if manifest is None and not path.exists():
        raise ConfigError(f"{args.run_dir} is not a run directory (no manifest.yaml or checkpoint.jsonl).")
    index = read_index(path)
    models = manifest.models if manifest else sorted({m for _, m in index.entries})
    total = manifest.total_pairs if manifest else len(index.entries)
    tally = Tally.from_index(index, total, models)
    pct = 100 * tally.done / total if total else 100.0
    print(f"{args.run_dir}: {tally.done}/{total} pairs done ({pct:.0f}%), spend ${tally.spent_usd:.4f}"
          + (f" ({tally.unknown_cost} verdict(s) with unknown cost)" if tally.unknown_cost else ""))
    if manifest and manifest.starts:
        print(f"started {manifest.starts[0]}, {len(manifest.starts)} session(s); snapshot {manifest.snapshot_path}")
    errors, per_minute = scan_log(path, args.errors)
    if per_minute:
        eta = (total - tally.done) / per_minute * 60
        print(f"recent rate {per_minute:.1f} verdicts/min; at that rate the rest takes {format_duration(eta)}")
    print("\n".join(status_table(tally)))
    if errors:
        print("last errors:")
        print("\n".join(errors))
    return 0


def scan_log(path: Path, n_errors: int) -> tuple[list[str], float | None]:
    """The newest error messages and the recent verdicts per minute, in one pass over the log."""
    errors: deque[str] = deque(maxlen=max(n_errors, 0))
    finished: deque[datetime] = deque(maxlen=RATE_WINDOW)
    for data in iter_log(path):
        if data.get("status") == "error" and n_errors > 0:
            errors.append(f"  {data['model']} rcid {data['edit_rcid']}: {data.get('error')}")
        finished.append(datetime.fromisoformat(str(data["timestamp"]).replace("Z", "+00:00")))
    return list(errors), _per_minute(finished)


def _per_minute(finished: deque[datetime]) -> float | None:
    span = (finished[-1] - finished[0]).total_seconds() if len(finished) > 1 else 0.0
    return (len(finished) - 1) / span * 60 if span > 0 else None
