"""How a judging strategy decides, as pure functions of verdicts already given.

A run with `--strategy cascade|router` (fanout.engine) and the report's
replay of a policy over a run that asked every model (`fanout report
--policy`) call the same functions here, so a replayed policy scores exactly
what a run of it would have done: same order, same escalations, same choices.

Seed 003 names the parts: a committee that pauses for a human on low
confidence or a close vote and passes automatically on high confidence
(Thresholds), a cascade that escalates from the cheapest model (Cascade), and
a router that sends each aspect to one model within its gate, by cost weight
or by measured accuracy (Router). Nothing here does I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from fanout.base.declare import Env, flag, setting
from fanout.base.errors import ConfigError
# An item states its own aspect (fanout.base.item); judging's readers keep importing both names from here.
from fanout.base.item import DEFAULT_GATE as DEFAULT_GATE, Aspect as Aspect
from fanout.judging.scales import stance
from fanout.base.records import VERDICTS

AUTOPASS_VERDICTS: frozenset[str] = frozenset({"verified-high", "verified-low"})
"""Verdicts a cascade may accept from one model: an edit confirmed by sources it read. A verdict
against the edit (a revert, a warning to its author) or an unsure one always gets a second opinion."""
SIMILAR_ACCURACY = 0.02
"""Measured accuracies this close count as equal, and the router then takes the cheaper model
(seed 003: prefer cheaper models when results are similar)."""


def _fraction(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{name} must be a number from 0 to 1 (got {value!r}).")
    if not 0 <= value <= 1:
        raise ConfigError(f"{name} must be from 0 to 1 (got {value:g}).")
    return float(value)


def _check_fraction(value: object, name: str) -> None:
    _fraction(value, name)


@dataclass(frozen=True)
class Thresholds:
    """When a committee's decision on an edit goes to a human, and when it passes on its own.

    Declared once (fanout.base.declare): `fanout report` and `fanout queue` take their flags from these fields,
    and seed 003's variables (JUDGE_PAUSE_THRESHOLD, JUDGE_DELTA_THRESH, JUDGE_MIN_CONF_FOR_AUTOPASS) are read as
    their defaults, a flag winning.
    """

    pause: float = setting(0.6, flag(
        "--pause", type=float, metavar="X", check=_check_fraction,
        help="pause an edit for a human when the models' mean confidence is below X: the confidence each model "
             "stated with its verdict, or with --samples 2 or more the share of its samples that agree with it; "
             "calibrated on the labels when the report has them (default {default})",
        env=(Env("JUDGE_PAUSE_THRESHOLD"),)))
    """A mean confidence below this pauses the edit for a human."""
    delta: float = setting(0.2, flag(
        "--delta", type=float, metavar="X", check=_check_fraction,
        help="pause an edit when the vote shares of its top two stances are closer than X (default {default})",
        env=(Env("JUDGE_DELTA_THRESH"),)))
    """Top two verdicts whose vote shares are closer than this pause the edit too."""
    autopass: float = setting(0.9, flag(
        "--autopass", type=float, metavar="X", check=_check_fraction,
        help="pass an edit without a human when nothing paused it and the mean confidence is at least X "
             "(default {default})",
        env=(Env("JUDGE_MIN_CONF_FOR_AUTOPASS", note="the committee's threshold; a cascade's `fanout run "
                                                       "--autopass` is its own"),)))
    """A mean confidence at least this passes the edit without a human (when nothing paused it)."""

    def __post_init__(self) -> None:
        _fraction(self.pause, "--pause")
        _fraction(self.delta, "--delta")
        _fraction(self.autopass, "--autopass")
        if self.pause > self.autopass:
            raise ConfigError(f"--pause ({self.pause:g}) must not be above --autopass ({self.autopass:g}).")


class Judged(Protocol):
    """What the policies read of a record (fanout.base.records.VerdictRecord has it)."""

    @property
    def model(self) -> str: ...
    @property
    def verdict(self) -> str | None: ...


def confidence(record: Judged) -> float | None:
    """The confidence thresholds read: with `--samples N` (N > 1) the share of the model's samples that
    agree with its verdict (its stability); with one sample the confidence the model stated with it.

    A single sample agrees with itself whatever the model's doubt, so stability measures nothing there;
    the model's own word is what there is (seed 003: each run gives its answer and a confidence). None
    for no verdict, and for a verdict asked once whose model stated no confidence (records written
    before fanout asked for one): a threshold then neither passes nor pauses on it, and a cascade wants
    a second model's word.
    """
    if record.verdict is None:
        return None
    stability: float | None = getattr(record, "stability", None)
    if stability is not None:
        return stability
    stated: float | None = getattr(record, "confidence", None)
    return stated


def confidence_kind(record: Judged) -> str:
    """What confidence(record) read, in the words reasons use: `stability` or `stated confidence`."""
    return "stability" if getattr(record, "stability", None) is not None else "stated confidence"


# --- aspects -----------------------------------------------------------------------------------------


TERM_DIFF_PREFIXES = ("label_", "description_", "alias_", "sitelink_", "lemma_", "form_", "sense_")
"""Change types of edits that touch no statement (their property is null): the `term` aspect; the last three are
a lexeme's."""


def is_term_diff(diff_type: str) -> bool:
    """True for label, description, alias and sitelink changes (no statement involved)."""
    return diff_type.startswith(TERM_DIFF_PREFIXES)


_QID = re.compile(r"[QL]\d+(-[FS]\d+)?")
_PID = re.compile(r"P\d+")
_TIME = re.compile(r"[+-]\d{1,16}-\d\d-\d\dT")
_QUANTITY = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?")
_COORDINATE = re.compile(r"-?\d+(\.\d+)?,\s*-?\d+(\.\d+)?")


def infer_datatype(value: object) -> str:
    """The Wikidata datatype a value's shape shows, for snapshots that do not name it."""
    if isinstance(value, bool) or value is None:
        return "unknown"
    if isinstance(value, (int, float)):
        return "quantity"
    text = str(value).strip()
    for pattern, datatype in ((_QID, "wikibase-item"), (_PID, "wikibase-property"), (_TIME, "time"),
                              (_QUANTITY, "quantity"), (_COORDINATE, "globe-coordinate")):
        if pattern.fullmatch(text) or (datatype == "time" and pattern.match(text)):
            return datatype
    if text.startswith(("http://", "https://")):
        return "url"
    return "string"


def aspect_of(property_datatype: str | None, value: object, change: str | None, *, term_edit: bool) -> Aspect:
    """An edit's aspect: `term` for labels, descriptions, aliases and sitelinks, else the property's
    datatype (as the snapshot names it, or as the value's shape shows it), with the change type."""
    if term_edit:
        datatype = "term"
    else:
        datatype = property_datatype or infer_datatype(value)
    return Aspect(datatype, change or "unknown")


# --- cascade -----------------------------------------------------------------------------------------


def check_autopass(autopass: float, verdicts: frozenset[str]) -> None:
    """The cascade's acceptance rule: a confidence from 0 to 1, and verdicts of the scale."""
    _fraction(autopass, "--autopass")
    unknown = sorted(set(verdicts) - set(VERDICTS))
    if unknown:
        raise ConfigError(f"--autopass-verdicts: {', '.join(unknown)} is not a verdict; use {', '.join(VERDICTS)}.")


class Ask(NamedTuple):
    """The cascade's next step: ask this model, for this reason."""

    model: str
    reason: str


class Settled(NamedTuple):
    """The cascade's answer for an edit."""

    verdict: str | None
    reason: str
    agreed: bool
    """Accepted on one model's confident verdict or two models' agreement; False when the last model
    answered with no agreement (the verdict is then the last one's, and a human should look)."""
    by: tuple[str, ...] = ()
    """The models whose records the verdict rests on: the confident one, the agreeing two, or every model asked."""


@dataclass(frozen=True)
class Cascade:
    """Ask the cheapest model first; accept a confident auto-pass verdict, else escalate until two agree."""

    order: tuple[str, ...]
    """Models, cheapest first."""
    autopass: float = Thresholds.autopass
    autopass_verdicts: frozenset[str] = AUTOPASS_VERDICTS

    def __post_init__(self) -> None:
        if not self.order:
            raise ConfigError("a cascade needs at least one model.")
        if len(set(self.order)) != len(self.order):
            raise ConfigError(f"a cascade names a model twice: {', '.join(self.order)}.")
        check_autopass(self.autopass, self.autopass_verdicts)

    def next_step(self, answered: Sequence[Judged]) -> Ask | Settled:
        """What to do after the models in `answered` (in cascade order) gave their records."""
        if not answered:
            return Ask(self.order[0], "cheapest model first")
        latest = answered[-1]
        accepted = self._accepted(latest)
        if accepted is not None:
            return accepted
        agreeing = self._agreeing(answered)
        if agreeing is not None:
            return agreeing
        if len(answered) >= len(self.order):
            return Settled(latest.verdict, f"no two of {len(answered)} models agreed; the last model's verdict stands",
                           agreed=False, by=tuple(a.model for a in answered))
        return Ask(self.order[len(answered)], self._why_escalate(latest))

    def _accepted(self, record: Judged) -> Settled | None:
        sure = confidence(record)
        if record.verdict in self.autopass_verdicts and sure is not None and sure >= self.autopass:
            return Settled(record.verdict, f"{record.model} said {record.verdict} at {confidence_kind(record)} {sure:.2f}",
                           agreed=True, by=(record.model,))
        return None

    @staticmethod
    def _agreeing(answered: Sequence[Judged]) -> Settled | None:
        latest = answered[-1]
        side = stance(latest.verdict)
        for earlier in answered[:-1]:
            if side is not None and stance(earlier.verdict) == side:
                return Settled(latest.verdict, f"{earlier.model} and {latest.model} agree ({side})", agreed=True,
                               by=(earlier.model, latest.model))
        return None

    def _why_escalate(self, record: Judged) -> str:
        if record.verdict is None:
            return f"{record.model} gave no verdict"
        if record.verdict not in self.autopass_verdicts:
            return f"{record.model} said {record.verdict}, which does not pass on one model's word"
        sure = confidence(record)
        if sure is None:
            return f"{record.model} said {record.verdict} with no confidence (none stated, and no --samples 2 or more)"
        return (f"{record.model} said {record.verdict} at {confidence_kind(record)} {sure:.2f}, "
                f"below --autopass {self.autopass:g}")


def cheapest_first(models: Sequence[str], cost: Mapping[str, float | None]) -> tuple[str, ...]:
    """Models by cost per verdict, cheapest first; a model of unknown cost goes last (it may be dear),
    and equal costs keep the given order."""
    def key(item: tuple[int, str]) -> tuple[bool, float, int]:
        index, model = item
        known = cost.get(model)
        return (known is None, known or 0.0, index)

    return tuple(model for _, model in sorted(enumerate(models), key=key))


# --- router ------------------------------------------------------------------------------------------


class Route(NamedTuple):
    model: str
    reason: str


@dataclass(frozen=True)
class Router:
    """One model per edit: within the aspect's gate, the most accurate (when measured), else the cheapest."""

    models: tuple[str, ...]
    """Every model the router may choose, in the run's order."""
    cost: Mapping[str, float | None]
    """Cost weight per model (lower is cheaper): a price or a measured cost per verdict."""
    gates: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Gate key (`datatype/change`, `datatype`, `change` or `*`) -> models allowed for it."""
    accuracy: Mapping[tuple[str, str], float] = field(default_factory=dict)
    """(aspect key, model) -> accuracy measured on a labelled earlier run."""

    def __post_init__(self) -> None:
        if not self.models:
            raise ConfigError("a router needs at least one model.")
        for key, allowed in self.gates.items():
            unknown = [m for m in allowed if m not in self.models]
            if unknown:
                raise ConfigError(f"gate {key!r} names {', '.join(unknown)}, which is not among the run's models "
                                  f"({', '.join(self.models)}).")
            if not allowed:
                raise ConfigError(f"gate {key!r} allows no model; name at least one or leave the key out.")

    def gate(self, aspect: Aspect) -> tuple[str, tuple[str, ...]]:
        """The gate that holds for the aspect (its key and models); no gate allows every model."""
        for key in aspect.keys():
            if key in self.gates:
                return key, self.gates[key]
        return DEFAULT_GATE, self.models

    def choose(self, aspect: Aspect) -> Route:
        key, allowed = self.gate(aspect)
        by_cost = cheapest_first(allowed, self.cost)
        measured = {m: self._accuracy(aspect, m) for m in by_cost}
        known = {m: a for m, a in measured.items() if a is not None}
        if not known:
            return Route(by_cost[0], f"cheapest allowed for {aspect} (gate {key!r})")
        best = max(known.values())
        chosen = next(m for m in by_cost if m in known and known[m] >= best - SIMILAR_ACCURACY)
        return Route(chosen, f"accuracy {known[chosen]:.2f} on {aspect} (best {best:.2f}; gate {key!r})")

    def _accuracy(self, aspect: Aspect, model: str) -> float | None:
        """The most specific measured accuracy for the aspect."""
        for key in aspect.keys():
            if (key, model) in self.accuracy:
                return self.accuracy[(key, model)]
        return None


DEFAULT_TARGET = 0.95
"""The agreement the report and the desk measure progress against when --target-agreement is not given."""
GUARANTEE_GROUP = "decisions with a guarantee"
"""Where --target-agreement and --risk are listed in a command's --help."""


def _strictly_between_0_and_1(value: float | None, name: str) -> None:
    if value is not None and not 0 < value < 1:
        raise ConfigError(f"{name} must be strictly between 0 and 1, got {value}.")


@dataclass(frozen=True)
class GuaranteeSettings:
    """Certified auto-decisions (docs/decisions.md): the decision rule's settings, beside its thresholds, read by
    the report, the queue, the desk and compare (fanout.report.guarantee applies them)."""

    target_agreement: float | None = setting(None, flag(
        "--target-agreement", type=float, metavar="A", check=_strictly_between_0_and_1, group=GUARANTEE_GROUP,
        help="decide an edit alone only where a certificate says the committee agrees with people at rate at "
             "least A (e.g. 0.95), from the run's human decisions drawn at random (reviews.jsonl, else a labels "
             "file): the certified confidence threshold of auto-accept and of auto-reject replaces --autopass, "
             "and a rule with too few decisions to certify decides nothing alone"))
    risk: float = setting(0.1, flag(
        "--risk", type=float, metavar="D", check=_strictly_between_0_and_1, group=GUARANTEE_GROUP,
        help="the chance, at most, that a certificate is wrong (default {default}); each rule on its own"))

    @property
    def applied(self) -> bool:
        return self.target_agreement is not None

    @property
    def target(self) -> float:
        return DEFAULT_TARGET if self.target_agreement is None else self.target_agreement
