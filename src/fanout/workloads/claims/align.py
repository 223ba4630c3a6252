"""Matching the claims extracted from a text to the claims its input labels: truth for the report, and the
extraction's precision and recall.

A labelled claim is *covered* by an extracted one when it is the labelled
claim whose content words (lower-cased, accents folded, stopwords left out,
plurals stemmed) the extracted claim holds the largest share of, at least
MATCH of them; or when the extracted claim holds at least MERGED of its words
too (a merged claim holds each of its parts nearly whole). So "He was born in
1952" does not cover "Douglas Adams was born in 1952" (the name is what a
reader would need), "The Eiffel Tower, completed in 1889, is 330 m tall"
covers two, and "The tower was built for the 1889 World's Fair" covers that
claim only, not also "The tower was completed in 1889" (three words of four).

- An extracted claim takes the truth of the labelled claims it covers: any
  incorrect makes it incorrect, else any unverifiable makes it unverifiable,
  else correct. One that covers none has no label, unless its whole text is
  labelled correct (then every claim of it is).
- Precision: the share of extracted claims that cover exactly one labelled
  claim no earlier extracted claim already covered alone (atomic, not a
  repeat); a merged claim, a claim with an unresolved pronoun and an invented
  claim count against it.
- Recall: the share of labelled claims some extracted claim covers (a merged
  claim still covers its parts; a missed claim or an unresolved pronoun does not).

Pure functions: the run uses them to write the labels a report scores against
(input-labels.yaml), the benchmark to measure the extraction.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import NamedTuple

MATCH = 0.75
MERGED = 0.9
STOPWORDS = frozenset(
    "a an and are as at be been by for from had has have he her hers him his i in into is it its of on or "
    "she that the their them they this to was were which who whom with also about after before than there "
    "these those over under between during while when where what how did does do not no".split()
)
SEVERITY = {"correct": 0, "unverifiable": 1, "incorrect": 2}


class Alignment(NamedTuple):
    covers: list[list[int]]
    """For each extracted claim, the indices of the labelled claims it covers."""
    truths: list[str | None]
    """For each extracted claim, its truth (None: no label)."""
    atomic: int
    """Extracted claims that are precise (see the module's docstring)."""
    found: int
    """Labelled claims covered by some extracted claim."""
    extracted: int
    labelled: int

    @property
    def precision(self) -> float | None:
        return self.atomic / self.extracted if self.extracted else None

    @property
    def recall(self) -> float | None:
        return self.found / self.labelled if self.labelled else None


def content_words(text: str) -> set[str]:
    folded = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(ch for ch in folded if not unicodedata.combining(ch))
    words = {_stem(w) for w in re.findall(r"\w+", plain)}
    return {w for w in words if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def coverage(labelled: str, extracted: str) -> float:
    """The share of the labelled claim's content words that the extracted claim has."""
    return words_covered(content_words(labelled), content_words(extracted))


def words_covered(wanted: set[str], found: set[str]) -> float:
    """`coverage` of content words already found: for a caller that holds one side's words across many calls."""
    return len(wanted & found) / len(wanted) if wanted else 0.0


def align(labelled: Sequence[tuple[str, str]], extracted: Sequence[str], text_truth: str | None = None) -> Alignment:
    """Match `extracted` claims to `labelled` (claim, truth) pairs; `text_truth` is the whole text's label."""
    covers = [_covered([coverage(claim, e) for claim, _ in labelled]) for e in extracted]
    truths = [_truth([labelled[i][1] for i in found], text_truth) for found in covers]
    alone: set[int] = set()
    atomic = 0
    for found in covers:
        if len(found) == 1 and found[0] not in alone:
            alone.add(found[0])
            atomic += 1
    found_any = {i for found in covers for i in found}
    return Alignment(covers, truths, atomic, len(found_any), len(extracted), len(labelled))


def _covered(shares: list[float]) -> list[int]:
    """The labelled claims one extracted claim covers, given the share of each it holds (see the docstring)."""
    if not shares or max(shares) < MATCH:
        return []
    best = shares.index(max(shares))
    return [i for i, share in enumerate(shares) if i == best or share >= MERGED]


def _truth(parts: list[str], text_truth: str | None) -> str | None:
    if parts:
        return max(parts, key=SEVERITY.__getitem__)
    return "correct" if text_truth == "correct" else None
