"""Decisions with a guarantee in the report: its two options, and the human decisions they rest on.

`GuaranteeSettings` (declared in fanout.judging.policy beside the thresholds,
so a command's --help does not load the report) declares --target-agreement
and --risk once; fanout.cli.committee_options gives them to `report`,
`queue`, `review` and `compare`, so every view certifies the same way. With
--target-agreement the certificates replace --autopass (fanout.stats.judged_by_people);
without it the report still shows what would be certified at DEFAULT_TARGET,
and the desk how far each rule is from a certificate.

`People` is who decided: the run's reviews.jsonl when it holds a decision on
an edit of the run, else a labels file (given, or found in the run
directory) of stated truths (`fanout outcomes` files are not people's
decisions and are not used). The random sample is the front of the run's
seeded random order up to the first edit without a decision
(fanout.stats.draw.random_sample); the seed is the run's own, from its first
start and its snapshot's sha256 in the manifest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fanout.judging.policy import DEFAULT_TARGET as DEFAULT_TARGET, GuaranteeSettings as GuaranteeSettings
from fanout.judging.scales import STANCE_OF_TRUTH
from fanout.report.truth import Labels
from fanout.stats.draw import SEED, random_sample, run_seed
from fanout.store.reviews import ReviewLog, reviews_path

@dataclass(frozen=True)
class People:
    """The human decisions of a run, and which of them are a uniform random sample of its edits."""

    source: str | None
    """`reviews` (reviews.jsonl), `labels` (a labels file), or None: nobody decided an edit of the run."""
    path: Path | None
    stances: dict[int, str]
    """rcid -> accept | unsure | reject: the decision that stands, for the run's edits."""
    sample: list[int]
    """The random sample: the front of the run's random order, every edit there decided."""
    seed: int
    drawn_random: int = 0
    """Decisions of the sample the desk drew at random (reviews.jsonl's `drawn`)."""

    def describe(self) -> str:
        """`30 random of the 42 human decisions in PATH` (or of the labels file), for a note or a heading."""
        if self.source is None:
            return "no human decisions yet"
        where = f"the labels file {self.path}" if self.source == "labels" else str(self.path)
        drawn = f"; {self.drawn_random} drawn at random by the desk" if self.drawn_random else ""
        return (f"{len(self.sample)} random of the {len(self.stances)} human decisions in {where} (the front of "
                f"the run's seeded random order{drawn})")

    def json(self) -> dict[str, Any]:
        return {"source": self.source, "path": None if self.path is None else str(self.path),
                "decided": len(self.stances), "random_sample": len(self.sample), "drawn_random": self.drawn_random,
                "seed": self.seed}


def run_order_seed(manifest: Mapping[str, Any]) -> int:
    """The run's seed of the random order: from its first start and its snapshot's sha256; SEED without them."""
    starts, sha = manifest.get("starts"), manifest.get("snapshot_sha256")
    first = starts[0] if isinstance(starts, list) and starts and isinstance(starts[0], str) else None
    if first is None or not isinstance(sha, str):
        return SEED
    return run_seed(first, sha)


def who_decided(run_dir: Path, keys: Sequence[int], reviews: ReviewLog, labels: Labels | None, seed: int) -> People:
    """The run's human decisions: reviews.jsonl's when any is on an edit of the run, else a labels file's."""
    wanted = set(keys)
    latest = {rcid: r for rcid, r in reviews.latest.items() if rcid in wanted}
    if latest:
        stances = {rcid: r.decision for rcid, r in latest.items()}
        sample = random_sample(keys, stances, seed)
        drawn = sum(latest[k].drawn == "random" for k in sample)
        return People("reviews", reviews_path(run_dir), stances, sample, seed, drawn)
    if labels is not None and labels.kind == "labels":
        stances = {rcid: STANCE_OF_TRUTH[t] for rcid, t in labels.truth.items() if rcid in wanted}
        if stances:
            return People("labels", labels.path, stances, random_sample(keys, stances, seed), seed)
    return People(None, None, {}, [], seed)
