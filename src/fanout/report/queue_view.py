"""The human queue as a list to work through: `fanout queue RUN_DIR`.

One line per edit the committee paused (fanout.stats.decisions), least sure
first (the order of the report's queue and the desk): the item, what changed,
why it paused, what each model said, the diff to open on Wikidata, and the
human decision where one stands. The same edits and counts as the report's
human queue and the desk, under the same options.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fanout.base.safe_text import for_terminal
from fanout.stats.decisions import LEAST_SURE_FIRST, set_aside_rule
from fanout.report.fmt import short_names
from fanout.report.document import Report
from fanout.report.human_section import guarantee_heading, waiting
from fanout.report.columns import EditRow
from fanout.report.table import Table


def queue_rows(report: Report) -> list[dict[str, Any]]:
    """The paused edits least sure first, as flat-ish rows (verdicts: model -> verdict, or None; set_aside:
    model -> the rule its verdict broke, for each verdict that casts no committee vote; human: the decision of
    `fanout review` that stands, or None)."""
    edits = {e.rcid: e for e in report.run.edits}
    by_edit = report.run.by_edit()
    rows = []
    for row in report.table("human_queue"):
        edit = edits[row["rcid"]]
        records, words = by_edit[edit.rcid], report.edit_words(edit)
        rows.append({
            "rcid": edit.rcid,
            "qid": edit.qid,
            "item": words.item,
            "property": edit.property,
            "what": words.what,
            "change": words.change,
            "why": row["reasons"],
            "verdicts": {m: records[m].verdict if m in records else None for m in report.models},
            "statuses": {m: records[m].status if m in records else "not run" for m in report.models},
            "set_aside": {m: rule for m in report.models if m in records
                          and (rule := set_aside_rule(records[m], report.options.rule_violations))},
            "diff_url": words.diff_url,
            "mean_confidence": row["mean_confidence"],
            "dawid_skene_posterior": row["dawid_skene_confidence"],
            "human": row["human"],
        })
    return rows


def queue_json(report: Report, run_dir: Path, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """`fanout queue --json`: the counts, the committee's settings, and the paused edits' rows (queue_rows)."""
    t = report.totals
    settings = {k: v for k, v in report.to_json()["settings"].items() if k not in ("project_edits", "policy")}
    return {"run_dir": str(run_dir), "edits": t["edits"], "paused": t["paused"], "auto_passed": t["auto_passed"],
            "decided": t["decided"], "waiting_for_human": t["waiting_for_human"],
            "paused_decided_by_human": t["paused_decided_by_human"], "order": LEAST_SURE_FIRST, "settings": settings,
            "guarantee": report.to_json()["guarantee"], "certificates": report.table("certificates"), "queue": rows}


def queue_table(report: Report) -> Table[EditRow]:
    """The paused edits as rows of the report's edit table (`fanout queue --csv`: the columns of `report --csv`),
    least sure first."""
    table = report.edit_table()
    rows = {row.rcid: row for row in table.rows}
    return Table(table.columns, [rows[q["rcid"]] for q in report.table("human_queue")])


def render_queue(report: Report, rows: list[dict[str, Any]]) -> str:
    """A count line (the waiting count as the report gives it), then one line per paused edit, least sure first."""
    t, limits, g = report.totals, report.options.thresholds, report.options.guarantee
    names = short_names(report.models)
    passing = (f"auto-decisions certified at {g.target:g} agreement, risk {g.risk:g}" if g.applied
               else f"--autopass {limits.autopass:g}")
    head = (f"{len(rows)} of {t['edits']} edits paused for a human (--pause {limits.pause:g}, --delta {limits.delta:g}, "
            f"{passing}); {t['auto_passed']} auto-passed, {t['decided']} decided by the committee; "
            f"{waiting(report)}; least sure first (mean confidence)")
    return "\n".join([head, *(_line(row, names) for row in rows), *certificate_lines(report)]) + "\n"


def certificate_lines(report: Report) -> list[str]:
    """After the queue, what may decide alone: each rule's certificate, as the report and the desk give it."""
    certificates = report.table("certificates")
    if not certificates:
        return []
    lines = ["", guarantee_heading(report)]
    for c in certificates:
        if c["certified"]:
            lines.append(f"{c['rule']}: certified at confidence >= {c['threshold']:.2f}, decides {c['coverage']:.0%} "
                         f"of the edits alone ({c['decided_alone']}), on {c['rests_on']} random human decisions "
                         f"({c['disagreements']} disagree)")
        else:
            lines.append(f"{c['rule']}: {c['why']}")
    return lines


def _line(row: dict[str, Any], names: dict[str, str]) -> str:
    item = f"{row['qid']} ({row['item']})" if row["item"] else row["qid"]
    said = ", ".join(f"{names[m]} {verdict or row['statuses'][m]}" + (" (set aside)" if m in row["set_aside"] else "")
                     for m, verdict in row["verdicts"].items())
    parts = [item, row["what"] or "", row["change"], f"why: {row['why']}", said, row["diff_url"] or "no diff link"]
    if row["human"] is not None:
        parts.append(f"human: {row['human']}")
    return " · ".join(for_terminal(part) for part in parts)  # labels and values come from the wiki: shown, not obeyed
