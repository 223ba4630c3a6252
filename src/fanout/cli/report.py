"""`fanout report RUN_DIR`: compare the models of a run (agreement, votes, accuracy, cost)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from fanout.cli.terminal import say
from fanout.cli.committee_options import THRESHOLDS_ENVIRONMENT, add_committee_options, committee_settings
from fanout.cli.epilog import BAD_INPUT, epilog
from fanout.base.errors import ConfigError
from fanout.cli.outputs import add_output, outputs_of

if TYPE_CHECKING:
    from fanout.report import Report

CSV_TABLES = {"edits": "", "accuracy": "accuracy_ppi", "certificates": "certificates"}
"""--csv-table's choices: the edit table, or a report table by its JSON name."""
CSV_HEADS = (b"rcid,qid,item,", b'"rcid","qid","item",', b"subject,kind,proxy,", b"rule,stance,target_agreement,")
"""How each table --csv writes begins: an earlier report's CSV, which a new one may replace."""
DEFAULT_HTML = "report.html"
DEFAULT_JSON = "report.json"
DEFAULT_CSV = "report.csv"
IN_RUN_DIR = "<in run dir>"
"""What a bare --html / --json / --csv stands for (argparse does not type-convert a const)."""
STDOUT = "-"
STDOUT_PATH = Path(STDOUT)
"""`--json -` (or `--csv -`) writes to standard output, as `-` means for most tools."""


EPILOG = epilog(
    environment=[THRESHOLDS_ENVIRONMENT],
    exit_codes=["0 reported", BAD_INPUT + ", e.g. RUN_DIR holds no verdicts yet, or --policy FILE on a run "
                "that did not ask every model"],
    examples=["fanout report runs/exp1 --html --json", "fanout report runs/exp1 --labels truth.yaml --json - | jq .tables",
              "fanout report runs/exp1 --labels truth.yaml --policy policies.yaml",
              "fanout report runs/exp1 --labels truth.yaml --csv edits.csv",
              "fanout report runs/exp1 --pause 0.7 --delta 0.25 --autopass 0.95"],
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s RUN_DIR [--html [OUT]] [--json [OUT]] [--csv [OUT]] [options]"
    parser.add_argument("run_dir", nargs="?", type=Path, metavar="RUN_DIR", help="the --run-dir of a `fanout run`")
    parser.add_argument("--labels", type=Path, metavar="FILE",
                        help="ground truth: a labels file ({labels: [{rcid, truth}]}) or `fanout outcomes` output")
    add_output(parser, "--html", nargs="?", const=IN_RUN_DIR, metavar="OUT", ours=_is_html_report,
                        help=f"write the HTML report to OUT (default RUN_DIR/{DEFAULT_HTML}), and a page per edit "
                             "with the models' transcripts in a folder beside it (RUN_DIR/report/edits/)")
    add_output(parser, "--json", nargs="?", const=IN_RUN_DIR, metavar="OUT", ours=_is_json_report,
                        help=f"write every table as JSON rows to OUT (default RUN_DIR/{DEFAULT_JSON}; "
                             f"{STDOUT}: standard output)")
    add_output(parser, "--csv", nargs="?", const=IN_RUN_DIR, metavar="OUT", ours=_is_csv_report,
                        help=f"write one row per edit (item, property, old → new, diff link, the truth with --labels, "
                             f"each model's verdict and cost, the committee's decision and why) to OUT as CSV "
                             f"(default RUN_DIR/{DEFAULT_CSV}; {STDOUT}: standard output)")
    parser.add_argument("--csv-table", choices=tuple(CSV_TABLES), default="edits",
                        help="what --csv writes: edits (one row per edit, the default), accuracy (each model's and "
                             "committee rule's accuracy from few labels: labels only, PPI and PPI++ with their "
                             "intervals) or certificates (auto-accept's and auto-reject's)")
    parser.add_argument("--project", type=int, default=500, metavar="N",
                        help="project the cost of N more edits at the observed rates (default 500)")
    add_committee_options(parser)
    parser.add_argument("--policy", type=Path, metavar="FILE",
                        help="score the cascade and router policies of FILE over this run (which must have asked "
                             "every model on every edit, --strategy all) next to each model and committee rule")
    parser.add_argument("-q", "--quiet", action="store_true", help="no terminal summary, only the files")
    parser.add_argument("--force", action="store_true",
                        help="replace an existing --json/--html file that is not an earlier report (never the "
                             "run's own files or inputs)")


def run(args: argparse.Namespace) -> int:
    from fanout.report import (
        ReportOptions,
        build_report,
        edit_pages_dir,
        render_summary,
        write_html_report,
    )

    if args.project < 0:
        raise ConfigError("--project must be 0 or more edits.")
    settings = committee_settings(args)
    run_dir = _run_dir_argument(args)
    outputs = {flag: _output_path(run_dir, value, default) for flag, value, default in (
        ("--json", args.json, DEFAULT_JSON), ("--html", args.html, DEFAULT_HTML), ("--csv", args.csv, DEFAULT_CSV))
        if value is not None}
    if outputs.get("--html") == STDOUT_PATH:
        raise ConfigError("--html writes a page and a folder of edit pages beside it, so it needs a file, not -")
    if list(outputs.values()).count(STDOUT_PATH) > 1:
        raise ConfigError("only one of --json and --csv can write to standard output (-); give the other a file")
    writer = outputs_of(args)
    writer.add_run(run_dir)
    for flag, path in outputs.items():
        writer.check(path, flag, OURS[flag])
    if "--html" in outputs:
        writer.check_folder(edit_pages_dir(outputs["--html"]), "--html's edit pages")
    options = ReportOptions(
        labels_path=args.labels,
        project_edits=args.project,
        policy_path=args.policy,
        **settings,
    )
    report = build_report(run_dir, options)
    written = []
    edit_pages: list[Path] = []
    if "--json" in outputs:
        text = json.dumps(report.to_json(), indent=1, ensure_ascii=False, allow_nan=False)
        written.append(writer.write(outputs["--json"], "--json", text, OURS["--json"]))
    if "--csv" in outputs:
        written.append(writer.write(outputs["--csv"], "--csv", csv_text(report, args.csv_table), OURS["--csv"]))
    if "--html" in outputs:
        writer.check(outputs["--html"], "--html", OURS["--html"])
        page, *edit_pages = write_html_report(report, outputs["--html"])
        written.append(page)
    # JSON on standard output keeps it to itself: the summary and notes go to stderr then.
    notes = sys.stderr if STDOUT_PATH in outputs.values() else sys.stdout
    if not args.quiet:
        say(render_summary(report), end="", file=notes)
    for path in written:
        if path != STDOUT_PATH:
            say(f"wrote {path}", file=notes)
    if edit_pages:
        say(f"wrote {len(edit_pages)} edit pages in {edit_pages[0].parent}", file=notes)
    return 0


def csv_text(report: Report, choice: str) -> str:
    """The CSV --csv-table asks for; ConfigError when that table has no row yet (an empty file says nothing)."""
    name = CSV_TABLES[choice]
    if not name:
        return report.edit_table().csv()
    table = report.tables[name]
    if not table.rows:
        raise ConfigError(f"--csv-table {choice}: no rows yet: nobody has decided an edit of this run (reviews.jsonl "
                          "of `fanout review`, or a labels file), so there is nothing to certify or estimate")
    return table.csv()


def _is_json_report(head: bytes) -> bool:
    """What run() writes: json.dumps(report.to_json(), indent=1), whose first key is fanout_version."""
    return head.startswith(b'{\n "fanout_version": ')


def _is_csv_report(head: bytes) -> bool:
    """What --csv writes: the edit table (its header starts with rcid, qid and item) or another --csv-table."""
    return head.startswith(CSV_HEADS)


def _is_html_report(head: bytes) -> bool:
    """What fanout.report.page_shell.page writes for the report, titled "fanout report · RUN"."""
    return head.startswith(b"<!doctype html>") and b"<title>fanout report" in head


OURS = {"--json": _is_json_report, "--html": _is_html_report, "--csv": _is_csv_report}
"""How each output of the report starts: an earlier report is replaced without --force."""


def _run_dir_argument(args: argparse.Namespace) -> Path:
    """RUN_DIR, also when a bare --html or --json before it took it for its file: an option whose value is
    optional never eats the positional. A run directory is a directory, which no output file can be."""
    if args.run_dir is not None:
        return Path(args.run_dir)
    taken = [flag for flag in ("html", "json", "csv") if getattr(args, flag) not in (None, IN_RUN_DIR)
             and Path(getattr(args, flag)).is_dir()]
    if len(taken) != 1:
        raise ConfigError("RUN_DIR is missing: give the run directory, e.g. `fanout report runs/exp1 --html`")
    run_dir = Path(getattr(args, taken[0]))
    setattr(args, taken[0], IN_RUN_DIR)
    return run_dir


def _output_path(run_dir: Path, given: Path | str, default_name: str) -> Path:
    """A bare flag writes into the run directory; a path given is taken as is."""
    return run_dir / default_name if given == IN_RUN_DIR else Path(given)
