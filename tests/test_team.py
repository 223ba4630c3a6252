"""`fanout run --evidence team`: a planner, workers at the same time, an optional aggregator; one pooled record.

The engine runs with scripted team steps (each call counted, each cost
planned), so who was asked what, how often, what was logged and what each
judge read are exact; the team's real steps run through the real ChatClient
against scripted replies (the brief's schema, its repair turn, a brief that
stays invalid); and the simulator runs the whole thing end to end.
"""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO
from pathlib import Path

import anyio
import pytest
import yaml

from fanout.base.errors import ConfigError
from fanout.base.records import EvidenceRecord, Source, TeamStep, ToolCallLog, Usage, VerdictRecord
from fanout.base.validate import package_data
from fanout.cli import main
from fanout.engine.evidence import EvidenceFns
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.engine.team_wiring import choose_planner, choose_workers
from fanout.llm.models import ModelSpec
from fanout.research.record import new_record
from fanout.store.evidence_log import read_evidence
from fanout.store.team_log import read_team_steps
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.workload import PATROL

from parsed_yaml import package_yaml

SAMPLE = package_data("sample_snapshot.yaml")
RCIDS = [int(e["rcid"]) for e in package_yaml("sample_snapshot.yaml")["edits"]]
CHEAP = ModelSpec("a/cheap", None, 0.1, 0.1)
CHEAP_TOO = ModelSpec("a/cheap-too", None, 0.2, 0.2)
MID = ModelSpec("b/mid", None, 1.0, 1.0)
DEAR = ModelSpec("c/dear", None, 9.0, 9.0)
MODELS = (DEAR, CHEAP, MID, CHEAP_TOO)
LOCAL_FLAGS = ["--base-url", "http://127.0.0.1:9/v1", "--searxng-url", "http://127.0.0.1:9"]
COSTS = {"planner": 0.1, "worker": 0.2, "aggregator": 0.05}

pytestmark = pytest.mark.timeout(120)


def page(rcid: int, worker: str) -> str:
    """Each worker reads one page of its own and one every worker reads (spelled differently by each)."""
    return f"https://{worker.split('/')[1]}.example/{rcid}"


class ScriptedTeam:
    """Planned team steps: each call counted; a brief with one query per worker; each step's cost by its role."""

    def __init__(self, missing: bool = True, invalid_brief: bool = False,
                 failing: frozenset[str] = frozenset()) -> None:
        self.missing, self.invalid_brief, self.failing = missing, invalid_brief, set(failing)
        self.asked: Counter[tuple[int, str, str]] = Counter()
        self.briefs: dict[tuple[int, str], str] = {}
        self.requests: dict[tuple[int, str], str] = {}
        self.judged: Counter[tuple[int, str]] = Counter()
        self.read: dict[tuple[int, str], EvidenceRecord] = {}

    def step(self, edit: Edit, model: str, step: str, role: str, round_: int, **fields) -> TeamStep:
        self.asked[(edit.rcid, step, model)] += 1
        status = "error" if model in self.failing and role == "worker" else fields.pop("status", "ok")
        return TeamStep(edit.rcid, step, role, model, round_, status, "2026-12-01T00:00:00Z",
                        token_usage=Usage(100, 10, 1), cost_usd=COSTS[role], cost_source="reported",
                        error="HTTP 502" if status == "error" else None, **fields)

    async def plan(self, edit: Edit, model: str, step: str, request: str, round_: int) -> TeamStep:
        await anyio.sleep(0)
        self.requests[(edit.rcid, step)] = request
        if self.invalid_brief and round_ == 1:
            return self.step(edit, model, step, "planner", round_, status="invalid", raw="not json")
        missing = ["an official record"] if self.missing and round_ == 2 else []
        brief = {"sub_questions": ["is it right?"], "queries": [f"q{round_}a", f"q{round_}b"], "pages": [],
                 "missing": missing}
        return self.step(edit, model, step, "planner", round_, brief=brief)

    async def work(self, edit: Edit, model: str, step: str, brief: str, round_: int) -> TeamStep:
        await anyio.sleep(0)
        self.briefs[(edit.rcid, step)] = brief
        own, common = page(edit.rcid, model), f"https://www.common.example/{edit.rcid}/?utm_source={model}"
        urls = [common, own] if round_ == 1 else [f"https://round2.example/{edit.rcid}"]
        calls = [ToolCallLog(1, "web_fetch", json.dumps({"url": url}), "text", True, url) for url in urls]
        steps = [{"tool": "web_fetch", "arguments": c.arguments, "result": f"page {url}"} for c, url in zip(calls, urls)]
        return self.step(edit, model, step, "worker", round_, steps=steps, tool_calls=calls, notes=f"notes by {model}")

    async def aggregate(self, edit: Edit, model: str, request: str) -> TeamStep:
        await anyio.sleep(0)
        return self.step(edit, model, "aggregate", "aggregator", 1, notes="the pages agree")

    async def judge(self, edit: Edit, model: ModelSpec, evidence: EvidenceRecord) -> VerdictRecord:
        self.judged[(edit.rcid, model.name)] += 1
        self.read[(edit.rcid, model.name)] = evidence
        await anyio.sleep(0)
        status, verdict = ("ok", "verified-high") if evidence.judgeable else ("error", None)
        record = new_record(edit, model.name, status, verdict=verdict, cost_usd=0.01)  # type: ignore[arg-type]
        record.evidence_id = evidence.evidence_id
        record.sources = cited(edit.rcid, model.name) if evidence.judgeable else []
        return record

    async def investigate(self, edit: Edit, investigator: str) -> EvidenceRecord:
        raise AssertionError("a team run investigates through its team")

    def fns(self) -> EvidenceFns:
        return EvidenceFns(self.investigate, self.judge, team=self)


def cited(rcid: int, judge: str) -> list[Source]:
    """Every judge cites the page both workers read (spelled its own way); c/dear also round 2's page, b/mid also
    a/cheap's own page and a page no worker read (which the provenance check would have made `reported`)."""
    sources = [Source(f"https://common.example/{rcid}", True, "verified")]
    if judge == "c/dear":
        sources.append(Source(f"https://round2.example/{rcid}", False, "verified"))
    if judge == "b/mid":
        sources += [Source(page(rcid, "a/cheap"), True, "verified"), Source("https://elsewhere.example/", True,
                                                                            "reported")]
    return sources


def settings(**more) -> RunSettings:
    return RunSettings(**{"models": MODELS, "concurrency": 4, "evidence": "team", **more})


def run_scripted(run_dir: Path, script: ScriptedTeam, run_settings: RunSettings, limit: int = 3) -> str:
    out = StringIO()
    request = RunRequest(SAMPLE, run_dir, run_settings, limit=limit, handle_signals=False, out=out,
                         progress_interval_s=3600, workload=PATROL)
    anyio.run(lambda: run(request, evidence_fns=script.fns()))
    return out.getvalue()


def logged(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "checkpoint.jsonl").read_text().splitlines()]


# --- the team, its steps, one pooled record --------------------------------------------------------------


def test_each_edit_is_planned_researched_by_two_workers_reviewed_and_judged_once_by_every_model(tmp_path):
    script = ScriptedTeam()
    out = run_scripted(tmp_path, script, settings())

    team = ["plan-1", "work-1-1", "work-1-2", "plan-2", "work-2-1", "work-2-2"]
    who = {"plan-1": "c/dear", "plan-2": "c/dear", "work-1-1": "a/cheap", "work-2-1": "a/cheap",
           "work-1-2": "b/mid", "work-2-2": "b/mid"}
    assert script.asked == Counter({(rcid, step, who[step]): 1 for rcid in RCIDS[:3] for step in team})
    assert script.judged == Counter({(rcid, m.name): 1 for rcid in RCIDS[:3] for m in MODELS})
    manifest = yaml.safe_load((tmp_path / "manifest.yaml").read_text())
    assert manifest["settings"]["evidence"] == {"mode": "team", "planner": "c/dear", "workers": ["a/cheap", "b/mid"],
                                                "aggregator": None, "rounds": 2}
    assert "Research team: c/dear plans, a/cheap, b/mid research at the same time" in out
    assert sorted((s.edit_rcid, s.step) for s in read_team_steps(tmp_path)) == sorted(
        (rcid, step) for rcid in RCIDS[:3] for step in team)
    [evidence] = [e for e in read_evidence(tmp_path) if e.edit_rcid == RCIDS[0]]
    assert all(script.read[(RCIDS[0], m.name)].evidence_id == evidence.evidence_id for m in MODELS)
    assert {r["evidence_id"] for r in logged(tmp_path) if r["edit_rcid"] == RCIDS[0]} == {evidence.evidence_id}


def test_the_pooled_record_holds_each_page_once_with_every_worker_that_read_it_and_each_workers_notes(tmp_path):
    script = ScriptedTeam()
    run_scripted(tmp_path, script, settings(), limit=1)

    [evidence] = read_evidence(tmp_path)
    team = evidence.team
    assert team is not None
    rcid = RCIDS[0]
    assert [(p.url, p.found_by, p.round) for p in team.pages] == [
        (f"https://common.example/{rcid}", ["a/cheap", "b/mid"], 1),
        (f"https://cheap.example/{rcid}", ["a/cheap"], 1),
        (f"https://mid.example/{rcid}", ["b/mid"], 1),
        (f"https://round2.example/{rcid}", ["a/cheap", "b/mid"], 2),
    ]
    assert [(s["by"], s["round"]) for s in evidence.steps] == [("a/cheap, b/mid", "1"), ("a/cheap", "1"),
                                                               ("b/mid", "1"), ("a/cheap, b/mid", "2")]
    assert [c.turn for c in evidence.tool_calls] == [1, 2, 3, 4]  # the turns the judges read, in order
    assert [(n.model, n.round, n.notes) for n in team.workers_notes] == [
        ("a/cheap", 1, "notes by a/cheap"), ("b/mid", 1, "notes by b/mid"),
        ("a/cheap", 2, "notes by a/cheap"), ("b/mid", 2, "notes by b/mid")]
    assert team.brief == {"sub_questions": ["is it right?"], "queries": ["q1a", "q1b"], "pages": [], "missing": []}
    assert team.second_brief is not None and team.second_brief["missing"] == ["an official record"]
    assert (team.rounds, team.summary, evidence.status, evidence.investigator) == (2, None, "ok", "team")
    assert team.role_costs == {"planner": pytest.approx(0.2), "worker": pytest.approx(0.8)}
    assert evidence.cost_usd == pytest.approx(1.0)


def test_each_worker_starts_from_its_own_share_of_the_queries_and_the_second_round_is_told_what_was_read(tmp_path):
    script = ScriptedTeam()
    run_scripted(tmp_path, script, settings(), limit=1)
    rcid = RCIDS[0]
    first, second = script.briefs[(rcid, "work-1-1")], script.briefs[(rcid, "work-1-2")]
    assert "You are worker 1 of 2" in first and "Start with these queries:\n- q1a\n" in first
    assert "You are worker 2 of 2" in second and "Start with these queries:\n- q1b\n" in second
    assert "Queries worth trying:\n- q1a\n- q1b" in first  # every worker reads the whole brief
    again = script.briefs[(rcid, "work-2-1")]
    assert "Still missing, says the planner:\n- an official record" in again
    assert ("Already read by the team (do not read these again):\n"
            f"- https://www.common.example/{rcid}/?utm_source=a/cheap\n- https://cheap.example/{rcid}\n"
            f"- https://mid.example/{rcid}") in again
    review = script.requests[(rcid, "plan-2")]
    assert "### a/cheap (ok)\nSearched: nothing\nRead: " in review and "Notes: notes by b/mid" in review


def test_a_review_that_names_nothing_missing_ends_the_research_after_one_round(tmp_path):
    script = ScriptedTeam(missing=False)
    run_scripted(tmp_path, script, settings(), limit=1)
    assert sorted(step for _, step, _ in script.asked) == ["plan-1", "plan-2", "work-1-1", "work-1-2"]
    [evidence] = read_evidence(tmp_path)
    assert evidence.team is not None and (evidence.team.rounds, evidence.team.second_brief) == (1, None)


def test_one_round_asks_the_planner_once(tmp_path):
    script = ScriptedTeam()
    run_scripted(tmp_path, script, settings(team_rounds=1), limit=1)
    assert sorted(step for _, step, _ in script.asked) == ["plan-1", "work-1-1", "work-1-2"]


def test_a_brief_that_stays_invalid_leaves_each_worker_to_research_alone_and_the_evidence_says_so(tmp_path):
    script = ScriptedTeam(invalid_brief=True)
    run_scripted(tmp_path, script, settings(team_rounds=1), limit=1)
    rcid = RCIDS[0]
    assert "The planner's brief failed, so research the edit as you would alone." in script.briefs[(rcid, "work-1-1")]
    [evidence] = read_evidence(tmp_path)
    assert evidence.team is not None and (evidence.team.brief, evidence.team.brief_status) == (None, "invalid")
    assert evidence.status == "ok" and "the planner c/dear (plan-1) ended invalid" in evidence.warnings
    assert all(r["status"] == "ok" for r in logged(tmp_path))


def test_the_aggregator_summarises_once_per_edit_and_its_summary_is_in_the_evidence(tmp_path):
    script = ScriptedTeam(missing=False)
    run_scripted(tmp_path, script, settings(aggregator="b/mid"), limit=2)
    assert Counter(step for _, step, _ in script.asked)["aggregate"] == 2
    assert all(e.team is not None and e.team.summary == "the pages agree" and e.team.aggregator == "b/mid"
               for e in read_evidence(tmp_path))


# --- cost: every step once ---------------------------------------------------------------------------


def test_each_steps_cost_is_counted_once_in_progress_and_status_and_never_in_a_judges_record(tmp_path):
    from fanout.engine.status import read_status

    out = run_scripted(tmp_path, ScriptedTeam(), settings(), limit=2)
    steps = read_team_steps(tmp_path)
    assert sum(s.cost_usd or 0 for s in steps) == pytest.approx(2 * (2 * 0.1 + 4 * 0.2))
    assert sum(r["cost_usd"] for r in logged(tmp_path)) == pytest.approx(8 * 0.01)
    assert read_status(tmp_path).tally.spent_usd == pytest.approx(2.08)
    assert "| $2.0800 |" in out


def test_the_spend_cap_counts_each_team_step_as_it_is_paid(tmp_path):
    script = ScriptedTeam()
    run_scripted(tmp_path, script, settings(max_cost_usd=1.5, concurrency=1, max_lead=1, team_rounds=1), limit=4)
    # Each edit's team costs 0.1 + 2 x 0.2 = $0.50, each verdict $0.01: edits 1-2 cost $1.08, edit 3's team takes
    # the spend to $1.58, past the cap, which stops the run at its first verdict.
    assert Counter(rcid for rcid, step, _ in script.asked if step == "plan-1") == Counter(RCIDS[:3])
    assert len(logged(tmp_path)) == 9


# --- resume -------------------------------------------------------------------------------------------


def test_steps_logged_before_a_crash_are_not_asked_again_and_the_rest_of_the_team_goes_on(tmp_path):
    run_scripted(tmp_path, ScriptedTeam(), settings(), limit=1)
    rcid = RCIDS[1]
    early = ScriptedTeam()
    done = [early.step(_edit(rcid), "c/dear", "plan-1", "planner", 1,
                       brief={"sub_questions": [], "queries": ["kept"], "pages": [], "missing": []})]
    done.append(anyio.run(lambda: early.work(_edit(rcid), "a/cheap", "work-1-1", "brief", 1)))
    with (tmp_path / "team.jsonl").open("a") as fh:  # as a kill leaves them: two steps of edit 2, no evidence yet
        for step in done:
            fh.write(json.dumps(step.to_dict()) + "\n")

    script = ScriptedTeam()
    run_scripted(tmp_path, script, settings(), limit=2)

    assert sorted(step for r, step, _ in script.asked if r == rcid) == ["plan-2", "work-1-2", "work-2-1", "work-2-2"]
    assert "Queries worth trying:\n- kept" in script.briefs[(rcid, "work-1-2")]  # the logged brief, not a new one
    [evidence] = [e for e in read_evidence(tmp_path) if e.edit_rcid == rcid]
    assert evidence.team is not None and evidence.team.brief is not None and evidence.team.brief["queries"] == ["kept"]
    assert script.judged == Counter({(rcid, m.name): 1 for m in MODELS})


def _edit(rcid: int) -> Edit:
    from fanout.workloads.patrol.snapshot import load_snapshot

    return next(e for e in load_snapshot(SAMPLE).edits if e.rcid == rcid)


def test_a_worker_that_failed_is_asked_again_only_when_no_worker_gathered_anything(tmp_path):
    first = ScriptedTeam(failing=frozenset({"b/mid"}), missing=False)
    run_scripted(tmp_path, first, settings(), limit=1)
    [evidence] = read_evidence(tmp_path)
    assert evidence.status == "ok" and "the worker b/mid (work-1-2) ended error: HTTP 502" in evidence.warnings

    both = ScriptedTeam(failing=frozenset({"a/cheap", "b/mid"}), missing=False)
    run_scripted(tmp_path, both, settings(), limit=2)
    rcid = RCIDS[1]
    assert [e.status for e in read_evidence(tmp_path)] == ["ok", "error"]
    assert all(r["status"] == "error" for r in logged(tmp_path) if r["edit_rcid"] == rcid)
    assert Counter(step for r, step, _ in both.asked if r == rcid) == Counter({"plan-1": 1, "work-1-1": 1, "work-1-2": 1})

    again = ScriptedTeam(missing=False)
    run_scripted(tmp_path, again, settings(), limit=2)
    assert sorted(step for r, step, _ in again.asked if r == rcid) == ["plan-2", "work-1-1", "work-1-2"]
    assert read_evidence(tmp_path)[-1].status == "ok"
    assert again.judged == Counter({(rcid, m.name): 1 for m in MODELS})  # the error records are judged again


@pytest.mark.parametrize(("flags", "message"), [
    (["--evidence", "team", "--planner", "b/mid"], "cannot resume this run directory with --evidence team --planner "
     "b/mid --workers a/cheap,b/mid --team-rounds 2: it was started with --evidence team --planner c/dear --workers "
     "a/cheap,b/mid --team-rounds 2. Resume with that, or use a new --run-dir."),
    (["--evidence", "team", "--workers", "a/cheap,c/dear", "--allow-settings-change"], "--workers a/cheap,c/dear"),
    (["--evidence", "team", "--aggregator", "b/mid"], "--aggregator b/mid --team-rounds 2: it was started with"),
    (["--evidence", "team", "--team-rounds", "1"], "--team-rounds 1: it was started with"),
    (["--evidence", "shared"], "with --evidence shared: it was started with --evidence team --planner c/dear"),
])
def test_a_resume_cannot_change_the_team_one_line_exit_2_nothing_written(tmp_path, capsys, flags, message):
    run_scripted(tmp_path, ScriptedTeam(), settings(), limit=1)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path), "--limit", "1", "-m", ",".join(m.name for m in MODELS),
                 *LOCAL_FLAGS, *flags])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_a_resume_that_names_no_member_keeps_the_team_the_run_started_with(tmp_path):
    run_scripted(tmp_path, ScriptedTeam(), settings(workers=("b/mid", "c/dear"), planner="a/cheap",
                                                     aggregator="a/cheap-too", team_rounds=1), limit=1)
    script = ScriptedTeam()
    run_scripted(tmp_path, script, settings(), limit=2)
    assert sorted((step, model) for r, step, model in script.asked if r == RCIDS[1]) == [
        ("aggregate", "a/cheap-too"), ("plan-1", "a/cheap"), ("work-1-1", "b/mid"), ("work-1-2", "c/dear")]


@pytest.mark.parametrize(("flags", "message"), [
    (["--evidence", "teams"], "--evidence must be one of own, shared, team (got 'teams')."),
    (["--planner", "m/a"], "--planner need(s) --evidence team"),
    (["--workers", "m/a", "--evidence", "shared"], "--workers need(s) --evidence team"),
    (["--evidence", "team", "--workers", "m/a,m/zz"], "--workers m/zz is not one of the run's models (m/a, m/b)"),
    (["--evidence", "team", "--workers", "m/a", "--workers", "m/a"], "--workers names m/a more than once"),
    (["--evidence", "team", "--aggregator", "m/zz"], "--aggregator m/zz is not one of the run's models"),
    (["--evidence", "team", "--team-rounds", "3"], "--team-rounds must be one of 1, 2 (got '3')."),
])
def test_a_bad_team_flag_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, flags, message):
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), "-m", "m/a,m/b", *LOCAL_FLAGS, *flags])
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and message in err, err
    assert not (tmp_path / "run").exists()


def test_the_default_workers_are_the_cheapest_tool_callers_of_different_families_and_the_planner_the_priciest():
    no_tools = ModelSpec("d/cheapest", None, 0.01, 0.01, tool_protocol="prompted")
    unpriced = ModelSpec("e/unpriced")
    assert choose_workers([DEAR, no_tools, CHEAP_TOO, MID, CHEAP, unpriced]) == ("a/cheap", "b/mid")
    assert choose_workers([DEAR, no_tools, CHEAP_TOO, MID, CHEAP], 3) == ("a/cheap", "b/mid", "c/dear")
    assert choose_workers([CHEAP_TOO, CHEAP]) == ("a/cheap", "a/cheap-too")  # one family: the next cheapest
    assert choose_planner([CHEAP, DEAR, MID, unpriced]) == "c/dear"
    assert choose_planner([unpriced]) == "e/unpriced"


def test_a_dry_run_says_who_is_on_the_team_and_writes_nothing(tmp_path, capsys):
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), "-m", "m/a,m/b", *LOCAL_FLAGS, "--dry-run",
                 "--evidence", "team", "--workers", "m/a,m/b", "--aggregator", "m/b"])
    assert code == 0
    assert ("Evidence: team; the priciest model (chosen when the run starts) plans, m/a, m/b research at the same "
            "time, up to 2 round(s); m/b summarises the workers' notes; each edit researched once and every model "
            "judges the pooled evidence.") in capsys.readouterr().out
    assert not (tmp_path / "run").exists()


# --- strategies ---------------------------------------------------------------------------------------


def test_a_cascade_and_a_router_read_the_edits_one_team_evidence(tmp_path):
    from fanout.judging.cascade import CascadeStrategy
    from fanout.judging.router import RouterStrategy

    script = ScriptedTeam(missing=False)
    run_scripted(tmp_path / "cascade", script, settings(strategy=CascadeStrategy()), limit=2)
    assert Counter(step for _, step, _ in script.asked)["plan-1"] == 2
    routed = ScriptedTeam(missing=False)
    run_scripted(tmp_path / "router", routed, settings(strategy=RouterStrategy()), limit=2)
    assert Counter(step for _, step, _ in routed.asked)["plan-1"] == 2
    assert routed.judged == Counter({(rcid, "a/cheap"): 1 for rcid in RCIDS[:2]})


# --- the real steps, against scripted replies -------------------------------------------------------------

from fanout.llm.chat import ChatClient  # noqa: E402
from fanout.research.brief import plan_request, worker_brief  # noqa: E402
from fanout.research.shared import judge_evidence  # noqa: E402
from fanout.research.roster import Team  # noqa: E402
from fanout.research.team_pool import pool_evidence  # noqa: E402
from fanout.research.team_steps import aggregate_step, plan_step, work_step  # noqa: E402
from fanout.tools import ToolBox  # noqa: E402
from fanout.tools.settings import ToolSettings  # noqa: E402
from fanout.workloads.patrol.prompt import sift_prompt  # noqa: E402
from scripted_chat import LOCAL, ScriptedChat, completion, tool_call  # noqa: E402

PROMPT = sift_prompt("Check the edit.", "0" * 64)
SITE = "https://obituaries.example"
ARTICLE = ("<html><head><title>Obituary</title></head><body><article><h1>Douglas Adams</h1>"
           + "<p>Douglas Noel Adams was born in Cambridge on 11 March 1952.</p>" * 6 + "</article></body></html>")
BRIEF = {"sub_questions": ["When was Douglas Adams born?"], "queries": ["Douglas Adams born", "Adams obituary"],
         "pages": ["obituaries.example"], "missing": []}


async def no_sleep(seconds: float) -> None:
    return None


async def test_the_planners_brief_is_checked_against_the_schema_and_repaired_once(edit, http, respx_mock):
    script = ScriptedChat([completion('{"queries": "Douglas Adams"}', cost=0.001),
                           completion(json.dumps({**BRIEF, "queries": [f"q{i}" for i in range(8)]}), cost=0.002)])
    respx_mock.post(f"{LOCAL}/chat/completions").mock(side_effect=script)
    chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)

    step = await plan_step(edit, ModelSpec("m/planner"), "plan-1", plan_request("edit"), round_=1, chat=chat,
                           prompt=PROMPT, timeout_s=60)

    assert (step.status, step.role, step.round, step.cost_usd, step.token_usage.turns) == (
        "ok", "planner", 1, pytest.approx(0.003), 2)
    assert step.brief == {**BRIEF, "queries": ["q0", "q1", "q2", "q3", "q4", "q5"]}
    assert script.requests[0]["response_format"] == {"type": "json_object"}
    assert "You are the planner of a research team that will check this edit" in script.requests[0]["messages"][1]["content"]
    repair = script.requests[1]["messages"][-1]["content"]
    assert repair.startswith("Your reply is not a brief that fits: sub_questions must be a list of non-empty strings; "
                             "queries must be a list of non-empty strings; pages must be a list")
    assert step.warnings == ["the brief listed 8 queries; the first 6 were kept",
                             "the first brief did not fit the schema; a repair turn fixed it"]


async def test_a_brief_that_stays_invalid_after_the_repair_turn_is_a_finished_step_with_its_reply(edit, http, respx_mock):
    script = ScriptedChat([completion("I would search for his birth.", cost=0.001),
                           completion('{"sub_questions": [], "queries": [], "pages": []}', cost=0.001)])
    respx_mock.post(f"{LOCAL}/chat/completions").mock(side_effect=script)
    chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)

    step = await plan_step(edit, ModelSpec("m/planner"), "plan-1", plan_request("edit"), round_=1, chat=chat,
                           prompt=PROMPT, timeout_s=60)

    assert (step.status, step.brief, step.raw, step.cost_usd) == (
        "invalid", None, '{"sub_questions": [], "queries": [], "pages": []}', pytest.approx(0.002))
    assert step.error == ("no brief fit the schema after a repair turn: queries must name at least one web search "
                          "query")


async def test_a_worker_researches_its_brief_in_its_own_tool_loop_and_its_closing_reply_is_its_notes(
    edit, http, respx_mock
):
    respx_mock.get(f"{SITE}/page").respond(200, html=ARTICLE)
    script = ScriptedChat([completion(None, tool_calls=[tool_call("web_fetch", {"url": f"{SITE}/page"})], cost=0.002),
                           completion("The obituary gives 11 March 1952.", cost=0.001)])
    respx_mock.post(f"{LOCAL}/chat/completions").mock(side_effect=script)
    chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)
    tools = ToolBox(http, ToolSettings(allow_private_urls=True, per_host_delay_s=0))

    text = worker_brief("edit", BRIEF, 1, 2)
    step = await work_step(edit, ModelSpec("m/worker"), "work-1-2", text, round_=1, chat=chat, tools=tools,
                           prompt=PROMPT, max_turns=5, timeout_s=60)

    assert (step.status, step.notes, step.cost_usd, len(step.steps)) == (
        "ok", "The obituary gives 11 March 1952.", pytest.approx(0.003), 1)
    assert "11 March 1952" in step.steps[0]["result"] and step.tool_calls[0].final_url == f"{SITE}/page"
    assert script.requests[0]["messages"][1]["content"].endswith(text)
    assert "Start with these queries:\n- Adams obituary" in text


def worker_step(model: str, urls: list[str], notes: str, round_: int = 1, index: int = 1) -> TeamStep:
    calls = [ToolCallLog(1, "web_fetch", json.dumps({"url": u}), "text", True, u) for u in urls]
    steps = [{"tool": "web_fetch", "arguments": c.arguments, "result": f"The page {u} gives 11 March 1952."}
             for c, u in zip(calls, urls)]
    return TeamStep(0, f"work-{round_}-{index}", "worker", model, round_, "ok", "t", steps=steps, tool_calls=calls,
                    notes=notes, cost_usd=0.002, cost_source="reported")


async def test_judges_read_the_brief_who_found_each_page_and_the_summary_last_marked_as_a_models(edit, http, respx_mock):
    steps = [TeamStep(0, "plan-1", "planner", "m/planner", 1, "ok", "t", brief=BRIEF, cost_usd=0.001),
             worker_step("m/a", [f"{SITE}/page"], "a's notes"),
             worker_step("m/b", [f"{SITE}/page/?utm_source=x", f"{SITE}/other"], "b's notes", index=2),
             TeamStep(0, "aggregate", "aggregator", "m/agg", 1, "ok", "t", notes="Both pages give 1952.")]
    evidence = pool_evidence(edit, Team("m/planner", ("m/a", "m/b"), "m/agg"), steps, "e-1")
    verdict = {"verdict": "incorrect", "rationale": "1952.", "sources": [
        {"url": f"{SITE}/other", "supports_claim": False, "provenance": "verified"},
        {"url": f"{SITE}/never", "supports_claim": False, "provenance": "verified"}]}
    script = ScriptedChat([completion(json.dumps(verdict), cost=0.0007)] * 2)
    respx_mock.post(f"{LOCAL}/chat/completions").mock(side_effect=script)
    chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)

    record = await judge_evidence(edit, ModelSpec("m/judge"), evidence, chat=chat, prompt=PROMPT, timeout_s=60,
                                  samples=2)

    for sent in [r["messages"] for r in script.requests]:
        assert [m["role"] for m in sent] == ["system", "user", "assistant", "user", "assistant", "user"]
        assert ("the research is done by a team: m/planner planned it and m/a, m/b researched it" in sent[1]["content"]
                and "The planner's brief:\nSub-questions:\n- When was Douglas Adams born?" in sent[1]["content"])
        actions = [json.loads(m["content"]) for m in sent if m["role"] == "assistant"]
        assert sorted((a["arguments"]["url"], a["by"]) for a in actions) == [
            (f"{SITE}/other", ["m/b"]), (f"{SITE}/page", ["m/a", "m/b"])]
        last = sent[-1]["content"]
        summary = last.index("Summary of the workers' notes, written by m/agg. It is a model's summary, not evidence")
        assert last.startswith("Tool result for web_fetch:\n") and summary < last.index("Give your final verdict")
        assert "Both pages give 1952." in last
    assert (record.status, record.tool_protocol, record.evidence_id, record.tool_calls) == ("ok", "team", "e-1", [])
    assert [(s.url, s.provenance) for s in record.sources] == [(f"{SITE}/other", "verified"),
                                                               (f"{SITE}/never", "reported")]


async def test_the_aggregator_is_asked_once_for_a_plain_summary(edit, http, respx_mock):
    script = ScriptedChat([completion("The notes agree on 1952.", cost=0.001)])
    respx_mock.post(f"{LOCAL}/chat/completions").mock(side_effect=script)
    chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)
    step = await aggregate_step(edit, ModelSpec("m/agg"), "You are the aggregator...", chat=chat, prompt=PROMPT,
                                timeout_s=60)
    assert (step.status, step.notes, step.role, step.step) == ("ok", "The notes agree on 1952.", "aggregator", "aggregate")
    assert "response_format" not in script.requests[0]



# --- the report -----------------------------------------------------------------------------------------


def test_the_report_says_a_team_researched_credits_each_worker_and_counts_each_role_once(tmp_path):
    from fanout.report.build import build_report
    from fanout.report.terminal import render_summary

    run_scripted(tmp_path, ScriptedTeam(), settings(aggregator="a/cheap-too"), limit=2)
    report = build_report(tmp_path)

    roles = [(r.role, r.model, r.steps, round(r.cost_usd, 6)) for r in report.tables["team_roles"].rows]
    assert roles == [("planner", "c/dear", 4, 0.4), ("worker", "a/cheap", 4, 0.8), ("worker", "b/mid", 4, 0.8),
                     ("aggregator", "a/cheap-too", 2, 0.1)]
    workers = {w.worker: (w.pages, w.alone, w.round2_pages, w.cited, w.cited_share, w.cited_alone)
               for w in report.tables["team_workers"].rows}
    # Per edit: 4 judges cite the common page (both found it), c/dear round 2's page (both), b/mid a/cheap's page.
    assert workers == {"a/cheap": (6, 2, 2, 12, 1.0, 2), "b/mid": (6, 2, 2, 10, pytest.approx(10 / 12), 0)}
    sources = {(c.rcid, c.url): (c.found_by, c.round, c.cited_by, c.supports) for c in report.tables["team_sources"].rows}
    rcid = RCIDS[0]
    assert sources[(rcid, f"https://common.example/{rcid}")] == ("a/cheap, b/mid", 1, 4, 4)
    assert sources[(rcid, f"https://round2.example/{rcid}")] == ("a/cheap, b/mid", 2, 1, 0)
    assert sources[(rcid, f"https://cheap.example/{rcid}")] == ("a/cheap", 1, 1, 1)
    [rounds] = report.tables["team_rounds"].rows
    assert (rounds.edits, rounds.reviewed, rounds.second_rounds, rounds.pages_added, rounds.pages_added_cited,
            rounds.verdicts_citing_added, rounds.summaries) == (2, 2, 2, 2, 2, 2, 2)
    costs = {c.model: (c.investigations, round(c.investigation_cost_usd, 6)) for c in report.costs}
    assert costs == {"c/dear": (4, 0.4), "a/cheap": (4, 0.8), "b/mid": (4, 0.8), "a/cheap-too": (2, 0.1)}
    text = render_summary(report)
    assert ("evidence: team (planner c/dear; workers a/cheap, b/mid; aggregator a/cheap-too; up to 2 round(s))"
            in text)
    assert ("The planner reviewed 2 of 2 edits and sent the workers out again on 2; that second round added 2 "
            "page(s), 2 of them cited as verified, by 2 verdict(s). 2 edit(s)' judges were shown the aggregator's "
            "summary.") in text
    assert "Research team: c/dear planned each edit's research and a/cheap, b/mid researched it" in text
    assert "The 14 team step(s) cost $2.1000, shown apart from the verdicts" in text  # each step once
    assert "with them the run cost $2.1800" in text  # and the 8 verdicts


def test_an_edit_page_shows_the_brief_who_found_each_page_the_notes_and_the_summary_marked(tmp_path):
    from fanout.report.build import build_report
    from fanout.report.edit_pages import render_edit_page

    run_scripted(tmp_path, ScriptedTeam(), settings(aggregator="a/cheap-too"), limit=1)
    rcid = RCIDS[0]
    html = render_edit_page(build_report(tmp_path), rcid, "../report.html") or ""
    assert "<h2>The research team</h2>" in html and "c/dear planned; a/cheap, b/mid researched at the same time" in html
    assert "<dt>queries</dt><dd>q1a<br>q1b</dd>" in html and "The second brief, after the workers reported" in html
    assert (f'common.example/{rcid}/?utm_source=a/cheap</a></td><td>a/cheap, b/mid</td><td>1</td><td>4</td>'
            in html)
    assert "Written by a/cheap-too: a model's summary of the notes, shown to the judges after the evidence" in html
    assert "<pre>notes by b/mid</pre>" in html


def test_compare_sets_a_team_run_beside_an_own_run_with_the_teams_cost_in_the_committees_cost_per_edit(tmp_path):
    from fanout.report.build import build_report
    from fanout.report.compare_view import compare_reports

    run_scripted(tmp_path / "team", ScriptedTeam(missing=False), settings(), limit=2)
    request = RunRequest(SAMPLE, tmp_path / "own", RunSettings(models=MODELS), limit=2, handle_signals=False,
                         out=StringIO(), workload=PATROL)

    async def verdict(edit, model):
        return new_record(edit, model.name, "ok", verdict="verified-high", cost_usd=0.02)

    anyio.run(lambda: run(request, verdict_fn=verdict))
    comparison = compare_reports(build_report(tmp_path / "own"), build_report(tmp_path / "team"))

    rows = {r.subject: r for r in comparison.rows}
    assert (rows["majority"].cost_per_edit_a, rows["majority"].cost_per_edit_b) == (
        pytest.approx(0.08), pytest.approx(4 * 0.01 + 2 * 0.1 + 2 * 0.2))  # the team's steps, once per edit
    assert (rows["c/dear"].cost_per_edit_a, rows["c/dear"].cost_per_edit_b) == (pytest.approx(0.02), pytest.approx(0.01))
    assert ("A: each model's own investigation; B: a research team's evidence (planner c/dear, workers a/cheap, b/mid, "
            "up to 2 rounds), $1.2000. The evidence's cost (investigations, team steps) counts once per edit in the committee "
            "rules' cost per edit, not in each model's: a model's row is its verdicts alone.") in comparison.notes
    assert "Settings differ: evidence.mode: own in A, team in B." in comparison.notes


def test_a_logged_steps_in_flight_file_is_not_counted_again_and_an_unlogged_steps_is(tmp_path):
    from fanout.store.attempts import attempt_path, read_abandoned
    from fanout.store.team_log import step_attempt_name

    run_scripted(tmp_path, ScriptedTeam(), settings(), limit=1)
    rcid = RCIDS[0]
    answered = {"e": "answered", "id": "gen-1", "cost": 0.1, "prompt": 100, "completion": 10}
    for step, model in (("plan-1", "c/dear"), ("plan-1", "b/mid")):  # logged (c/dear's), and never logged
        path = attempt_path(tmp_path, rcid, step_attempt_name(model, step))
        path.write_text("\n".join(json.dumps(line) for line in (
            {"edit_rcid": rcid, "model": step_attempt_name(model, step), "log_bytes": 0, "started_ns": 1},
            {"e": "sent"}, answered)) + "\n")

    run_scripted(tmp_path, ScriptedTeam(), settings(), limit=1)

    assert [(a.model, a.cost_usd) for a in read_abandoned(tmp_path)] == [("b/mid (team plan-1)", pytest.approx(0.1))]
    assert list((tmp_path / "inflight").iterdir()) == []


def test_a_search_hit_another_worker_listed_already_is_shown_to_the_judges_once(edit):
    def searched(model: str, query: str, urls: list[str], index: int) -> TeamStep:
        text = json.dumps({"results": [{"url": u, "title": u} for u in urls], "provider": "searxng"})
        call = ToolCallLog(1, "web_search", json.dumps({"query": query}), text, True)
        return TeamStep(0, f"work-1-{index}", "worker", model, 1, "ok", "t", steps=[
            {"tool": "web_search", "arguments": call.arguments, "result": text}], tool_calls=[call])

    steps = [searched("m/a", "adams born", ["https://a.example/1", "https://b.example/2"], 1),
             searched("m/b", "adams birth", ["https://www.b.example/2/", "https://c.example/3"], 2)]
    evidence = pool_evidence(edit, Team("m/p", ("m/a", "m/b")), steps, "e-1")
    first, second = (json.loads(s["result"]) for s in evidence.steps)
    assert [h["url"] for h in first["results"]] == ["https://a.example/1", "https://b.example/2"]
    assert ([h["url"] for h in second["results"]], second["already_listed_above"]) == (["https://c.example/3"], 1)
    assert json.loads(evidence.tool_calls[1].result)["results"][0]["url"] == "https://www.b.example/2/"  # as it was
