"""The claims workload on the simulator: extraction quality, verification accuracy, cost and wall time per text.

    python bench/claims.py                 3 seeds (about 10 minutes on 2 shared cores)
    python bench/claims.py --seeds 5       more seeds
    python bench/claims.py --json FILE     also write the figures as JSON (make strategies writes bench/results/)

For each simulator seed (profile `default`: no faults, the simulated
providers' latency), the twelve bundled texts (src/fanout/data/sample_texts.yaml,
52 labelled claims) are

1. split into claims by each of the four simulated models as extractor (the
   workload's own extraction, fanout.workloads.claims.source, against the
   simulator): claims per text, and precision and recall against the planted
   claims (fanout.workloads.claims.align: a merged claim, a claim left with a
   pronoun and a missed claim each cost what they should);
2. verified end to end, a real `fanout run --workload claims` (library call,
   real clients) at --concurrency 8, once with every model judging every
   claim and once with --strategy cascade: each model's and the committee's
   (Dawid-Skene; the cascade's settlement) accuracy against the claims'
   labels, cost per text (the extraction and every verdict, as the run
   counted them) and wall time per text; and how many of the texts with a
   false claim a gate of 0.85 holds back, and how many correct texts it holds
   back too.

The simulated models are seeded rules, not language models: these figures
measure fanout's machinery (does a bad extraction show? does the committee
help?), not any real model. The habits are parameters set before measuring
(fanout.sim.models); nothing here tunes them to a figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from io import StringIO
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).parent))

from fanout.base.validate import package_data  # noqa: E402
from fanout.engine.options import RunOptions, settings_from  # noqa: E402
from fanout.engine.runner import RunRequest, run  # noqa: E402
from fanout.llm.chat import ChatClient  # noqa: E402
from fanout.llm.models import DEFAULT_MODELS  # noqa: E402
from fanout.report import ReportOptions, build_report  # noqa: E402
from fanout.report.gate import gate_run  # noqa: E402
from fanout.research.prepare import Preparation, PreparationSpend  # noqa: E402
from fanout.sim import SimConfig, load_profile, running_simulator  # noqa: E402
from fanout.store.prepared import prepared_spend  # noqa: E402
from fanout.workloads.claims.align import align  # noqa: E402
from fanout.workloads.claims.prompt import load_extraction_prompt  # noqa: E402
from fanout.workloads.claims.source import ClaimsSource  # noqa: E402
from fanout.workloads.claims.texts import read_texts  # noqa: E402
from fanout.workloads.claims.workload import ClaimsWorkload  # noqa: E402

SAMPLE = package_data("sample_texts.yaml")
TEXTS = read_texts(SAMPLE)
GATE = 0.85
STRATEGIES = {"all": {}, "cascade": {"strategy": "cascade"}}


async def extraction(sim: Any, root: Path, extractor: str) -> dict[str, float]:
    """One extractor over the twelve texts: claims per text, precision and recall against the labelled claims."""
    run_dir = root / f"extract-{extractor.replace('/', '_')}"
    run_dir.mkdir(parents=True)
    source = ClaimsSource(TEXTS, run_dir, extractor, load_extraction_prompt())
    async with httpx.AsyncClient() as http:
        chat = ChatClient(base_url=sim.api_base, api_key=None, http=http)
        await source.prepare(Preparation(chat=chat, models=DEFAULT_MODELS, default_model=extractor, run_dir=run_dir,
                                         spend=PreparationSpend(None, 0.0), timeout_s=180, concurrency=8,
                                         say=lambda line: None))
    atomic = found = extracted = labelled = 0
    for text in TEXTS.texts:
        got = align([(c.claim, c.truth) for c in text.claims], [c.claim for c in source.claims_of(text)])
        atomic, found = atomic + got.atomic, found + got.found
        extracted, labelled = extracted + got.extracted, labelled + got.labelled
    return {"claims_per_text": extracted / len(TEXTS.texts), "precision": atomic / extracted,
            "recall": found / labelled}


async def verification(sim: Any, root: Path, name: str, way: Mapping[str, str]) -> dict[str, Any]:
    """One end-to-end run at --concurrency 8: accuracy per judge, cost and wall time per text, the gate's catch."""
    run_dir = root / f"run-{name}"
    config = root / "search.json"
    config.write_text(json.dumps(sim.claims_search_config()), encoding="utf-8")
    settings = settings_from(RunOptions(base_url=sim.api_base, searxng_url=sim.searxng_url, allow_private_urls=True,
                                        per_host_delay_s=0, concurrency=8, search_config=config, **way))
    started = time.monotonic()
    report = await run(RunRequest(SAMPLE, run_dir, settings, handle_signals=False, out=StringIO(),
                                  progress_interval_s=3600, workload=ClaimsWorkload()))
    wall = time.monotonic() - started
    assert report is not None
    spent = report.tally.spent_usd
    scored = build_report(run_dir, ReportOptions()).table("scores")
    accuracy = {row["subject"]: row["accuracy"] for row in scored}
    gate = gate_run(run_dir, GATE)
    held = {q["text_id"] for q in gate.quarantined}
    false = {t.id for t in TEXTS.texts if any(c.truth == "incorrect" for c in t.claims)}
    true = {t.id for t in TEXTS.texts if t.claims and all(c.truth == "correct" for c in t.claims)}
    return {"accuracy": accuracy, "cost_per_text": spent / len(TEXTS.texts),
            "extraction_cost": prepared_spend(run_dir).spent_usd, "wall_s_per_text": wall / len(TEXTS.texts),
            "false_texts_held": len(false & held), "false_texts": len(false),
            "correct_texts_held": len(true & held), "correct_texts": len(true),
            "pairs": report.tally.done}


async def one_seed(root: Path, seed: int) -> dict[str, Any]:
    figures: dict[str, Any] = {"extraction": {}, "verification": {}}
    async with running_simulator(SimConfig(seed=seed, profile=load_profile("default"))) as sim:
        for model in DEFAULT_MODELS:
            figures["extraction"][model.name] = got = await extraction(sim, root, model.name)
            print(f"  seed {seed} extractor {model.name:36} {got['claims_per_text']:.2f} claims/text  "
                  f"precision {got['precision']:.3f}  recall {got['recall']:.3f}", flush=True)
        for name, way in STRATEGIES.items():
            figures["verification"][name] = got = await verification(sim, root, name, way)
            print(f"  seed {seed} {name:8} ${got['cost_per_text']:.4f}/text  {got['wall_s_per_text']:.2f} s/text  "
                  f"held {got['false_texts_held']}/{got['false_texts']} false texts, "
                  f"{got['correct_texts_held']}/{got['correct_texts']} correct ones", flush=True)
    return figures


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def show(figure: dict[str, float], digits: int = 3) -> str:
    return f"{figure['median']:.{digits}f} [{figure['min']:.{digits}f}, {figure['max']:.{digits}f}]"


def summarise(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"extraction": {}, "verification": {}}
    for model in per_seed[0]["extraction"]:
        out["extraction"][model] = {k: summary([s["extraction"][model][k] for s in per_seed])
                                    for k in ("claims_per_text", "precision", "recall")}
    for name in STRATEGIES:
        runs = [s["verification"][name] for s in per_seed]
        subjects = [k for k in runs[0]["accuracy"] if all(r["accuracy"].get(k) is not None for r in runs)]
        out["verification"][name] = {
            "accuracy": {k: summary([r["accuracy"][k] for r in runs]) for k in subjects},
            **{k: summary([r[k] for r in runs]) for k in ("cost_per_text", "wall_s_per_text", "extraction_cost",
                                                           "false_texts_held", "correct_texts_held", "pairs")},
            "false_texts": runs[0]["false_texts"], "correct_texts": runs[0]["correct_texts"]}
    return out


def print_summary(out: dict[str, Any], seeds: int) -> None:
    print(f"\nMedian [min, max] over {seeds} seed(s)\n\nExtraction (52 labelled claims in 12 texts)")
    for model, got in out["extraction"].items():
        print(f"  {model:36} claims/text {show(got['claims_per_text'], 2)}  precision {show(got['precision'])}  "
              f"recall {show(got['recall'])}")
    for name, got in out["verification"].items():
        print(f"\nVerification, --strategy {name}: cost/text ${show(got['cost_per_text'], 4)}, wall/text "
              f"{show(got['wall_s_per_text'], 2)} s, pairs {show(got['pairs'], 0)}; gate {GATE}: held "
              f"{show(got['false_texts_held'], 0)} of {got['false_texts']} texts with a false claim and "
              f"{show(got['correct_texts_held'], 0)} of {got['correct_texts']} correct texts")
        for subject, acc in got["accuracy"].items():
            print(f"  {subject:36} accuracy {show(acc)}")


async def bench(seeds: int, json_path: Path | None) -> int:
    per_seed = []
    with tempfile.TemporaryDirectory(prefix="fanout-claims-") as tmp:
        for seed in range(seeds):
            folder = Path(tmp) / str(seed)
            folder.mkdir()
            per_seed.append(await one_seed(folder, seed))
    out = summarise(per_seed)
    print_summary(out, seeds)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps({"seeds": seeds, "texts": len(TEXTS.texts), "gate": GATE, "summary": out,
                                         "per_seed": per_seed}, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {json_path}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    return anyio.run(bench, args.seeds, args.json)


if __name__ == "__main__":
    sys.exit(main())
