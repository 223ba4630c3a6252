"""`fanout status RUN_DIR`: progress, spend and errors from the log, without running anything."""

from __future__ import annotations

import argparse
from pathlib import Path

from fanout.checkpoint import iter_log, log_path, read_index
from fanout.errors import ConfigError
from fanout.manifest import load_manifest
from fanout.progress import Tally, status_table


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
    print("\n".join(status_table(tally)))
    for line in last_errors(path, args.errors):
        print(line)
    return 0


def last_errors(path: Path, n: int) -> list[str]:
    """The newest error messages, so a user sees why pairs failed without opening the log."""
    if n <= 0:
        return []
    errors = [f"  {d['model']} rcid {d['edit_rcid']}: {d.get('error')}" for d in iter_log(path) if d.get("status") == "error"]
    return (["last errors:"] + errors[-n:]) if errors else []
