"""The run's manifest: what a run directory was started with, so a resume can't mix inputs.

A resume with a different snapshot or prompt would put verdicts about
different questions into one log; that is refused unless `--force`. The
settings are plain data the run gives (fanout.engine.settings); what a
resume may change of them is the run's to check, not the store's. Models
may be added between runs (fanning out to one more model is normal), and
every start is appended to `starts` so the history stays visible.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fanout.version import __version__
from fanout.errors import ConfigError
from fanout.store.atomic import dump_yaml, write_atomically
from fanout.store.layout import MANIFEST_NAME


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

    @property
    def total_pairs(self) -> int:
        return self.edits * len(self.models)


def load_manifest(run_dir: Path) -> Manifest | None:
    path = run_dir / MANIFEST_NAME
    if not path.exists():
        return None
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Manifest(**data)
    except (yaml.YAMLError, TypeError) as exc:
        raise ConfigError(f"{path} is not a fanout manifest ({exc}); is --run-dir the right folder?") from None


def reconcile(previous: Manifest | None, current: Manifest, *, force: bool) -> Manifest:
    """Check a resume against what the run started with; return the manifest to write."""
    if previous is None:
        return current
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
    return current


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    write_atomically(run_dir / MANIFEST_NAME, dump_yaml(dataclasses.asdict(manifest)))
