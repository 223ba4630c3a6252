"""Module names say what they hold: two modules share a file name only where their folders make the meaning plain.

A file name shared across folders is allowed in three cases, and only these:

- `cli/` modules are named after the command they run (`cli/status.py` is `fanout status`),
  so they may share a name with the library module the command calls;
- `sim/` modules are the simulator's stand-ins for the real thing (`sim/eventstream.py`
  serves what `wikidata/eventstream.py` reads), so they mirror real names on purpose;
- the names in SAME_JOB_IN_EACH_FOLDER below, where each folder holds its own instance of one
  kind of thing (its errors, its settings, its registry of plug-ins, ...).

Any other collision fails here: rename the new module for what it holds (`tools/download.py`,
not a second `fetch.py`), or, if the folders really do make the meaning plain, add it to the list
with the reason.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import fanout

PACKAGE = Path(fanout.__file__).parent

PACKAGE_FILES = frozenset({"__init__.py", "__main__.py"})
"""Python's own names: every package has an __init__."""

MIRRORING_FOLDERS = frozenset({"cli", "sim"})
"""cli/ modules are named after commands, sim/ modules after what they stand in for."""

SAME_JOB_IN_EACH_FOLDER: dict[str, tuple[frozenset[str], str]] = {
    "errors.py": (frozenset({"base", "wikidata"}),
                  "the failures of that folder: base's hierarchy, and Wikidata's errors that subclass it"),
    "keys.py": (frozenset({"llm", "tools/providers"}),
                "which API key from the environment goes to which service: chat endpoints, search providers"),
    "registry.py": (frozenset({"judging", "tools/providers"}),
                    "that folder's plug-ins by name: judging strategies, search providers"),
    "settings.py": (frozenset({"engine", "tools", "workloads", "workloads/patrol/live"}),
                    "that folder's settings object: RunSettings for a run, ToolSettings for the web tools, "
                    "WorkloadSettings for what only a workload reads, WatchSettings for `fanout watch`"),
    "source.py": (frozenset({"workloads/claims", "workloads/patrol/live"}),
                  "a workload's source of items (fanout.base.item.ItemSource): the claims' texts, the live stream"),
    "clients.py": (frozenset({"engine", "workloads/patrol/live"}),
                   "the HTTP clients that folder opens and owns: a run's (chat, tools), a watch's (stream, Lift Wing)"),
    "workload.py": (frozenset({"workloads/claims", "workloads/patrol"}),
                    "each workload's object behind the seam (fanout.base.item.Workload)"),
    "describe.py": (frozenset({"workloads/claims", "workloads/patrol"}),
                    "each workload's description of an item for people (the report, queue, desk, compare)"),
    "prompt.py": (frozenset({"workloads/claims", "workloads/patrol"}), "each workload's prompt text and its hash"),
}
"""Names where each folder holds its own instance of the same kind of thing, with the reason."""


def module_folders(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module file name -> the folders (relative to the package) that hold one."""
    folders: dict[str, set[str]] = defaultdict(set)
    for path in package.rglob("*.py"):
        folder = path.parent.relative_to(package).as_posix()
        folders[path.name].add(folder)
    return folders


def colliding_names(package: Path = PACKAGE) -> dict[str, frozenset[str]]:
    """Names held by more than one folder, leaving out package files and the mirroring folders."""
    collisions: dict[str, frozenset[str]] = {}
    for name, folders in module_folders(package).items():
        if name in PACKAGE_FILES:
            continue
        real = frozenset(f for f in folders if f.split("/")[0] not in MIRRORING_FOLDERS)
        if len(real) > 1:
            collisions[name] = real
    return collisions


def test_no_two_modules_share_a_file_name_unless_their_folders_make_the_meaning_plain() -> None:
    explained = {name: allowed for name, (allowed, _) in SAME_JOB_IN_EACH_FOLDER.items()}
    unexplained = {name: sorted(folders) for name, folders in colliding_names().items()
                   if not folders <= explained.get(name, frozenset())}
    assert unexplained == {}


def test_every_explained_name_is_still_held_by_the_folders_it_names() -> None:
    folders = module_folders()
    stale = {name: sorted(allowed - folders.get(name, set()))
             for name, (allowed, _) in SAME_JOB_IN_EACH_FOLDER.items() if not allowed <= folders.get(name, set())}
    assert stale == {}


def test_the_check_finds_a_collision_of_real_modules_and_lets_commands_and_stand_ins_pass(tmp_path: Path) -> None:
    names = {"engine/status.py", "cli/status.py", "tools/status.py", "sim/models.py", "llm/models.py"}
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    assert colliding_names(tmp_path) == {"status.py": frozenset({"engine", "tools"})}
