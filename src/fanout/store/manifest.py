"""The run's manifest: what a run directory was started with, so a resume can't mix inputs.

A resume with a different snapshot, prompt or result-changing setting would
put verdicts about different questions into one log; that is refused unless
`--allow-settings-change`, and the manifest then records each change. The
settings are plain data the run gives (fanout.engine.settings); what a
resume may change of them is the run's to say (`pinned`). Models may be
added between runs of every model (fanning out to one more is normal); a
strategy that orders its models pins them. Every start is appended to
`starts` so the history stays visible.

The workload (fanout.base.item.Workload) is written only when it is not the
default, SIFT-Patrol: every manifest written before there were workloads is
one of a patrol run, and a patrol run's manifest keeps the bytes it had.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fanout.base.declare import Pins
from fanout.base.reading import load_yaml
from fanout.base.errors import ConfigError
from fanout.base.item import DEFAULT_WORKLOAD
from fanout.base.version import __version__
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
    changes: list[dict[str, Any]] = field(default_factory=list)
    """Settings a resume changed with --allow-settings-change: what, when, what it was and became."""
    inputs: list[str] = field(default_factory=list)
    """Absolute paths of the files the run has read (snapshot, --limits, --gates, --search-config, --labels),
    over all its starts: no output option of any command may write over one (fanout.store.layout)."""
    workload: str = DEFAULT_WORKLOAD
    """The workload's name (fanout.workloads); written only when it is not the default."""
    preparation: dict[str, Any] = field(default_factory=dict)
    """What made the items of a workload that prepares them (the claims workload: its extractor model and the
    extraction prompt's sha256), pinned like a setting; written only when there is some."""

    @property
    def total_pairs(self) -> int:
        return self.edits * len(self.models)


def load_manifest(run_dir: Path) -> Manifest | None:
    path = run_dir / MANIFEST_NAME
    if not path.exists():
        return None
    data = load_yaml(path, f"the run's manifest {path}", fix="is --run-dir the right folder?")
    try:
        manifest = Manifest(**data)
    except TypeError as exc:
        raise ConfigError(f"{path} is not a fanout manifest ({exc}); is --run-dir the right folder?") from None
    problem = _field_problem(manifest)
    if problem is not None:
        raise ConfigError(f"{path} is not a fanout manifest ({problem}); is --run-dir the right folder?")
    return manifest


_TEXT, _TEXTS = (str, "text"), (list, "a list of texts")
_FIELD_TYPES: dict[str, tuple[type, str]] = {
    "snapshot_path": _TEXT, "snapshot_sha256": _TEXT, "edits": (int, "a whole number"), "models": _TEXTS,
    "prompt_sha256": _TEXT, "settings": (dict, "a mapping"), "fanout_version": _TEXT, "starts": _TEXTS,
    "changes": (list, "a list of mappings"), "inputs": _TEXTS, "workload": _TEXT, "preparation": (dict, "a mapping"),
}
"""What each field of a manifest holds: one of another type (`settings: []`) once crashed resume and report."""


def _field_problem(manifest: Manifest) -> str | None:
    """The first field whose value is not of the type fanout writes, named; None when every one is."""
    for name, (kind, what) in _FIELD_TYPES.items():
        value = getattr(manifest, name)
        items = value if isinstance(value, list) else []
        item_kind = dict if name == "changes" else str
        if (not isinstance(value, kind) or isinstance(value, bool)
                or any(not isinstance(item, item_kind) for item in items)):
            shown = repr(value)
            return f"{name} should be {what}, got {shown if len(shown) <= 40 else shown[:37] + '...'}"
    return None


def reconcile(previous: Manifest | None, current: Manifest, *, pinned: Mapping[str, str], pin_models: bool,
              allow_change: bool) -> Manifest:
    """Check a resume against what the run started with; return the manifest to write.

    `pinned` maps each setting that changes results (a key of `settings`) to the flag that sets it;
    `pin_models` holds the models and their order too (a cascade's order). A change is refused in one
    line naming it, unless `allow_change`: then the manifest records what it was and what it became.
    A change of a setting pinned for good (`Pins.never`) is refused even then.
    """
    if previous is None:
        return current
    if previous.workload != current.workload:  # items of two kinds in one log: not even with allow_change
        raise ConfigError(f"cannot resume this run directory with the workload {current.workload}: it was started "
                          f"with {previous.workload}. Use a new --run-dir.")
    never = pinned.never if isinstance(pinned, Pins) else frozenset()
    fixed = _setting_changes(previous, current, {k: v for k, v in pinned.items() if k in never})
    if fixed:
        raise ConfigError("cannot resume this run directory: " + "; ".join(change["what"] for change in fixed)
                          + ", which no resume may change. Resume with the settings it started with, or use a new "
                          "--run-dir.")
    changes = _changes(previous, current, pinned, pin_models)
    if changes and not allow_change:
        raise ConfigError(
            "cannot resume this run directory: " + "; ".join(change["what"] for change in changes)
            + ". Resume with the settings it started with, use a new --run-dir, or --allow-settings-change "
            "to mix them knowingly (the manifest then records both)."
        )
    stamp = current.starts[-1] if current.starts else ""
    current.changes = previous.changes + [{**change, "at": stamp} for change in changes]
    if not pin_models:
        current.models = previous.models + [m for m in current.models if m not in previous.models]
    current.starts = previous.starts + current.starts
    current.preparation = dict(previous.preparation) | current.preparation
    current.inputs = previous.inputs + [p for p in current.inputs if p not in previous.inputs]
    return current


def _changes(previous: Manifest, current: Manifest, pinned: Mapping[str, str], pin_models: bool) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if previous.snapshot_sha256 != current.snapshot_sha256:
        found.append({"what": f"the snapshot differs (run started with {previous.snapshot_path})",
                      "was": previous.snapshot_sha256, "now": current.snapshot_sha256})
    if previous.prompt_sha256 != current.prompt_sha256:
        found.append({"what": "the SIFT prompt differs from the one the run started with",
                      "was": previous.prompt_sha256, "now": current.prompt_sha256})
    found += _setting_changes(previous, current, pinned)
    if pin_models and previous.models != current.models:
        found.append({"what": f"the models or their order differ (run started with {', '.join(previous.models)})",
                      "was": previous.models, "now": current.models})
    return found


def _setting_changes(previous: Manifest, current: Manifest, pinned: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each pinned setting whose value differs; a key a manifest lacks stands for the setting's default (a manifest
    written before the setting existed, or one recorded only when set). A resume that set min_results on a run
    whose manifest had no such key was once let through: a missing key was skipped."""
    defaults = pinned.defaults if isinstance(pinned, Pins) else {}
    absent = pinned.absent_default if isinstance(pinned, Pins) else frozenset()
    found: list[dict[str, Any]] = []
    for key, flag in pinned.items():
        if key not in previous.settings and key not in absent and key not in defaults:
            continue  # a default nobody can tell (recorded through a function of the whole settings)
        was, now = (_recorded(manifest.settings, key, absent, defaults) for manifest in (previous, current))
        if was[0] != now[0]:
            found.append({"what": f"{flag} was {was[1]} and is now {now[1]}", "was": was[0], "now": now[0]})
    return found


def _recorded(settings: Mapping[str, Any], key: str, absent: frozenset[str],
              defaults: Mapping[str, Any]) -> tuple[Any, str]:
    """A pinned setting's value as compared (None: recorded as no key), and as a message shows it."""
    if key in settings and not (key in absent and settings[key] in (defaults.get(key), {}, [], None)):
        return settings[key], str(settings[key])  # (a default recorded anyway, by an older fanout, is no key)
    value = None if key in absent else defaults.get(key)
    default = defaults.get(key)
    return value, f"{default} (the default)" if default is not None else "the default"


def check_preparation(manifest: Manifest, pins: Mapping[str, Any], *, allow_change: bool) -> None:
    """Pin what made the run's items (fanout.research.prepare.Preparation.check_pins): the first start records
    it; a resume that changes it is refused in one line, unless `allow_change`, when the manifest records the
    change as it records a setting's."""
    changed = [(key, manifest.preparation[key], value) for key, value in pins.items()
               if key in manifest.preparation and manifest.preparation[key] != value]
    if changed and not allow_change:
        what = "; ".join(f"{key} was {was} and is now {now}" for key, was, now in changed)
        raise ConfigError(f"cannot resume this run directory: {what}, so new items would be made otherwise than "
                          "the logged ones. Resume with the same, use a new --run-dir, or --allow-settings-change "
                          "to mix them knowingly (the manifest then records both).")
    stamp = manifest.starts[-1] if manifest.starts else ""
    manifest.changes += [{"what": f"{key} was {was} and is now {now}", "was": was, "now": now, "at": stamp}
                         for key, was, now in changed]
    manifest.preparation.update(pins)


def run_inputs(run_dir: Path) -> dict[Path, str]:
    """The files a run reads, each with what it is, for the output writer (fanout.store.outputs): none may be
    written over."""
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
    fields = dataclasses.asdict(manifest)
    if fields["workload"] == DEFAULT_WORKLOAD:
        del fields["workload"]  # the default's manifest keeps the bytes it had before there were workloads
    if not fields["preparation"]:
        del fields["preparation"]  # so does a run whose workload prepares nothing
    write_atomically(run_dir / MANIFEST_NAME, dump_yaml(fields))
