"""A workload's preparation step: paid model work on its input before any of its items exists.

The claims workload's items are the claims a model splits each text into:
they exist only after that call. An input that needs such a step has
`prepare` (the `Prepares` protocol); the engine calls it once per start,
after the run directory is its own (the lock held, the log recovered, cut-off
attempts settled) and the run's clients are made and checked, and before it
schedules any verdict. It hands the step a `Preparation`: the run's chat
client and checked models, the model to use when the user named none, the
run directory, the spend so far against --max-cost, the verdict timeout
(one preparation call is bounded like one verdict), the concurrency, how
many items the run will judge (--limit), and the pins to check before
spending anything.

What the step makes it logs durably itself (fanout.store.prepared), so a
kill never repeats a paid step whose result was logged and never loses an
item: the engine then reads the input's items again, and judges them as it
judges any other. This module names no workload: it is the contract.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from fanout.llm.chat import ChatClient
from fanout.llm.models import ModelSpec
from fanout.store.attempts import AttemptFile, discard_attempt
from fanout.store.layout import INFLIGHT_DIR, own_folder

PREPARATION_SUFFIX = " (preparation)"
"""How a preparation call's in-flight file names its model (beside a shared investigation's " (investigation)"),
so the report counts a cut-off one with the preparations, not as a verdict of the model."""


@dataclass
class PreparationSpend:
    """What the run has spent, against --max-cost: the logs' total when the step began, and its own calls since."""

    cap_usd: float | None
    before_usd: float
    spent_usd: float = 0.0
    """This step's calls in this session."""
    on_spent: Callable[[float], None] | None = None
    """Told what each unit cost (the progress display's spend)."""

    def add(self, usd: float | None) -> None:
        self.spent_usd += usd or 0.0
        if self.on_spent is not None:
            self.on_spent(usd or 0.0)

    @property
    def reached(self) -> bool:
        """Whether no more paid work may start: the cap is met by what is logged and spent."""
        return self.cap_usd is not None and self.before_usd + self.spent_usd >= self.cap_usd


@dataclass
class Preparation:
    """What the run hands a workload's preparation step."""

    chat: ChatClient
    models: Sequence[ModelSpec]
    """The run's models, as the pre-flight checked them (prices, tool support), in the order given."""
    default_model: str
    """The model the step uses when the user named none: the run's cheapest tool-capable model, in the cascade's
    cost order (as --evidence shared chooses its investigator)."""
    run_dir: Path
    spend: PreparationSpend
    timeout_s: float
    """One unit's bound: the verdict timeout (--timeout)."""
    concurrency: int
    """Units prepared at once (--concurrency)."""
    limit: int | None = None
    """--limit: the run judges only this many items, so the step may stop once it has made them."""
    pinned: Mapping[str, Any] = field(default_factory=dict)
    """What an earlier start pinned (the manifest's `preparation`): a resume that names nothing uses the same."""
    say: Callable[[str], None] = print
    """A line for the user (the run's output)."""
    check_pins: Callable[[Mapping[str, Any]], None] = field(default=lambda pins: None)
    """Called with what would change the items (the model doing the work, its prompt's hash) before any paid
    call: refuses in a ConfigError a resume that changes them (unless --allow-settings-change), and pins them in
    the manifest."""

    def model(self, name: str) -> ModelSpec:
        """The run's checked spec of a model, or a plain one for a model the run does not judge with."""
        return next((m for m in self.models if m.name == name), ModelSpec(name))

    def attempt(self, key: int, model: str) -> AttemptFile:
        """Where one unit's chat calls are written down as they happen, so a kill cannot hide what they cost
        (fanout.store.attempts); its id goes into the unit's logged line (`attempt`)."""
        own_folder(self.run_dir, INFLIGHT_DIR)  # a run made it when it settled the last stop's attempts; a caller alone may not
        return AttemptFile(self.run_dir, key, model + PREPARATION_SUFFIX, 0)

    def settled(self, key: int, model: str) -> None:
        """The unit's line is logged: its in-flight file has nothing left to tell."""
        discard_attempt(self.run_dir, key, model + PREPARATION_SUFFIX)


@dataclass(frozen=True)
class Prepared:
    """What a preparation step did this start, for the run's output and the manifest."""

    units: int
    """Units prepared now (paid for in this session)."""
    failed: int = 0
    """Units whose preparation failed (logged, and tried again on the next start)."""
    skipped: int = 0
    """Units left for a later start: --max-cost reached, or --limit already met."""


@runtime_checkable
class Prepares(Protocol):
    """An opened input whose items exist only after a preparation step (the claims of texts)."""

    async def prepare(self, preparation: Preparation) -> Prepared:
        """Make and log the items still missing; afterwards `items` holds every item made so far."""
        ...

    def pending(self) -> str | None:
        """What preparation is still to be done, in words for `--dry-run` (None: nothing)."""
        ...
