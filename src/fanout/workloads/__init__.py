"""The workloads: the kinds of item fanout verifies, registered by name.

patrol (SIFT-Patrol, the default: is this Wikidata edit correct?) and
claims (seed 004's FactualityEvaluator: is each claim of these texts true?). A
workload is an object of the Workload protocol (fanout.base.item); the
command line and the report pick one here, by the name a run's manifest
records (none: the default), and hand it to the engine, which imports none
of them. docs/extending.md, "A new workload", says what adding one takes.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

from fanout.base.errors import ConfigError
from fanout.base.item import DEFAULT_WORKLOAD, Workload
from fanout.workloads.claims.workload import CLAIMS
from fanout.workloads.patrol.workload import PATROL
from fanout.workloads.settings import WorkloadSettings

WORKLOADS: dict[str, Workload[Any]] = {}
"""Name -> workload, in the order registered."""


def register(workload: Workload[Any]) -> None:
    """Make a workload known by its name (a second one of the same name replaces the first)."""
    WORKLOADS[workload.name] = workload


def get_workload(name: str | None = None) -> Workload[Any]:
    """The workload of that name; None (a manifest that names none) is the default, SIFT-Patrol."""
    found = WORKLOADS.get(name or DEFAULT_WORKLOAD)
    if found is None:
        raise ConfigError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    return found


@runtime_checkable
class Configurable(Protocol):
    """A workload with settings of its own (fanout.workloads.settings): the run's make it anew."""

    def configured(self, settings: WorkloadSettings) -> Workload[Any]: ...


def workload_for(settings: WorkloadSettings) -> Workload[Any]:
    """The workload the settings name, with the settings only it reads; a ConfigError when one is given to a
    workload that has no such setting (--gate for patrol), rather than ignored."""
    workload = get_workload(settings.workload)
    if isinstance(workload, Configurable):
        return workload.configured(settings)
    given = [f"--{f.name}" for f in dataclasses.fields(settings)
             if f.name != "workload" and getattr(settings, f.name) is not None]
    if given:
        raise ConfigError(f"{given[0]} is a setting of --workload claims; the {workload.name} workload has none. "
                          "Leave it out, or add --workload claims.")
    return workload


register(PATROL)
register(CLAIMS)
