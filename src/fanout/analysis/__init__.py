"""Comparing the models of a run: health, agreement, committee votes, accuracy, cost.

    load        read a run directory (read-only, tolerant of a torn tail)
    health      statuses, effort, sources claimed verified but never fetched
    agreement   Cohen's and Fleiss' kappa, Krippendorff's alpha
    dawid_skene consensus and per-model confusion matrices without ground truth
    committee   majority, weighted and Dawid–Skene decisions; pause / auto-pass thresholds; the human queue
    labels      ground truth from a labels file or `fanout outcomes`
    human       human decisions (reviews.jsonl of `fanout review`) as a truth source; human_view shows them
    scoring     accuracy and reject precision/recall against the truth
    cost        totals, per-verdict rates and projections
    change      what each edit changed (item, property, old -> new), from the run's snapshot
    replay      --policy: cascades and routers replayed over a run that asked every model
    report      all of the above as tables; summary / html render them
    table       a table's columns, named once, and its terminal, HTML, JSON and CSV renderings
    report_tables  every table's row type and columns (the edit table too: `report --csv`)
    queue       the paused edits, one line each (`fanout queue`)
    html_page   the pages' shell, style and Content-Security-Policy; html_edit an edit's page;
                html_write the first page and the edit pages beside it
"""

from __future__ import annotations

from fanout.analysis.committee import QueuePolicy
from fanout.analysis.html import render_html
from fanout.analysis.html_write import edit_pages_dir, write_html_report
from fanout.analysis.report import Report, ReportOptions, build_report
from fanout.analysis.summary import render_summary

__all__ = [
    "QueuePolicy",
    "Report",
    "ReportOptions",
    "build_report",
    "edit_pages_dir",
    "render_html",
    "render_summary",
    "write_html_report",
]
