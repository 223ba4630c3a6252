"""`fanout run --dry-run`: the plan of a run, printed; nothing contacted or written (so no key is needed)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from fanout.base.item import Item, item_keys
from fanout.engine.settings import RunSettings
from fanout.judging.strategy import describe_settings
from fanout.llm.models import KNOWN_MODELS, table_suggestion
from fanout.store.checkpoint import log_path, read_index
from fanout.store.manifest import Manifest


def describe_plan(out: TextIO, snapshot_path: Path, run_dir: Path, settings: RunSettings, items: Sequence[Item],
                  manifest: Manifest) -> None:
    """What --dry-run prints: the work, and what a resume would skip. Writes nothing."""
    path = log_path(run_dir)
    index = read_index(path) if path.exists() else None
    models = settings.models
    # Only the pairs planned here: `-m X --limit 1` on a 4-model run said "Pairs: 1; already done: 12".
    keys = set(item_keys(items))
    retry = settings.retry_statuses
    done = sum(len(index.done_rcids(m.name, retry) & keys) for m in models) if index else 0
    print(f"Snapshot: {snapshot_path} ({len(items)} edits, sha256 {manifest.snapshot_sha256[:12]})", file=out)
    print(f"Models ({len(models)}): " + ", ".join(m.name for m in models), file=out)
    print(f"Pairs: {len(items) * len(models)}; already done in {run_dir}: {done}", file=out)
    for model in models:
        if model.name not in KNOWN_MODELS:
            hint = table_suggestion(model.name).replace(";", "", 1)
            print(f"warning: model {model.name} is not in fanout's model table;{hint or ''} `fanout check` asks the "
                  "endpoint's listing (a dry run contacts nothing).", file=out)
    print(f"Concurrency {settings.concurrency}, timeout {settings.verdict_timeout_s:g}s per verdict, "
          f"max lead {settings.max_lead} edits; base URL {settings.base_url}", file=out)
    if not settings.strategy.asks_every_model:
        print(f"Strategy: {describe_settings(manifest.settings['strategy'])}; it asks at most the pairs above.", file=out)
    if settings.researches_as_team:
        print(f"Evidence: team; {describe_planned_team(settings)}; each edit researched once and every model judges "
              "the pooled evidence.", file=out)
    elif settings.shares_evidence:
        investigator = settings.investigator or "the cheapest tool-capable model (chosen when the run starts)"
        print(f"Evidence: shared; {investigator} investigates each edit once and every model judges that evidence.",
              file=out)
    print("Dry run: nothing was contacted or written.", file=out)


def describe_planned_team(settings: RunSettings) -> str:
    """The team as a dry run can tell it: the members named, or how the rest will be chosen (a dry run has no prices
    from the endpoint)."""
    planner = settings.planner or "the priciest model (chosen when the run starts)"
    workers = ", ".join(settings.workers) or "two tool-calling models of different families (chosen when the run starts)"
    aggregator = f"; {settings.aggregator} summarises the workers' notes" if settings.aggregator else "; no aggregator"
    return f"{planner} plans, {workers} research at the same time, up to {settings.team_rounds} round(s){aggregator}"
