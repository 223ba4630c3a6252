"""Is web search working? Per-provider rate-limit cool-downs and the run-wide alarm.

A run whose search backends all fail must not look healthy: models would
quietly get error notes instead of evidence and their verdicts would drift
towards "unverifiable". So every search answered upstream is recorded here,
and once FAILING_AFTER searches in a row got no answer from any provider,
`warning()` returns the loud line the progress display shows (and it clears
as soon as one search succeeds).

A provider that rate-limits us is skipped for the time it asked for (or a
default pause) while another provider can answer, instead of being hit again
by every verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from fanout.tools.providers.base import ProviderResult

FAILING_AFTER = 3
DEFAULT_COOLDOWN_S = 30.0
MAX_COOLDOWN_S = 600.0
DETAIL_CHARS = 160


class SearchHealth:
    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cool_until: dict[str, float] = {}
        self.failed_in_a_row = 0
        self.last_failures: dict[str, str] = {}

    def record_provider(self, name: str, result: ProviderResult) -> None:
        """One upstream answer: a rate limit starts a cool-down, anything that answered ends it."""
        if result.rate_limited:
            pause = DEFAULT_COOLDOWN_S if result.retry_after is None else result.retry_after
            self._cool_until[name] = self._clock() + min(pause, MAX_COOLDOWN_S)
        elif result.error is None:
            self._cool_until.pop(name, None)

    def cooling_down(self, name: str) -> float | None:
        """Seconds left of `name`'s cool-down, or None when it may be asked."""
        left = self._cool_until.get(name, 0.0) - self._clock()
        return left if left > 0 else None

    def record_search(self, failures: Mapping[str, str], *, answered: bool) -> None:
        """One web_search that went upstream: `answered` = some provider gave a usable answer."""
        if answered:
            self.failed_in_a_row = 0
            return
        self.failed_in_a_row += 1
        self.last_failures = dict(failures)

    def warning(self) -> str | None:
        """The alarm line for the progress display, or None while search works."""
        if self.failed_in_a_row < FAILING_AFTER:
            return None
        detail = "; ".join(f"{name}: {_short(error)}" for name, error in self.last_failures.items())
        return (
            f"WEB SEARCH IS FAILING: the last {self.failed_in_a_row} searches got no answer from any provider, "
            f"so models are getting error notes instead of results ({detail})"
        )


def _short(text: str) -> str:
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 3] + "..."
