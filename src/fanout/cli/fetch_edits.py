"""`fanout fetch-edits`: recent Wikidata edits patrollers review, enriched into a snapshot.

    fanout fetch-edits --limit 500 --enrich -o runs/snapshots/today.yaml --contact you@example.org

Credentials come from the environment only (WIKIDATA_BOT_USER and
WIKIDATA_BOT_PASSWORD for a bot password, or WIKIDATA_OAUTH_TOKEN); without
them, or without the patrol right, the --fallback listing is used and a notice
says so. Progress goes to stderr; finished edits are appended to
`<output>.partial.jsonl` as they come, and the same command resumes.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import httpx

from fanout import __version__
from fanout.config import ToolSettings
from fanout.errors import ConfigError
from fanout.http.client import make_http_client
from fanout.wikidata.api import (
    CONTACT_ENV,
    DEFAULT_API_URL,
    ApiSettings,
    WikidataClient,
    is_wikimedia,
    require_contact,
    user_agent,
)
from fanout.wikidata.credentials import Credentials, credentials_from_env
from fanout.wikidata.enrich import Enricher, EnrichSettings
from fanout.wikidata.errors import WikidataError
from fanout.wikidata.fetch import FALLBACKS, Access, BuildEdit, listing_edit, resolve_access, run_fetch
from fanout.wikidata.labels import LabelCache
from fanout.wikidata.progress import StepProgress
from fanout.wikidata.recentchanges import OPERATION_GROUPS, ListingPlan, RecentChange, parse_operations
from fanout.wikidata.snapshot_writer import SnapshotWriter

MAX_WIKIMEDIA_CONCURRENCY = 4
RECENTCHANGES_DAYS = 30
AGE_RE = re.compile(r"^(\d+)\s*([mhd])$")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=500, help="edits to collect (default 500)")
    parser.add_argument(
        "--enrich", action="store_true",
        help="fetch each item at both revisions, diff them, resolve labels and prefetch reference URLs "
        "(without it the output is a plain listing, not a runnable snapshot)",
    )
    parser.add_argument("-o", "--output", required=True, type=Path, help="snapshot YAML to write")
    parser.add_argument("--api-url", default=DEFAULT_API_URL, help=f"MediaWiki api.php (default {DEFAULT_API_URL})")
    parser.add_argument(
        "--contact", default=None,
        help=f"e-mail or URL for the User-Agent; required for Wikimedia hosts (default ${CONTACT_ENV})",
    )
    parser.add_argument(
        "--since", default=None,
        help="oldest edit to list: a UTC date or time (2026-02-19, 2026-02-19T08:00:00Z) or an age (90m, 24h, 7d)",
    )
    parser.add_argument("--tag", action="append", default=[], help="only edits with this change tag (repeatable)")
    parser.add_argument("--exclude-bots", action="store_true", help="leave out edits flagged as bot edits")
    parser.add_argument(
        "--operations", default="statements",
        help=f"comma-separated: {', '.join(OPERATION_GROUPS)} (default statements: claims, qualifiers, "
        "references, ranks)",
    )
    parser.add_argument(
        "--fallback", choices=FALLBACKS, default="newcomers",
        help="listing used without the patrol right: newcomers (new accounts' statement edits, by tag), "
        "anon (logged-out editors) or none (refuse)",
    )
    parser.add_argument("--concurrency", type=int, default=2, help="Wikidata requests in flight (default 2, at most 4)")
    parser.add_argument("--max-references", type=int, default=3, help="reference URLs to prefetch per edit (0: none)")
    parser.add_argument(
        "--allow-private-urls", action="store_true",
        help="let reference prefetching reach private addresses (local test servers only)",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing snapshot at -o")
    parser.add_argument("--restart", action="store_true", help="discard a pending partial fetch for -o")


def run(args: argparse.Namespace, transport: httpx.AsyncBaseTransport | None = None) -> int:
    """`transport` replaces the wire under the command's HTTP client: tests pass an httpx.MockTransport."""
    options = _options(args)
    credentials = credentials_from_env()
    _refuse_existing(options["output"], force=args.force, restart=args.restart)
    try:
        return anyio.run(_fetch, args, options, credentials, transport)
    except KeyboardInterrupt:
        partial = SnapshotWriter(options["output"]).partial_path
        if partial.exists():
            print(f"fanout fetch-edits: stopped; finished edits are kept in {partial}. "
                  "Run the same command again to resume.", file=sys.stderr)
        raise


def _options(args: argparse.Namespace) -> dict[str, Any]:
    if args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}")
    if args.concurrency < 1:
        raise ConfigError(f"--concurrency must be at least 1, got {args.concurrency}")
    if is_wikimedia(args.api_url) and args.concurrency > MAX_WIKIMEDIA_CONCURRENCY:
        raise ConfigError(
            f"--concurrency {args.concurrency} is more than Wikimedia's API etiquette allows a script; "
            f"use at most {MAX_WIKIMEDIA_CONCURRENCY}"
        )
    contact = require_contact(args.api_url, args.contact or os.environ.get(CONTACT_ENV))
    return {
        "output": args.output,
        "contact": contact,
        "operations": parse_operations(args.operations),
        "since": parse_since(args.since),
        "now": _iso(datetime.now(timezone.utc)),
    }


def _refuse_existing(output: Path, *, force: bool, restart: bool) -> None:
    """The cheap check, before any network: a finished snapshot is not silently replaced."""
    writer = SnapshotWriter(output)
    pending = writer.partial_path.exists() and not restart
    if output.exists() and not pending and not force:
        raise ConfigError(
            f"{output} already exists and no partial fetch is pending for it; choose another -o, "
            "or pass --force to replace it"
        )


def parse_since(text: str | None, *, now: datetime | None = None) -> str | None:
    """A date, a time or an age (`24h`) -> the ISO 8601 UTC timestamp recentchanges expects."""
    if text is None:
        return None
    now = now or datetime.now(timezone.utc)
    age = AGE_RE.match(text.strip())
    if age:
        amount, unit = int(age.group(1)), age.group(2)
        delta = {"m": timedelta(minutes=amount), "h": timedelta(hours=amount), "d": timedelta(days=amount)}[unit]
        return _iso(now - delta)
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(
            f"--since {text!r} is neither a date/time (2026-02-19, 2026-02-19T08:00:00Z) nor an age (24h, 7d)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    if moment > now:
        raise ConfigError(f"--since {text!r} is in the future")
    return _iso(moment)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


async def _fetch(
    args: argparse.Namespace,
    options: dict[str, Any],
    credentials: Credentials | None,
    transport: httpx.AsyncBaseTransport | None,
) -> int:
    settings = ApiSettings(api_url=args.api_url, contact=options["contact"], concurrency=args.concurrency)
    agent = user_agent(options["contact"])
    async with make_http_client(args.concurrency + 2, user_agent=agent, transport=transport) as http:
        client = WikidataClient(http, settings)
        try:
            return await _fetch_with(client, http, args, options, credentials)
        except WikidataError as exc:
            partial = SnapshotWriter(options["output"]).partial_path
            kept = f"; finished edits are kept in {partial}, run the same command to resume" if partial.exists() else ""
            raise ConfigError(f"{exc}{kept}") from exc


async def _fetch_with(
    client: WikidataClient,
    http: httpx.AsyncClient,
    args: argparse.Namespace,
    options: dict[str, Any],
    credentials: Credentials | None,
) -> int:
    access = await resolve_access(client, credentials, args.fallback)
    progress_file = sys.stderr
    if access.notice:
        print(access.notice, file=progress_file)
    _warn_about_since(options["since"], options["now"])
    plan = ListingPlan(
        mode=access.mode,
        start=options["now"],
        since=options["since"],
        tags=tuple(args.tag),
        exclude_bots=args.exclude_bots,
        operations=options["operations"],
    )
    writer = SnapshotWriter(options["output"])
    header = {"api_url": args.api_url, "enrich": bool(args.enrich), "listing": _without_start(plan)}
    start = writer.open(header, new_start=options["now"], force=args.force, restart=args.restart)
    plan = replace(plan, start=start)
    build_edit = _edit_builder(client, http, args) if args.enrich else _as_coroutine(listing_edit)
    try:
        with StepProgress("fetching edits", args.limit, file=progress_file) as progress:
            progress.advance(writer.edit_count)
            outcome = await run_fetch(
                client, plan, writer, limit=args.limit, build_edit=build_edit, progress=progress,
                workers=args.concurrency,
            )
        path = writer.finish(_metadata(args, access, plan))
    finally:
        writer.close()
    _report(path, outcome.written, outcome.skipped, outcome.exhausted, args, client.requests_sent)
    return 0


def _edit_builder(client: WikidataClient, http: httpx.AsyncClient, args: argparse.Namespace) -> BuildEdit:
    web_fetch = None
    if args.max_references > 0:
        from fanout.tools import ToolBox  # trafilatura is heavy; only an enriching fetch needs it

        toolbox = ToolBox(http, ToolSettings(allow_private_urls=args.allow_private_urls))
        web_fetch = toolbox.web_fetch
    enricher = Enricher(
        client, LabelCache(client), web_fetch=web_fetch, settings=EnrichSettings(max_references=args.max_references)
    )
    return enricher.enrich


def _as_coroutine(function: Callable[[RecentChange], dict[str, Any]]) -> BuildEdit:
    async def call(change: RecentChange) -> dict[str, Any]:
        return function(change)

    return call


def _without_start(plan: ListingPlan) -> dict[str, Any]:
    data = plan.to_dict()
    data.pop("start")
    return data


def _metadata(args: argparse.Namespace, access: Access, plan: ListingPlan) -> dict[str, Any]:
    return {
        "api_url": args.api_url,
        "mode": access.mode,
        "listing": plan.to_dict(),
        "enriched": bool(args.enrich),
        "fetched_at": _iso(datetime.now(timezone.utc)),
        "fanout_version": __version__,
    }


def _warn_about_since(since: str | None, now: str) -> None:
    if since is None:
        return
    oldest = datetime.fromisoformat(now.replace("Z", "+00:00")) - timedelta(days=RECENTCHANGES_DAYS)
    if datetime.fromisoformat(since.replace("Z", "+00:00")) < oldest:
        print(f"notice: recent changes only go back {RECENTCHANGES_DAYS} days; --since {since} reaches further "
              "than Wikidata keeps, so the listing starts later than asked", file=sys.stderr)


def _report(path: Path, written: int, skipped: int, exhausted: bool, args: argparse.Namespace, requests: int) -> None:
    print(f"wrote {written} edits to {path} ({skipped} skipped, {requests} requests to Wikidata)", file=sys.stderr)
    if exhausted and written < args.limit:
        print(f"notice: the listing ran out after {written} of {args.limit} edits; widen --since, --operations "
              "or --tag to find more", file=sys.stderr)
    if not args.enrich:
        print("notice: without --enrich this is a listing; `fanout run` needs an enriched snapshot", file=sys.stderr)
