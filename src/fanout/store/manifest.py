"""The run's manifest: what a run directory was started with, so a resume can't mix inputs.

A resume with a different snapshot or prompt would put verdicts about
different questions into one log; that is refused unless `--force`. Models
may be added between runs (fanning out to one more model is normal), and
every start is appended to `starts` so the history stays visible.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fanout import __version__
from fanout.bounded import load_yaml
from fanout.store.atomic import dump_yaml, write_atomically
from fanout.store.layout import MANIFEST_NAME
from fanout.config import RunSettings
from fanout.errors import ConfigError



@dataclass
class Manifest:
    """What the run directory holds verdicts about."""

    snapshot_path: str
    snapshot_sha256: str
    edits: int
    """Edits in scope (after --limit): with the models, the run's total."""
    models: list[str]
    prompt_sha256: str
    settings: dict[str, Any]
    fanout_version: str = __version__
    starts: list[str] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    """Absolute paths of the files the run has read (snapshot, --limits, --gates, --search-config, --labels),
    over all its starts: no output option of any command may write over one (fanout.store.layout)."""

    @property
    def total_pairs(self) -> int:
        return self.edits * len(self.models)


def settings_summary(settings: RunSettings) -> dict[str, Any]:
    """The settings worth pinning, as plain data (no secrets live in RunSettings)."""
    return {
        "base_url": settings.base_url,
        "searxng_url": settings.tools.searxng_url,
        "search_providers": list(settings.tools.search_providers),
        "concurrency": settings.concurrency,
        "max_turns": settings.max_turns,
        "verdict_timeout_s": settings.verdict_timeout_s,
        "max_lead": settings.max_lead,
        "max_cost_usd": settings.max_cost_usd,
        "strategy": strategy_summary(settings),
        "samples": settings.samples,
        "swap_labels": settings.swap_labels,
        "models": {
            m.name: {k: v for k, v in dataclasses.asdict(m).items() if k != "name" and v is not None}
            for m in settings.models
        },
    }


def strategy_summary(settings: RunSettings) -> dict[str, Any]:
    """The strategy and the settings its decisions read: a resume must decide as the run began."""
    summary: dict[str, Any] = {"name": settings.strategy}
    if settings.strategy == "cascade":
        summary.update(autopass=settings.autopass, autopass_verdicts=sorted(settings.autopass_verdicts))
    if settings.strategy == "router":
        summary.update(gates={key: list(models) for key, models in sorted(settings.gates.items())},
                       router_accuracy=settings.router_accuracy_source)
    return summary


def describe_strategy(summary: dict[str, Any]) -> str:
    """`--strategy cascade (autopass 0.9, autopass_verdicts verified-high,verified-low)`."""
    details = [f"{key} {','.join(map(str, value)) if isinstance(value, list) else value}"
               for key, value in summary.items() if key != "name"]
    return f"--strategy {summary.get('name')}" + (f" ({'; '.join(details)})" if details else "")


def load_manifest(run_dir: Path) -> Manifest | None:
    path = run_dir / MANIFEST_NAME
    if not path.exists():
        return None
    data = load_yaml(path, f"the run's manifest {path}", fix="is --run-dir the right folder?")
    try:
        return Manifest(**data)
    except TypeError as exc:
        raise ConfigError(f"{path} is not a fanout manifest ({exc}); is --run-dir the right folder?") from None


def reconcile(previous: Manifest | None, current: Manifest, *, force: bool) -> Manifest:
    """Check a resume against what the run started with; return the manifest to write."""
    if previous is None:
        return current
    _refuse_other_strategy(previous, current)
    problems = []
    if previous.snapshot_sha256 != current.snapshot_sha256:
        problems.append(f"the snapshot differs (run started with {previous.snapshot_path})")
    if previous.prompt_sha256 != current.prompt_sha256:
        problems.append("the SIFT prompt differs from the one the run started with")
    if problems and not force:
        raise ConfigError(
            "cannot resume this run directory: " + "; ".join(problems)
            + ". Use a new --run-dir, or --force to mix them knowingly."
        )
    models = previous.models + [m for m in current.models if m not in previous.models]
    current.models = models
    current.starts = previous.starts + current.starts
    current.inputs = previous.inputs + [p for p in current.inputs if p not in previous.inputs]
    return current


def _refuse_other_strategy(previous: Manifest, current: Manifest) -> None:
    """A run's records were chosen by its strategy, and a resume rebuilds each edit's escalation from them:
    another strategy (or other settings of it) would decide on records it did not choose. Not even --force."""
    before = previous.settings.get("strategy") or {"name": "all"}
    now = current.settings.get("strategy") or {"name": "all"}
    if before != now:
        raise ConfigError(f"cannot resume this run directory with {describe_strategy(now)}: it was started with "
                          f"{describe_strategy(before)}. Resume with those settings, or use a new --run-dir.")


def run_inputs(run_dir: Path) -> dict[Path, str]:
    """The files a run reads, each with what it is, for refuse_run_file: none may be written over."""
    try:
        manifest = load_manifest(run_dir)
    except ConfigError:
        return {}  # report reads on without it; an output still may not replace a file it did not write
    if manifest is None:
        return {}
    found = {Path(manifest.snapshot_path): f"the snapshot of the run {run_dir}"}
    found.update((Path(p), f"an input of the run {run_dir} (its manifest lists it)") for p in manifest.inputs)
    return found


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(run_dir / MANIFEST_NAME, dump_yaml(dataclasses.asdict(manifest)))
