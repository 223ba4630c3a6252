"""The factuality of a group of judged statements: how many are supported, refuted or unsure, and the share supported.

A text's claims are judged one by one, each by every model and by the
committee. What a text comes to, for one judge (a model, or the committee):

    claims      the statements of the group
    judged      those the judge gave a stance (accept, unsure or reject)
    supported   judged accept (verified-high, verified-low, plausible)
    refuted     judged reject (suspect, incorrect)
    unsure      judged unsure (unverifiable)
    factuality  supported / judged: FActScore's measure (Min et al. 2023), the share of a text's atomic facts
                that are supported, with an unsure claim counted as not supported; None with nothing judged
    interval    Wilson's 95 % interval of that share, as if the judged claims were independent draws (they are
                not quite: one text's claims share a subject, so read it as a floor on the uncertainty)
    confidence  the mean confidence of the judge in its stances, over the judged claims that state one

and the explanation names each refuted claim with its sources, then the
unsure ones. Pure: it takes the judgements and renders nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from fanout.stats.uncertainty import wilson_interval

ACCEPT, UNSURE, REJECT = "accept", "unsure", "reject"
SHOWN_SOURCES = 3
"""Sources named per claim in an explanation (all of them are in the data)."""


class Judgement(NamedTuple):
    """One statement as one judge decided it."""

    group: str
    """What it belongs to (the text's id)."""
    key: int
    statement: str
    stance: str | None
    """accept, unsure or reject; None when the judge gave none (not asked, or no verdict)."""
    confidence: float | None
    evidence: tuple[str, ...] = ()
    """The rationales behind the stance (the committee's: those of the models that took it)."""
    sources: tuple[str, ...] = ()
    """The URLs cited for the stance, each once."""


class GroupFactuality(NamedTuple):
    group: str
    subject: str
    """The judge: a model's name, or `committee`."""
    claims: int
    judged: int
    supported: int
    refuted: int
    unsure: int
    factuality: float | None
    low: float | None
    high: float | None
    confidence: float | None
    sources_consulted: int
    """Distinct sources cited for the group's stances."""
    explanation: str


def group_factuality(group: str, subject: str, judgements: Sequence[Judgement]) -> GroupFactuality:
    """What one judge's stances on a group's statements come to."""
    stances = [j.stance for j in judgements]
    judged = sum(s is not None for s in stances)
    supported, refuted = stances.count(ACCEPT), stances.count(REJECT)
    return GroupFactuality(
        group, subject, len(judgements), judged, supported, refuted, stances.count(UNSURE),
        *_share_supported(supported, judged), _mean_confidence(judgements), _sources_consulted(judgements),
        explanation(judgements),
    )


def _share_supported(supported: int, judged: int) -> tuple[float | None, float | None, float | None]:
    """The factuality and its Wilson interval (low, high); all None with nothing judged, not a share of zero."""
    interval = wilson_interval(supported, judged)  # None exactly when nothing was judged
    if interval is None:
        return None, None, None
    return supported / judged, interval[0], interval[1]


def _mean_confidence(judgements: Sequence[Judgement]) -> float | None:
    """Over the judged statements that state a confidence: an unjudged one's confidence says nothing of a stance."""
    stated = [j.confidence for j in judgements if j.stance is not None and j.confidence is not None]
    return sum(stated) / len(stated) if stated else None


def _sources_consulted(judgements: Sequence[Judgement]) -> int:
    """Distinct URLs cited for the stances taken (a source cited for two statements counts once)."""
    return len({url for j in judgements if j.stance is not None for url in j.sources})


def explanation(judgements: Sequence[Judgement]) -> str:
    """`4 of 6 claims supported, 1 refuted, 1 unsure. Refuted: "..." (sources: ...). Unsure: "..."`."""
    judged = [j for j in judgements if j.stance is not None]
    parts = [_counts(judged, len(judgements))]
    refuted = [_named(j) for j in judged if j.stance == REJECT]
    if refuted:
        parts.append("Refuted: " + "; ".join(refuted) + ".")
    unsure = [f'"{j.statement}"' for j in judged if j.stance == UNSURE]
    if unsure:
        parts.append("Unsure: " + "; ".join(unsure) + ".")
    return " ".join(parts)


def _counts(judged: list[Judgement], claims: int) -> str:
    """The explanation's first sentence: each stance's count, and the claims no stance was given on when any."""
    counts = (f"{sum(j.stance == ACCEPT for j in judged)} of {claims} claim(s) supported, "
              f"{sum(j.stance == REJECT for j in judged)} refuted, {sum(j.stance == UNSURE for j in judged)} unsure")
    unjudged = claims - len(judged)
    return counts + (f", {unjudged} not judged" if unjudged else "") + "."


def _named(judgement: Judgement) -> str:
    shown = list(judgement.sources[:SHOWN_SOURCES])
    more = f" and {len(judgement.sources) - SHOWN_SOURCES} more" if len(judgement.sources) > SHOWN_SOURCES else ""
    cited = f" (sources: {', '.join(shown)}{more})" if shown else " (no source cited)"
    return f'"{judgement.statement}"{cited}'


def distinct(urls: Iterable[str]) -> tuple[str, ...]:
    """URLs in first-seen order, each once."""
    return tuple(dict.fromkeys(urls))
