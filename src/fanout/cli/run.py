"""`fanout run SNAPSHOT ...`: run every (edit, model) pair; the same command resumes."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from pathlib import Path

import yaml

from fanout.config import DEFAULT_MODELS, OPENROUTER_BASE_URL, RunSettings, ToolSettings, model_spec
from fanout.errors import ConfigError
from fanout.records import STATUSES
from fanout.tools.search_config import add_search_arguments, apply_search_options

EXIT_INTERRUPTED = 130
DEFAULT_MAX_LEAD = 10
LEAD_PER_SLOT = 4


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("snapshot", type=Path, help="enriched snapshot YAML (from `fanout fetch-edits`)")
    parser.add_argument("--models", nargs="+", metavar="M", default=[m.name for m in DEFAULT_MODELS],
                        help="models to fan out to (default: the four of the seed design)")
    parser.add_argument("--run-dir", type=Path, help="where the log and verdicts go (default: runs/<snapshot name>)")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N edits of the snapshot")
    parser.add_argument("--base-url", default=OPENROUTER_BASE_URL, help="OpenAI-compatible endpoint (default: OpenRouter)")
    parser.add_argument("--searxng-url", default=ToolSettings.searxng_url, help="SearXNG base URL")
    parser.add_argument("--allow-private-urls", action="store_true",
                        help="let web_fetch reach private and loopback addresses (only for the local simulator)")
    parser.add_argument("--fetch-delay", type=float, default=ToolSettings.per_host_delay_s, metavar="SECONDS",
                        help="politeness delay between web_fetch requests to the same host (default 0.5; "
                             "0 for the simulator, whose sites all live on 127.0.0.1)")
    add_search_arguments(parser)
    parser.add_argument("--concurrency", type=int, default=8, help="verdicts in flight at once, across models (default 8)")
    parser.add_argument("--per-model-concurrency", type=int, metavar="N", help="verdicts in flight per model")
    parser.add_argument("--rpm", type=float, metavar="N", help="chat requests per minute per model")
    parser.add_argument("--limits", type=Path, metavar="FILE",
                        help="YAML table {model: {max_concurrency, requests_per_minute, context_window, input_price, output_price}}")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds per verdict, both phases (default 180)")
    parser.add_argument("--max-turns", type=int, default=15, help="tool-calling turns in the investigation (default 15)")
    parser.add_argument("--max-lead", type=int, default=None, metavar="N",
                        help=f"edits any model may run ahead of the slowest (default {DEFAULT_MAX_LEAD}, or {LEAD_PER_SLOT} x "
                             "--concurrency / models when that is more, so the concurrency asked for can be used)")
    parser.add_argument("--grace", type=float, default=30.0, help="seconds verdicts in flight get after Ctrl-C (default 30)")
    parser.add_argument("--max-cost", type=float, metavar="USD", help="stop scheduling once recorded spend reaches this")
    parser.add_argument("--retry", default="error", metavar="STATUSES",
                        help=f"statuses that run again on resume, comma-separated from {','.join(STATUSES[1:])} (default: error)")
    parser.add_argument("--force", action="store_true", help="resume even if the snapshot or prompt changed")
    parser.add_argument("--dry-run", action="store_true", help="show the plan; contact and write nothing")


def run(args: argparse.Namespace) -> int:
    from fanout.engine.runner import RunRequest, run_sync

    request = RunRequest(
        snapshot_path=args.snapshot,
        run_dir=args.run_dir or Path("runs") / args.snapshot.stem,
        settings=settings_from_args(args),
        limit=args.limit,
        force=args.force,
        dry_run=args.dry_run,
    )
    report = run_sync(request)
    if report is None:
        return 0
    return finish(report, request)


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    for name, value in (("--concurrency", args.concurrency), ("--max-turns", args.max_turns), ("--max-lead", args.max_lead)):
        if value is not None and value < 1:
            raise ConfigError(f"{name} must be at least 1 (got {value}).")
    if args.timeout <= 0 or args.grace < 0:
        raise ConfigError("--timeout must be positive and --grace not negative.")
    retry = frozenset(s.strip() for s in args.retry.split(",") if s.strip())
    unknown = retry - set(STATUSES[1:])
    if unknown:
        raise ConfigError(f"--retry: unknown status {', '.join(sorted(unknown))}; choose from {', '.join(STATUSES[1:])}.")
    table = load_limits(args.limits) if args.limits else {}
    flags = {"max_concurrency": args.per_model_concurrency, "requests_per_minute": args.rpm}
    flags = {k: v for k, v in flags.items() if v is not None}
    models = tuple(model_spec(name, **{**table.get(name, {}), **flags}) for name in dict.fromkeys(args.models))
    if args.fetch_delay < 0:
        raise ConfigError("--fetch-delay must not be negative.")
    tools = ToolSettings(searxng_url=args.searxng_url, allow_private_urls=args.allow_private_urls,
                         per_host_delay_s=args.fetch_delay)
    tools = apply_search_options(tools, providers=args.search_providers, config=args.search_config)
    return RunSettings(
        models=models, base_url=args.base_url, tools=tools, concurrency=args.concurrency,
        max_turns=args.max_turns, verdict_timeout_s=args.timeout, max_lead=max_lead(args, len(models)),
        grace_s=args.grace, max_cost_usd=args.max_cost, retry_statuses=retry,
    )


def max_lead(args: argparse.Namespace, n_models: int) -> int:
    """--max-lead, or by default enough lead for --concurrency to be reached.

    The lead bound lets at most about lead x models verdicts be in flight when
    the models keep pace, so a fixed 10 would hold --concurrency 256 with four
    models to about 40. Four times the edits the concurrency spans lets one
    verdict take twice the usual time without idling slots: at twice, `make
    bench` saw --concurrency 256 drop to 216 in flight while a slow verdict
    held the window.
    An explicit value is kept, with a warning when it caps the concurrency.
    """
    if args.max_lead is None:
        return max(DEFAULT_MAX_LEAD, math.ceil(LEAD_PER_SLOT * args.concurrency / max(1, n_models)))
    if args.max_lead * n_models < args.concurrency:
        print(f"warning: --max-lead {args.max_lead} with {n_models} model(s) lets about "
              f"{args.max_lead * n_models} verdicts run at once, fewer than --concurrency {args.concurrency}",
              file=sys.stderr)
    return int(args.max_lead)


LIMIT_FIELDS = {"max_concurrency": int, "requests_per_minute": float, "context_window": int, "input_price": float, "output_price": float}


def load_limits(path: Path) -> dict[str, dict[str, object]]:
    """The per-model table; flags given on the command line win over it."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"--limits {path}: cannot read it ({exc}).") from None
    if not isinstance(data, dict):
        raise ConfigError(f"--limits {path}: expected a mapping of model name to settings.")
    table: dict[str, dict[str, object]] = {}
    for model, fields in data.items():
        if not isinstance(fields, dict) or set(fields) - set(LIMIT_FIELDS):
            raise ConfigError(f"--limits {path}: {model}: allowed keys are {', '.join(LIMIT_FIELDS)}.")
        table[str(model)] = {k: LIMIT_FIELDS[k](v) for k, v in fields.items()}
    return table


def finish(report, request) -> int:  # type: ignore[no-untyped-def]
    """The last lines a user reads: what happened, and what to do next."""
    out = request.out
    tally, outcome = report.tally, report.outcome
    print(f"Recorded {outcome.recorded} verdict(s) this session; {tally.done}/{tally.total} pairs done; "
          f"spend ${tally.spent_usd:.4f}. Run directory: {request.run_dir}", file=out)
    again = "fanout " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["run"] else "the same `fanout run` command"
    if report.interrupted:
        print(f"Interrupted. Resume with: {again}", file=out)
        return EXIT_INTERRUPTED
    if outcome.stop_reason:
        print(f"Stopped: {outcome.stop_reason}. Raise --max-cost and run again to resume: {again}", file=out)
        return 0
    errors = tally.count("error")
    if errors:
        print(f"{errors} pair(s) ended in infrastructure errors; run again to retry them: {again}", file=out)
        return 1
    return 0
