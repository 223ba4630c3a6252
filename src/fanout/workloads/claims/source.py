"""The claims workload's input, opened: the texts, the claims already extracted, and the step that extracts the rest.

`items` are the claims of every text the run's log has split, in the input's
order of texts and each text's order of claims. `prepare` (the preparation
step of fanout.research.prepare) splits the texts that have none yet: each
with one extractor call, at most --concurrency at once, and each text's
claims appended and fsynced to prepared.jsonl (fanout.store.prepared) as one
line, before any claim is judged. A kill -9 therefore loses at most the
extractions in flight (their calls' cost is settled on the next start from
their in-flight files) and never extracts a text twice: a text with a line
is never asked again, and its claims keep their keys.

After the step the input's labels, matched to the claims extracted
(fanout.workloads.claims.align), are written to the run's input-labels.yaml,
which the report scores against when it is given no labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import anyio

from fanout.base.errors import ConfigError, ModelRefused
from fanout.base.item import Prompt
from fanout.research.prepare import Prepared, Preparation
from fanout.store.atomic import dump_yaml, write_atomically
from fanout.store.layout import INPUT_LABELS_NAME
from fanout.store.prepared import PreparedLog, read_prepared
from fanout.workloads.claims.align import align
from fanout.workloads.claims.claim import Claim
from fanout.workloads.claims.split_text import extract_claims
from fanout.workloads.claims.extraction_log import LoggedText, extracted, text_line, text_numbers
from fanout.workloads.claims.texts import Text, TextFile


class ClaimsSource:
    """The texts of one input and the claims made of them so far (an ItemSource that Prepares)."""

    def __init__(self, texts: TextFile, run_dir: Path | None, extractor: str | None, prompt: Prompt) -> None:
        self.path = texts.path
        self.sha256 = texts.sha256
        self.texts = texts.texts
        self._run_dir = run_dir
        self._extractor = extractor
        self._prompt = prompt
        self._logged: dict[str, LoggedText] = {}
        self._numbers: dict[str, int] = {}
        self.items: list[Claim] = []
        self._reload()

    def _reload(self) -> None:
        """The claims as the run directory's log now has them."""
        lines = read_prepared(self._run_dir) if self._run_dir is not None else []
        self._logged = extracted(self.texts, lines)
        self._numbers = text_numbers(self.texts, lines)
        self.items = [claim for text in self.texts for claim in self.claims_of(text)]

    def claims_of(self, text: Text) -> list[Claim]:
        logged = self._logged.get(text.id)
        if logged is None:
            return []
        n = len(logged.claims)
        return [Claim(logged.number, i, c.claim, c.topic, text.id, text.text, n, logged.timestamp, text.question,
                      text.context, text.source_url) for i, c in enumerate(logged.claims, start=1)]

    @property
    def missing(self) -> list[Text]:
        """The texts not split yet, in the input's order."""
        return [text for text in self.texts if text.id not in self._logged]

    def keep_in(self, run_dir: Path) -> None:
        """Nothing to keep: the run directory's prepared.jsonl is the claims' record already."""

    def __enter__(self) -> ClaimsSource:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def pending(self) -> str | None:
        missing = len(self.missing)
        if not missing:
            return None
        who = self._extractor or "the run's cheapest tool-capable model"
        return (f"{missing} of {len(self.texts)} text(s) are still to be split into claims (by {who}) when the run "
                "starts; the pairs above count only the claims extracted so far.")

    async def prepare(self, preparation: Preparation) -> Prepared:
        """Split every text still missing (up to --limit claims, and while --max-cost allows), each logged as done."""
        todo = self._todo(preparation.limit)
        if not todo:
            self._write_labels(preparation.run_dir)
            return Prepared(0)
        extractor = (self._extractor or preparation.pinned.get("extractor") or preparation.default_model)
        preparation.check_pins({"extractor": extractor, "extraction_prompt_sha256": self._prompt.sha256})
        preparation.say(f"Splitting {len(todo)} text(s) into claims with {extractor} "
                        f"({len(self.texts) - len(self.missing)} of {len(self.texts)} split before).")
        counts = _Counts()
        with PreparedLog(preparation.run_dir) as log:
            if log.torn is not None:
                preparation.say(f"The prepared items' last line was torn by a crash; set aside in {log.torn.name}.")
            await self._extract_all(todo, str(extractor), preparation, log, counts)
        self._reload()
        self._write_labels(preparation.run_dir)
        preparation.say(counts.summary(len(self.items)))
        return Prepared(counts.done, counts.failed, counts.skipped)

    def _todo(self, limit: int | None) -> list[Text]:
        """The texts to split now: every missing one, unless --limit's claims are there already (under a limit the
        count is known only after each split, so they are split one after another, in order, until it is met)."""
        return [] if self._enough(limit) else self.missing

    async def _extract_all(self, todo: Sequence[Text], extractor: str, preparation: Preparation, log: PreparedLog,
                           counts: _Counts) -> None:
        at_once = 1 if preparation.limit is not None else preparation.concurrency
        limiter = anyio.CapacityLimiter(at_once)
        async with anyio.create_task_group() as tg:
            for text in todo:
                tg.start_soon(self._extract_one, text, extractor, preparation, log, counts, limiter)

    async def _extract_one(self, text: Text, extractor: str, preparation: Preparation, log: PreparedLog,
                           counts: _Counts, limiter: anyio.CapacityLimiter) -> None:
        async with limiter:
            if preparation.spend.reached or self._enough(preparation.limit):
                counts.skipped += 1
                return
            number = self._numbers[text.id]
            attempt = preparation.attempt(number, extractor)
            try:
                extraction = await extract_claims(text, preparation.model(extractor), preparation.chat, self._prompt,
                                                  timeout_s=preparation.timeout_s, watcher=attempt)
            except ModelRefused as exc:
                raise ConfigError(f"--extractor {extractor}: the endpoint refused the model ({exc}); name a model "
                                  "it serves") from None
            finally:
                attempt.close()
            line = text_line(text, number, extractor, extraction, attempt.attempt_id, self._prompt.sha256)
            with anyio.CancelScope(shield=True):  # paid for: the line reaches the log even if a stop cancels now
                await anyio.to_thread.run_sync(log.append, line)
                preparation.settled(number, extractor)
            preparation.spend.add(extraction.cost_usd)
            counts.note(text, extraction.status, len(extraction.claims), extraction.error, preparation)
            if extraction.status == "ok":
                self._logged[text.id] = LoggedText(number, tuple(extraction.claims), str(line["timestamp"]), extractor)

    def _enough(self, limit: int | None) -> bool:
        """Under --limit: the texts split so far, from the first in order, already give `limit` claims."""
        if limit is None:
            return False
        claims = 0
        for text in self.texts:
            if text.id not in self._logged:
                return False
            claims += len(self._logged[text.id].claims)
            if claims >= limit:
                return True
        return False

    def _write_labels(self, run_dir: Path) -> None:
        """The input's labels, keyed by the claims' keys, where the input has any (else no file)."""
        labels = []
        for text in self.texts:
            claims = self.claims_of(text)
            if not claims or (not text.claims and text.truth is None):
                continue
            found = align([(c.claim, c.truth) for c in text.claims], [c.claim for c in claims], text.truth)
            labels += [{"rcid": claim.key, "truth": truth, "text": text.id}
                       for claim, truth in zip(claims, found.truths) if truth is not None]
        if labels:
            write_atomically(run_dir / INPUT_LABELS_NAME, dump_yaml({"labels": labels}))


class _Counts:
    """What this start's extractions came to."""

    def __init__(self) -> None:
        self.done = self.failed = self.skipped = self.claims = 0

    def note(self, text: Text, status: str, claims: int, error: str | None, preparation: Preparation) -> None:
        if status == "ok":
            self.done += 1
            self.claims += claims
            return
        self.failed += 1
        preparation.say(f"Text {text.id!r} was not split ({status}: {error}); it is tried again on the next start.")

    def summary(self, items: int) -> str:
        skipped = (f"; {self.skipped} left for a later start (--max-cost or --limit)" if self.skipped else "")
        failed = f"; {self.failed} failed" if self.failed else ""
        return f"Split {self.done} text(s) into {self.claims} claim(s){failed}{skipped}; {items} claim(s) in all."
