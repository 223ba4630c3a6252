"""`fanout watch --run-dir R`: judge Wikidata's edits as they happen; the same command goes on after any stop."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fanout.base.declare import given_values
from fanout.base.errors import ConfigError, DiskFull
from fanout.cli.declared import add_declared, options_from_args
from fanout.cli.epilog import BAD_INPUT, ENDPOINT_KEYS, INTERRUPTED, SEARCH_KEYS, epilog
from fanout.cli.run import EXIT_DISK_FULL, EXIT_INTERRUPTED, settings_from_options
from fanout.engine.settings import RunSettings
from fanout.wikidata.api import CONTACT_ENV
from fanout.wikidata.patrol_filter import FILTERS, PatrolFilter
from fanout.workloads.patrol.live.settings import WatchSettings

if TYPE_CHECKING:
    import httpx

    from fanout.engine.runner import RunReport

EPILOG = epilog(
    default_models=True,
    environment=[ENDPOINT_KEYS, SEARCH_KEYS, f"{CONTACT_ENV} (the --contact default)"],
    exit_codes=["0 ended (--max-edits reached)", "1 the stream or the wiki failed for good (the same command goes "
                "on from where it stopped)", BAD_INPUT + ", or RUN_DIR is in use by another run",
                "75 disk full (free space; the same command goes on)",
                INTERRUPTED + " or SIGTERM (the same command goes on)"],
    examples=["fanout watch --run-dir runs/live -m deepseek/deepseek-v3.2 --contact you@example.org",
              "fanout watch --run-dir runs/live --editors anonymous-or-newcomers --max-cost-per-hour 0.5",
              "fanout watch --run-dir runs/live --prefilter revertrisk --prefilter-threshold 0.2"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    """The watch's own options (stream, filters, queue, prefilter), then the run's (fanout.engine.settings)."""
    parser.usage = "%(prog)s --run-dir RUN_DIR [-m MODEL[,MODEL...]] [options]"
    parser.add_argument("--run-dir", metavar="RUN_DIR", help="where the log, the verdicts and the watch's files go "
                        "(required; the same command goes on after a stop)")
    parser.add_argument("--allow-settings-change", "--force", dest="allow_settings_change", action="store_true",
                        help="go on although the prompt, --samples or a cascade's models changed; the manifest "
                             "records each change")
    add_declared(parser, WatchSettings, (*WatchSettings.GROUPS, FILTERS))
    add_declared(parser, RunSettings, RunSettings.GROUPS)


def watch_settings(args: argparse.Namespace) -> WatchSettings:
    """The watch's settings from the command line (and $FANOUT_CONTACT), each checked."""
    options = options_from_args(args, WatchSettings)
    return WatchSettings(**given_values(options, WatchSettings), filter=PatrolFilter(**given_values(options, PatrolFilter)))


def _run_dir(value: str | None) -> Path:
    if value is None or not value.strip():
        raise ConfigError("--run-dir is missing: a watch keeps its position, queue and verdicts there, e.g. "
                          "`fanout watch --run-dir runs/live`")
    return Path(value)


def run(args: argparse.Namespace, transport: httpx.AsyncBaseTransport | None = None) -> int:
    import anyio

    from fanout.cli.progress_display import show_progress
    from fanout.engine.intake import AdmissionLimits
    from fanout.engine.live import LiveRequest, run_live
    from fanout.engine.options import input_files
    from fanout.engine.runner import RunRequest
    from fanout.store.layout import WATCH_EDITS_NAME
    from fanout.workloads import get_workload
    from fanout.workloads.patrol.live.clients import watch_contact

    run_dir = _run_dir(args.run_dir)
    watch = watch_settings(args)
    watch_contact(watch)  # refused here, before the run directory is touched
    options = options_from_args(args, RunSettings)
    request = LiveRequest(
        run=RunRequest(snapshot_path=run_dir / WATCH_EDITS_NAME, run_dir=run_dir, settings=settings_from_options(options),
                       allow_settings_change=args.allow_settings_change, inputs=input_files(options),
                       workload=get_workload(), display=show_progress),
        source_pin=f"stream:{watch.filter.wiki}",
        admission=AdmissionLimits(watch.max_edits_per_minute, watch.max_cost_per_hour),
        recorded={"watch": watch.summary()},
    )
    try:
        report = anyio.run(lambda: run_live(request, _source_opener(watch, request.run.settings, transport)))
    except DiskFull as exc:
        print(f"fanout watch: {exc}", file=sys.stderr)
        return EXIT_DISK_FULL
    return finish(report, request)


def _source_opener(watch: WatchSettings, settings: RunSettings, transport: httpx.AsyncBaseTransport | None) -> Any:
    """What the engine calls to open the watch once the run directory is the process's (fanout.engine.live)."""
    from fanout.workloads.patrol.live.clients import open_patrol_source

    return lambda ctx: open_patrol_source(ctx.run_dir, watch, settings.tools, logged=ctx.logged, out=ctx.out,
                                          holding=ctx.holding, transport=transport)


def finish(report: RunReport, request: Any) -> int:
    """The last lines: what this session judged, where the watch stands, and how to go on."""
    from fanout.workloads.patrol.live.state import read_state, status_lines

    out, run = request.run.out, request.run
    tally, outcome = report.tally, report.outcome
    print(f"Judged {outcome.items_in} edit(s) this session ({outcome.recorded} record(s)); {tally.done} pairs "
          f"logged in all; spend {tally.spend_text()}. Run directory: {run.run_dir}", file=out)
    state = read_state(run.run_dir)
    if state is not None:
        print("\n".join(status_lines(state, holder=None)), file=out)
    again = "fanout " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["watch"] else "the same `fanout watch` command"
    if outcome.disk_full is not None:
        print(f"Stopped: {outcome.disk_full}: {again}", file=out)
        return EXIT_DISK_FULL
    if report.interrupted:
        print(f"Stopped. Go on with: {again}", file=out)
        return EXIT_INTERRUPTED
    if outcome.stop_reason:
        print(f"Stopped: {outcome.stop_reason}. Go on with: {again}", file=out)
        return 0
    if outcome.source_failed:
        print(f"Stopped: the stream or the wiki failed: {outcome.source_failed}. Go on with: {again}", file=out)
        return 1
    return 0
