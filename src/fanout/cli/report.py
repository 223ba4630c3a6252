"""`fanout report RUN_DIR`: compare the models of a run (agreement, votes, accuracy, cost)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from fanout.errors import ConfigError
from fanout.store.layout import refuse_run_file

DEFAULT_HTML = "report.html"
DEFAULT_JSON = "report.json"
IN_RUN_DIR = "<in run dir>"
"""What a bare --html / --json stands for (argparse does not type-convert a const)."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --run-dir of a `fanout run`")
    parser.add_argument("--labels", type=Path, metavar="FILE",
                        help="ground truth: a labels file ({labels: [{rcid, truth}]}) or `fanout outcomes` output")
    parser.add_argument("--html", nargs="?", const=IN_RUN_DIR, metavar="OUT",
                        help=f"write the HTML report (default RUN_DIR/{DEFAULT_HTML}), and a page per edit "
                             "with the models' transcripts in a folder beside it (RUN_DIR/report/edits/)")
    parser.add_argument("--json", nargs="?", const=IN_RUN_DIR, metavar="OUT",
                        help=f"write every table as JSON rows (default RUN_DIR/{DEFAULT_JSON})")
    parser.add_argument("--project", type=int, default=500, metavar="N",
                        help="project the cost of N more edits at the observed rates (default 500)")
    parser.add_argument("--min-agreement", type=float, default=0.75, metavar="X",
                        help="queue an edit for a human when the majority holds less than this share (default 0.75)")
    parser.add_argument("--quorum", type=float, default=0.75, metavar="X",
                        help="queue an edit when fewer than this share of the run's models gave a verdict "
                             "(default 0.75: 3 of 4)")
    parser.add_argument("--min-confidence", type=float, default=0.8, metavar="X",
                        help="queue an edit when the Dawid–Skene posterior is below this (default 0.8)")
    parser.add_argument("--rule-violations", choices=("abstain", "count"), default="abstain",
                        help="a verified-high/-low verdict with no verified source: abstain = it casts no "
                             "committee vote (default), count = it votes like any other")
    parser.add_argument("-q", "--quiet", action="store_true", help="no terminal summary, only the files")


def run(args: argparse.Namespace) -> int:
    from fanout.analysis import (
        QueuePolicy,
        ReportOptions,
        build_report,
        edit_pages_dir,
        render_summary,
        write_html_report,
    )

    _check_ranges(args)
    outputs = {flag: _output_path(args.run_dir, value, default) for flag, value, default in (
        ("--json", args.json, DEFAULT_JSON), ("--html", args.html, DEFAULT_HTML)) if value is not None}
    for flag, path in outputs.items():
        refuse_run_file(path, flag)
    if "--html" in outputs:
        refuse_run_file(edit_pages_dir(outputs["--html"]), "--html's edit pages")
    options = ReportOptions(
        labels_path=args.labels,
        project_edits=args.project,
        policy=QueuePolicy(min_agreement=args.min_agreement, min_confidence=args.min_confidence, quorum=args.quorum),
        rule_violations=args.rule_violations,
    )
    report = build_report(args.run_dir, options)
    written = []
    edit_pages: list[Path] = []
    if "--json" in outputs:
        text = json.dumps(report.to_json(), indent=1, ensure_ascii=False, allow_nan=False)
        written.append(_write(outputs["--json"], text))
    if "--html" in outputs:
        page, *edit_pages = write_html_report(report, outputs["--html"])
        written.append(page)
    if not args.quiet:
        print(render_summary(report), end="")
    for path in written:
        print(f"wrote {path}")
    if edit_pages:
        print(f"wrote {len(edit_pages)} edit pages in {edit_pages[0].parent}")
    return 0


def _check_ranges(args: argparse.Namespace) -> None:
    if args.project < 0:
        raise ConfigError("--project must be 0 or more edits.")
    shares = (("--min-agreement", args.min_agreement), ("--min-confidence", args.min_confidence), ("--quorum", args.quorum))
    for flag, value in shares:
        if not 0.0 <= value <= 1.0:
            raise ConfigError(f"{flag} must be between 0 and 1, got {value}.")


def _output_path(run_dir: Path, given: Path | str, default_name: str) -> Path:
    """A bare flag writes into the run directory; a path given is taken as is."""
    return run_dir / default_name if given == IN_RUN_DIR else Path(given)


def _write(path: Path, text: str) -> Path:
    """Temp file and rename, so a reader never sees half a report."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
