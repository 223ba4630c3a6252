"""Own, shared or a research team's evidence on the simulator: accuracy, recall of the decisive page, cost (issue 33).

    python bench/judging_team.py                    5 seeds x 48 edits (about 45 minutes on 2 shared cores)
    python bench/judging_team.py --seeds 3 --edits 24
    python bench/judging_team.py --json FILE        also write the figures as JSON

For each simulator seed, the same N edits (the bundled sample cloned, each
with its sample's truth label; bench/workload.py) are judged by the four
default models, each way a real `fanout run` (library call, real clients)
into its own run directory:

    own                          every model investigates and judges each edit
    shared (X)                   X investigates once, all four judge its evidence (each model as X)
    team                         the defaults: Haiku (the priciest) plans, Nemotron and OLMo (the cheapest
                                 two families) research, a second round when the review names something missing
    team, 1 round                no review
    team + aggregator            DeepSeek summarises the workers' notes for the judges
    team, 3 workers              DeepSeek joins the workers
    team, cheap planner          Nemotron plans

Per way and seed: majority accuracy (the majority stance of the edit's
verdicts against the truth; no verdict counts as wrong), recall of the
decisive page (of the edits with a page that settles them, the share whose
evidence read one; under `own` the mean over the four models' own
investigations), cost per edit (every verdict, investigation and team step,
as the simulator billed them), and for team ways each role's cost, the
pages per edit, the share of pages two or more workers read, and the pages
and decisive pages the second round added. Printed as the median over seeds
and the [min, max] range, with each way's paired difference from `own` and
from `shared (Nemotron)`, the default investigator.

Targets (issue 33): the team's accuracy at least shared's + 0.02 and at
least own's, at no more than 60 % of own's cost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections.abc import Mapping, Sequence
from io import StringIO
from pathlib import Path
from typing import Any

import anyio
import yaml

sys.path.insert(0, str(Path(__file__).parent))

from judging_strategies import majority, write_inputs  # noqa: E402

from fanout.base.records import EvidenceRecord, ToolCallLog, VerdictRecord  # noqa: E402
from fanout.engine.options import RunOptions, settings_from  # noqa: E402
from fanout.engine.runner import RunRequest, run  # noqa: E402
from fanout.judging.scales import STANCE_OF_TRUTH  # noqa: E402
from fanout.llm.models import DEFAULT_MODELS  # noqa: E402
from fanout.report.run_data import read_latest_records  # noqa: E402
from fanout.sim import SimConfig, running_simulator  # noqa: E402
from fanout.sim.corpus import Corpus, load_corpus  # noqa: E402
from fanout.store.evidence_log import own_cost, read_evidence  # noqa: E402
from fanout.store.team_log import read_team_steps  # noqa: E402
from fanout.workloads.patrol.workload import PATROL  # noqa: E402

NEMOTRON, OLMO, DEEPSEEK, HAIKU = (m.name for m in DEFAULT_MODELS)
TEAM: dict[str, Any] = {"evidence": "team"}
THREE = {**TEAM, "workers": [NEMOTRON, OLMO, DEEPSEEK]}
WAYS: dict[str, dict[str, Any]] = {
    "own": {},
    "shared (Nemotron)": {"evidence": "shared", "investigator": NEMOTRON},
    "shared (OLMo)": {"evidence": "shared", "investigator": OLMO},
    "shared (DeepSeek)": {"evidence": "shared", "investigator": DEEPSEEK},
    "shared (Haiku)": {"evidence": "shared", "investigator": HAIKU},
    "team": TEAM,
    "team, 1 round": {**TEAM, "team_rounds": 1},
    "team + aggregator": {**TEAM, "aggregator": DEEPSEEK},
    "team, 1 round + aggregator": {**TEAM, "team_rounds": 1, "aggregator": DEEPSEEK},
    "team, 3 workers": THREE,
    "team, 3 workers, 1 round": {**THREE, "team_rounds": 1},
    "team, 3 workers + aggregator": {**THREE, "aggregator": DEEPSEEK},
    "team, 3 workers, 1 round + aggregator": {**THREE, "team_rounds": 1, "aggregator": DEEPSEEK},
    "team, cheap planner": {**TEAM, "planner": NEMOTRON},
}
SHARED = "shared (Nemotron)"
TEAM_TARGET_GAIN = 0.02
TEAM_TARGET_COST = 0.60
FIGURES = ("accuracy", "recall", "cost_per_edit", "planner", "worker", "aggregator", "pages", "overlap",
           "round2_pages", "round2_decisive")


async def judge(sim: Any, snapshot: Path, run_dir: Path, way: Mapping[str, Any]) -> None:
    settings = settings_from(RunOptions(base_url=sim.api_base, searxng_url=sim.searxng_url, allow_private_urls=True,
                                        per_host_delay_s=0, concurrency=16, **way))
    await run(RunRequest(snapshot, run_dir, settings, handle_signals=False, out=StringIO(), progress_interval_s=3600,
                         workload=PATROL))


def decisive(calls: Sequence[ToolCallLog], rcid: int, corpus: Corpus) -> bool:
    """Whether these calls read a page that settles the edit (one that supports or contradicts it)."""
    for call in calls:
        page = corpus.page_for_url(call.final_url or "") if call.tool == "web_fetch" and call.ok else None
        if page is not None and page.stance(rcid) in ("supports", "contradicts"):
            return True
    return False


def settleable(truth: Mapping[int, str]) -> list[int]:
    """Edits with a page that settles them: every correct or incorrect one (an unverifiable edit has none)."""
    return [rcid for rcid, t in truth.items() if t != "unverifiable"]


def recall(records: Sequence[VerdictRecord], evidence: Mapping[int, EvidenceRecord], truth: Mapping[int, str],
           corpus: Corpus) -> float:
    edits = settleable(truth)
    if evidence:
        return sum(decisive(evidence[r].tool_calls, r, corpus) for r in edits if r in evidence) / len(edits)
    models = sorted({r.model for r in records})
    own = [sum(decisive(r.tool_calls, r.edit_rcid, corpus) for r in records if r.model == m and r.edit_rcid in edits)
           / len(edits) for m in models]
    return statistics.fmean(own)


def team_figures(run_dir: Path, evidence: Mapping[int, EvidenceRecord], truth: Mapping[int, str], corpus: Corpus,
                 n: int) -> dict[str, float]:
    """Each role's cost per edit, pooled pages per edit, the share read by two or more workers, round 2's additions."""
    roles = {role: sum(s.cost_usd or 0.0 for s in read_team_steps(run_dir) if s.role == role) / n
             for role in ("planner", "worker", "aggregator")}
    pages = [p for e in evidence.values() if e.team for p in e.team.pages]
    later = [(e.edit_rcid, p) for e in evidence.values() if e.team for p in e.team.pages if p.round == 2]
    settles = {r for r in settleable(truth)}
    found_late = sum(1 for rcid, p in later if rcid in settles and _settles(p.fetched, rcid, corpus))
    return {**roles, "pages": len(pages) / n, "overlap": sum(len(p.found_by) > 1 for p in pages) / max(len(pages), 1),
            "round2_pages": len(later) / n, "round2_decisive": found_late / len(settles)}


def _settles(url: str, rcid: int, corpus: Corpus) -> bool:
    page = corpus.page_for_url(url)
    return page is not None and page.stance(rcid) in ("supports", "contradicts")


async def one_way(sim: Any, root: Path, snapshot: Path, name: str, truth: Mapping[int, str], corpus: Corpus,
                  n: int) -> dict[str, float | None]:
    run_dir = root / name.replace(" ", "_").replace(",", "").replace("(", "").replace(")", "").replace("+", "and")
    await judge(sim, snapshot, run_dir, WAYS[name])
    records = read_latest_records(run_dir / "checkpoint.jsonl")[0]
    evidence = {e.edit_rcid: e for e in read_evidence(run_dir)}
    stances = majority(records)
    spent = (sum(r.cost_usd or 0.0 for r in records) + sum(own_cost(e) or 0.0 for e in read_evidence(run_dir))
             + sum(s.cost_usd or 0.0 for s in read_team_steps(run_dir)))
    figures: dict[str, float | None] = dict.fromkeys(FIGURES)
    figures.update(accuracy=sum(stances.get(r) == STANCE_OF_TRUTH[t] for r, t in truth.items()) / len(truth),
                   recall=recall(records, evidence, truth, corpus), cost_per_edit=spent / n)
    if WAYS[name].get("evidence") == "team":
        figures.update(team_figures(run_dir, evidence, truth, corpus, n))
    return figures


async def one_seed(root: Path, n: int, seed: int) -> dict[str, dict[str, float | None]]:
    snapshot, truth_file = write_inputs(root, n)
    truth = {int(t["rcid"]): str(t["truth"]) for t in yaml.safe_load(truth_file.read_text())["truth"]}
    corpus = load_corpus(snapshot_path=snapshot, truth_path=truth_file)
    found: dict[str, dict[str, float | None]] = {}
    for name in WAYS:  # a simulator of its own per way: no way reads another's prompt caches
        async with running_simulator(SimConfig(seed=seed, corpus=corpus)) as sim:
            found[name] = await one_way(sim, root, snapshot, name, truth, corpus, n)
            f = found[name]
            print(f"  seed {seed} {name:40} accuracy {f['accuracy']:.3f}  recall {f['recall']:.3f}  "
                  f"${f['cost_per_edit']:.5f}/edit", flush=True)
    return found


def summary(values: Sequence[float | None]) -> dict[str, float] | None:
    known = [v for v in values if v is not None]
    if not known:
        return None
    return {"median": statistics.median(known), "min": min(known), "max": max(known)}


def show(figure: dict[str, float] | None, digits: int, percent: bool = False) -> str:
    if figure is None:
        return "–"
    if percent:
        return f"{figure['median']:.0%} [{figure['min']:.0%}, {figure['max']:.0%}]"
    return f"{figure['median']:.{digits}f} [{figure['min']:.{digits}f}, {figure['max']:.{digits}f}]"


def paired(per_seed: Sequence[Mapping[str, Mapping[str, Any]]], name: str, base: str, key: str,
           ratio: bool = False) -> dict[str, float] | None:
    values = []
    for seed in per_seed:
        a, b = seed[name][key], seed[base][key]
        values.append(a / b if ratio else a - b)
    return summary(values)


def tables(per_seed: list[dict[str, dict[str, float | None]]]) -> dict[str, Any]:
    return {
        "table": {name: {key: summary([s[name][key] for s in per_seed]) for key in FIGURES} for name in WAYS},
        "accuracy_vs_own": {name: paired(per_seed, name, "own", "accuracy") for name in WAYS},
        "accuracy_vs_shared": {name: paired(per_seed, name, SHARED, "accuracy") for name in WAYS},
        "cost_vs_own": {name: paired(per_seed, name, "own", "cost_per_edit", ratio=True) for name in WAYS},
    }


def print_tables(found: Mapping[str, Any], seeds: int) -> None:
    table = found["table"]
    print(f"\nmedian [min, max] over {seeds} seeds")
    print(f"{'':42}{'majority accuracy':>24}{'vs own':>24}{'vs shared (Nemotron)':>24}{'decisive page read':>24}"
          f"{'USD per edit':>28}{'of own':>18}")
    for name in WAYS:
        row = table[name]
        print(f"{name:42}{show(row['accuracy'], 3):>24}{show(found['accuracy_vs_own'][name], 3):>24}"
              f"{show(found['accuracy_vs_shared'][name], 3):>24}{show(row['recall'], 3):>24}"
              f"{show(row['cost_per_edit'], 5):>28}{show(found['cost_vs_own'][name], 0, True):>18}")
    print(f"\n{'team ways':42}{'planner $/edit':>24}{'workers $/edit':>24}{'aggregator $/edit':>24}"
          f"{'pages/edit':>20}{'read by 2+':>20}{'round-2 pages':>20}{'round-2 decisive':>20}")
    for name in (n for n in WAYS if WAYS[n].get("evidence") == "team"):
        row = table[name]
        print(f"{name:42}{show(row['planner'], 5):>24}{show(row['worker'], 5):>24}{show(row['aggregator'], 5):>24}"
              f"{show(row['pages'], 2):>20}{show(row['overlap'], 2):>20}{show(row['round2_pages'], 2):>20}"
              f"{show(row['round2_decisive'], 3):>20}")


def verdict_on_targets(found: Mapping[str, Any]) -> list[str]:
    lines = []
    for name in (n for n in WAYS if WAYS[n].get("evidence") == "team"):
        gain, own_gap, cost = (found["accuracy_vs_shared"][name]["median"], found["accuracy_vs_own"][name]["median"],
                               found["cost_vs_own"][name]["median"])
        met = gain >= TEAM_TARGET_GAIN and own_gap >= 0 and cost <= TEAM_TARGET_COST
        lines.append(f"{name}: accuracy {gain:+.3f} vs shared (target >= +{TEAM_TARGET_GAIN}), {own_gap:+.3f} vs own "
                     f"(target >= 0), cost {cost:.0%} of own (target <= {TEAM_TARGET_COST:.0%}): "
                     f"{'met' if met else 'MISSED'}")
    return lines


async def bench(n: int, seeds: int, json_path: Path | None) -> int:
    per_seed = []
    print(f"{n} edits x {len(DEFAULT_MODELS)} simulated models, seeds 0-{seeds - 1}, {len(WAYS)} ways", flush=True)
    with tempfile.TemporaryDirectory(prefix="fanout-team-") as tmp:
        for seed in range(seeds):
            folder = Path(tmp) / str(seed)
            folder.mkdir()
            per_seed.append(await one_seed(folder, n, seed))
    found = tables(per_seed)
    print_tables(found, seeds)
    targets = verdict_on_targets(found)
    print("\n" + "\n".join(targets))
    if json_path is not None:
        json_path.write_text(json.dumps({"edits": n, "seeds": seeds, "ways": WAYS, "per_seed": per_seed, **found,
                                         "targets": targets}, indent=1) + "\n")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=48, metavar="N", help="edits per seed (default 48)")
    parser.add_argument("--seeds", type=int, default=5, metavar="N", help="simulator seeds (default 5)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    return anyio.run(bench, args.edits, args.seeds, args.json)


if __name__ == "__main__":
    sys.exit(main())
