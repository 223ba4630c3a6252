"""Stepping: a judging strategy at run time, which model an edit asks next, from the records it already has.

The decisions are the strategy's (fanout.judging), the same the report's
replay asks, so a run and a replay of the same policy agree. This module
adds what only a run needs: each model's cost
per verdict for the cascade's order and the router's weights, an edit's
records rebuilt from the log on resume, and the step and reason each record
carries.

Statuses. A step whose record has no verdict (timeout, incomplete,
invalid_json, refused) is an answer without a verdict: the cascade escalates
and says so. A record whose status `--retry` runs again (`error` by default)
is not an answer: the edit waits there for the rest of the session, and on
resume that same model is asked again at the same step, as `--strategy all`
retries it; the cascade then goes on from the new result. Only an edit's
last step is retried: the steps after an earlier one were already chosen on it.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio

from fanout.engine.settings import RunSettings
from fanout.judging.strategy import Answer, Plan
from fanout.llm.cost import Pricing
from fanout.llm.models import ModelSpec
from fanout.base.item import Item, item_keys
from fanout.base.records import Escalation, VerdictRecord
from fanout.store.log_index import LogIndex

PROMPT_TOKENS_PER_VERDICT = 14_000
COMPLETION_TOKENS_PER_VERDICT = 250
"""The token mix that turns prices into a cost per verdict: `make demo` spent 663 k prompt and 10 k
completion tokens on 48 verdicts (an investigation resends its growing conversation every turn)."""
MIN_MEASURED = 3
"""Records with a known cost a model needs in this run before their mean replaces its price estimate."""


def price_per_verdict(spec: ModelSpec) -> float | None:
    """A verdict's cost from the model's prices and the token mix above; None without both prices."""
    if spec.input_price is None or spec.output_price is None:
        return None
    return (spec.input_price * PROMPT_TOKENS_PER_VERDICT + spec.output_price * COMPLETION_TOKENS_PER_VERDICT) / 1e6


def cost_per_verdict(models: Sequence[ModelSpec], answered: Mapping[int, Sequence[Answer]]) -> dict[str, float | None]:
    """Each model's cost per verdict: the mean reported cost of its records in this run when it has
    MIN_MEASURED of them, else the estimate from its prices.

    The run's own mean wins because it holds what prices cannot: how many tokens the model really
    spends on these edits (a verbose model investigates longer), and the provider's real bill.
    """
    spent: dict[str, float] = dict.fromkeys((m.name for m in models), 0.0)
    counted: Counter[str] = Counter()
    for answers in answered.values():
        for answer in answers:
            if answer.cost_usd is not None:
                spent[answer.model] = spent.get(answer.model, 0.0) + answer.cost_usd
                counted[answer.model] += 1
    return {m.name: spent[m.name] / counted[m.name] if counted[m.name] >= MIN_MEASURED else price_per_verdict(m)
            for m in models}


def answers_of(log: Path, index: LogIndex, key: int, models: Sequence[str], strategy: str) -> list[Answer]:
    """One item's answers from the log (the latest record of each of its pairs of this strategy), in step order:
    a pread per model that has one, for an item a live source hands over again after a restart."""
    spans = [span for model in models if (span := index.latest_span((key, model))) is not None]
    if not spans:
        return []
    answers = []
    with log.open("rb") as fh:
        for start, end in spans:
            fh.seek(start)
            record = VerdictRecord.from_dict(json.loads(fh.read(end - start)))
            if record.strategy == strategy:
                answers.append(Answer.of(record))
    return sorted(answers, key=lambda a: a.step)


def logged_answers(log: Path, index: LogIndex, edits: Sequence[Item], strategy: str) -> dict[int, list[Answer]]:
    """Each edit's answers from the log (the latest record of each pair of this strategy), in step order.

    Only the lines the index names as latest are read, one pread each, so a
    resume reads the records of the edits in scope and nothing else.
    """
    rcids = set(item_keys(edits))
    answered: dict[int, list[Answer]] = {}
    if not log.exists():
        return answered
    fd = os.open(log, os.O_RDONLY)
    try:
        for position in index.latest_positions():
            span = index.span(position)
            if span is None:
                continue
            record = VerdictRecord.from_dict(json.loads(os.pread(fd, span[1] - span[0], span[0])))
            if record.edit_rcid in rcids and record.strategy == strategy:
                answered.setdefault(record.edit_rcid, []).append(Answer.of(record))
    finally:
        os.close(fd)
    for answers in answered.values():
        answers.sort(key=lambda a: a.step)
    return answered


async def open_tracker(log: Path, index: LogIndex, items: Sequence[Item], settings: RunSettings,
                       pricing: Pricing | None) -> Tracker | None:
    """Under --strategy cascade|router: each item's answers so far, read from the log (in a thread: a resume of a
    long run reads many lines), the models' costs per verdict, and from them each item's next step."""
    strategy = settings.strategy
    if strategy.asks_every_model:
        return None
    answered = await anyio.to_thread.run_sync(lambda: logged_answers(log, index, items, strategy.name)) if items else {}
    priced = [(pricing.models.get(m.name, m) if pricing else m) for m in settings.models]
    plan = strategy.plan([m.name for m in settings.models], cost_per_verdict(priced, answered), settings.retry_statuses)
    if plan is None:
        return None
    return Tracker(strategy.name, plan, settings.retry_statuses, items, answered)


class Tracker:
    """One run's strategy state: each unsettled edit's answers, the step each asked pair carries, and
    how far the edits went (for the progress line and the last lines)."""

    def __init__(self, name: str, plan: Plan, retry_statuses: frozenset[str], edits: Sequence[Item],
                 answered: Mapping[int, Sequence[Answer]]) -> None:
        self.name = name
        self.plan = plan
        self.retry_statuses = retry_statuses
        self._edits = edits
        self._answers: dict[int, list[Answer]] = {}
        self._asked: dict[tuple[int, str], Escalation] = {}
        self.settled_at: Counter[int] = Counter()
        """Edits settled, by the number of models asked (step 1 = the first model's answer sufficed)."""
        self.escalations = 0
        """Steps past the first that were asked (this run, the log's included)."""
        self.waiting_retry = 0
        """Edits whose last step ended in a status --retry runs again: they go on at the next resume."""
        self._first = self._first_steps(answered)

    def _first_steps(self, answered: Mapping[int, Sequence[Answer]]) -> list[tuple[int, str]]:
        first = []
        for index, edit in enumerate(self._edits):
            model = self._start(index, edit, list(answered.get(edit.key, ())))
            if model is not None:
                first.append((index, model))
        return first

    def _start(self, index: int, edit: Item, answers: list[Answer]) -> str | None:
        """The model an edit asks first in this session, given its answers in the log; None when it is settled."""
        self.escalations += sum(a.step > 1 for a in answers)
        step = self.plan.resume_step(edit, answers)
        if step is None:
            self.settled_at[len(answers)] += 1
            return None
        self.escalations += step.escalation.step > max(len(answers), 1)  # a new step past the first
        self._answers[index] = [a for a in answers if a.step < step.escalation.step]
        self._asked[(index, step.model)] = step.escalation
        return step.model

    def first_steps(self) -> list[tuple[int, str]]:
        """(edit index, model) of each edit's next step when the run starts, in edit order."""
        return self._first

    def add(self, index: int, edit: Item, answers: Sequence[Answer] = ()) -> str | None:
        """An item a live source handed over (fanout.engine.intake), with its answers in the log if it had any:
        the model it asks first, or None when those settle it."""
        return self._start(index, edit, sorted(answers, key=lambda a: a.step))

    def tag(self, index: int, record: VerdictRecord) -> None:
        """Stamp a record with the strategy, the edit's aspect and the step it answers."""
        record.strategy = self.name
        record.escalation = self._asked.pop((index, record.model), None)

    def logged(self, index: int, record: VerdictRecord) -> str | None:
        """The record is in the log: the model the edit asks next, or None (settled, or waiting for a resume)."""
        answers = self._answers.setdefault(index, [])
        answers.append(Answer.of(record))
        step = self.plan.next_step(self._edits[index], answers)
        if step is None:
            if answers[-1].status in self.retry_statuses:
                self.waiting_retry += 1
            else:
                self.settled_at[len(answers)] += 1
            del self._answers[index]
            return None
        self.escalations += 1
        self._asked[(index, step.model)] = step.escalation
        return step.model

    def summary(self) -> str:
        """`cascade: 40 edits settled at step 1, 7 at step 2; 12 escalations`."""
        steps = ", ".join(f"{n} at step {s}" for s, n in sorted(self.settled_at.items()) if s)
        text = f"{self.name}: {sum(n for s, n in self.settled_at.items() if s)} edit(s) settled"
        text += f" ({steps})" if steps else ""
        text += f"; {self.escalations} escalation(s)"
        if self.waiting_retry:
            text += f"; {self.waiting_retry} edit(s) wait for a resume to retry their last step"
        return text
