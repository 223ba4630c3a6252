"""Claims (seed 004's FactualityEvaluator) as a workload: texts split into claims, every claim verified.

Its input is a file of texts (fanout.workloads.claims.texts); its items are
the claims an extractor model splits them into (fanout.workloads.claims.source,
the preparation step), each judged by every model as an edit is; its prompt is
SIFT adapted to a claim. The factuality of each text, the gate and the
quarantine are the report's (fanout.report.builders_claims, fanout.report.gate).
"""

from __future__ import annotations

from pathlib import Path

from fanout.base.item import Change, Prompt, Workload
from fanout.workloads.claims.claim import Claim
from fanout.workloads.claims.describe import describe
from fanout.workloads.claims.prompt import ITEM_NOUN, load_extraction_prompt, load_prompt
from fanout.workloads.claims.source import ClaimsSource
from fanout.workloads.claims.texts import read_texts
from fanout.workloads.settings import WorkloadSettings

NAME = "claims"


class ClaimsWorkload:
    """Is each claim of these texts true? `extractor` is --extractor (None: the run's cheapest tool-capable model)."""

    name: str = NAME
    item_noun: str = ITEM_NOUN

    def __init__(self, extractor: str | None = None) -> None:
        self.extractor = extractor

    def prompt(self) -> Prompt:
        return load_prompt()

    def open(self, path: Path, *, cache_dir: Path | None = None) -> ClaimsSource:
        """The texts validated, with the claims the run directory's log already holds (`cache_dir`: the run's)."""
        return ClaimsSource(read_texts(path), cache_dir, self.extractor, load_extraction_prompt())

    def describe(self, item: Claim) -> Change:
        return describe(item)

    def configured(self, settings: WorkloadSettings) -> ClaimsWorkload:
        """This workload with the run's --extractor."""
        return ClaimsWorkload(settings.extractor)


CLAIMS: Workload[Claim] = ClaimsWorkload()
"""Typed as the protocol, so the type checker holds the workload, its source and the Claim to the seam."""
