"""Aggregate search on the simulator: how often the decisive page is in the top 5, fused against each provider alone.

    python bench/search_aggregate.py                 20 simulator seeds (about a minute)
    python bench/search_aggregate.py --seeds 5       a quicker pass

The simulator serves one offline web through two providers: its SearXNG
(title-weighted ranking, engines that may not answer) and its Wikipedia-style
API (full-text ranking, which may rate-limit). The queries are the ones the
simulated models write for the bundled sample edits (every query style of
every default model, distinct queries only); a query's decisive pages are
the corpus pages that support or contradict its edit (edits with none, the
unverifiable ones, are left out). A query counts as a hit at 5 when one of
its decisive pages is among the first five results a model would read,
matched by canonical URL.

Each query goes through web_search as a run asks it (ToolBox, no cache) in
four set-ups: searxng alone, wikipedia alone, fallback (searxng, then
wikipedia) and aggregate (both, fused by reciprocal rank fusion, k = 60). Two
profiles: `clean` (no faults: ranking alone decides) and `faulty` (each
search loses one SearXNG engine's results with probability 0.3; SearXNG's
limiter answers 429 and the Wikipedia API `ratelimited` with probability
0.1 each, drawn independently per query and seed). The clean profile draws
nothing, so its seeds agree; the faulty one gives a median and the 2.5 and
97.5 percentiles over seeds.

RRF's k: the per-provider lists of the clean profile are also fused in
process with k in K_VALUES, to see whether k = 60 (Cormack et al.) is a bad
choice here.

Writes bench/results/<date>-search-aggregate.json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio

from fanout.http.client import make_http_client
from fanout.sim import SIM_MODELS, SimConfig, profile_from_dict, running_simulator
from fanout.sim.corpus import Corpus, load_corpus
from fanout.sim.investigation import Subject, _query
from fanout.tools import ToolBox
from fanout.tools.fusion import canonical_url, fuse
from fanout.tools.providers.base import SearchHit, ask_provider
from fanout.tools.providers.registry import make_provider
from fanout.tools.settings import ToolSettings

RESULTS = Path(__file__).parent / "results"
TOP = 5
K_VALUES = (1, 10, 30, 60, 100, 1000)
SETUPS: dict[str, dict[str, Any]] = {
    "searxng alone": {"search_providers": ("searxng",)},
    "wikipedia alone": {"search_providers": ("wikipedia",)},
    "fallback searxng, wikipedia": {"search_providers": ("searxng", "wikipedia"), "search_mode": "fallback"},
    "aggregate searxng + wikipedia": {"search_providers": ("searxng", "wikipedia"), "search_mode": "aggregate"},
}
PROFILES = {
    "clean": {},
    "faulty": {"search": {"unresponsive": 0.3, "http_429": 0.1}},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/search_aggregate.py", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="simulator seeds for the faulty profile (default 20)")
    parser.add_argument("--out", type=Path, default=None, help="results file (default bench/results/<date>-search-aggregate.json)")
    args = parser.parse_args(argv)
    corpus = load_corpus()
    queries = bench_queries(corpus)
    results: dict[str, Any] = {
        "commit": git_commit(),
        "queries": len(queries),
        "edits": len({rcid for rcid, _ in queries}),
        "top": TOP,
        "rrf_k": 60,
        "profiles": {},
    }
    for name, profile in PROFILES.items():
        seeds = range(1) if name == "clean" else range(args.seeds)
        per_seed = [anyio.run(measure, corpus, queries, profile, seed) for seed in seeds]
        results["profiles"][name] = summarise(per_seed)
    results["k_sweep_clean"] = anyio.run(k_sweep, corpus, queries)
    out = args.out or RESULTS / f"{datetime.date.today():%Y-%m-%d}-search-aggregate.json"
    out.write_text(json.dumps(rounded(results), indent=2) + "\n", encoding="utf-8")
    print_results(results)
    print(f"wrote {out}")
    return 0


def git_commit() -> str | None:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=Path(__file__).parent)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()


def rounded(value: Any) -> Any:
    """Floats to 4 decimals all through (rates over 100 queries need no more)."""
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def bench_queries(corpus: Corpus) -> list[tuple[int, str]]:
    """(rcid, query) for every edit with a decisive page and every query style of the default models."""
    styles = list(dict.fromkeys(style for model in SIM_MODELS for style in model.query_styles))
    queries = []
    for rcid, facts in sorted(corpus.edits.items()):
        if not decisive_addresses(corpus, rcid):
            continue
        subject = Subject(facts.label, facts.prop, facts.value, facts.description, facts.qid)
        queries += [(rcid, q) for q in dict.fromkeys(_query(style, subject) for style in styles)]
    return queries


def decisive_addresses(corpus: Corpus, rcid: int) -> set[str]:
    return {a for a, page in corpus.pages.items() if page.stances.get(rcid) in ("supports", "contradicts")}


def decisive_rank(corpus: Corpus, rcid: int, urls: Sequence[str]) -> int | None:
    """The rank (from 1) of the first decisive page among the results, or None."""
    decisive = decisive_addresses(corpus, rcid)
    for rank, url in enumerate(urls, start=1):
        page = corpus.page_for_url(canonical_url(url))
        if page is not None and page.address in decisive:
            return rank
    return None


def found_in_top(corpus: Corpus, rcid: int, urls: Sequence[str], top: int = TOP) -> bool:
    rank = decisive_rank(corpus, rcid, urls)
    return rank is not None and rank <= top


def settings_for(sim_url: str, wiki_url: str, **changes: Any) -> ToolSettings:
    return ToolSettings(searxng_url=sim_url, allow_private_urls=True, search_endpoints=(("wikipedia", wiki_url),),
                        **changes)


async def measure(corpus: Corpus, queries: list[tuple[int, str]], profile: dict[str, Any], seed: int) -> dict[str, Any]:
    """Per set-up: hit rates at 1 and 5, the mean reciprocal rank of the first decisive page, and the
    searches that came back with an error (no provider answered).

    Each query gets a fresh ToolBox (no cache, no rate-limit cool-down carried
    over), so every set-up meets the same fault draws on the same query and the
    comparison is paired; cool-downs are the health policy's business, not fusion's.
    """
    config = SimConfig(seed=seed, profile=profile_from_dict({"name": "bench", **profile}))
    out: dict[str, Any] = {}
    async with running_simulator(config) as sim, make_http_client(4, user_agent="fanout-bench") as http:
        for setup, changes in SETUPS.items():
            settings = settings_for(sim.searxng_url, sim.wikipedia_api_url, **changes)
            ranks: list[int | None] = []
            errors = 0
            for rcid, query in queries:
                payload = json.loads((await ToolBox(http, settings).web_search(query)).text)
                errors += "error" in payload
                ranks.append(decisive_rank(corpus, rcid, [r["url"] for r in payload["results"]]))
            out[setup] = {
                "hit_at_1": sum(r == 1 for r in ranks) / len(ranks),
                "hit_at_5": sum(r is not None and r <= TOP for r in ranks) / len(ranks),
                "mrr": sum(1 / r for r in ranks if r is not None) / len(ranks),
                "errors": errors,
            }
    return out


async def k_sweep(corpus: Corpus, queries: list[tuple[int, str]]) -> dict[str, dict[str, float]]:
    """Hit rates at 5 and at 1 of the two clean lists fused with each k (the same fuse the chain uses)."""
    lists: list[tuple[int, list[tuple[str, list[SearchHit]]]]] = []
    async with running_simulator(SimConfig(seed=0)) as sim, make_http_client(4, user_agent="fanout-bench") as http:
        settings = settings_for(sim.searxng_url, sim.wikipedia_api_url)
        providers = [make_provider(name, settings) for name in ("searxng", "wikipedia")]
        for rcid, query in queries:
            answers = [(p.name, (await ask_provider(p, query, http)).hits) for p in providers]
            lists.append((rcid, answers))
    sweep = {}
    for k in K_VALUES:
        fused = [(rcid, [f.hit.url for f in fuse(answers, k=k)]) for rcid, answers in lists]
        sweep[str(k)] = {f"hit_at_{top}": sum(found_in_top(corpus, rcid, urls, top) for rcid, urls in fused) / len(fused)
                         for top in (TOP, 1)}
    return sweep


def summarise(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for setup in SETUPS:
        row: dict[str, Any] = {"seeds": len(per_seed)}
        for metric in ("hit_at_1", "hit_at_5", "mrr", "errors"):
            values = sorted(run[setup][metric] for run in per_seed)
            row[f"{metric}_median"] = statistics.median(values)
            row[f"{metric}_interval_95"] = [percentile(values, 2.5), percentile(values, 97.5)]
        summary[setup] = row
    fused = "aggregate searxng + wikipedia"
    for setup in SETUPS:
        if setup != fused:  # paired by seed: the same fault draws met both set-ups
            gains = sorted(run[fused]["hit_at_5"] - run[setup]["hit_at_5"] for run in per_seed)
            summary[fused][f"hit_at_5_gain_over {setup}"] = {
                "median": statistics.median(gains), "interval_95": [percentile(gains, 2.5), percentile(gains, 97.5)],
                "seeds_better_same_worse": [sum(g > 0 for g in gains), sum(g == 0 for g in gains),
                                            sum(g < 0 for g in gains)]}
    return summary


def percentile(sorted_values: list[float], p: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    position = (len(sorted_values) - 1) * p / 100
    low = int(position)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (position - low)


def print_results(results: dict[str, Any]) -> None:
    print(f"{results['queries']} queries over {results['edits']} edits; median [95 % interval over seeds]")
    for profile, setups in results["profiles"].items():
        print(f"  {profile}:{'':30} decisive in top {TOP}        in top 1              MRR                   errors")
        for setup, row in setups.items():
            cells = []
            for metric in ("hit_at_5", "hit_at_1", "mrr"):
                low, high = row[f"{metric}_interval_95"]
                cells.append(f"{row[f'{metric}_median']:.3f} [{low:.3f}, {high:.3f}]")
            print(f"    {setup:32} {'   '.join(cells)}   {row['errors_median']:g}")
    sweep = ", ".join(f"k={k}: {rates['hit_at_5']:.3f} / {rates['hit_at_1']:.3f}"
                      for k, rates in results["k_sweep_clean"].items())
    print(f"  RRF k, clean profile (top {TOP} / top 1): {sweep}")


if __name__ == "__main__":
    sys.exit(main())
