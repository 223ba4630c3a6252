"""The report's tables: one column list each, four renderings (terminal, HTML, JSON, CSV) made from it."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

import pytest

from fanout.report.table import Column, Table, check_fields, money, share


@dataclass(frozen=True)
class Spend:
    model: str
    verdicts: int
    cost_usd: float | None
    rate: float | None


SPEND = (
    Column[Spend]("model", "model", left=True),
    Column[Spend]("verdicts", "verdicts"),
    Column[Spend]("cost_usd", "cost", fmt=money(2)),
)
ROWS = [Spend("vendor/alpha", 3, 0.5, 0.25), Spend("vendor/<b>", 1, None, None)]


def test_the_four_renderings_of_a_table() -> None:
    table = Table(SPEND, ROWS)
    assert table.terminal() == ("model         verdicts   cost\n"
                                "------------  --------  -----\n"
                                "vendor/alpha         3  $0.50\n"
                                "vendor/<b>           1      ?")
    assert table.html() == (
        '<div class="scroll"><table><thead><tr><th class="l">model</th><th>verdicts</th><th>cost</th></tr></thead>'
        '<tbody><tr><td class="l">vendor/alpha</td><td>3</td><td>$0.50</td></tr>'
        '<tr><td class="l">vendor/&lt;b&gt;</td><td>1</td><td>?</td></tr></tbody></table></div>')
    assert table.json() == [{"model": "vendor/alpha", "verdicts": 3, "cost_usd": 0.5, "rate": 0.25},
                            {"model": "vendor/<b>", "verdicts": 1, "cost_usd": None, "rate": None}]
    assert table.csv() == "model,verdicts,cost_usd,rate\r\nvendor/alpha,3,0.5,0.25\r\nvendor/<b>,1,,\r\n"


def test_a_column_added_to_the_definition_shows_in_all_four_renderings() -> None:
    per = Column[Spend]("cost_per_verdict_usd", "per verdict", fmt=money(3),
                        value=lambda s: s.cost_usd / s.verdicts if s.cost_usd is not None else None)
    table = Table((*SPEND, per), ROWS)
    assert table.terminal().splitlines()[0].endswith("cost  per verdict")
    assert table.terminal().splitlines()[2].endswith("$0.50       $0.167")
    assert "<th>per verdict</th></tr>" in table.html() and "<td>$0.167</td></tr>" in table.html()
    assert [r["cost_per_verdict_usd"] for r in table.json()] == [0.5 / 3, None]
    assert table.csv().splitlines() == ["model,verdicts,cost_usd,rate,cost_per_verdict_usd",
                                        f"vendor/alpha,3,0.5,0.25,{0.5 / 3!r}", "vendor/<b>,1,,,"]


def test_a_short_heading_a_page_only_column_a_composite_cell_and_a_footer() -> None:
    columns = (
        Column[Spend]("model", "model", left=True),
        Column[Spend]("rate", "cost rate", short="", fmt=share, total=False),
        Column[Spend]("per", "", short="v/$", show=lambda s: f"{s.verdicts}/{s.cost_usd}"),
    )
    table = Table(columns, ROWS[:1], footer=[Spend("total", 3, 0.5, 0.25)])
    assert table.terminal().splitlines() == ["model           v/$", "------------  -----",
                                             "vendor/alpha  3/0.5", "total         3/0.5"]
    assert "<th>cost rate</th></tr>" in table.html() and "<td>25%</td></tr>" in table.html()
    assert '<td class="l">total</td><td></td></tr>' in table.html()  # a rate has no total
    assert list(table.json()[0]) == ["model", "verdicts", "cost_usd", "rate"]  # a shown cell is not data


def test_a_column_shown_only_when_its_rows_need_it() -> None:
    rate = Column[Spend]("rate", "rate", fmt=share, when=lambda rows: any(r.rate for r in rows))
    assert "rate" in Table((*SPEND, rate), ROWS).terminal()
    assert "rate" not in Table((*SPEND, rate), ROWS[1:]).terminal()
    assert "rate" in Table((*SPEND, rate), ROWS[1:]).json()[0]


def test_a_misspelt_or_repeated_column_fails_where_the_table_is_defined() -> None:
    with pytest.raises(TypeError, match="Spend has no field cost for its columns"):
        check_fields(Spend, (*SPEND, Column[Spend]("cost", "cost")))
    check_fields(Spend, SPEND)
    with pytest.raises(ValueError, match=r"a table names a column twice: \['model'\]"):
        Table((*SPEND, SPEND[0]), ROWS)


def test_mapping_rows_keep_every_key_of_the_row_in_the_data() -> None:
    rows = [{"subject": "m/a", "accuracy": 0.75, "accuracy_low": 0.3}]
    table = Table((Column[dict[str, object]]("subject", "subject", left=True),), rows)
    assert json.loads(json.dumps(table.json())) == rows
    assert table.csv() == "subject,accuracy,accuracy_low\r\nm/a,0.75,0.3\r\n"
    assert table.terminal() == "subject\n-------\nm/a"


def test_a_cell_that_is_no_scalar_is_refused() -> None:
    @dataclass(frozen=True)
    class Bad:
        tags: list[str]

    with pytest.raises(TypeError, match="a table cell holds list"):
        Table((Column[Bad]("tags", "tags"),), [Bad(["x"])]).json()
    assert dataclasses.is_dataclass(Bad)


def test_a_cost_column_added_in_one_place_reaches_the_summary_the_page_the_json_and_the_csv(tmp_path) -> None:
    from test_report_support import run_from_table

    from fanout.report import build_report, render_html, render_summary
    from fanout.report.columns import Context, cost_columns
    from fanout.report.fmt import short_names
    from fanout.stats.spend import ModelCost

    report = build_report(run_from_table(tmp_path / "run", {1: ("plausible",) * 3, 2: ("incorrect",) * 3}, cost=0.25))
    per_1k = Column[ModelCost]("cost_per_1k_tokens_usd", "per 1k tokens", fmt=money(3), value=lambda c: (
        1000 * c.total_cost_usd / (c.prompt_tokens + c.completion_tokens)))
    table = report.tables["cost"]
    assert [c.key for c in table.columns] == [c.key for c in cost_columns(Context(short_names(report.models), 500, {}))]
    report.tables = report.tables.replaced("cost", dataclasses.replace(table, columns=(*table.columns, per_1k)))
    summary = render_summary(report).split("\nCost\n")[1]
    assert "next 500 edits  per 1k tokens" in summary
    assert [line.split()[-1] for line in summary.splitlines() if line.startswith(("alpha", "total"))] == [
        "$0.227", "$0.227"]  # 0.50 for 2,200 tokens; the footer has the column's total too
    assert "<th>per 1k tokens</th>" in render_html(report) and "<td>$0.227</td></tr>" in render_html(report)
    assert report.table("cost")[0]["cost_per_1k_tokens_usd"] == 1000 * 0.5 / 2200
    assert report.to_json()["tables"]["cost"][0]["cost_per_1k_tokens_usd"] == 1000 * 0.5 / 2200
    assert report.tables["cost"].csv().splitlines()[0].endswith(",cache_saved_usd,cost_per_1k_tokens_usd")


def test_the_json_of_a_one_edit_run_has_each_typed_row_s_fields_with_their_values(tmp_path) -> None:
    from test_report_support import run_from_table

    from fanout.report import build_report

    run = run_from_table(tmp_path / "run", {7: ("plausible", "incorrect")}, models=("m/a", "m/b"), cost=0.5)
    tables = build_report(run).to_json()["tables"]
    why = "tie; top two 0.50 and 0.50 closer than --delta 0.20"  # one edit: Dawid–Skene queues nothing
    assert tables["committee"] == [{
        "rcid": 7, "qid": "Q7", "property": "P31", "votes": 2, "accept": 1, "unsure": 0, "reject": 1,
        "majority": None, "majority_share": 0.5, "weighted": "accept", "weighted_share": pytest.approx(0.5), "dawid_skene": "accept",
        "dawid_skene_confidence": pytest.approx(0.41250, abs=1e-5), "needs_human": True, "reasons": why,
        "mean_confidence": None, "top_share": 0.5, "second_share": 0.5, "outcome": "paused", "why": why, "truth": None,
        "human": None, "decision": "accept", "settled_by": None, "set_aside": "",
    }]
    assert tables["human_queue"] == tables["committee"]
    assert tables["cost"][0] == {
        "model": "m/a", "records": 1, "cost_known": 1, "cost_unknown": 0, "total_cost_usd": 0.5, "mean_cost_usd": 0.5,
        "prompt_tokens": 1000, "completion_tokens": 100, "mean_prompt_tokens": 1000.0, "mean_completion_tokens": 100.0,
        "projected_edits": 500, "projected_cost_usd": 250.0, "earlier_attempts": 0, "earlier_cost_usd": 0,
        "earlier_cost_unknown": 0, "estimated_cost_usd": 0, "investigations": 0, "investigation_cost_usd": 0,
        "cached_tokens": 0, "cache_write_tokens": 0, "cache_hit_rate": 0.0, "cache_saved_usd": 0.0,
    }
    assert tables["verdicts"][1] == {
        "rcid": 7, "qid": "Q7", "property": "P31", "model": "m/b", "status": "ok", "verdict": "incorrect",
        "stance": "reject", "confidence": None, "confidence_kind": "none", "truth": None, "cost_usd": 0.5,
        "prompt_tokens": 1000, "completion_tokens": 100, "turns": 3, "tool_calls": 0, "sources": 0,
        "verified_never_fetched": 0, "duration_s": 2.0,
    }
    assert [(r["model"], r["weight_source"]) for r in tables["reliability"]] == [("m/a", "dawid_skene"),
                                                                                 ("m/b", "dawid_skene")]
    assert len(tables["dawid_skene_confusion"]) == 2 * 3 * 3  # two models, 3 true x 3 given stances


def test_an_edit_page_s_verdict_table_names_a_model_not_run_on_the_edit(tmp_path) -> None:
    from test_report_support import make_record, write_run

    from fanout.report import build_report
    from fanout.report.edit_pages import render_edit_pages

    records = [make_record(1, "m/a", "plausible"), make_record(1, "m/b", "incorrect"), make_record(2, "m/a", "suspect")]
    pages = dict(render_edit_pages(build_report(write_run(tmp_path / "run", records)), "../../report.html"))
    row = pages[2].split('<tr><td class="l">b</td>')[1].split("</tr>")[0]
    assert row == '<td class="l"><span class="muted">not run</span></td><td class="l"></td>' + "<td></td>" * 6  # confidence, cost, turns, tool calls, tokens, seconds
    assert '<td class="l"><a href="#model-1">a</a></td><td class="l"><span class="v v-suspect">suspect</span></td>' \
        in pages[2]


def test_a_table_is_one_builder_and_its_registration_and_reaches_the_json_and_every_rendering(
        tmp_path, monkeypatch) -> None:
    from test_report_support import run_from_table

    from fanout.report import build_report
    from fanout.report import builders
    from fanout.report.basis import Basis

    monkeypatch.setattr(builders, "TABLES", dict(builders.TABLES))  # the registration ends with the test

    @builders.table("verdicts_per_model")
    def verdicts_per_model(b: Basis) -> Table[dict[str, object]]:
        counts = {m: sum(recs[m].verdict is not None for recs in b.by_edit.values() if m in recs) for m in b.run.models}
        columns = (Column[dict[str, object]]("model", "model", left=True),
                   Column[dict[str, object]]("verdicts", "verdicts"))
        return Table(columns, [{"model": m, "verdicts": n} for m, n in counts.items()])

    run = run_from_table(tmp_path / "run", {1: ("plausible", None, "incorrect"), 2: ("plausible",) * 3})
    report = build_report(run)
    assert list(report.to_json()["tables"])[-1] == "verdicts_per_model"
    assert report.table("verdicts_per_model") == [{"model": "vendor/alpha", "verdicts": 2},
                                                  {"model": "vendor/beta", "verdicts": 1},
                                                  {"model": "other/gamma", "verdicts": 2}]
    table = report.tables["verdicts_per_model"]
    assert table.terminal().splitlines()[-2:] == ["vendor/beta          1", "other/gamma          2"]
    assert "<th>verdicts</th>" in table.html() and table.csv().splitlines()[1] == "vendor/alpha,2"


def test_a_table_name_has_one_builder() -> None:
    from fanout.report.builders import table

    with pytest.raises(ValueError, match="table 'cost' has a builder already: cost"):
        table("cost")(lambda basis: Table(()))
