"""The committee's options, shared by `fanout report`, `queue`, `review` and `compare` so all decide the same edits.

The thresholds are plain argparse options; --target-agreement and --risk are
declared once (fanout.judging.policy.GuaranteeSettings, fanout.base.declare)
and added from that declaration.
"""

from __future__ import annotations

import argparse
from typing import Any

from fanout.base.declare import check_declared, given_values, options_of
from fanout.base.errors import ConfigError
from fanout.cli.declared import add_declared, add_options, options_from_args
from fanout.judging.policy import GuaranteeSettings, Thresholds


THRESHOLDS_ENVIRONMENT = ("JUDGE_PAUSE_THRESHOLD, JUDGE_DELTA_THRESH, JUDGE_MIN_CONF_FOR_AUTOPASS: the defaults of "
                          "--pause, --delta and --autopass (seed 003's names; a flag wins)")
"""For a command's --help: the variables its thresholds read."""


def add_committee_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--min-agreement", type=float, default=0.75, metavar="X",
                        help="queue an edit for a human when the majority holds less than this share (default 0.75)")
    parser.add_argument("--quorum", type=float, default=0.75, metavar="X",
                        help="queue an edit when fewer than this share of the run's models gave a verdict "
                             "(default 0.75: 3 of 4); after --strategy cascade or router, of the models it asked")
    parser.add_argument("--min-confidence", type=float, default=0.8, metavar="X",
                        help="queue an edit when the Dawid–Skene posterior is below this (default 0.8)")
    add_options(parser, options_of(Thresholds).values())  # --pause, --delta, --autopass: declared with Thresholds
    parser.add_argument("--no-calibrate", dest="calibrate", action="store_false",
                        help="with --labels, let the thresholds read each model's confidence as stated (or measured "
                             "by --samples) instead of through its calibration map fitted on its other labelled edits")
    parser.add_argument("--rule-violations", choices=("abstain", "count"), default="abstain",
                        help="a verified-high/-low verdict with no verified source: abstain = it casts no "
                             "committee vote (default), count = it votes like any other")
    add_declared(parser, GuaranteeSettings)


def committee_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The ReportOptions fields these options set, each checked (ConfigError names the flag)."""
    from fanout.report import QueuePolicy

    thresholds, sources = thresholds_from(args)
    shares = (("--min-agreement", args.min_agreement), ("--min-confidence", args.min_confidence), ("--quorum", args.quorum))
    for flag, value in shares:
        if not 0.0 <= value <= 1.0:
            raise ConfigError(f"{flag} must be between 0 and 1, got {value}.")
    return {
        "policy": QueuePolicy(min_agreement=args.min_agreement, min_confidence=args.min_confidence, quorum=args.quorum),
        "thresholds": thresholds,
        "sources": sources,
        "rule_violations": args.rule_violations,
        "calibrate": args.calibrate,
        "guarantee": guarantee_settings(args),
    }


def thresholds_from(args: argparse.Namespace) -> tuple[Thresholds, dict[str, str]]:
    """The thresholds from the flags, else seed 003's variables, else their defaults; and, for each value an
    environment variable gave, its name (what the report records as the value's source)."""
    options = options_from_args(args, Thresholds)
    for name, option in options_of(Thresholds).items():
        if options[name] is not None and option.check is not None:
            option.check(options[name], options.label(name))
    thresholds = Thresholds(**given_values(options, Thresholds))
    return thresholds, {name: source for name, source in options.sources.items() if not source.startswith("-")}


def guarantee_settings(args: argparse.Namespace) -> GuaranteeSettings:
    """--target-agreement and --risk as given, each checked (a message names the flag)."""
    options = options_from_args(args, GuaranteeSettings, environ={})
    settings = GuaranteeSettings(**given_values(options, GuaranteeSettings))
    check_declared(settings, options.sources)
    return settings
