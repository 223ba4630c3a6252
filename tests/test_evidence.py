"""`fanout run --evidence shared`: one investigation per edit, judged by every model of the run.

The engine runs with scripted investigation and judging functions (each call
counted, each cost planned), so who investigates, how often, and what each
record points at are exact; a whole investigation and its judges run through
the real ChatClient against scripted replies (provenance); and the simulator
runs the whole thing end to end, as a child process killed with -9 right
after an edit's evidence is logged, and resumed.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from io import StringIO
from pathlib import Path

import anyio
import httpx
import pytest
import respx
import yaml

from fanout.workloads.patrol.workload import PATROL
from fanout.cli import main
from fanout.base.validate import package_data
from fanout.engine.evidence import choose_investigator
from fanout.engine.evidence import EvidenceFns
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.base.errors import ConfigError
from fanout.judging.cascade import CascadeStrategy
from fanout.llm.chat import ChatClient
from fanout.llm.models import ModelSpec
from fanout.base.records import EvidenceRecord, ToolCallLog, Usage, VerdictRecord
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.prompt import sift_prompt
from fanout.research.record import new_record
from fanout.research.shared import investigate_item, judge_evidence
from fanout.sim import SimConfig
from fanout.sim.conversation import read_conversation
from fanout.store.evidence_log import EvidenceLog, read_evidence
from fanout.tools import ToolBox
from fanout.tools.settings import ToolSettings
import warm
from parsed_yaml import package_yaml
from scripted_chat import LOCAL, ScriptedChat, completion, tool_call
from simulated import serving_simulator

SAMPLE = package_data("sample_snapshot.yaml")
RCIDS = [int(e["rcid"]) for e in package_yaml("sample_snapshot.yaml")["edits"]]
CHEAP, MID, DEAR = ModelSpec("m/cheap", None, 0.1, 0.1), ModelSpec("m/mid", None, 1.0, 1.0), ModelSpec("m/dear", None, 9.0, 9.0)
MODELS = (DEAR, CHEAP, MID)
LOCAL_FLAGS = ["--base-url", "http://127.0.0.1:9/v1", "--searxng-url", "http://127.0.0.1:9"]

pytestmark = pytest.mark.timeout(120)


class Scripted:
    """Planned investigations and verdicts: each investigation costs $0.5, each verdict $0.01 (exact sums)."""

    def __init__(self, verdicts: dict[tuple[int, str], tuple[str, str | None]] | None = None,
                 failing: frozenset[int] = frozenset()) -> None:
        self.verdicts = verdicts or {}
        self.failing = set(failing)
        self.investigated: Counter[tuple[int, str]] = Counter()
        self.judged: Counter[tuple[int, str]] = Counter()
        self.read: dict[tuple[int, str], str] = {}

    async def investigate(self, edit: Edit, investigator: str) -> EvidenceRecord:
        self.investigated[(edit.rcid, investigator)] += 1
        await anyio.sleep(0)
        failed = RCIDS.index(edit.rcid) in self.failing
        return EvidenceRecord(
            evidence_id=f"{edit.rcid}-{sum(self.investigated.values())}", edit_rcid=edit.rcid, investigator=investigator,
            status="error" if failed else "ok", timestamp="2026-11-27T00:00:00Z", cost_usd=0.5, cost_source="reported",
            error="HTTP 502" if failed else None,
        )

    async def judge(self, edit: Edit, model: ModelSpec, evidence: EvidenceRecord) -> VerdictRecord:
        self.judged[(edit.rcid, model.name)] += 1
        self.read[(edit.rcid, model.name)] = evidence.evidence_id
        await anyio.sleep(0)
        status, verdict = self.verdicts.get((RCIDS.index(edit.rcid), model.name), ("ok", "verified-high"))
        if not evidence.judgeable:
            status, verdict = "error", None
        record = new_record(edit, model.name, status, verdict=verdict, cost_usd=0.01,  # type: ignore[arg-type]
                            stability=1.0 if verdict and verdict.startswith("verified") else None)
        record.evidence_id = evidence.evidence_id
        return record

    def fns(self) -> EvidenceFns:
        return EvidenceFns(self.investigate, self.judge)


def settings(**more) -> RunSettings:
    return RunSettings(**{"models": MODELS, "concurrency": 4, "evidence": "shared", **more})


def run_scripted(run_dir: Path, script: Scripted, run_settings: RunSettings, limit: int = 12) -> str:
    out = StringIO()
    request = RunRequest(SAMPLE, run_dir, run_settings, limit=limit, handle_signals=False, out=out, progress_interval_s=3600,
                         workload=PATROL)
    anyio.run(lambda: run(request, evidence_fns=script.fns()))
    return out.getvalue()


def logged(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "checkpoint.jsonl").read_text().splitlines()]


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


# --- one investigation, every model judges it ----------------------------------------------------------


def test_each_edit_is_investigated_once_by_the_cheapest_model_and_judged_by_every_model_over_that_evidence(tmp_path):
    script = Scripted()
    out = run_scripted(tmp_path, script, settings())

    assert script.investigated == Counter({(rcid, "m/cheap"): 1 for rcid in RCIDS})
    assert script.judged == Counter({(rcid, m.name): 1 for rcid in RCIDS for m in MODELS})
    evidence = read_evidence(tmp_path)
    ids = {e.edit_rcid: e.evidence_id for e in evidence}
    assert sorted(e.edit_rcid for e in evidence) == RCIDS  # one line per edit
    records = logged(tmp_path)
    assert len(records) == 36
    assert all(r["evidence_id"] == ids[r["edit_rcid"]] for r in records)
    manifest = yaml.safe_load((tmp_path / "manifest.yaml").read_text())
    assert manifest["settings"]["evidence"] == {"mode": "shared", "investigator": "m/cheap"}
    assert "Shared evidence: m/cheap investigates each edit once" in out


def test_the_investigation_cost_is_counted_once_per_edit_and_never_in_a_judges_record(tmp_path):
    script = Scripted()
    out = run_scripted(tmp_path, script, settings())

    assert sum(e.cost_usd or 0 for e in read_evidence(tmp_path)) == pytest.approx(12 * 0.5)
    assert sum(r["cost_usd"] for r in logged(tmp_path)) == pytest.approx(36 * 0.01)
    assert "| $6.3600 |" in out  # the progress spend: 12 investigations and 36 verdicts, each counted once


def test_the_spend_cap_counts_the_investigations(tmp_path):
    script = Scripted()
    run_scripted(tmp_path, script, settings(max_cost_usd=1.2, concurrency=1, max_lead=1))
    # Edits 1 and 2: 2 x ($0.50 + 3 x $0.01) = $1.06; edit 3's investigation takes it past the cap of $1.20, which
    # stops the run at the first verdict after it.
    assert sum(script.investigated.values()) == 3
    assert len(logged(tmp_path)) == 7


def test_an_explicit_investigator_investigates_and_judges_like_the_others(tmp_path):
    script = Scripted()
    run_scripted(tmp_path, script, settings(investigator="m/dear"), limit=2)
    assert script.investigated == Counter({(RCIDS[0], "m/dear"): 1, (RCIDS[1], "m/dear"): 1})
    assert script.judged[(RCIDS[0], "m/dear")] == 1


def test_the_default_investigator_is_the_cheapest_model_that_calls_tools_natively():
    prompted_only = ModelSpec("m/cheapest-no-tools", None, 0.01, 0.01, tool_protocol="prompted")
    unpriced = ModelSpec("m/unpriced")
    assert choose_investigator([DEAR, prompted_only, unpriced, MID, CHEAP]) == "m/cheap"
    assert choose_investigator([unpriced, prompted_only]) == "m/unpriced"


# --- resume -------------------------------------------------------------------------------------------


def test_a_resume_asks_no_logged_judge_again_and_reinvestigates_only_an_edit_whose_investigation_failed(tmp_path):
    first = Scripted({(2, "m/mid"): ("error", None)}, failing=frozenset({5}))
    run_scripted(tmp_path, first, settings())
    assert first.investigated[(RCIDS[5], "m/cheap")] == 1  # the failure is shared by the edit's judges this session
    [failed] = [e for e in read_evidence(tmp_path) if e.edit_rcid == RCIDS[5]]  # lines land as investigations end
    assert [first.read[(RCIDS[5], m.name)] for m in MODELS] == [failed.evidence_id] * 3

    again = Scripted()
    run_scripted(tmp_path, again, settings())

    assert again.investigated == Counter({(RCIDS[5], "m/cheap"): 1})
    assert again.judged == Counter({(RCIDS[2], "m/mid"): 1, **{(RCIDS[5], m.name): 1 for m in MODELS}})
    edit2 = next(e for e in read_evidence(tmp_path) if e.edit_rcid == RCIDS[2])  # lines land in the order investigations end
    assert again.read[(RCIDS[2], "m/mid")] == edit2.evidence_id  # the logged evidence, read again


def test_evidence_logged_before_a_crash_is_judged_on_resume_without_a_new_investigation(tmp_path):
    run_scripted(tmp_path, Scripted(), settings(), limit=1)
    with EvidenceLog(tmp_path) as log:  # as a crash leaves it: edit 2's evidence is logged, none of its judges
        log.append(EvidenceRecord("kept-2", RCIDS[1], "m/cheap", "ok", "2026-11-27T00:00:00Z", cost_usd=0.5))
    script = Scripted()
    run_scripted(tmp_path, script, settings(), limit=2)
    assert script.investigated == Counter()
    assert {model: script.read[(RCIDS[1], model)] for model in ("m/cheap", "m/mid", "m/dear")} == dict.fromkeys(
        ("m/cheap", "m/mid", "m/dear"), "kept-2")


def test_a_torn_evidence_line_is_set_aside_and_that_edit_investigated_again(tmp_path):
    run_scripted(tmp_path, Scripted(), settings(), limit=1)
    path = tmp_path / "evidence.jsonl"
    path.write_bytes(path.read_bytes() + b'{"evidence_id": "torn-2", "edit_rcid": ' + str(RCIDS[1]).encode())
    script = Scripted()
    out = run_scripted(tmp_path, script, settings(), limit=2)
    assert "a torn last line was set aside in evidence.torn-1.jsonl" in out
    assert script.investigated == Counter({(RCIDS[1], "m/cheap"): 1})
    assert sorted(e.edit_rcid for e in read_evidence(tmp_path)) == RCIDS[:2]


@pytest.mark.parametrize(("flags", "message"), [
    ([], "cannot resume this run directory with --evidence own: it was started with --evidence shared "
         "--investigator m/cheap. Resume with that, or use a new --run-dir."),
    (["--evidence", "shared", "--investigator", "m/mid"], "cannot resume this run directory with --evidence shared "
     "--investigator m/mid: it was started with --evidence shared --investigator m/cheap."),
    (["--evidence", "shared", "--investigator", "m/mid", "--allow-settings-change"], "with --evidence shared "
     "--investigator m/mid: it was started with --evidence shared --investigator m/cheap."),
])
def test_a_resume_cannot_switch_the_evidence_or_the_investigator_one_line_exit_2_nothing_written(
    tmp_path, capsys, flags, message
):
    run_scripted(tmp_path, Scripted(), settings(), limit=2)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path), "--limit", "2", "-m", "m/dear,m/cheap,m/mid",
                 *LOCAL_FLAGS, *flags])
    assert code == 2
    assert message in one_line_error(capsys)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_an_own_run_cannot_be_resumed_as_shared(tmp_path):
    request = RunRequest(SAMPLE, tmp_path, RunSettings(models=MODELS), limit=1, handle_signals=False, out=StringIO(),
                         workload=PATROL)

    async def verdict(edit, model):
        return new_record(edit, model.name, "ok", verdict="plausible", cost_usd=0.01)

    anyio.run(lambda: run(request, verdict_fn=verdict))
    with pytest.raises(ConfigError, match="with --evidence shared: it was started with --evidence own"):
        run_scripted(tmp_path, Scripted(), settings(), limit=1)


def test_a_resume_without_investigator_keeps_the_one_the_run_started_with(tmp_path):
    run_scripted(tmp_path, Scripted(), settings(investigator="m/mid"), limit=1)
    script = Scripted()
    run_scripted(tmp_path, script, settings(), limit=2)
    assert script.investigated == Counter({(RCIDS[1], "m/mid"): 1})


@pytest.mark.parametrize(("flags", "message"), [
    (["--evidence", "both"], "--evidence must be one of own, shared, team (got 'both')."),
    (["--investigator", "m/a"], "--investigator needs --evidence shared"),
    (["--evidence", "shared", "--investigator", "m/zz"], "--investigator m/zz is not one of the run's models (m/a, m/b)"),
])
def test_a_bad_evidence_flag_is_one_line_exit_2_and_nothing_written(tmp_path, capsys, flags, message):
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), "-m", "m/a,m/b", *LOCAL_FLAGS, *flags])
    assert code == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "run").exists()


# --- strategies ---------------------------------------------------------------------------------------


def test_a_cascade_escalation_reuses_the_edits_evidence(tmp_path):
    script = Scripted({(1, "m/cheap"): ("ok", "plausible"), (1, "m/mid"): ("ok", "suspect"),
                       (1, "m/dear"): ("ok", "suspect")})
    run_scripted(tmp_path, script, settings(strategy=CascadeStrategy()), limit=3)

    assert script.investigated == Counter({(rcid, "m/cheap"): 1 for rcid in RCIDS[:3]})
    asked = [(r["edit_rcid"], r["model"], r["escalation"]["step"]) for r in logged(tmp_path)]
    assert sorted(asked) == sorted([(RCIDS[0], "m/cheap", 1), (RCIDS[1], "m/cheap", 1), (RCIDS[1], "m/mid", 2),
                                    (RCIDS[1], "m/dear", 3), (RCIDS[2], "m/cheap", 1)])
    ids = {e.edit_rcid: e.evidence_id for e in read_evidence(tmp_path)}
    assert {r["evidence_id"] for r in logged(tmp_path) if r["edit_rcid"] == RCIDS[1]} == {ids[RCIDS[1]]}


# --- a real investigation and its judges: what a judge reads, and provenance ---------------------------

PROMPT = sift_prompt("Check the edit.", "0" * 64)
SITE = "https://obituaries.example"
ARTICLE = ("<html><head><title>Obituary</title></head><body><article><h1>Douglas Adams</h1>"
           + "<p>Douglas Noel Adams was born in Cambridge on 11 March 1952.</p>" * 6 + "</article></body></html>")


async def no_sleep(seconds: float) -> None:
    return None


async def test_judges_read_the_evidence_as_text_turns_and_may_call_verified_only_what_it_fetched(
    edit, http, respx_mock: respx.MockRouter
):
    final = f"{SITE}/articles/obituary.html"
    respx_mock.get(f"{SITE}/short").respond(302, headers={"Location": "/articles/obituary.html"})
    respx_mock.get(final).respond(200, html=ARTICLE)
    verdict = {"verdict": "incorrect", "rationale": "The obituary gives 1952.", "sources": [
        {"url": final, "supports_claim": False, "provenance": "verified"},
        {"url": "https://www.bbc.co.uk/news/adams", "supports_claim": False, "provenance": "verified"},
    ]}
    script = ScriptedChat([
        completion(None, tool_calls=[tool_call("web_fetch", {"url": f"{SITE}/short"})], cost=0.003),
        completion("The obituary says 11 March 1952.", cost=0.002),
        completion(json.dumps(verdict), cost=0.0007),
    ])
    respx_mock.post(f"{LOCAL}/chat/completions").mock(side_effect=script)
    chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)
    tools = ToolBox(http, ToolSettings(allow_private_urls=True, per_host_delay_s=0))

    evidence = await investigate_item(edit, ModelSpec("m/investigator"), chat=chat, tools=tools, prompt=PROMPT,
                                      max_turns=5, timeout_s=60)
    record = await judge_evidence(edit, ModelSpec("m/judge"), evidence, chat=chat, prompt=PROMPT, timeout_s=60)

    assert (evidence.status, evidence.cost_usd, len(script.requests)) == ("ok", pytest.approx(0.005), 3)
    assert [(s["tool"], json.loads(s["arguments"])) for s in evidence.steps] == [("web_fetch", {"url": f"{SITE}/short"})]
    assert "11 March 1952" in evidence.steps[0]["result"]
    sent = script.requests[2]["messages"]
    assert "tools" not in script.requests[2]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert not any(m.get("tool_calls") or m["role"] == "tool" for m in sent)
    assert json.loads(sent[2]["content"]) == {"tool": "web_fetch", "arguments": {"url": f"{SITE}/short"}}
    assert sent[3]["content"].startswith("Tool result for web_fetch:\n")
    assert "one investigation of this edit was made for every judge, by m/investigator" in sent[1]["content"]
    assert (record.status, record.verdict, record.evidence_id, record.tool_calls) == (
        "ok", "incorrect", evidence.evidence_id, [])
    assert (record.cost_usd, record.tool_protocol) == (pytest.approx(0.0007), "shared")
    assert [(s.url, s.provenance, s.fetched, s.claimed_verified) for s in record.sources] == [
        (final, "verified", True, False),
        ("https://www.bbc.co.uk/news/adams", "reported", False, True),
    ]


async def test_no_judge_reads_a_failed_investigation_and_its_record_says_why(edit):
    failed = EvidenceRecord("x-1", edit.rcid, "m/investigator", "error", "2026-11-27T00:00:00Z", error="HTTP 502")
    async with httpx.AsyncClient() as http:
        chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)
        record = await judge_evidence(edit, ModelSpec("m/judge"), failed, chat=chat, prompt=PROMPT, timeout_s=5)
    assert (record.status, record.evidence_id, record.token_usage) == ("error", "x-1", Usage())
    assert record.error == "the shared investigation by m/investigator ended error: HTTP 502"


def test_the_simulator_reads_a_shared_investigation_as_the_pages_it_fetched_and_saw():
    fetched = "http://127.0.0.1:1/web/example.org/page"
    body = {"response_format": {"type": "json_object"}, "messages": [
        {"role": "system", "content": "SIFT"},
        {"role": "user", "content": "rcid: 7\nthe edit"},
        {"role": "assistant", "content": json.dumps({"tool": "web_fetch", "arguments": {"url": fetched}})},
        {"role": "user", "content": "Tool result for web_fetch:\nThe page text."},
        {"role": "assistant", "content": json.dumps({"tool": "web_fetch", "arguments": {"url": fetched + "2"}})},
        {"role": "user", "content": "Tool result for web_fetch:\nerror: HTTP 404 Not Found"},
    ]}
    conv = read_conversation(body)
    assert (conv.phase, conv.fetch_attempts, conv.fetched) == ("verdict", [fetched, fetched + "2"], [fetched])


# --- end to end: kill -9 right after an edit's evidence is logged --------------------------------------


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.timeout(300)  # `fanout run` processes, killed and resumed: 48 s at a load average of 16 on 2 CPUs
def test_a_shared_run_killed_right_after_an_evidence_line_resumes_without_investigating_that_edit_again(tmp_path, capsys):
    evidence, log = tmp_path / "evidence.jsonl", tmp_path / "checkpoint.jsonl"
    with serving_simulator(SimConfig(seed=11, latency_scale=0.05)) as sim:
        argv = ["run", str(SAMPLE), "--run-dir", str(tmp_path), "--base-url", sim.api_base,
                "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0", "--concurrency", "1",
                "--evidence", "shared"]
        process = warm.start([*warm.FANOUT, *argv])  # a real process, forked from a warm interpreter
        while lines(evidence) < 2:  # edit 2 investigated: its first judge is now asking for its verdict
            assert process.returncode is None, "the run ended before it could be killed"
            time.sleep(0.001)
        process.send_signal(signal.SIGKILL)
        assert process.wait_blocking() == -signal.SIGKILL
        at_kill = [json.loads(line)["edit_rcid"] for line in evidence.read_text().splitlines()]
        judged_at_kill = Counter(json.loads(line)["edit_rcid"] for line in log.read_text().splitlines()) if log.exists() else Counter()
        sim.state.latency_scale = 0.0  # the latency only let the kill land between evidence and judges
        code = main(argv)  # the resume reads what the killed process left: it need not be a process of its own
    assert code == 0, capsys.readouterr()
    assert at_kill == RCIDS[:2] and judged_at_kill[RCIDS[1]] < 4, "the kill did not land between evidence and judges"
    investigated = [json.loads(line)["edit_rcid"] for line in evidence.read_text().splitlines()]
    assert investigated == RCIDS  # each edit once, the two logged before the kill never again
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert Counter((r["edit_rcid"], r["model"]) for r in records) == Counter(
        {(rcid, model): 1 for rcid in RCIDS for model in {r["model"] for r in records}})
    assert len(records) == 48
    ids = {json.loads(line)["edit_rcid"]: json.loads(line)["evidence_id"] for line in evidence.read_text().splitlines()}
    assert all(r["evidence_id"] == ids[r["edit_rcid"]] and r["status"] == "ok" for r in records)


# --- the report --------------------------------------------------------------------------------------


def test_the_report_of_a_shared_run_says_so_and_shows_investigation_cost_apart_from_the_verdicts(tmp_path):
    from fanout.report.build import build_report
    from fanout.report.terminal import render_summary

    run_scripted(tmp_path, Scripted(), settings(investigator="m/mid"), limit=4)
    report = build_report(tmp_path)

    costs = {c.model: (c.records, round(c.total_cost_usd, 6), c.investigations, c.investigation_cost_usd)
             for c in report.costs}
    assert costs == {"m/dear": (4, 0.04, 0, 0.0), "m/cheap": (4, 0.04, 0, 0.0), "m/mid": (4, 0.04, 4, 2.0)}
    assert (report.totals["total_cost_usd"], report.totals["investigation_cost_usd"]) == (pytest.approx(0.12), 2.0)
    text = render_summary(report)
    assert "evidence: shared, investigated by m/mid" in text
    assert "The 4 shared investigation(s) cost $2.0000, shown apart from the verdicts (column investigation); " \
           "with them the run cost $2.1200." in text
    assert "Shared evidence: m/mid investigated each edit once and every model gave its verdict" in text
    rows = text.split("\nCost\n", 1)[1].splitlines()
    column = rows[0].index("investigation")
    assert [row[column:column + len("investigation")].strip() for row in rows[2:6]] == ["", "", "$2.0000", "$2.0000"]


def test_status_counts_the_investigations_in_the_spend(tmp_path):
    from fanout.engine.status import read_status

    run_scripted(tmp_path, Scripted(), settings(), limit=2)
    assert read_status(tmp_path).tally.spent_usd == pytest.approx(2 * 0.5 + 6 * 0.01)


def test_a_dry_run_says_who_investigates_and_writes_nothing(tmp_path, capsys):
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), "-m", "m/a,m/b", *LOCAL_FLAGS, "--dry-run",
                 "--evidence", "shared", "--investigator", "m/b"])
    assert code == 0
    assert "Evidence: shared; m/b investigates each edit once and every model judges that evidence." in capsys.readouterr().out
    assert not (tmp_path / "run").exists()


def test_a_router_with_shared_evidence_investigates_each_edit_once_and_asks_its_one_judge(tmp_path):
    from fanout.judging.router import RouterStrategy

    script = Scripted()
    run_scripted(tmp_path, script, settings(strategy=RouterStrategy(), investigator="m/dear"), limit=3)
    assert script.investigated == Counter({(rcid, "m/dear"): 1 for rcid in RCIDS[:3]})
    assert script.judged == Counter({(rcid, "m/cheap"): 1 for rcid in RCIDS[:3]})  # the router's cheapest


async def test_an_investigation_cut_off_is_judged_whole_and_each_verdict_says_so(edit, http, respx_mock: respx.MockRouter):
    respx_mock.get(f"{SITE}/page").respond(200, html=ARTICLE)
    verdict = {"verdict": "incorrect", "rationale": "1952.", "sources": [
        {"url": f"{SITE}/page", "supports_claim": False, "provenance": "verified"}]}
    script = ScriptedChat([
        completion(None, tool_calls=[tool_call("web_fetch", {"url": f"{SITE}/page"})], cost=0.001),
        completion("The page says", finish_reason="length", cost=0.001),
        completion(json.dumps(verdict), cost=0.0005),
    ])
    respx_mock.post(f"{LOCAL}/chat/completions").mock(side_effect=script)
    chat = ChatClient(base_url=LOCAL, api_key=None, http=http, sleep=no_sleep)
    tools = ToolBox(http, ToolSettings(allow_private_urls=True, per_host_delay_s=0))

    evidence = await investigate_item(edit, ModelSpec("m/investigator"), chat=chat, tools=tools, prompt=PROMPT,
                                      max_turns=5, timeout_s=60)
    record = await judge_evidence(edit, ModelSpec("m/judge"), evidence, chat=chat, prompt=PROMPT, timeout_s=60)

    assert (evidence.status, len(evidence.steps)) == ("incomplete", 1)
    assert "[trimmed" not in evidence.steps[0]["result"] and "11 March 1952" in evidence.steps[0]["result"]
    assert (record.status, record.verdict, record.investigation_cut_off) == ("ok", "incorrect", True)
    assert "the shared investigation ended incomplete; this verdict rests on what it gathered" in record.warnings
    assert record.sources[0].provenance == "verified"
