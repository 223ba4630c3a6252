"""English labels for QIDs and property ids, fetched with wbgetentities, 50 at a time.

50 ids is wbgetentities' limit for ordinary accounts, so a batch never asks
for more. Labels are cached for the whole fetch: 500 edits mention the same
properties and common values (human, male, United States) again and again,
and asking once is the polite thing.

An item with no English label falls back to its `mul` (default for all
languages) label; with neither, the id itself is not invented as a label:
the entry stays missing and callers show the bare id.
"""

from __future__ import annotations

from collections.abc import Iterable

from fanout.wikidata.api import WikidataClient

BATCH_SIZE = 50
LANGUAGES = ("en", "mul")


class LabelCache:
    """Labels looked up so far; `resolve` fetches only what is not known yet."""

    def __init__(self, client: WikidataClient) -> None:
        self._client = client
        self._labels: dict[str, str] = {}
        self._asked: set[str] = set()

    def get(self, entity_id: str) -> str | None:
        return self._labels.get(entity_id)

    def snapshot(self) -> dict[str, str]:
        return dict(self._labels)

    async def resolve(self, ids: Iterable[str]) -> dict[str, str]:
        """Labels of `ids` (those that have one), fetching the unknown ones in batches of 50."""
        wanted = list(dict.fromkeys(i for i in ids if i))
        missing = [i for i in wanted if i not in self._asked]
        for start in range(0, len(missing), BATCH_SIZE):
            await self._fetch(missing[start : start + BATCH_SIZE])
        return {i: self._labels[i] for i in wanted if i in self._labels}

    async def _fetch(self, batch: list[str]) -> None:
        data = await self._client.query(
            {
                "action": "wbgetentities",
                "ids": "|".join(batch),
                "props": "labels",
                "languages": "|".join(LANGUAGES),
            }
        )
        self._asked.update(batch)
        for entity_id, entity in (data.get("entities") or {}).items():
            label = _best_label(entity.get("labels") or {})
            if label is None:
                continue
            self._labels[entity_id] = label
            # A redirected id comes back under its target's id; keep it under the asked one too.
            redirect_from = (entity.get("redirects") or {}).get("from")
            if redirect_from:
                self._labels[redirect_from] = label


def _best_label(labels: dict[str, dict[str, str]]) -> str | None:
    for language in LANGUAGES:
        value = (labels.get(language) or {}).get("value")
        if value:
            return value
    return None
