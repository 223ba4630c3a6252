"""The workload a run verifies, and the settings only a workload has: declared once, as a run's are.

`--workload NAME` picks one of the registry's (fanout.workloads): patrol,
the default, or claims. The manifest records it at its top (`workload:`,
only when it is not patrol, so older manifests read as they always did), and
a resume with another is refused. `--extractor MODEL` is the claims
workload's (the model that splits texts into claims; pinned in the manifest's
`preparation`); `--gate THRESHOLD` is what `fanout run` checks at the end of
a claims run (fanout.report.gate). Neither means anything to patrol, which
refuses them in one line rather than ignore them.
"""

from __future__ import annotations

from dataclasses import dataclass

from fanout.base.declare import check_declared, flag, setting
from fanout.base.errors import ConfigError
from fanout.base.item import DEFAULT_WORKLOAD
from fanout.base.validate import require_not_negative

WORKLOAD = "workload"
"""The section of `fanout run --help` these options are listed in."""


def _known_names() -> str:
    from fanout.workloads import WORKLOADS  # the registry imports its workloads; help is asked for only when shown

    return ", ".join(WORKLOADS)


def _gate(value: float | None, name: str) -> None:
    require_not_negative(value, name)
    if value is not None and value > 1:
        raise ConfigError(f"{name} is a share of claims, from 0 to 1 (got {value:g}).")


@dataclass(frozen=True)
class WorkloadSettings:
    """What a run verifies, and its workload's own settings."""

    workload: str = setting(DEFAULT_WORKLOAD, flag(
        "--workload", metavar="NAME", group=WORKLOAD,
        help=lambda: f"what to verify: {_known_names()} (default {DEFAULT_WORKLOAD}: the Wikidata edits of an "
                     "enriched snapshot; claims: a file of texts, split into claims first, docs/claims.md)"))
    """The registry's name of the workload (fanout.workloads.get_workload)."""
    extractor: str | None = setting(None, flag(
        "--extractor", metavar="MODEL", group=WORKLOAD,
        help="claims: the model that splits each text into claims (default: the run's cheapest tool-capable "
             "model, in the cascade's cost order); pinned in the manifest"))
    """The claims workload's extractor; None = the run's cheapest tool-capable model, chosen when the run starts."""
    gate: float | None = setting(None, flag(
        "--gate", type=float, metavar="THRESHOLD", group=WORKLOAD, check=_gate,
        help="claims: exit 1 when a text's committee factuality (share of its claims supported) is below THRESHOLD, "
             "0 to 1, and write those texts with their refuted and unsure claims to the run's quarantine.json"))
    """The factuality below which a text fails the run (fanout.report.gate); None: no gate."""

    def __post_init__(self) -> None:
        check_declared(self)
