"""`fanout review`: the desk's JSON API and guard on a real loopback server, its export, and the report reading
the decisions (the browser itself: tests/test_review_browser.py)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from anyio.abc import Process
import pytest
import yaml
from test_report_support import MODELS, make_record, run_from_table, write_run

from fanout.report import ReportOptions, build_report, render_html, render_summary
from fanout.cli import main
from fanout.judging.policy import Thresholds
from fanout.review.desk import Desk, work_order
from fanout.review.guard import DESK_POLICY, EDIT_PAGE_POLICY
from fanout.review.server import running_desk
from fanout.store.reviews import NOTE_CAP, Review, append_review, read_reviews
from fanout.store.run_lock import hold_run_lock

TABLE = {
    1: ("plausible", "verified-high", "plausible"),  # unanimous accept
    2: ("incorrect", "suspect", "incorrect"),  # unanimous reject
    3: ("plausible", "incorrect", None),  # a tie: paused, top two 0.50 / 0.50
    4: ("unverifiable", "unverifiable", "plausible"),  # 2 of 3: paused, top two 0.67 / 0.33
}


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return run_from_table(tmp_path / "run", TABLE)


@pytest.fixture
async def desk(run_dir: Path) -> AsyncIterator[str]:
    """The desk's URL, served on a free port of 127.0.0.1."""
    async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0) as url:
        yield url


async def call(method: str, url: str, *, body: bytes | None = None, headers: dict[str, str] | None = None,
               ) -> tuple[int, dict[str, str], bytes]:
    async with aiohttp.ClientSession() as session:
        async with session.request(method, url, data=body, headers=headers or {}) as response:
            return response.status, dict(response.headers), await response.read()


def post(rcid: Any, decision: Any, note: Any = "", page: Any = None) -> bytes:
    body = {"rcid": rcid, "decision": decision, "note": note}
    return json.dumps(body if page is None else body | {"page": page}).encode()


JSON = {"Content-Type": "application/json"}


async def open_page(url: str, *shown: int) -> str:
    """A page of the desk, as a browser opens it: its token, and each edit in `shown` drawn on it in full."""
    _, _, html = await call("GET", url)
    token = re.search(rb'data-page="([^"]+)"', html)
    assert token is not None
    page = token.group(1).decode()
    await call("GET", url + f"api/edits?page={page}")
    for rcid in shown:
        status, _, _ = await call("GET", url + f"api/edits/{rcid}?page={page}")
        assert status == 200
    return page


async def decide(url: str, rcid: int, decision: str, note: str = "") -> tuple[int, dict[str, Any]]:
    """A decision from a page that showed the edit; (status, the JSON answer)."""
    page = await open_page(url, rcid)
    status, _, answer = await call("POST", url + "api/decisions", body=post(rcid, decision, note, page), headers=JSON)
    return status, json.loads(answer)


async def test_the_list_is_every_undecided_edit_in_the_working_order_with_how_each_was_drawn(desk: str) -> None:
    status, headers, body = await call("GET", desk + "api/edits")
    data = json.loads(body)
    assert status == 200 and headers["Content-Security-Policy"] == DESK_POLICY
    # a 30 % random share over the random order 4, 1, 3, 2: the first pick is drawn at random (0 of 0 decisions
    # random is below 30 %), the rest by doubt, paused edits first (3: a tie), then 1 and 2; 1 and 3 also come next
    # in the random order, so the random sample grows past 30 % without another deliberate draw
    assert [(e["rcid"], e["outcome"], e["drawn"]) for e in data["edits"]] == [
        (4, "paused", "random"), (3, "paused", "uncertain"), (1, "decided", "uncertain"), (2, "decided", "uncertain")]
    three = data["edits"][1]
    assert three["why"] == "only 2 of 3 verdicts (quorum 3); tie; top two 0.50 and 0.50 closer than --delta 0.20"
    assert three["verdicts"] == dict(zip(MODELS, TABLE[3])) and three["split"] is True
    assert (three["stance"], three["stance_text"]) == ("accept", "paused · leans accept")
    assert (data["edits"][3]["stance"], data["edits"][3]["stance_text"]) == ("reject", "committee rejects")
    assert data["models"] == list(MODELS) and data["random_share"] == 0.3
    assert data["counts"] == {"edits": 4, "paused": 2, "waiting": 2, "decided": 0, "random_sample": 0}
    assert [p["text"] for p in data["progress"]] == ["at least 45 random decisions to certify auto-accept at 95 %",
                                                     "at least 45 random decisions to certify auto-reject at 95 %"]
    assert [(k["model"], k["n"], k["kappa"]) for k in data["agreement"]] == [(m, 0, None) for m in MODELS]


def test_the_desks_least_sure_first_is_the_report_queues_order(tmp_path: Path) -> None:
    """One order everywhere: with no random draws the desk offers the paused edits as the report's queue lists
    them, by the models' mean confidence (edit 4 at 0.5 before edit 3 at 0.9), then the others."""
    sure = {1: 0.95, 2: 0.8, 3: 0.9, 4: 0.5}
    records = [dataclasses.replace(r, confidence=sure[rcid] if r.verdict else None)
               for rcid, row in TABLE.items() for r in (make_record(rcid, m, v) for m, v in zip(MODELS, row))]
    report = build_report(write_run(tmp_path / "run", records))
    queue = [row["rcid"] for row in report.table("human_queue")]
    assert queue == [4, 3]
    assert [p.key for p in work_order(report, set(), random_share=0.0)] == [*queue, 2, 1]


async def test_a_decision_is_appended_and_a_changed_one_stands_with_its_history_kept(desk: str, run_dir: Path) -> None:
    first = await decide(desk, 3, "accept", "source agrees")
    second = await decide(desk, 3, "reject", "no: 1852")
    assert (first[0], second[0]) == (201, 201), (first, second)
    answered = second[1]
    assert {k: answered[k] for k in ("rcid", "decision", "note", "reviewer", "drawn")} == {
        "rcid": 3, "decision": "reject", "note": "no: 1852", "reviewer": "ana", "drawn": "chosen"}
    lines = [json.loads(line) for line in (run_dir / "reviews.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["rcid"], r["decision"], r["note"], r["reviewer"], r["drawn"]) for r in lines] == [
        (3, "accept", "source agrees", "ana", "uncertain"), (3, "reject", "no: 1852", "ana", "chosen")]
    detail = json.loads((await call("GET", desk + "api/edits/3"))[2])
    assert detail["human"]["decision"] == "reject"
    assert [h["decision"] for h in detail["history"]] == ["accept", "reject"]
    assert [m["model"] for m in detail["models"]] == list(MODELS)
    assert detail["models"][0]["rationale"] == "vendor/alpha thinks plausible"
    assert detail["models"][2]["status"] == "invalid_json" and detail["transcript_url"] == "/edits/3"


async def test_the_desk_takes_a_decision_only_for_an_edit_its_page_showed(desk: str, run_dir: Path) -> None:
    page = await open_page(desk, 3)  # the page drew edit 3 in full; edit 4 is only in its list
    refused = [
        (post(4, "accept", "", page), 409, "edit 4 was not shown on this page: a decision names the edit on screen"),
        (post(4, "accept", "", "forged"), 409, "this page of the desk is unknown to it (the desk was restarted, or the "
                                               "page is too old): reload it"),
        (post(4, "accept"), 400, "page is missing: a decision names the page that showed the edit (the desk's page "
                                 "sends its token)"),
    ]
    for body, status, reason in refused:
        got, _, answer = await call("POST", desk + "api/decisions", body=body, headers=JSON)
        assert (got, json.loads(answer)) == (status, {"error": reason})
    assert not (run_dir / "reviews.jsonl").exists()
    got, _, _ = await call("POST", desk + "api/decisions", body=post(3, "reject", "", page), headers=JSON)
    assert got == 201 and read_reviews(run_dir).latest[3].drawn == "uncertain"


async def test_undo_is_a_new_line_and_the_decision_before_it_stands_again(desk: str, run_dir: Path) -> None:
    await decide(desk, 4, "accept")
    _, made = await decide(desk, 4, "reject")
    page = await open_page(desk, 4)
    undo = json.dumps({"rcid": 4, "page": page, "undoes": made["time"]}).encode()
    status, _, answer = await call("POST", desk + "api/undo", body=undo, headers=JSON)
    assert status == 201 and json.loads(answer) == {"rcid": 4, "decision": "undo", "note": "", "reviewer": "ana",
                                                    "time": json.loads(answer)["time"], "undoes": made["time"]}
    log = read_reviews(run_dir)
    assert [r.decision for r in log.history] == ["accept", "reject", "undo"] and log.latest[4].decision == "accept"
    status, _, answer = await call("POST", desk + "api/undo", body=undo, headers=JSON)  # the reject no longer stands
    assert status == 409 and "no longer stands" in json.loads(answer)["error"]
    detail = json.loads((await call("GET", desk + "api/edits/4"))[2])
    assert [(h["decision"], h["undoes"]) for h in detail["history"]] == [
        ("accept", ""), ("reject", ""), ("undo", made["time"])]


async def test_a_note_with_a_lone_surrogate_is_a_400_with_a_reason(desk: str, run_dir: Path) -> None:
    page = await open_page(desk, 3)
    body = b'{"rcid": 3, "decision": "accept", "note": "ok \\ud800", "page": "' + page.encode() + b'"}'
    status, _, answer = await call("POST", desk + "api/decisions", body=body, headers=JSON)
    assert (status, json.loads(answer)) == (400, {"error": "note is not valid Unicode: a lone surrogate (U+D800) at "
                                                           "character 3; send text"})
    assert not (run_dir / "reviews.jsonl").exists()


@pytest.mark.parametrize("host", ["attacker.example:{port}", "localhost.attacker.example:{port}", "127.0.0.1:1",
                                  "localhost:{port}"])
async def test_a_foreign_host_header_is_421_and_writes_nothing(desk: str, run_dir: Path, host: str) -> None:
    port = desk.rsplit(":", 1)[1].strip("/")
    forged = host.format(port=port)
    for method, path, body in (("POST", "api/decisions", post(3, "accept")), ("GET", "api/edits", None),
                               ("GET", "", None)):
        status, headers, answer = await call(method, desk + path, body=body, headers=JSON | {"Host": forged})
        assert status == 421
        assert json.loads(answer) == {"error": f"Host {forged!r} is not this desk; open http://127.0.0.1:{port}/"}
        assert headers["Content-Security-Policy"] == DESK_POLICY
    assert not (run_dir / "reviews.jsonl").exists()


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{other}", "https://evil.example", "null",
                                    "http://localhost:{port}"])
async def test_a_foreign_origin_is_403_and_writes_nothing(desk: str, run_dir: Path, origin: str) -> None:
    port = int(desk.rsplit(":", 1)[1].strip("/"))
    sender = origin.format(other=port + 1, port=port)
    status, _, answer = await call("POST", desk + "api/decisions", body=post(3, "accept"),
                                   headers=JSON | {"Origin": sender})
    assert status == 403
    assert json.loads(answer)["error"] == (f"requests from {sender} are refused; only pages of "
                                           f"http://127.0.0.1:{port} may call the desk")
    assert not (run_dir / "reviews.jsonl").exists()


async def test_a_cross_site_fetch_without_origin_is_403(desk: str, run_dir: Path) -> None:
    status, _, _ = await call("POST", desk + "api/decisions", body=post(3, "accept"),
                              headers=JSON | {"Sec-Fetch-Site": "cross-site"})
    assert status == 403 and not (run_dir / "reviews.jsonl").exists()


async def test_the_desks_own_origin_may_post(desk: str, run_dir: Path) -> None:
    own = desk.rstrip("/")
    page = await open_page(desk, 4)
    status, _, _ = await call("POST", desk + "api/decisions", body=post(4, "unsure", "", page),
                              headers=JSON | {"Origin": own, "Sec-Fetch-Site": "same-origin"})
    assert status == 201 and read_reviews(run_dir).latest[4].decision == "unsure"


SHAPE = '{"rcid": N, "decision": "accept|reject|unsure", "note": "...", "page": "the page\'s token"}'
BAD = [
    (post(99, "accept", "", "PAGE"), JSON, 404, "unknown rcid 99: not an edit of this run"),
    (post(3, "maybe", "", "PAGE"), JSON, 400, "decision must be one of accept, reject, unsure, got 'maybe'"),
    (post(3, "accept", "x" * (NOTE_CAP + 1), "PAGE"), JSON, 400,
     f"note is {NOTE_CAP + 1} characters; at most {NOTE_CAP}"),
    (post("3", "accept", "", "PAGE"), JSON, 400, "rcid must be an integer, got '3'"),
    (post(3, "accept", 5, "PAGE"), JSON, 400, "note must be a string"),
    (b'{"rcid": 3, "decision": "accept", "reviewer": "eve", "page": "PAGE"}', JSON, 400,
     "unknown field(s) reviewer; a decision has rcid, decision, note and page"),
    (b"[3, \"accept\"]", JSON, 400, f"expected a JSON object: {SHAPE}"),
    (b'{"rcid": 3, "decision": ', JSON, 400, f"malformed JSON; send {SHAPE}"),
    (b"[" * 16000, JSON, 400, f"malformed JSON; send {SHAPE}"),  # nested past json.loads' recursion: once a 500
    (b'{"note": "' + b"x" * 20000 + b'"}', JSON, 413, "body over 16384 bytes"),
    (b"rcid=3&decision=accept", {"Content-Type": "application/x-www-form-urlencoded"}, 415,
     "send the decision as JSON (Content-Type: application/json)"),
]


@pytest.mark.parametrize(("body", "headers", "status", "reason"), BAD, ids=[b[3][:30] for b in BAD])
async def test_bad_input_is_a_4xx_with_a_one_line_reason_and_writes_nothing(
        desk: str, run_dir: Path, body: bytes, headers: dict[str, str], status: int, reason: str) -> None:
    page = await open_page(desk, 3)
    got, _, answer = await call("POST", desk + "api/decisions", body=body.replace(b"PAGE", page.encode()),
                                headers=headers)
    assert (got, json.loads(answer)) == (status, {"error": reason})
    assert b"\n" not in answer.strip()
    assert not (run_dir / "reviews.jsonl").exists()


@pytest.mark.parametrize(("path", "status"), [
    ("static/desk.js", 200), ("static/desk.css", 200), ("static/app.py", 404), ("static/..%2Fapp.py", 404),
    ("static/%2e%2e/%2e%2e/store/reviews.py", 404), ("checkpoint.jsonl", 404), ("edits/../checkpoint.jsonl", 404),
    ("api/edits/99", 404), ("api/edits/abc", 400), ("edits/99", 404),
])
async def test_only_the_desks_own_files_are_served(desk: str, path: str, status: int) -> None:
    got, headers, body = await call("GET", desk + path)
    assert got == status and headers["Content-Security-Policy"] == DESK_POLICY
    if status != 200:
        assert set(json.loads(body)) == {"error"}
    assert b"checkpoint" not in body or path == "static/desk.js"


async def test_an_edit_page_shows_every_transcript_under_the_reports_policy(desk: str) -> None:
    status, headers, body = await call("GET", desk + "edits/3")
    assert status == 200 and headers["Content-Security-Policy"] == EDIT_PAGE_POLICY
    assert all(m.encode() in body for m in MODELS)


async def test_every_value_from_the_run_is_escaped_on_the_page(tmp_path: Path) -> None:
    evil = "<img src=x onerror=alert(1)>"
    records = [dataclasses.replace(make_record(7, m, "plausible"), qid=evil) for m in MODELS]
    run_dir = write_run(tmp_path / "run", records)
    async with running_desk(Desk(run_dir, ReportOptions()), '"><script>alert(2)</script>', port=0) as url:
        _, _, page = await call("GET", url)
        _, headers, listed = await call("GET", url + "api/edits")
    # the page holds no value of the run; the list is JSON, which the script puts in the page as text only
    # (tests/test_review_browser.py checks the drawn page)
    assert evil.encode() not in page and b"<script>alert(2)" not in page
    assert b"&#34;&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in page
    assert json.loads(listed)["edits"][0]["qid"] == evil
    assert headers["Content-Type"].startswith("application/json") and headers["X-Content-Type-Options"] == "nosniff"


async def test_new_verdicts_appear_on_reload_while_a_run_holds_the_directory(desk: str, run_dir: Path) -> None:
    assert len(json.loads((await call("GET", desk + "api/edits"))[2])["edits"]) == 4
    with hold_run_lock(run_dir):  # a `fanout run` still writing: the desk reads without the lock
        with (run_dir / "checkpoint.jsonl").open("a", encoding="utf-8") as log:
            for m in MODELS:
                log.write(json.dumps(make_record(5, m, "plausible").to_dict()) + "\n")
        rows = json.loads((await call("GET", desk + "api/edits"))[2])["edits"]
        assert [r["rcid"] for r in rows][-1] == 5
        status, _ = await decide(desk, 5, "accept")
        assert status == 201


# --- the report and the export read the decisions ------------------------------------------------

def decide_all(run_dir: Path) -> None:
    for rcid, decision in ((1, "accept"), (2, "reject"), (3, "accept"), (3, "reject"), (4, "unsure")):
        append_review(run_dir, Review(rcid, decision, "", "ana", "2026-11-27T00:00:00Z"))


def test_the_report_scores_each_model_and_rule_against_the_decisions_that_stand(run_dir: Path) -> None:
    decide_all(run_dir)
    report = build_report(run_dir)
    scores = {r["subject"]: (r["correct"], r["answered"], r["labelled"]) for r in report.table("human_scores")}
    # truth: 1 correct, 2 incorrect, 3 incorrect (the latest stands), 4 unsure (not scored)
    assert scores == {"vendor/alpha": (2, 3, 3), "vendor/beta": (3, 3, 3), "other/gamma": (2, 2, 3),
                      "majority": (2, 2, 3), "weighted": (2, 3, 3), "dawid_skene": (2, 3, 3)}
    agreement = {r["rule"]: (r["agree"], r["both_decided"], r["paused_agree"], r["paused_both_decided"])
                 for r in report.table("human_agreement")}
    assert agreement == {"majority": (2, 2, 0, 0), "weighted": (2, 3, 0, 1), "dawid_skene": (2, 3, 0, 1)}
    assert {r["rcid"]: r["human"] for r in report.table("human_queue")} == {3: "reject", 4: "unsure"}
    source = report.to_json()["human_decisions"]
    assert (source["edits_decided"], source["accept"], source["reject"], source["unsure"], source["reviewers"]) == (
        4, 1, 2, 1, ["ana"])
    summary = render_summary(report)
    assert f"human decisions: {run_dir / 'reviews.jsonl'} (4 of 4 edits; 1 accept, 2 reject, 1 unsure; by ana)" in summary
    assert "queue: 2 of 2 paused edits decided by a human" in summary


def test_a_run_nobody_reviewed_reports_no_human_section(run_dir: Path) -> None:
    report = build_report(run_dir)
    assert report.table("human_scores") == [] and report.to_json()["human_decisions"]["edits_decided"] == 0
    assert "Against human decisions" not in render_summary(report)


def test_fanout_queue_shows_which_paused_edits_are_decided(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    append_review(run_dir, Review(3, "reject", "", "ana", "2026-11-27T00:00:00Z"))
    assert main(["queue", str(run_dir)]) == 0
    head, *lines = capsys.readouterr().out.splitlines()
    assert head.endswith("; 1 of 4 edits wait for a human (2 paused, 1 of them decided by a human); least sure first "
                         "(mean confidence)")
    assert lines[0].startswith("Q3 ") and lines[0].endswith(" · human: reject")
    assert "human:" not in lines[1]
    assert main(["queue", str(run_dir), "--json"]) == 0
    assert [r["human"] for r in json.loads(capsys.readouterr().out)["queue"]] == ["reject", None]


async def test_the_report_the_queue_the_desk_and_compare_count_the_same_decided_edits(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Edit 3 decided; edit 4 decided, then the decision undone: one paused edit decided, one waiting, everywhere."""
    import shutil

    from fanout.report.compare_view import compare_reports

    append_review(run_dir, Review(3, "reject", "", "ana", "2026-11-27T00:00:00.000Z"))
    append_review(run_dir, Review(4, "accept", "", "ana", "2026-11-27T00:01:00.000Z"))
    append_review(run_dir, Review(4, "undo", "", "ana", "2026-11-27T00:02:00.000Z", undoes="2026-11-27T00:01:00.000Z"))
    said = "1 of 4 edits wait for a human (2 paused, 1 of them decided by a human"  # the terminal adds the queue
    report = build_report(run_dir)
    assert said in render_summary(report) and said in render_html(report)
    assert main(["queue", str(run_dir)]) == 0
    assert said in capsys.readouterr().out.splitlines()[0]
    async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0) as url:
        counts = json.loads((await call("GET", url + "api/edits"))[2])["counts"]
    assert counts == {"edits": 4, "paused": 2, "waiting": 1, "decided": 1, "random_sample": 0}
    other = tmp_path / "other"
    shutil.copytree(run_dir, other)
    (other / "reviews.jsonl").unlink()
    notes = compare_reports(report, build_report(other)).notes
    assert ("Human decisions: A 1 of 4 edits decided by people, 1 paused edits waiting; B 0 of 4 edits decided by "
            "people, 2 paused edits waiting.") in notes


def test_export_writes_the_decisions_as_labels_the_report_reads(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    decide_all(run_dir)
    out = tmp_path / "reviewed.yaml"
    assert main(["review", str(run_dir), "--export", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote 3 labels to {out} (1 unsure decisions left out)\n"
    labels = yaml.safe_load(out.read_text(encoding="utf-8"))["labels"]
    assert [(e["rcid"], e["truth"], e["reviewer"]) for e in labels] == [
        (1, "correct", "ana"), (2, "incorrect", "ana"), (3, "incorrect", "ana")]
    report = build_report(run_dir, ReportOptions(labels_path=out))
    assert report.labels is not None and report.labels.truth == {1: "correct", 2: "incorrect", 3: "incorrect"}


def test_export_over_a_file_of_the_run_is_refused_in_one_line(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    decide_all(run_dir)
    before = (run_dir / "reviews.jsonl").read_bytes()
    target = run_dir / "reviews.jsonl"
    assert main(["review", str(run_dir), "--export", str(target)]) == 2
    assert capsys.readouterr().err == (f"fanout review: error: --export {target} would write over the run's "
                                       f"reviews.jsonl in the run directory {run_dir}; choose another file\n")
    assert (run_dir / "reviews.jsonl").read_bytes() == before


def test_review_of_a_directory_that_is_not_a_run_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(tmp_path), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"fanout review: error: {tmp_path} has no checkpoint.jsonl") and err.count("\n") == 1


async def test_a_port_in_use_is_one_clear_error(run_dir: Path) -> None:
    from fanout.base.errors import ConfigError

    async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0) as url:
        port = int(url.rsplit(":", 1)[1].strip("/"))
        with pytest.raises(ConfigError, match=f"port {port} on 127.0.0.1 is in use; pass another --port"):
            async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=port):
                pass


async def test_the_desk_decides_as_the_report_does_without_its_agreement_intervals(run_dir: Path) -> None:
    desk = Desk(run_dir, ReportOptions(thresholds=Thresholds(delta=1)))
    light, full = await desk.report(), build_report(run_dir, ReportOptions(thresholds=Thresholds(delta=1)))
    assert [(d.rcid, d.outcome, d.why) for d in light.decisions] == [(d.rcid, d.outcome, d.why) for d in full.decisions]
    assert light.table("overall_agreement")[0]["krippendorff_alpha_low"] is None
    assert full.table("overall_agreement")[0]["krippendorff_alpha_low"] is not None


def test_the_html_report_names_the_human_decisions_and_scores_against_them(run_dir: Path) -> None:
    decide_all(run_dir)
    append_review(run_dir, Review(1, "accept", "<b>fine</b>", "<i>eve</i>", "2026-11-27T00:00:01Z"))
    html = render_html(build_report(run_dir))
    section = html[html.index('<section id="human">'):]
    section = section[:section.index("</section>")]
    assert "<h2>Against human decisions</h2>" in section and "by &lt;i&gt;eve&lt;/i&gt;, ana)" in section
    assert "Queue: 2 of 2 paused edits decided by a human." in section
    assert "<td class=\"l\">committee: majority</td><td class=\"l\">committee</td><td>2/3</td>" in section


async def test_the_answer_comes_only_after_the_line_is_fsynced(
        desk: str, run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from fanout.store import reviews as store

    synced: list[bytes] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        real_fsync(fd)
        synced.append((run_dir / "reviews.jsonl").read_bytes())

    monkeypatch.setattr(store.os, "fsync", fsync)
    page = await open_page(desk, 4)
    status, _, answer = await call("POST", desk + "api/decisions", body=post(4, "reject", "dup", page), headers=JSON)
    assert status == 201
    assert len(synced) == 1 and json.loads(synced[0]) == json.loads(answer)


async def test_fanout_review_prints_its_url_serves_and_stops_on_ctrl_c(run_dir: Path) -> None:
    import signal
    import sys

    import anyio
    from anyio.streams.buffered import BufferedByteReceiveStream

    async with await anyio.open_process([sys.executable, "-m", "fanout", "review", str(run_dir), "--port", "0",
                                         "--reviewer", "bo"]) as process, stopped_if_it_fails(process):
        assert process.stdout is not None and process.stderr is not None
        with anyio.fail_after(60):
            line = (await BufferedByteReceiveStream(process.stdout).receive_until(b"\n", 1000)).decode()
        assert line.startswith("review desk: http://127.0.0.1:") and line.endswith(" (127.0.0.1 only; Ctrl-C stops it)")
        url = line.split()[2]
        status, _ = await decide(url, 1, "accept")
        assert status == 201 and read_reviews(run_dir).latest[1].reviewer == "bo"
        process.send_signal(signal.SIGINT)
        with anyio.fail_after(60):
            assert await process.wait() == 130
        assert (await process.stderr.receive()).decode() == "fanout review: interrupted\n"


async def test_stopping_the_desk_does_not_wait_on_a_decision_sent_in_half(run_dir: Path) -> None:
    """A browser that sent the headers of a decision and part of its body does not hold Ctrl-C for aiohttp's
    minute: the desk stops within its grace, the half request is cancelled, and nothing is written."""
    import anyio

    from fanout.review.server import SHUTDOWN_GRACE_S

    async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        browser = await anyio.connect_tcp("127.0.0.1", port)
        await browser.send(b"POST /api/decisions HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                           b"Content-Length: 200\r\n\r\n{\"rcid\": 1" % port)
        await anyio.sleep(0.2)  # the handler is reading the body
        stopping = anyio.current_time()
    took = anyio.current_time() - stopping
    await browser.aclose()
    assert SHUTDOWN_GRACE_S <= took < 3 * SHUTDOWN_GRACE_S
    assert read_reviews(run_dir).latest == {}


@asynccontextmanager
async def stopped_if_it_fails(process: Process) -> AsyncIterator[None]:
    """Kills the desk's process when the test fails: leaving the block waits for the process to end, and one
    that hung would turn the failure into pytest-timeout's, with the assertion that failed hidden."""
    try:
        yield
    except BaseException:
        if process.returncode is None:
            process.kill()
        raise


def test_the_desk_reads_the_report_through_its_public_face_only() -> None:
    """review/ imports `fanout.report` and nothing under it: the renderers' insides can change without the desk."""
    import ast
    from importlib import resources

    import fanout.report

    reached = set()
    for source in resources.files("fanout.review").iterdir():
        if source.name.endswith(".py"):
            for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fanout.report"):
                    reached.add(node.module)
                    assert set(a.name for a in node.names) <= set(fanout.report.__all__), source.name
                if isinstance(node, ast.Import):
                    reached.update(a.name for a in node.names if a.name.startswith("fanout.report"))
    assert reached == {"fanout.report"}


# --- what the desk shows of an edit, and how it starts ------------------------------------------------------


async def test_an_edit_names_its_editor_and_links_its_history_and_undo_on_wikidata(tmp_path: Path) -> None:
    from test_report_edit_view import ADAMS, sample_run

    run_dir = sample_run(tmp_path / "run")
    async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0) as url:
        detail = json.loads((await call("GET", url + f"api/edits/{ADAMS}"))[2])
    assert detail["editor"] == {"name": "81.107.44.12", "anonymous": True, "new": True, "edit_count": None}
    assert detail["history_url"] == "https://www.wikidata.org/w/index.php?title=Q42&action=history"
    assert detail["undo_url"] == ("https://www.wikidata.org/w/index.php?title=Q42&action=edit&undoafter=2463871150"
                                  "&undo=2464599101")
    assert detail["timestamp"] == "2026-02-19T08:02:14Z"


async def test_an_edit_the_committee_rejects_alone_reads_auto_rejected_never_passed(tmp_path: Path) -> None:
    records = [dataclasses.replace(make_record(1, m, "incorrect"), confidence=0.95) for m in MODELS]
    records += [dataclasses.replace(make_record(2, m, "plausible"), confidence=0.95) for m in MODELS]
    run_dir = write_run(tmp_path / "run", records)
    async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0) as url:
        rows = {r["rcid"]: r for r in json.loads((await call("GET", url + "api/edits"))[2])["edits"]}
    assert (rows[1]["outcome"], rows[1]["stance"], rows[1]["stance_text"]) == ("auto-passed", "reject", "auto-rejected")
    assert rows[2]["stance_text"] == "auto-accepted"


async def test_progress_toward_a_certificate_follows_the_random_decisions_as_they_come_in(tmp_path: Path) -> None:
    """The random order here is 4, 1, 3, 2. With 4 (paused: the rule decides nothing there) and then 1 (the
    committee accepts at 0.9) decided, the random sample is 2 decisions, one of them auto-accept's and agreeing:
    45 such are needed at 95 % and risk 0.1, and auto-accept gets 1 of every 2 random decisions, so about
    (45 - 1) x 2 = 88 more. Auto-reject has none of its edits decided yet."""
    records = [dataclasses.replace(r, confidence=0.9 if r.verdict else None)
               for rcid, row in TABLE.items() for r in (make_record(rcid, m, v) for m, v in zip(MODELS, row))]
    run_dir = write_run(tmp_path / "run", records)
    append_review(run_dir, Review(4, "unsure", "", "ana", drawn="random"))
    async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0) as url:
        before = json.loads((await call("GET", url + "api/edits"))[2])
        assert (await decide(url, 1, "accept"))[0] == 201
        after = json.loads((await call("GET", url + "api/edits"))[2])
    assert [p["text"] for p in before["progress"]] == ["at least 45 random decisions to certify auto-accept at 95 %",
                                                       "at least 45 random decisions to certify auto-reject at 95 %"]
    assert before["counts"]["random_sample"] == 1 and after["counts"]["random_sample"] == 2
    assert [(p["rule"], p["more_needed"], p["text"]) for p in after["progress"]] == [
        ("auto-accept", 88, "88 more random decisions to certify auto-accept at 95 %"),
        ("auto-reject", None, "at least 45 random decisions to certify auto-reject at 95 %")]


@pytest.mark.parametrize("kind", ["link", "fifo", "directory"])
async def test_an_unusable_reviews_file_stops_the_desk_at_start_in_one_line(run_dir: Path, kind: str) -> None:
    import os

    from fanout.base.errors import ConfigError

    path = run_dir / "reviews.jsonl"
    if kind == "link":
        outside = run_dir.parent / "elsewhere.jsonl"
        outside.write_text("", encoding="utf-8")
        path.symlink_to(outside)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
    with pytest.raises(ConfigError) as refused:
        async with running_desk(Desk(run_dir, ReportOptions()), "ana", port=0):
            pass
    assert "\n" not in str(refused.value) and "Traceback" not in str(refused.value)
    if kind == "link":  # refused by the one reader of run files (fanout.store.lines), as every command refuses it
        assert str(refused.value) == (f"the run's reviews.jsonl {path} is a symbolic link; fanout reads the run's "
                                      "files only inside the run directory: replace the link with the file it points to")


@pytest.mark.parametrize(("request_bytes", "reason"), [
    (b"GET / HTTP/1.1\r\n\r\n", "Missing 'Host' header in request."),
    (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "Duplicate 'Host' header found."),
])
async def test_a_malformed_request_is_one_line_in_the_log_never_a_traceback(
        desk: str, request_bytes: bytes, reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    import anyio

    port = int(desk.rsplit(":", 1)[1].strip("/"))
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(request_bytes)
        answer = await stream.receive()
    assert answer.startswith(b"HTTP/1.0 400 Bad Request")
    err = capsys.readouterr().err
    assert err == f"review desk: refused a request (BadHttpMessage: {reason})\n"
