"""`fanout watch`'s own settings, each declared once with its flag (fanout.base.declare), beside the run's.

The filters are the patrol filter's (fanout.wikidata.patrol_filter.PatrolFilter,
nested here); the run's settings (models, concurrency, pacing, --max-cost ...)
are `fanout run`'s (fanout.engine.settings.RunSettings). What is recorded
here goes into the manifest's settings under `watch`, for the record: a
restart may change it (a patroller widens a filter), since each edit is
judged by the run's models however it was chosen.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from fanout.base.declare import Env, flag, nested, recorded, setting
from fanout.base.errors import ConfigError
from fanout.base.validate import require_count, require_http_url, require_not_negative, require_one_of, require_positive
from fanout.wikidata.api import CONTACT_ENV, DEFAULT_API_URL
from fanout.wikidata.etiquette import require_polite_wiki
from fanout.wikidata.eventstream import DEFAULT_STREAM_URL
from fanout.wikidata.patrol_filter import PatrolFilter
from fanout.wikidata.revertrisk import LIFTWING_URL

STREAM = "the stream"
QUEUE = "queue and budget"
PREFILTER = "prefilter"
OVERFLOW = ("drop-oldest", "sample")
PREFILTERS = ("none", "revertrisk")


def _probability(value: float, label: str) -> None:
    if not 0 <= value <= 1:
        raise ConfigError(f"{label} {value:g} is not a probability between 0 and 1")


@dataclass(frozen=True)
class WatchSettings:
    """Where the edits come from, which are kept, how many may wait, and what goes past the jury."""

    stream_url: str = setting(DEFAULT_STREAM_URL, flag(
        "--stream-url", metavar="URL", check=require_http_url, group=STREAM,
        help="EventStreams' base URL (default {default})"), recorded=True)
    api_url: str = setting(DEFAULT_API_URL, flag(
        "--api-url", metavar="URL", check=require_http_url, group=STREAM,
        help="the wiki's api.php, for enriching each edit and backfilling what the stream missed (default "
             "{default})"), recorded=True)
    contact: str | None = setting(None, flag(
        "--contact", metavar="EMAIL|URL", group=STREAM, env=(Env(CONTACT_ENV),),
        help="who runs this, for the User-Agent (required by Wikimedia)"))
    since: str | None = setting(None, flag(
        "--since", metavar="TIME", group=STREAM,
        help="start the stream at this time (ISO 8601) when the run has no saved position (default: now)"))
    stall_s: float = setting(60.0, flag(
        "--stall", type=float, metavar="SECONDS", check=require_positive, group=STREAM,
        help="no event for this long is a stalled stream: reconnect from the saved position (default {default})"),
        recorded=True)
    api_concurrency: int = setting(2, flag(
        "--api-concurrency", type=int, metavar="N", check=require_count, group=STREAM,
        help="requests in flight to the wiki's API (at most 4 to Wikimedia; default {default})"), recorded=True)
    enrich_workers: int = setting(8, flag(
        "--enrich-workers", type=int, metavar="N", check=require_count, group=STREAM,
        help="edits enriched at once, ahead of the jury (default {default})"), recorded=True)
    max_references: int = setting(3, flag(
        "--max-references", type=int, metavar="N", check=functools.partial(require_count, minimum=0), group=STREAM,
        help="reference pages fetched per edit while enriching, as fetch-edits --enrich does (default {default})"),
        recorded=True)
    max_edits: int | None = setting(None, flag(
        "--max-edits", type=int, metavar="N", check=require_count, group=STREAM,
        help="stop reading once N edits have been accepted in all (this session and the earlier ones), and end "
             "when they are judged"))
    queue_size: int = setting(1000, flag(
        "--queue-size", type=int, metavar="N", check=require_count, group=QUEUE,
        help="edits that may wait for the jury, at most (default {default})"), recorded=True)
    overflow: str = setting("drop-oldest", flag(
        "--overflow", metavar="|".join(OVERFLOW), group=QUEUE,
        check=functools.partial(require_one_of, choices=OVERFLOW),
        help="when the queue is full: drop-oldest (default) keeps the newest edits; sample keeps a uniform sample "
             "of the backlog. Either way the status counts what was dropped"), recorded=True)
    max_cost_per_hour: float | None = setting(None, flag(
        "--max-cost-per-hour", type=float, metavar="USD", check=require_not_negative, group=QUEUE,
        help="spend at most this in any hour; edits above it wait in the queue"), recorded=True)
    max_edits_per_minute: int | None = setting(None, flag(
        "--max-edits-per-minute", type=int, metavar="N", check=require_count, group=QUEUE,
        help="judge at most N edits in any minute; edits above it wait in the queue"), recorded=True)
    prefilter: str = setting("none", flag(
        "--prefilter", metavar="|".join(PREFILTERS), group=PREFILTER,
        check=functools.partial(require_one_of, choices=PREFILTERS),
        help="revertrisk: ask Lift Wing's revertrisk-wikidata model first, and send edits scored below "
             "--prefilter-threshold past the jury as prefiltered (an edit it cannot score is judged)"),
        recorded=True)
    prefilter_threshold: float = setting(0.1, flag(
        "--prefilter-threshold", type=float, metavar="P", check=_probability, group=PREFILTER,
        help="the revert-risk score below which an edit skips the jury (default {default})"), recorded=True)
    revertrisk_url: str = setting(LIFTWING_URL, flag(
        "--revertrisk-url", metavar="URL", check=require_http_url, group=PREFILTER,
        help="Lift Wing's revertrisk-wikidata endpoint (default: Wikimedia's)"), recorded=True)
    filter: PatrolFilter = nested(PatrolFilter)

    GROUPS = (STREAM, QUEUE, PREFILTER)

    def __post_init__(self) -> None:
        require_polite_wiki(self.api_url, self.api_concurrency)

    def summary(self) -> dict[str, Any]:
        """What the manifest records of the watch (under `watch`)."""
        return recorded(self)
