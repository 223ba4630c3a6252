"""The desk's draw and the report's certificates on a simulated run: what a patroller gets for N decisions.

    python bench/desk_guarantee.py                 300 edits; 30 % and 100 % random; 50 ... 250 decisions
    python bench/desk_guarantee.py --edits 120 --steps 45,90 --shares 0.3

A run of cloned sample edits (bench/workload.py) with the simulator's truth
(bench/judging_strategies.write_inputs) goes through the four default
simulated models. A reviewer then works the desk's own working order
(fanout.review.desk.work_order: a share of random draws, 30 % as the desk's
default or 100 %, the rest the least sure, paused edits first) and decides each edit as its truth says (correct =
accept, incorrect = reject, unverifiable = unsure), the line written as the
desk writes it. After each step the report is built with
--target-agreement 0.95 --risk 0.1: each rule's certificate (threshold,
coverage, what it rests on) and each model's and rule's accuracy, labels only
and PPI++ (interval widths, how much narrower).

Writes bench/results/<date>-desk-guarantee.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
import yaml

sys.path.insert(0, str(Path(__file__).parent))
from judging_strategies import run_strategy, write_inputs  # noqa: E402

from fanout.report import ReportOptions, build_report  # noqa: E402
from fanout.judging.policy import GuaranteeSettings  # noqa: E402
from fanout.review.desk import work_order  # noqa: E402
from fanout.sim import SimConfig, running_simulator  # noqa: E402
from fanout.sim.corpus import load_corpus  # noqa: E402
from fanout.store.reviews import Review, append_review  # noqa: E402

RESULTS = Path(__file__).parent / "results"
DECISION_OF_TRUTH = {"correct": "accept", "incorrect": "reject", "unverifiable": "unsure"}
TARGET, RISK = 0.95, 0.1


def decide(run_dir: Path, truth: dict[int, str], upto: int, decided: dict[int, str], share: float) -> None:
    """Work the desk's order until `upto` decisions, each by the edit's truth, drawn as the desk would record it."""
    report = build_report(run_dir)
    while len(decided) < upto:
        picks = work_order(report, set(decided), share)
        if not picks:
            return
        pick = picks[0]
        decision = DECISION_OF_TRUTH[truth[pick.key]]
        append_review(run_dir, Review(pick.key, decision, "", "bench", drawn="random" if pick.random else "uncertain"))
        decided[pick.key] = decision


def step(run_dir: Path, decisions: int, share: float) -> dict[str, Any]:
    options = ReportOptions(guarantee=GuaranteeSettings(target_agreement=TARGET, risk=RISK), resamples=0)
    report = build_report(run_dir, options)
    people = report.people
    row: dict[str, Any] = {"random_share": share, "decisions": decisions, "random_sample": len(people.sample) if people else 0,
                           "auto_passed": report.totals["auto_passed"], "edits": report.totals["edits"],
                           "certificates": report.table("certificates"), "accuracy": []}
    for r in report.table("accuracy_ppi"):
        lo = None if r["labels_only_low"] is None else r["labels_only_high"] - r["labels_only_low"]
        plus = None if r["ppi_plus_low"] is None else r["ppi_plus_high"] - r["ppi_plus_low"]
        row["accuracy"].append({"subject": r["subject"], "n": r["labelled"], "labels_only": r["labels_only"],
                                "labels_only_width": lo, "ppi_plus": r["ppi_plus"], "ppi_plus_width": plus,
                                "narrower": r["narrower"], "few": r["few"]})
    return row


def show(row: dict[str, Any]) -> None:
    print(f"\n{row['random_share']:.0%} random: {row['decisions']} decisions, {row['random_sample']} of them the random "
          "sample; "
          f"{row['auto_passed']} of {row['edits']} edits decided alone")
    for c in row["certificates"]:
        where = (f"certified at >= {c['threshold']:.2f}, coverage {c['coverage']:.1%} ({c['decided_alone']} edits), "
                 f"rests on {c['rests_on']} ({c['disagreements']} disagree)" if c["certified"] else c["why"])
        print(f"  {c['rule']}: {where}")
    for a in row["accuracy"]:
        if a["labels_only_width"] is None or a["ppi_plus_width"] is None:
            continue
        print(f"  {a['subject']:40} n={a['n']:>3}  labels only {a['labels_only']:.3f} ±{a['labels_only_width'] / 2:.3f}"
              f"  PPI++ {a['ppi_plus']:.3f} ±{a['ppi_plus_width'] / 2:.3f}  narrower {a['narrower']:.0%}")


async def bench(edits: int, steps: list[int], shares: list[float], seed: int) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="fanout-desk-") as tmp:
        folder = Path(tmp)
        snapshot, truth_file = write_inputs(folder, edits)
        truth = {int(t["rcid"]): str(t["truth"]) for t in yaml.safe_load(truth_file.read_text())["truth"]}
        corpus = load_corpus(snapshot_path=snapshot, truth_path=truth_file)
        async with running_simulator(SimConfig(seed=seed, corpus=corpus)) as sim:
            await run_strategy(sim, snapshot, folder / "run")
        for share in shares:
            run_dir = folder / f"run-{share:g}"
            shutil.copytree(folder / "run", run_dir)
            decided: dict[int, str] = {}
            for upto in steps:
                decide(run_dir, truth, upto, decided, share)
                rows.append(step(run_dir, len(decided), share))
                show(rows[-1])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=300)
    parser.add_argument("--steps", default="50,100,150,200,250")
    parser.add_argument("--shares", default="0.3,1")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    steps = [int(s) for s in args.steps.split(",")]
    rows = anyio.run(bench, args.edits, steps, [float(x) for x in args.shares.split(",")], args.seed)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{datetime.now():%Y-%m-%d}-desk-guarantee.json"
    out.write_text(json.dumps({"edits": args.edits, "seed": args.seed, "target": TARGET,
                               "risk": RISK, "steps": rows}, indent=1), encoding="utf-8")
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
