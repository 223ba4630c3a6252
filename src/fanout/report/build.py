"""Building a report: read the run and its truth, build every registered table, add the totals and the notes.

The reading is here (the run's files through fanout.report.run_data, the
labels through fanout.report.truth, the human decisions, a --policy file);
each table is built by its builder (fanout.report.builders) from one shared
Basis (fanout.report.basis), whose figures come from fanout.stats.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fanout.judging.policy_file import load_policies
from fanout.report.basis import Basis, ReadRun
from fanout.report.builders import build_tables
from fanout.report import builders_claims  # noqa: F401  (registers the claims workload's tables)
from fanout.report import builders_team  # noqa: F401  (registers the research team's tables)
from fanout.report import builders_watch  # noqa: F401 - registers a watched run's prefilter table
from fanout.report.document import Report, ReportOptions, ReportTables
from fanout.report.notes import report_notes
from fanout.report.run_data import load_run
from fanout.report.truth import labels_in_run_dir, load_labels, stream_outcomes, with_stream_outcomes
from fanout.stats.agreement import most_agreeable
from fanout.stats.calibration import Bin, reliability_bins
from fanout.stats.decisions import OUTCOMES
from fanout.stats.scoring import best_model
from fanout.stats.spend import cheapest_model, cost_totals
from fanout.store.reviews import read_reviews


def build_report(run_dir: Path, options: ReportOptions | None = None) -> Report:
    """Read the run (and labels) and compute every table; ConfigError for unusable input."""
    options = options or ReportOptions()
    basis = Basis(read_run(run_dir, options), options)
    tables = ReportTables(build_tables(basis))
    generated = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Report(basis.run, options, basis.labels, basis.consensus, basis.decisions, basis.costs, tables,
                  report_totals(basis, tables), report_notes(basis), generated, basis.described.changes,
                  reviews=basis.reviews, calibration_bins=calibration_bins(basis), people=basis.people,
                  confidence_read=basis.ctx.confidence_read)


def read_run(run_dir: Path, options: ReportOptions) -> ReadRun:
    """Everything the report reads, a --policy file first (its mistakes are the cheapest to find)."""
    specs = load_policies(options.policy_path) if options.policy_path else []
    run = load_run(run_dir)
    found = None if options.labels_path else labels_in_run_dir(run_dir)
    labels_path = options.labels_path or found
    labels = with_stream_outcomes(load_labels(labels_path) if labels_path else None, stream_outcomes(run_dir))
    return ReadRun(run, labels, found, read_reviews(run_dir), specs)


def report_totals(basis: Basis, tables: ReportTables) -> dict[str, Any]:
    """The run's figures in one flat mapping (`report --json`'s totals): its costs, then its counts."""
    run, decisions = basis.run, basis.decisions
    return cost_totals(basis.costs, basis.options.project_edits) | {
        "edits": len(run.edits),
        "records": len(run.records),
        "with_verdict": sum(r.verdict is not None for r in run.records),
        "needs_human": len(tables["human_queue"]),
        "paused_decided_by_human": sum(row.human is not None for row in tables["human_queue"].rows),
        "waiting_for_human": sum(row.human is None for row in tables["human_queue"].rows),
        **{outcome.replace("-", "_"): sum(d.outcome == outcome for d in decisions) for outcome in OUTCOMES},
        "labelled_edits": sum(rcid in basis.truth for rcid in basis.by_edit),
        "human_decided_edits": sum(rcid in basis.human for rcid in basis.by_edit),
        "best_model": best_model(basis.model_scores, basis.comparisons),
        "cheapest_model": cheapest_model(basis.costs),
        "most_agreeable_model": most_agreeable(tables["model_agreement"].rows),
    }


def calibration_bins(basis: Basis) -> dict[str, list[Bin]]:
    """Model -> the bins of its reliability diagram; none without labels."""
    if not basis.labels:
        return {}
    return {m: reliability_bins([s for k, s in basis.scored.items() if k[1] == m]) for m in basis.run.models}
