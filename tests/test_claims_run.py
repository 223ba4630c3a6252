"""A claims run of the bundled texts end to end against the simulator, as `fanout run --workload claims` runs it.

One run of the twelve sample texts (extraction by the run's cheapest model, every claim by the four default
models, SearXNG-, PubMed- and arXiv-style search) is shared by the tests that read it: the prepared items,
the log, the gate's exit code and quarantine file, the report's seed 004 fields, the HTML, status, the review
desk's API, compare, a resume and a dry run. kill -9 during extraction and during judging are their own runs
of the first six texts, each with a simulator in the test's event loop (its tally says how often each text was
paid for), slow until the kill has landed. Each `fanout run` is a process of its own, forked from a warm
interpreter that did the imports once (tests/warm.py).
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
import yaml

from fanout.base.validate import package_data
from fanout.cli import main
from fanout.llm.models import DEFAULT_MODELS
from fanout.report import Report, ReportOptions, build_report, render_html
from fanout.review.desk import Desk
from fanout.review.server import running_desk
from fanout.sim import SimConfig, profile_from_dict, running_simulator
from fanout.sim.dice import short_hash
from fanout.sim.faults import load_profile
from fanout.workloads.claims.split_text import extraction_request
from fanout.workloads.claims.texts import Text, read_texts

from jsonl import whole_lines
from simulated import serving_simulator
from warm import WarmInterpreter

pytestmark = pytest.mark.timeout(600)
SAMPLE = package_data("sample_texts.yaml")
TEXTS = read_texts(SAMPLE).texts
MODELS = [m.name for m in DEFAULT_MODELS]
EXTRACTOR = "nvidia/nemotron-3-nano-30b-a3b"
"""The run's cheapest tool-capable model, the default extractor."""
GATE = "0.85"


def search_config(base: str, path: Path) -> Path:
    config = {"providers": ["searxng", "pubmed", "arxiv"], "mode": "aggregate",
              "endpoints": {"pubmed": f"{base}/entrez/eutils/", "arxiv": f"{base}/api/query"},
              "provider_settings": {"pubmed": {"article_url": base + "/pubmed/{pmid}/", "request_gap": 0},
                                    "arxiv": {"request_gap": 0}}}
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run_command(base: str, run_dir: Path, config: Path, *extra: str, texts: Path = SAMPLE) -> list[str]:
    return [sys.executable, "-m", "fanout", "run", "--workload", "claims", str(texts), "--run-dir", str(run_dir),
            "--base-url", f"{base}/api/v1", "--searxng-url", base, "--allow-private-urls", "--fetch-delay", "0",
            "--search-config", str(config), *extra]


def prepared(run_dir: Path) -> list[dict]:
    return whole_lines(run_dir / "prepared.jsonl")


def records(run_dir: Path) -> list[dict]:
    return whole_lines(run_dir / "checkpoint.jsonl")


def claim_keys(run_dir: Path) -> set[int]:
    """Every claim the prepared items hold, by key (text number * 1000 + place)."""
    latest = {line["unit"]: line for line in prepared(run_dir) if line["status"] == "ok"}
    return {line["number"] * 1000 + i for line in latest.values() for i in range(1, len(line["claims"]) + 1)}


def assert_each_text_once_and_each_claim_judged_once_by_every_model(run_dir: Path, models: list[str] = MODELS,
                                                                     texts: tuple[Text, ...] = TEXTS) -> None:
    ok = Counter(line["unit"] for line in prepared(run_dir) if line["status"] == "ok")
    assert set(ok) == {t.id for t in texts} and max(ok.values()) == 1, ok
    pairs = Counter((r["edit_rcid"], r["model"]) for r in records(run_dir))
    assert set(pairs) == {(key, m) for key in claim_keys(run_dir) for m in models}
    assert max(pairs.values()) == 1, "a pair was logged twice"
    assert len(list((run_dir / "verdicts").glob("*.yaml"))) == len(pairs)


@dataclass
class Finished:
    base: str
    run_dir: Path
    config: Path
    code: int
    output: str


@pytest.fixture(scope="module")
def sim_base() -> Iterator[str]:
    """The simulator as `fanout sim --profile clean --seed 7 --latency-scale 0` serves it, from a thread of this
    process on a free loopback port (a `fanout sim` process of its own paid a second of imports to serve it)."""
    with serving_simulator(SimConfig(seed=7, profile=load_profile("clean"), latency_scale=0.0)) as sim:
        yield sim.base_url


@pytest.fixture(scope="module")
def warm() -> Iterator[WarmInterpreter]:
    with WarmInterpreter() as server:
        yield server


@pytest.fixture(scope="module")
def finished(sim_base: str, warm: WarmInterpreter, tmp_path_factory: pytest.TempPathFactory) -> Finished:
    where = tmp_path_factory.mktemp("claims")
    config = search_config(sim_base, where / "search.yaml")
    run_dir = where / "run"
    code, out, err = warm.run_blocking(run_command(sim_base, run_dir, config, "--gate", GATE), where / "out.txt",
                                       where / "err.txt")
    return Finished(sim_base, run_dir, config, code, out + err)


@pytest.fixture(scope="module")
def report(finished: Finished) -> Report:
    """The run's report, built once for the tests that read it; without the bootstrap intervals of agreement,
    which none of them reads and which were nine tenths of each build (1.7 s)."""
    return build_report(finished.run_dir, ReportOptions(resamples=0))


# --- the run ------------------------------------------------------------------------------------------


def test_each_text_is_split_once_before_judging_and_every_claim_is_judged_by_every_model(finished: Finished) -> None:
    run_dir = finished.run_dir
    lines = prepared(run_dir)
    assert [line["unit"] for line in lines] != [] and {line["model"] for line in lines} == {EXTRACTOR}
    assert_each_text_once_and_each_claim_judged_once_by_every_model(run_dir)
    first_verdict = min(r["timestamp"] for r in records(run_dir))
    assert max(line["timestamp"] for line in lines) <= first_verdict  # every claim logged before any is judged
    manifest = yaml.safe_load((run_dir / "manifest.yaml").read_text())
    assert manifest["workload"] == "claims" and manifest["edits"] == len(claim_keys(run_dir))
    assert manifest["preparation"]["extractor"] == EXTRACTOR
    assert f"Splitting 12 text(s) into claims with {EXTRACTOR} (0 of 12 split before)." in finished.output


def test_the_gate_exits_1_and_quarantines_each_text_below_it_with_its_refuted_claims_and_their_sources(
        finished: Finished) -> None:
    assert finished.code == 1, finished.output
    data = json.loads((finished.run_dir / "quarantine.json").read_text())
    held = {entry["text_id"]: entry for entry in data["quarantined"]}
    assert (data["gate"], data["texts"], data["passed"] + len(held)) == (0.85, 12, 12)
    assert set(held) == QUARANTINED
    for entry in held.values():
        assert entry["reason"].startswith("factuality ") and entry["overall_factuality"] < 0.85
        assert entry["text"] == next(t.text for t in TEXTS if t.id == entry["text_id"])
        for claim in entry["refuted_claims"]:
            cited = rejecting_citations(finished.run_dir, claim["claim_key"])
            assert claim["stance"] == "reject" and set(claim["sources"]) <= cited, (claim, cited)
            assert bool(claim["sources"]) == bool(cited), (claim, cited)
    aspirin = held["aspirin"]["refuted_claims"]
    assert [c["claim"] for c in aspirin] == [
        "Daily low-dose aspirin is recommended for all healthy adults over 40 to prevent a first heart attack."]
    assert "/pubmed/" in aspirin[0]["sources"][0]  # the refuting page is only in the PubMed-style search
    assert f"Gate 0.85: {12 - len(held)} of 12 text(s) pass; quarantined:" in finished.output


def rejecting_citations(run_dir: Path, claim_key: int) -> set[str]:
    """The URLs the models that rejected the claim cite; a model may reject on nothing it can cite, and then the
    quarantine can name no source for the refutation either."""
    return {source["url"] for r in records(run_dir) if r["edit_rcid"] == claim_key
            and r["verdict"] in ("suspect", "incorrect") for source in r["sources"]}


QUARANTINED = {"eiffel", "newton", "aspirin", "transformer", "python", "honey", "brewline", "crispr"}
"""The texts the committee finds below 0.85 in this run (seed 7): each has a claim refuted or left unsure."""


def test_the_report_gives_each_text_seed_004_s_fields_for_the_committee_and_each_model(finished: Finished,
                                                                                      report: Report) -> None:
    data = report.to_json()
    assert data["labels"]["path"].endswith("input-labels.yaml")  # the texts' own labels, matched to the claims
    texts = {entry["text_id"]: entry for entry in data["factuality"]}
    assert list(texts) == [t.id for t in TEXTS]
    for entry in texts.values():
        assert set(entry["models"]) == set(MODELS)
        committee = entry["committee"]
        assert set(committee) >= {"verified_claims", "overall_factuality", "confidence", "explanation",
                                  "sources_consulted"}
        claims = committee["verified_claims"]
        supported = sum(c["is_factual"] is True for c in claims)
        judged = sum(c["stance"] is not None for c in claims)
        assert committee["overall_factuality"] == pytest.approx(supported / judged)
        assert all(set(c) == {"claim", "claim_key", "is_factual", "stance", "confidence", "evidence", "sources"}
                   for c in claims)
    python = texts["python"]["committee"]
    assert "Refuted: \"Python 3.0 was fully backward compatible with Python 2.\" (sources: " in python["explanation"]
    rows = report.table("factuality")
    assert len(rows) == 12 * (1 + len(MODELS))
    investigation = {r["model"]: r["investigation_cost_usd"] for r in report.table("cost")}
    assert investigation[EXTRACTOR] == pytest.approx(sum(line["cost_usd"] for line in prepared(finished.run_dir)))


def test_the_html_report_links_a_claim_to_its_text_s_source_and_never_to_a_wikidata_diff(report: Report) -> None:
    page = render_html(report)
    assert "wikidata.org/w/index.php?diff" not in page
    assert '<a href="https://answers.example.org/q/eiffel-tower" rel="noopener noreferrer">source</a>' in page


def test_status_counts_the_extraction_in_the_spend(finished: Finished, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", str(finished.run_dir)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    spent = sum(r["cost_usd"] for r in records(finished.run_dir)) + sum(
        line["cost_usd"] for line in prepared(finished.run_dir))
    pairs = len(claim_keys(finished.run_dir)) * len(MODELS)
    assert first == f"{finished.run_dir}: {pairs}/{pairs} pairs done (100%), spend ${spent:.4f}"


async def test_the_review_desk_lists_claims_in_their_own_words_with_their_source(finished: Finished) -> None:
    import aiohttp

    async with running_desk(Desk(finished.run_dir, ReportOptions()), "ana", port=0) as url:
        async with aiohttp.ClientSession() as session, session.get(url + "api/edits") as response:
            data = await response.json()
    eiffel = next(e for e in data["edits"] if e["qid"] == "eiffel")
    assert (eiffel["item"], eiffel["diff_url"], eiffel["link_text"]) == (
        "text eiffel", "https://answers.example.org/q/eiffel-tower", "source")
    assert eiffel["new"] in {c["claim"] for line in prepared(finished.run_dir) if line["unit"] == "eiffel"
                             for c in line["claims"]}
    aspirin = next(e for e in data["edits"] if e["qid"] == "aspirin")
    assert (aspirin["diff_url"], aspirin["what"].startswith("claim ")) == (None, True)


def test_compare_pairs_two_claims_runs_claim_by_claim(finished: Finished, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(finished.run_dir, copy)
    assert main(["compare", str(finished.run_dir), str(copy), "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["shared_edits"], data["flipped"]) == (len(claim_keys(finished.run_dir)), [])


def test_a_resume_splits_no_text_again_judges_nothing_again_and_gates_again(finished: Finished, warm: WarmInterpreter,
                                                                            tmp_path: Path) -> None:
    copy = tmp_path / "again"
    shutil.copytree(finished.run_dir, copy)
    before = (copy / "prepared.jsonl").read_bytes(), (copy / "checkpoint.jsonl").read_bytes()
    code, out, err = warm.run_blocking(run_command(finished.base, copy, finished.config, "--gate", GATE),
                                       tmp_path / "out.txt", tmp_path / "err.txt")
    assert code == 1, out + err
    assert "Splitting" not in out and "pairs already done; running 0" in out
    assert ((copy / "prepared.jsonl").read_bytes(), (copy / "checkpoint.jsonl").read_bytes()) == before
    held = json.loads((copy / "quarantine.json").read_text())["quarantined"]
    assert {entry["text_id"] for entry in held} == QUARANTINED


def test_a_dry_run_says_how_many_texts_are_still_to_be_split(finished: Finished, warm: WarmInterpreter,
                                                             tmp_path: Path) -> None:
    code, out, err = warm.run_blocking(run_command(finished.base, tmp_path / "dry", finished.config, "--dry-run"),
                                       tmp_path / "out.txt", tmp_path / "err.txt")
    assert code == 0, err
    assert ("12 of 12 text(s) are still to be split into claims (by the run's cheapest tool-capable model) when "
            "the run starts; the pairs above count only the claims extracted so far.") in out
    assert not (tmp_path / "dry").exists()


# --- kill -9 ------------------------------------------------------------------------------------------


KILLED_MODELS = [EXTRACTOR, "deepseek/deepseek-v3.2"]
"""Two models are enough to be killed in the middle of (and halve the time the resumes take)."""
KILLED_TEXTS = TEXTS[:6]
"""So are the first six texts (21 claims): half the extractions and judgements of the twelve after each kill."""


def fewer_texts(path: Path) -> Path:
    """A texts file of KILLED_TEXTS, as the sample gives them (each keeps its number: its place in the file)."""
    path.write_text(yaml.safe_dump({"texts": yaml.safe_load(SAMPLE.read_text())["texts"][:len(KILLED_TEXTS)]},
                                   sort_keys=False), encoding="utf-8")
    return path


def slow_sim() -> SimConfig:
    return SimConfig(seed=7, profile=profile_from_dict({"defaults": {"latency": {"median_s": 0.4, "p95_s": 0.8}},
                                                        "search": {"latency": {"median_s": 0.0, "p95_s": 0.0}}}))


async def wait_for(check, process) -> None:  # type: ignore[no-untyped-def]
    while not check():
        assert process.returncode is None, "the run ended before the test could act"
        await anyio.sleep(0.02)


def extraction_calls(stats, text_id: str) -> int:  # type: ignore[no-untyped-def]
    """How many extraction replies the simulator billed for one text."""
    text = next(t for t in TEXTS if t.id == text_id)
    return stats.by_conversation["h" + short_hash(extraction_request(text))]


async def test_kill_9_during_extraction_repeats_no_logged_extraction_and_loses_no_claim(tmp_path: Path,
                                                                                        warm: WarmInterpreter) -> None:
    async with running_simulator(slow_sim()) as sim:
        config = search_config(sim.base_url, tmp_path / "search.yaml")
        cmd = run_command(sim.base_url, tmp_path / "run", config, "--concurrency", "3", "-m", ",".join(KILLED_MODELS),
                          texts=fewer_texts(tmp_path / "texts.yaml"))
        process = warm.start(cmd)
        await wait_for(lambda: len(prepared(tmp_path / "run")) >= 3, process)
        process.send_signal(signal.SIGKILL)
        assert await process.wait() == -signal.SIGKILL
        sim.state.latency_scale = 0.0  # the kill has landed: the resume need not be slow
        logged = {line["unit"] for line in prepared(tmp_path / "run")}
        assert 3 <= len(logged) < len(KILLED_TEXTS) and not records(tmp_path / "run")
        code, output = await warm.run([*cmd, "--concurrency", "8"], tmp_path / "output.txt")  # the last one wins
        stats = sim.state.stats
        assert code == 0, output[-2000:]
        assert [t for t in sorted(logged) if extraction_calls(stats, t) != 1] == []  # never paid for twice
        cut_off = [t.id for t in KILLED_TEXTS if extraction_calls(stats, t.id) > 1]
        assert all(extraction_calls(stats, t.id) <= 2 for t in KILLED_TEXTS) and len(cut_off) <= 3
    assert_each_text_once_and_each_claim_judged_once_by_every_model(tmp_path / "run", KILLED_MODELS, KILLED_TEXTS)
    abandoned = [json.loads(line) for line in (tmp_path / "run" / "abandoned.jsonl").read_text().splitlines()] \
        if cut_off else []
    assert sorted(a["model"] for a in abandoned) == [f"{EXTRACTOR} (preparation)"] * len(cut_off)
    assert not list((tmp_path / "run" / "inflight").glob("*.jsonl"))


async def test_kill_9_during_judging_keeps_every_claim_and_judges_each_pair_once(tmp_path: Path,
                                                                                 warm: WarmInterpreter) -> None:
    async with running_simulator(slow_sim()) as sim:
        config = search_config(sim.base_url, tmp_path / "search.yaml")
        cmd = run_command(sim.base_url, tmp_path / "run", config, "--concurrency", "8", "-m", ",".join(KILLED_MODELS),
                          texts=fewer_texts(tmp_path / "texts.yaml"))
        process = warm.start(cmd)
        await wait_for(lambda: len(records(tmp_path / "run")) >= 10, process)
        process.send_signal(signal.SIGKILL)
        assert await process.wait() == -signal.SIGKILL
        sim.state.latency_scale = 0.0  # the kill has landed: the resume need not be slow
        keys = claim_keys(tmp_path / "run")
        lines = (tmp_path / "run" / "prepared.jsonl").read_bytes()
        code, output = await warm.run(cmd, tmp_path / "output.txt")
        assert code == 0, output[-2000:]
        assert all(extraction_calls(sim.state.stats, t.id) == 1 for t in KILLED_TEXTS)
    assert (tmp_path / "run" / "prepared.jsonl").read_bytes() == lines  # nothing split again
    assert claim_keys(tmp_path / "run") == keys
    assert_each_text_once_and_each_claim_judged_once_by_every_model(tmp_path / "run", KILLED_MODELS, KILLED_TEXTS)
