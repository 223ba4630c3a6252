"""No key, token or password from the environment ever reaches a run directory or the terminal.

The CLI runs through its entry point (fanout.cli.main, what `python -m fanout`
calls) with fake secrets planted in the environment, against the simulator
served from a thread; everything written to the terminal is read at the file
descriptors, the extraction workers' output included. The simulator
accepts only the keys it is given (`valid_keys`): the planted key alone, so a
clean tally shows the key really was in play, or none, so it refuses the key
with a 401 that echoes it back, the worst an endpoint can do to an error
message. The simulator listens on loopback, so the key it is sent is
FANOUT_API_KEY (OPENROUTER_API_KEY goes to OpenRouter alone). Every file under
the run directory is read as bytes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from fanout.base.validate import package_data
from fanout.cli import main
from fanout.sim import SimConfig, SimHandle, profile_from_dict
from simulated import serving_simulator

pytestmark = pytest.mark.timeout(300)

SAMPLE = package_data("sample_snapshot.yaml")


def _fake(label: str, length: int = 64) -> str:
    return hashlib.sha256(label.encode()).hexdigest()[:length]


OPENROUTER_KEY = "sk-or-v1-" + _fake("openrouter")
ENDPOINT_KEY = "sk-local-" + _fake("endpoint", 48)
SECRETS = {
    "OPENROUTER_API_KEY": OPENROUTER_KEY,
    "FANOUT_API_KEY": ENDPOINT_KEY,
    "TAVILY_API_KEY": "tvly-" + _fake("tavily", 32),
    "BRAVE_API_KEY": "BSA" + _fake("brave", 28),
    "SERPAPI_API_KEY": _fake("serpapi"),
    "NCBI_API_KEY": _fake("ncbi", 36),
    "WIKIDATA_BOT_PASSWORD": "fanoutbot@" + _fake("wikidata", 32),
    "WIKIDATA_OAUTH_TOKEN": _fake("oauth"),
}
NEEDLES = [value.encode() for value in SECRETS.values()] + [OPENROUTER_KEY.removeprefix("sk-or-v1-").encode(),
                                                        ENDPOINT_KEY.removeprefix("sk-local-").encode()]
"""Each secret, and the chat keys' bodies on their own (a prefix stripped is still a leak)."""


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: bytes
    stderr: bytes


@pytest.fixture
def fanout(monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes]):
    """`fanout ARGS` with the secrets in the environment, through the entry point `python -m fanout` calls: its
    exit code and what reached file descriptors 1 and 2 (a run's extraction workers write there too)."""
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)

    def command(*args: str) -> Finished:
        capfdbinary.readouterr()
        code = main(list(args))
        out, err = capfdbinary.readouterr()
        return Finished(code, out, err)
    return command


def run_args(sim: SimHandle, run_dir: Path) -> list[str]:
    return ["run", str(SAMPLE), "--run-dir", str(run_dir), "--base-url", sim.api_base,
            "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0", "--limit", "2"]


def leaks_in(data: bytes) -> list[str]:
    return [needle.decode() for needle in NEEDLES if needle in data]


def leaks_under(run_dir: Path) -> dict[str, list[str]]:
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert files, f"nothing was written under {run_dir}"
    return {str(p.relative_to(run_dir)): found for p in files if (found := leaks_in(p.read_bytes()))}


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "checkpoint.jsonl").read_text().splitlines()]


def test_a_run_and_every_command_after_it_keep_every_secret_out_of_files_and_output(tmp_path, fanout):
    run_dir = tmp_path / "run"
    with serving_simulator(SimConfig(seed=5, valid_keys=frozenset({ENDPOINT_KEY}))) as sim:
        outputs = {"run": fanout(*run_args(sim, run_dir))}
        outputs["check"] = fanout("check", "--base-url", sim.api_base, "--searxng-url", sim.searxng_url)
        tally = sim.stats()
    outputs["status"] = fanout("status", str(run_dir))
    outputs["report"] = fanout("report", str(run_dir), "--html", "--json")

    assert {name: out.returncode for name, out in outputs.items()} == {"run": 0, "check": 0, "status": 0, "report": 0}
    assert [r["status"] for r in records(run_dir)] == ["ok"] * 8
    assert (run_dir / "report.html").exists() and (run_dir / "report.json").exists()
    assert tally["faults"] == {}  # the simulator accepts the planted key alone, and refused nothing
    assert sum(tally["completions"].values()) == tally["requests"]["chat_completions"] > 0
    assert leaks_under(run_dir) == {}
    assert {name: leaks_in(out.stdout + out.stderr) for name, out in outputs.items()} == {
        "run": [], "check": [], "status": [], "report": []}


def test_a_refused_key_echoed_back_by_the_endpoint_is_redacted_everywhere(tmp_path, fanout):
    run_dir = tmp_path / "run"
    with serving_simulator(SimConfig(seed=5, valid_keys=frozenset())) as sim:
        outputs = {"run": fanout(*run_args(sim, run_dir))}
        tally = sim.stats()
    outputs["status"] = fanout("status", str(run_dir))
    outputs["report"] = fanout("report", str(run_dir), "--html", "--json")

    logged = records(run_dir)
    assert outputs["run"].returncode == 1
    assert [(r["status"], r["error"]) for r in logged] == [
        ("error", "HTTP 401: Invalid API key: [redacted] is not a valid key")] * 8
    assert b"HTTP 401: Invalid API key: [redacted] is not a valid key" in outputs["status"].stdout
    assert (tally["faults"], tally["requests"]["chat_completions"], tally["completions"]) == (
        {"key_refused": 8}, 8, {})  # each verdict showed the key once; a refused key is not retried
    assert leaks_under(run_dir) == {}
    assert {name: leaks_in(out.stdout + out.stderr) for name, out in outputs.items()} == {
        "run": [], "status": [], "report": []}


def test_pubmed_and_serpapi_keys_stay_out_of_a_run_whose_endpoints_quote_them_back(tmp_path, fanout):
    # Both keys travel in the query string; half the searches are refused with a 429 whose body, as NCBI's
    # does, quotes the key it was sent.
    run_dir, config = tmp_path / "run", tmp_path / "search.yaml"
    limited = profile_from_dict({"name": "limited", "search": {"http_429": 0.5}})
    with serving_simulator(SimConfig(seed=5, profile=limited, valid_keys=frozenset({ENDPOINT_KEY}))) as sim:
        config.write_text(yaml.safe_dump({
            "providers": ["pubmed", "serpapi"], "min_results": 3,
            "endpoints": {"pubmed": sim.pubmed_url, "serpapi": sim.serpapi_url},
            "provider_settings": {"pubmed": {"article_url": sim.pubmed_article_url}}}), encoding="utf-8")
        outputs = {"run": fanout(*run_args(sim, run_dir), "--search-config", str(config))}
        outputs["tool"] = fanout("tool", "web_search", "--allow-private-urls", "--search-config", str(config),
                                       "Ada Whitlock physicist")  # PubMed refuses this one, SerpAPI answers
        tally = sim.stats()

    assert {name: out.returncode for name, out in outputs.items()} == {"run": 0, "tool": 0}
    assert 0 < tally["faults"]["pubmed_429"] < tally["requests"]["pubmed"]  # some refused (quoting the key), some not
    assert tally["requests"]["serpapi"] > 0
    assert leaks_under(run_dir) == {}
    assert {name: leaks_in(out.stdout + out.stderr) for name, out in outputs.items()} == {"run": [], "tool": []}
