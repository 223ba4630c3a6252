"""A claim in words, as the report, the queue, the review desk and compare show it (fanout.base.item.Change).

The item is the text it came from, what changed is read as "what is claimed",
the new value is the claim itself; the link is the text's source when the
input names one (never a Wikidata diff: a claim has none).
"""

from __future__ import annotations

from fanout.base.item import Change
from fanout.workloads.claims.claim import Claim


def describe(claim: Claim) -> Change:
    return Change(
        item_label=f"text {claim.text_id}",
        what=f"claim {claim.number} of {claim.claims_in_text} ({claim.topic})",
        old=None,
        new=claim.claim,
        detail=None,
        question=claim.question(),
        aspect=claim.aspect,
        link=claim.source_url,
        link_text="source" if claim.source_url else None,
    )
