"""`fanout run SNAPSHOT ...` (or `--snapshot PATH`): run every (edit, model) pair; the same command resumes."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path
from typing import TextIO, cast

from fanout.base.safe_text import TerminalStream
from fanout.cli.terminal import say
from fanout.cli.declared import add_declared, add_option, options_from_args
from fanout.cli.epilog import BAD_INPUT, ENDPOINT_KEYS, INTERRUPTED, SEARCH_KEYS, epilog
from fanout.cli.model_options import trailing_positional
from fanout.engine.loop_lag import ENV_VAR as LAG_ENV
from fanout.base.declare import Options, flag, given_values, options_of
from fanout.base.errors import ConfigError, DiskFull
from fanout.engine.options import MeasuredAccuracy, input_files, settings_from
from fanout.engine.settings import RunSettings
from fanout.workloads import workload_for
from fanout.workloads.settings import WORKLOAD, WorkloadSettings

SNAPSHOT_SUFFIXES = (".yaml", ".yml")
EXIT_INTERRUPTED = 130
EXIT_DISK_FULL = 75
"""sysexits' EX_TEMPFAIL: a temporary failure, and the same command is the way on."""
SNAPSHOT_OPTION = flag(
    "--snapshot", name="snapshot_option", type=Path, metavar="PATH",
    help="the snapshot YAML as seed 001's runner takes it: the same as SNAPSHOT (give one, or both naming one file)")
"""Seed 001's spelling of the snapshot, beside the positional SNAPSHOT that `fanout run today.yaml` uses."""


def _defaults_from_environment() -> str:
    """The environment variables options read as their defaults, with the flags they stand for."""
    read = {option.label if not option.hidden else f"the {option.name.replace('_', ' ')} setting":
            [env.name for env in option.env] for option in options_of(RunSettings).values() if option.env}
    return "; ".join(f"{', '.join(names)} for {flag}" for flag, names in read.items()) + (
        " (seed 003's names: defaults, a flag wins; see docs/running.md)")


EPILOG = epilog(
    default_models=True,
    environment=[ENDPOINT_KEYS, SEARCH_KEYS, f"{LAG_ENV}=FILE (optional: log event-loop stalls to FILE)",
                 _defaults_from_environment()],
    exit_codes=["0 done, or stopped at --max-cost", "1 some pairs ended in infrastructure errors, or the endpoint "
                "refused a model (run again to retry them), or a text failed --gate (see the run's quarantine.json)", BAD_INPUT + ", or RUN_DIR is in use by another run",
                "75 disk full (free space; the same command resumes)", INTERRUPTED + " (the same command resumes)"],
    examples=["fanout run runs/snapshots/today.yaml --run-dir runs/exp1 --concurrency 8",
              "fanout run --workload claims answers.jsonl --run-dir runs/answers --gate 0.8",
              "fanout run today.yaml -m deepseek/deepseek-v3.2,allenai/olmo-3.1-32b-instruct --dry-run"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    """The run's own options, then every declared setting (fanout.engine.settings), each in its section."""
    parser.usage = "%(prog)s SNAPSHOT|TEXTS|--snapshot PATH [-m MODEL[,MODEL...]] [options]"
    parser.add_argument("snapshot", nargs="?", type=Path, metavar="SNAPSHOT|TEXTS",
                        help="enriched snapshot YAML (from `fanout fetch-edits`); with --workload claims, a JSON Lines "
                             "or YAML file of texts")
    add_option(parser, SNAPSHOT_OPTION)
    parser.add_argument("--run-dir", metavar="RUN_DIR", help="where the log and verdicts go (default: runs/<snapshot name>)")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N edits of the snapshot")
    parser.add_argument("--allow-settings-change", "--force", dest="allow_settings_change", action="store_true",
                        help="resume although the snapshot, the prompt, --samples or a cascade's models changed; the "
                             "manifest records each change (never with another --strategy or other strategy settings)")
    parser.add_argument("--reinvestigate-missing", action="store_true",
                        help="under --evidence shared, investigate again the edits whose evidence evidence.jsonl lost "
                             "and ask every model of them anew (a resume over lost evidence is refused without it)")
    parser.add_argument("--dry-run", action="store_true", help="show the plan; contact and write nothing (no key needed)")
    add_declared(parser, RunSettings, RunSettings.GROUPS)
    add_declared(parser, WorkloadSettings, (WORKLOAD,))


def _run_dir(value: str | None, snapshot: Path) -> Path:
    """--run-dir as given, else runs/<snapshot name>; an empty value once meant the current folder, silently."""
    if value is None:
        return Path("runs") / snapshot.stem
    if not value.strip():
        raise ConfigError("--run-dir is empty; name a folder (--run-dir . for the current one)")
    return Path(value)


def run(args: argparse.Namespace) -> int:
    from fanout.cli.progress_display import show_progress
    from fanout.engine.runner import RunRequest, run_sync

    snapshot = snapshot_argument(args)
    options = options_from_args(args, RunSettings)
    chosen = workload_settings(args)
    workload = workload_for(chosen)
    request = RunRequest(
        snapshot_path=snapshot,
        run_dir=_run_dir(args.run_dir, snapshot),
        settings=settings_from_options(options),
        limit=args.limit,
        allow_settings_change=args.allow_settings_change,
        reinvestigate_missing=args.reinvestigate_missing,
        dry_run=args.dry_run,
        inputs=input_files(options),
        workload=workload,
        display=show_progress,
        out=cast(TextIO, TerminalStream(sys.stdout)),  # every line of the run's quotes endpoints and models: shown, never obeyed
    )
    try:
        report = run_sync(request)
    except DiskFull as exc:  # before the first verdict: the manifest, the snapshot cache or a view did not fit
        say(f"fanout run: {exc}", file=sys.stderr)
        return EXIT_DISK_FULL
    if report is None:
        return 0
    code = finish(report, request)
    if chosen.gate is None or code not in (0, 1):  # interrupted or out of disk: the run is not over, so no gate
        return code
    return max(code, gate(request.run_dir, chosen.gate, request.out))


def workload_settings(args: argparse.Namespace) -> WorkloadSettings:
    """--workload and the settings only a workload reads (--extractor, --gate), checked."""
    return WorkloadSettings(**given_values(options_from_args(args, WorkloadSettings), WorkloadSettings))


def gate(run_dir: Path, threshold: float, out: TextIO) -> int:
    """--gate: each text's committee factuality against THRESHOLD; 1 when one fails (quarantine.json says which)."""
    from fanout.report.gate import gate_run

    result = gate_run(run_dir, threshold)
    print(result.summary(), file=out)
    return 0 if result.passed else 1


def snapshot_argument(args: argparse.Namespace) -> Path:
    """SNAPSHOT or --snapshot PATH; both may be given when they name one file, never two different ones."""
    positional, named = positional_snapshot(args), args.snapshot_option
    if positional is None and named is None:
        raise ConfigError("SNAPSHOT is missing: give the snapshot YAML, e.g. `fanout run today.yaml -m a,b` or "
                          "`--snapshot today.yaml` (--models reads every word after it as a model name)")
    if positional is not None and named is not None and not same_file(positional, Path(named)):
        raise ConfigError(f"SNAPSHOT ({positional}) and --snapshot ({named}) name different files; give one of them")
    return positional if positional is not None else Path(named)


def positional_snapshot(args: argparse.Namespace) -> Path | None:
    """SNAPSHOT, also when `--models a b SNAPSHOT` read it as a model (a file, or a name ending in .yaml/.yml)."""
    if args.snapshot is not None:
        return Path(args.snapshot)
    word = trailing_positional(args, lambda w: Path(w).is_file() or w.endswith(SNAPSHOT_SUFFIXES))
    return None if word is None else Path(word)


def same_file(one: Path, other: Path) -> bool:
    """Two spellings of one file (`today.yaml`, `./today.yaml`, a link to it); by name when one does not exist."""
    try:
        return os.path.samefile(one, other)
    except OSError:
        return one.resolve() == other.resolve()


def settings_from_args(args: argparse.Namespace) -> RunSettings:
    """The settings the parsed command line (and the environment variables its options name) asks for."""
    return settings_from_options(options_from_args(args, RunSettings))


def settings_from_options(options: Options) -> RunSettings:
    """The options checked and completed by the settings; a lead that caps --concurrency is warned about."""
    settings = settings_from(options, router_accuracy(options["router_accuracy"], options["labels"]))
    warning = settings.lead_warning()
    if warning is not None:
        say(f"warning: {warning}", file=sys.stderr)
    return settings


def router_accuracy(run_dir: Path | None, labels: Path | None) -> MeasuredAccuracy | None:
    """--router-accuracy RUN_DIR scored against --labels FILE: read here, by the command that asks for it."""
    if (run_dir is None) != (labels is None):
        raise ConfigError("--router-accuracy RUN_DIR and --labels FILE go together: the run is scored against the labels.")
    if run_dir is None or labels is None:
        return None
    from fanout.report.router_accuracy import measure_accuracy

    return MeasuredAccuracy(measure_accuracy(run_dir, labels), f"{run_dir} scored against {labels}")


def finish(report, request) -> int:  # type: ignore[no-untyped-def]
    """The last lines a user reads: what happened, and what to do next."""
    out = request.out
    tally, outcome = report.tally, report.outcome
    say(f"Recorded {outcome.recorded} record(s) this session; {tally.done}/{tally.total} pairs done; "
          f"spend {tally.spend_text()}. Run directory: {request.run_dir}", file=out)
    say(f"Of the pairs done: {tally.outcomes().summary()}.", file=out)
    if report.tracker is not None:
        say(f"Strategy {report.tracker.summary()}.", file=out)
    again = "fanout " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["run"] else "the same `fanout run` command"
    if outcome.disk_full is not None:
        if outcome.unsaved:
            say(f"{outcome.unsaved} finished verdict(s) did not fit in the log; they run again on resume.", file=out)
        say(f"Stopped: {outcome.disk_full}: {again}", file=out)
        return EXIT_DISK_FULL
    if report.interrupted:
        say(f"Interrupted. Resume with: {again}", file=out)
        return EXIT_INTERRUPTED
    if outcome.spend_cap_usd is not None:
        say(f"Stopped: spend cap ${outcome.spend_cap_usd:g} reached; the run's records hold {tally.spend_text()} in "
              f"all, the verdicts in flight at the stop included. Raise --max-cost and run again to resume: {again}",
              file=out)
        return 0
    if outcome.stop_reason:
        say(f"Stopped: {outcome.stop_reason}. Raise --max-cost and run again to resume: {again}", file=out)
        return 0
    for model, reason in outcome.refused.items():
        say(f"Not run: {model}, refused by the endpoint ({reason}). Its pairs are not recorded: correct the "
              f"name with -m and run again.", file=out)
    refused = tally.count("refused")
    if refused:
        say(f"{refused} pair(s) were refused by the endpoint (request too large, or over the model's context); "
              "they count as done: `fanout status` shows why, and `--retry refused` runs them again.", file=out)
    errors = tally.count("error")
    if errors:
        say(f"{errors} pair(s) ended in infrastructure errors; run again to retry them: {again}", file=out)
    return 1 if errors or outcome.refused else 0
