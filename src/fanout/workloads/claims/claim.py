"""One claim split from a text: the claims workload's item (fanout.base.item.Item).

A claim is made once, by the extractor, and logged (fanout.store.prepared)
before any model judges it; every later start builds the same Claim from
that line, so its key, question and context never change.

Its key is the text's number times KEY_STRIDE plus its place in the text
(3004: the fourth claim of text 3), so a key reads back to its text. The
record fields a claim fills (fanout.base.item.RecordKeys), with their
meanings here:

    edit_rcid       the claim's key
    edit_revid      the number of the text it was split from
    qid             the text's id, as the input gives it
    property        None (a claim has no property)
    diff_type       "claim"
    edit_timestamp  when the text was split into claims (UTC)

Its aspect (the router's gate key) is `<topic>/claim`, the topic the
extractor gave it (date, number, place, person, organisation, work, science,
health, event, other): `--gates` can send the health claims to one model and
the dates to another.
"""

from __future__ import annotations

from typing import NamedTuple

from fanout.base.item import Aspect, RecordKeys

KIND = "claim"
KEY_STRIDE = 1000
"""A text's claims have keys number * KEY_STRIDE + 1, + 2, ...: at most MAX_CLAIMS of them."""
MAX_CLAIMS = 100
"""Claims kept of one text (an extractor that gives more is cut there, and the text's line says so)."""
TOPICS = ("date", "number", "place", "person", "organisation", "work", "science", "health", "event", "other")
CONTEXT_TEXT_CHARS = 6_000
"""The text shown with the claim, cut here: enough to resolve what the claim is about; the claim is what is judged."""
CLAIM_LINE = "Claim to verify: "
"""How the context starts; the simulator reads the claim from this line (fanout.sim.claims)."""


def claim_key(text_number: int, number: int) -> int:
    return text_number * KEY_STRIDE + number


class Claim(NamedTuple):
    """One claim of one text, as judged. Built from the extraction's logged line; never changed afterwards."""

    text_number: int
    number: int
    """Its place among the text's claims, from 1."""
    claim: str
    topic: str
    text_id: str
    text: str
    """The whole text it was split from."""
    claims_in_text: int
    extracted_at: str
    question_asked: str | None = None
    """What the text answered, when the input says."""
    text_context: str | None = None
    source_url: str | None = None

    # --- the item (fanout.base.item.Item) ---

    @property
    def key(self) -> int:
        return claim_key(self.text_number, self.number)

    @property
    def kind(self) -> str:
        return KIND

    @property
    def aspect(self) -> Aspect:
        return Aspect(self.topic, KIND)

    @property
    def label_key(self) -> int:
        """A labels file names a claim by its key (the run writes the input's labels so: input-labels.yaml)."""
        return self.key

    def record_keys(self) -> RecordKeys:
        return RecordKeys(edit_rcid=self.key, edit_revid=self.text_number, qid=self.text_id, property=None,
                          diff_type=KIND, edit_timestamp=self.extracted_at)

    def question(self) -> str:
        return f'Is this claim true? "{self.claim}"'

    def context(self) -> str:
        """The claim, where it came from, and the text around it: the same text for every model."""
        lines = [CLAIM_LINE + self.claim, f"Topic: {self.topic}",
                 f"It is claim {self.number} of {self.claims_in_text} split from the text {self.text_id!r} below; it "
                 "was rewritten to stand on its own, so judge the claim as written."]
        if self.source_url:
            lines.append(f"The text's source: {self.source_url}")
        if self.question_asked:
            lines.append(f"The text answered this question: {self.question_asked}")
        if self.text_context:
            lines.append(f"Given with the text: {self.text_context}")
        shown = self.text if len(self.text) <= CONTEXT_TEXT_CHARS else self.text[:CONTEXT_TEXT_CHARS] + " [...]"
        lines += ["", "The text (context only: it is not evidence for the claim):", "<<<", shown, ">>>", "",
                  f"Verification question: {self.question()}"]
        return "\n".join(lines) + "\n"

    def prefetched_urls(self) -> list[str]:
        """None: the text's source is named, not fetched for the models (each finds and reads its own)."""
        return []
