"""`fanout outcomes SNAPSHOT -o OUTCOMES`: which edits were reverted, patrolled, or still stand.

    fanout outcomes runs/snapshots/today.yaml -o runs/snapshots/today.outcomes.yaml --contact you@example.org

Run it days or weeks after the fetch: the longer the community has had, the
more of the wrong edits have been reverted. Everything used is public (page
history, revision tags, the patrol log), so no credentials are needed.
The output is {outcomes: [{rcid, revid, qid, outcome, evidence}]} plus counts.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio
import httpx
import yaml

from fanout.errors import ConfigError
from fanout.http.client import make_http_client
from fanout.sift.snapshot import Snapshot, load_snapshot
from fanout.wikidata.api import (
    CONTACT_ENV,
    DEFAULT_API_URL,
    ApiSettings,
    WikidataClient,
    is_wikimedia,
    require_contact,
    user_agent,
)
from fanout.wikidata.errors import WikidataError
from fanout.wikidata.outcomes import OUTCOMES, OutcomeSettings, collect_outcomes
from fanout.wikidata.progress import StepProgress

MAX_WIKIMEDIA_CONCURRENCY = 4


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("snapshot", type=Path, help="the enriched snapshot the edits came from")
    parser.add_argument("-o", "--output", required=True, type=Path, help="outcomes YAML to write")
    parser.add_argument("--api-url", default=DEFAULT_API_URL, help=f"MediaWiki api.php (default {DEFAULT_API_URL})")
    parser.add_argument(
        "--contact", default=None,
        help=f"e-mail or URL for the User-Agent; required for Wikimedia hosts (default ${CONTACT_ENV})",
    )
    parser.add_argument("--concurrency", type=int, default=2, help="Wikidata requests in flight (default 2, at most 4)")
    parser.add_argument(
        "--max-revisions", type=int, default=50, help="later revisions of each item to examine (default 50)"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing outcomes file")


def run(args: argparse.Namespace, transport: httpx.AsyncBaseTransport | None = None) -> int:
    """`transport` replaces the wire under the command's HTTP client: tests pass an httpx.MockTransport."""
    if args.concurrency < 1 or (is_wikimedia(args.api_url) and args.concurrency > MAX_WIKIMEDIA_CONCURRENCY):
        raise ConfigError(f"--concurrency must be between 1 and {MAX_WIKIMEDIA_CONCURRENCY}")
    if args.output.exists() and not args.force:
        raise ConfigError(f"{args.output} already exists; choose another -o, or pass --force to replace it")
    contact = require_contact(args.api_url, args.contact or os.environ.get(CONTACT_ENV))
    snapshot = load_snapshot(args.snapshot)
    outcomes = anyio.run(_collect, args, contact, snapshot, transport)
    _write(args.output, snapshot, outcomes)
    counts = Counter(o["outcome"] for o in outcomes)
    summary = ", ".join(f"{counts[name]} {name}" for name in OUTCOMES)
    print(f"wrote {len(outcomes)} outcomes to {args.output} ({summary})", file=sys.stderr)
    return 0


async def _collect(
    args: argparse.Namespace, contact: str | None, snapshot: Snapshot, transport: httpx.AsyncBaseTransport | None
) -> list[dict[str, Any]]:
    settings = ApiSettings(api_url=args.api_url, contact=contact, concurrency=args.concurrency)
    async with make_http_client(args.concurrency + 2, user_agent=user_agent(contact), transport=transport) as http:
        client = WikidataClient(http, settings)
        with StepProgress("checking outcomes", len(snapshot.edits)) as progress:
            try:
                return await collect_outcomes(
                    client,
                    snapshot.edits,
                    settings=OutcomeSettings(max_revisions=args.max_revisions, workers=args.concurrency),
                    progress=progress,
                )
            except WikidataError as exc:
                raise ConfigError(f"{exc}; nothing was written, run the same command again later") from exc


def _write(output: Path, snapshot: Snapshot, outcomes: list[dict[str, Any]]) -> None:
    counts = Counter(o["outcome"] for o in outcomes)
    document = {
        "checked_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "snapshot": str(snapshot.path),
        "snapshot_sha256": snapshot.sha256,
        "counts": {name: counts[name] for name in OUTCOMES},
        "outcomes": outcomes,
    }
    output.parent.mkdir(parents=True, exist_ok=True)
    temporary = output.with_name(output.name + ".tmp")
    temporary.write_text(
        yaml.safe_dump(document, allow_unicode=True, sort_keys=False, default_flow_style=False, width=100),
        encoding="utf-8",
    )
    os.replace(temporary, output)
