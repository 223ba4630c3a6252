"""Comparing the models of a run: health, agreement, committee votes, accuracy, cost.

    load        read a run directory (read-only, tolerant of a torn tail)
    health      statuses, effort, sources claimed verified but never fetched
    agreement   Cohen's and Fleiss' kappa, Krippendorff's alpha
    dawid_skene consensus and per-model confusion matrices without ground truth
    committee   majority, weighted and Dawid–Skene decisions; the human queue
    labels      ground truth from a labels file or `fanout outcomes`
    scoring     accuracy and reject precision/recall against the truth
    cost        totals, per-verdict rates and projections
    report      all of the above as tables; summary / html render them
"""

from __future__ import annotations

from fanout.analysis.committee import QueuePolicy
from fanout.analysis.html import render_html
from fanout.analysis.report import Report, ReportOptions, build_report
from fanout.analysis.summary import render_summary

__all__ = ["QueuePolicy", "Report", "ReportOptions", "build_report", "render_html", "render_summary"]
