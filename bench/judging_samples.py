"""`--samples` on the simulator: does the swap outvote a planted position bias, and do samples outvote noise?

    python bench/judging_samples.py                 10 simulator seeds (10-20 minutes on 2 shared cores)
    python bench/judging_samples.py --seeds 3       a quicker pass

The real `fanout run` runs the bundled 12-edit sample against `fanout sim`
(the clean profile, no latency), once per simulator seed: a seed changes
every simulated investigation and verdict draw, so 10 seeds give 120
verdicts per model and setting. The truth labels are the simulator's own.

Position bias. Olmo's profile answers with the label listed first 20 % of the
time (fanout.sim.models). Its "honest" verdicts come from a twin simulator,
identical but with that bias set to 0 (`--fault MODEL:label_position_bias=0`),
so every other draw is the same and any difference is the bias's doing. The
first-label pick rate of a record is the share of its samples whose request
listed the record's verdict first (with one sample: whether the verdict is
verified-high, which the natural order lists first); the bias is that rate
above the twin's. "Without swap" is `--samples 3 --no-label-swap`, a hidden
flag that keeps the natural label order in every sample (the evidence is
still shuffled): it exists for this measurement only.

Noise. Haiku's profile moves its verdict one step along the scale in 30 %
of its answers. Accuracy is the report's (verdict stance against the truth:
accept / unsure / reject), with --samples 1 and 3; the stability gap is the
mean stability of its right verdicts minus that of its wrong ones (--samples 3).
Writes bench/results/<date>-judging-samples.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from harness import Simulator, require_success, run_fanout  # noqa: E402

from fanout.judging.scales import STANCE_OF_TRUTH, stance  # noqa: E402
from fanout.config import package_data  # noqa: E402

RESULTS = Path(__file__).parent / "results"
BIASED = "allenai/olmo-3.1-32b-instruct"
NOISY = "anthropic/claude-haiku-4.5"
FIRST_NATURAL = "verified-high"
Records = dict[tuple[int, int], dict[str, Any]]
"""(seed, rcid) -> the record of one model."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/judging_samples.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="simulator seeds to run (12 edits each; default 10)")
    parser.add_argument("--out", type=Path, default=None, help="results file (default bench/results/<date>-judging-samples.json)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fanout-judging-") as tmp:
        runs = collect(Path(tmp), range(args.seeds))
    results = {"seeds": args.seeds, "position_bias": position_bias(runs), "noise": noise(runs)}
    out = args.out or RESULTS / f"{datetime.now():%Y-%m-%d}-judging-samples.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print_results(results)
    print(f"\nResults: {out}")
    return 0


# --- the runs --------------------------------------------------------------------------------

RUNS: dict[str, tuple[bool, tuple[str, ...], tuple[str, ...]]] = {
    # name: (twin simulator without the bias?, models, flags)
    "s1": (False, (BIASED, NOISY), ("--samples", "1")),
    "s3": (False, (BIASED, NOISY), ("--samples", "3")),
    "s3_fixed": (False, (BIASED,), ("--samples", "3", "--no-label-swap")),
    "twin_s1": (True, (BIASED,), ("--samples", "1")),
    "twin_s3": (True, (BIASED,), ("--samples", "3")),
    "twin_s3_fixed": (True, (BIASED,), ("--samples", "3", "--no-label-swap")),
}


def collect(root: Path, seeds: range) -> dict[str, dict[str, Records]]:
    """run name -> model -> records, over every seed."""
    snapshot = package_data("sample_snapshot.yaml")
    runs: dict[str, dict[str, Records]] = {name: {} for name in RUNS}
    for seed in seeds:
        for twin in (False, True):
            faults = (f"{BIASED}:label_position_bias=0",) if twin else ()
            with Simulator(profile="clean", latency_scale=0.0, faults=faults, seed=seed) as sim:
                for name, (for_twin, models, flags) in RUNS.items():
                    if for_twin != twin:
                        continue
                    run_dir = root / f"{name}-{seed}"
                    measure = run_fanout(snapshot, run_dir, sim, "-m", ",".join(models), "--concurrency", "8", *flags)
                    require_success(measure, f"{name} seed {seed}")
                    for record in read_log(run_dir):
                        runs[name].setdefault(record["model"], {})[(seed, record["edit_rcid"])] = record
        print(f"seed {seed} done", file=sys.stderr, flush=True)
    return runs


def read_log(run_dir: Path) -> list[dict[str, Any]]:
    with (run_dir / "checkpoint.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def truth() -> dict[int, str]:
    from fanout.sim import load_corpus

    return {int(entry["rcid"]): str(entry["truth"]) for entry in load_corpus().labels()}


# --- position bias ---------------------------------------------------------------------------


def first_label_share(record: dict[str, Any]) -> float:
    """How much of the record's verdict its requests listed first (one sample: the natural order's first)."""
    orders = [s["label_order"] for s in record.get("samples") or []] or [[FIRST_NATURAL]]
    return sum(order[0] == record["verdict"] for order in orders) / len(orders)


def position_bias(runs: dict[str, dict[str, Records]]) -> dict[str, Any]:
    out = {}
    for name, label in (("s1", "--samples 1 (natural label order)"), ("s3_fixed", "--samples 3 without swap"),
                        ("s3", "--samples 3 with swap")):
        planted, twin = runs[name][BIASED], runs[f"twin_{name}"][BIASED]
        keys = [k for k in planted if planted[k]["verdict"] and k in twin and twin[k]["verdict"]]
        rate = mean(first_label_share(planted[k]) for k in keys)
        honest = mean(first_label_share(twin[k]) for k in keys)
        out[name] = {
            "setting": label,
            "records": len(keys),
            "first_label_pick_rate": round(rate, 4),
            "honest_rate": round(honest, 4),
            "bias_points": round(100 * (rate - honest), 1),
            "verdicts_changed_by_the_bias": round(mean(planted[k]["verdict"] != twin[k]["verdict"] for k in keys), 4),
            "accuracy": accuracy(planted),
            "cost_per_verdict_usd": cost_per_verdict(planted),
        }
    return out


# --- noise -----------------------------------------------------------------------------------


def right(record: dict[str, Any], truths: dict[int, str]) -> bool:
    return stance(record["verdict"]) == STANCE_OF_TRUTH[truths[record["edit_rcid"]]]


def accuracy(records: Records) -> float:
    truths = truth()
    return round(mean(right(r, truths) for r in records.values() if r["verdict"]), 4)


def noise(runs: dict[str, dict[str, Records]]) -> dict[str, Any]:
    truths = truth()
    sampled = [r for r in runs["s3"][NOISY].values() if r["verdict"]]
    right_stability = [r["stability"] for r in sampled if right(r, truths)]
    wrong_stability = [r["stability"] for r in sampled if not right(r, truths)]
    return {
        "model": NOISY,
        "accuracy_samples_1": accuracy(runs["s1"][NOISY]),
        "accuracy_samples_3": accuracy(runs["s3"][NOISY]),
        "records": len(sampled),
        "mean_stability_right": round(mean(right_stability), 4),
        "mean_stability_wrong": round(mean(wrong_stability), 4),
        "stability_gap": round(mean(right_stability) - mean(wrong_stability), 4),
        "right_wrong_counts": [len(right_stability), len(wrong_stability)],
        "cost_per_verdict_usd": {"samples_1": cost_per_verdict(runs["s1"][NOISY]),
                                 "samples_3": cost_per_verdict(runs["s3"][NOISY])},
    }


def cost_per_verdict(records: Records) -> float:
    return round(mean(r["cost_usd"] or 0.0 for r in records.values()), 6)


def mean(values: Any) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


# --- the table -------------------------------------------------------------------------------


def print_results(results: dict[str, Any]) -> None:
    bias = results["position_bias"]
    print(f"\nPosition bias: {BIASED}, planted 20 % first-label pull ({results['seeds']} seeds x 12 edits)")
    print(f"{'setting':36} {'records':>7} {'first-label':>11} {'honest':>7} {'bias':>8} {'changed':>8} {'accuracy':>8}")
    for row in bias.values():
        print(f"{row['setting']:36} {row['records']:>7} {pct(row['first_label_pick_rate']):>11} "
              f"{pct(row['honest_rate']):>7} {row['bias_points']:>6.1f}pt {pct(row['verdicts_changed_by_the_bias']):>8} "
              f"{pct(row['accuracy']):>8}")
    print(f"target: with swap, below 3 points -> {_check(bias['s3']['bias_points'] < 3)}")
    n = results["noise"]
    print(f"\nSampling noise: {n['model']}, 30 % of answers moved one step")
    print(f"accuracy --samples 1: {pct(n['accuracy_samples_1'])}   --samples 3: {pct(n['accuracy_samples_3'])}   "
          f"-> {_check(n['accuracy_samples_3'] > n['accuracy_samples_1'])}")
    print(f"mean stability, right verdicts {n['mean_stability_right']:.3f} ({n['right_wrong_counts'][0]}), "
          f"wrong {n['mean_stability_wrong']:.3f} ({n['right_wrong_counts'][1]}): gap {n['stability_gap']:+.3f}")
    cost = n["cost_per_verdict_usd"]
    print(f"cost per verdict: ${cost['samples_1']:.6f} with 1 sample, ${cost['samples_3']:.6f} with 3")


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def _check(ok: bool) -> str:
    return "ok" if ok else "MISSED"


if __name__ == "__main__":
    raise SystemExit(main())
