"""Each run setting is declared once; the parser, the options, the settings, the manifest and the manual derive from it.

A new setting is one field of RunSettings (src/fanout/engine/settings.py) and
the code that uses it: the test below declares one at runtime, as a field of
a subclass, and finds it everywhere, as tests/test_strategies.py does for a
new strategy. Environment variables an option names are read as its default
(seed 003's JUDGE_* names), and the manifest says where values came from
only when one came from the environment.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import anyio
import pytest
import yaml

from fanout.base.declare import Env, Options, Pin, Pins, flag, option_table, options_of, setting
from fanout.base.errors import ConfigError
from fanout.base.records import VerdictRecord
from fanout.base.validate import package_data, require_count
from fanout.cli import main
from fanout.cli import run as run_cli
from fanout.cli.declared import options_from_args
from fanout.engine.options import RunOptions, input_files, settings_from
from fanout.engine.runner import RunRequest, run
from fanout.workloads.settings import WorkloadSettings
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.store.manifest import Manifest, reconcile
from fanout.workloads import PATROL

ROOT = Path(__file__).parents[1]
MODELS = (ModelSpec("m/a"), ModelSpec("m/b"))


async def verdict(edit, model):  # type: ignore[no-untyped-def]
    return VerdictRecord(
        model=model.name, edit_rcid=edit.rcid, edit_revid=edit.revid, qid=edit.title,
        property=edit.parsed.property, diff_type=edit.diff_type,
        timestamp="2026-11-27T01:00:00Z", status="ok", verdict="plausible", cost_usd=0.25,
    )


def run_scripted(tmp_path: Path, settings: RunSettings, allow: bool = False) -> dict:
    """A run of two edits with `settings` (the engine alone); the manifest it wrote."""
    snapshot = tmp_path / "today.yaml"
    if not snapshot.exists():
        tmp_path.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package_data("sample_snapshot.yaml"), snapshot)
    request = RunRequest(snapshot, tmp_path / "run", settings, limit=2, allow_settings_change=allow,
                         handle_signals=False, out=StringIO(), progress_interval_s=3600, workload=PATROL)
    anyio.run(lambda: run(request, verdict_fn=verdict))
    return yaml.safe_load((tmp_path / "run" / "manifest.yaml").read_text())


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    run_cli.configure(parser)
    return parser


def load_docs_hooks():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class WithShots(RunSettings):
    """RunSettings with one more setting, declared as a new field of RunSettings would be."""

    shots: int = setting(3, flag("--shots", type=int, metavar="N", check=require_count, group="evidence and samples",
                                 env=(Env("FANOUT_SHOTS"),), help="how many shots each verdict takes (default {default})"),
                         pin=Pin.ASK, results=True, recorded=True)


def test_a_new_setting_is_one_declaration_found_in_the_parser_options_settings_manifest_pin_and_manual(
        tmp_path, monkeypatch):
    monkeypatch.setattr(run_cli, "RunSettings", WithShots)  # the command line's settings class: a subclass here
    monkeypatch.delenv("FANOUT_SHOTS", raising=False)
    parser = run_parser()
    assert re.search(r"--shots N +how many shots each verdict takes \(default 3\)", parser.format_help())

    args = parser.parse_args(["snap.yaml", "-m", "m/a,m/b", "--shots", "5"])
    options = options_from_args(args, WithShots, environ={})
    assert (options["shots"], options.sources["shots"]) == (5, "--shots")
    settings = run_cli.settings_from_args(args)
    assert isinstance(settings, WithShots) and settings.shots == 5
    assert settings_from(Options(WithShots, {"models": ["m/a"]})).shots == 3
    with pytest.raises(ConfigError, match=r"^--shots must be at least 1 \(got 0\)\.$"):
        settings_from(Options(WithShots, {"shots": 0}))

    assert WithShots.PINNED["shots"] == "--shots" and "shots" in WithShots.results_keys()
    assert "shots" not in RunSettings.PINNED
    assert run_scripted(tmp_path, settings)["settings"]["shots"] == 5
    with pytest.raises(ConfigError, match=r"^cannot resume this run directory: --shots was 5 and is now 6\. "):
        run_scripted(tmp_path, settings_from(Options(WithShots, {"models": ["m/a", "m/b"], "shots": 6})))
    manifest = run_scripted(tmp_path, settings_from(Options(WithShots, {"models": ["m/a", "m/b"], "shots": 6})),
                            allow=True)
    assert [(c["what"], c["was"], c["now"]) for c in manifest["changes"]] == [("--shots was 5 and is now 6", 5, 6)]

    assert ("| `--shots N` | `3` | `FANOUT_SHOTS` | refused unless --allow-settings-change | yes | how many shots "
            "each verdict takes (default 3) |") in option_table(WithShots)
    monkeypatch.setenv("FANOUT_SHOTS", "4")
    from_env = run_cli.settings_from_args(parser.parse_args(["snap.yaml", "-m", "m/a"]))
    assert (from_env.shots, from_env.summary()["sources"]) == (4, {"models": "--models", "shots": "FANOUT_SHOTS"})


def test_every_setting_flag_of_fanout_run_is_declared_and_the_runs_own_flags_are_the_only_others():
    own = {"-h", "--help", "--run-dir", "--limit", "--allow-settings-change", "--force", "--dry-run", "--snapshot",
           "--reinvestigate-missing"}
    parsed = {s for action in run_parser()._actions for s in action.option_strings}
    declared = {f for kind in (RunSettings, WorkloadSettings) for o in options_of(kind).values()
                for f in (*o.flags, *(a.flag for a in o.also))}
    assert parsed - own == declared


def test_the_manual_renders_every_option_into_the_running_page_when_it_is_built():
    page = (ROOT / "docs" / "running.md").read_text(encoding="utf-8")
    hooks = load_docs_hooks()
    claims = (ROOT / "docs" / "claims.md").read_text(encoding="utf-8")
    # a page without its marker loses the table: the options' are here, the claims prompts' on the claims page
    assert all((claims if "prompt:" in marker else page).count(marker) == 1 for marker in hooks.TABLES)
    assert "<!-- prompt:" not in hooks.on_page_markdown(claims, page=None, config=None, files=None)
    rendered = hooks.on_page_markdown(page, page=None, config=None, files=None)
    assert "<!-- table:" not in rendered
    shown = [o for o in options_of(RunSettings).values() if not o.hidden]
    assert all(f"| `{o.spelled}` |" in rendered for o in shown)
    assert "| `--concurrency N` | `8` |  | may change | no | verdicts in flight at once, across models (default 8) |" \
        in rendered
    assert "| `JUDGE_SELF_CONSISTENCY_RUNS` | `--samples N` | not when JUDGE_ENABLE_SELF_CONSISTENCY=0 |" in rendered


def test_the_pins_the_record_and_what_changes_results_are_derived_from_the_declarations():
    assert RunSettings.PINNED == {"strategy": "--strategy", "samples": "--samples", "swap_labels": "--no-label-swap",
                                  "evidence": "--evidence/--investigator/--planner/--workers/--aggregator/--team-rounds",
                                  "search_mode": "--search-mode",
                                  "search_min_results": "min_results (--search-config)",
                                  "search_provider_settings": "provider_settings (--search-config)"}
    assert RunSettings.PINNED.never == {"strategy", "evidence"}
    assert list(RunSettings().summary()) == [
        "base_url", "searxng_url", "search_providers", "search_mode", "concurrency", "max_turns", "verdict_timeout_s",
        "max_lead", "max_cost_usd", "strategy", "samples", "swap_labels", "evidence", "models"]
    assert RunSettings.results_keys() == (
        "base_url", "searxng_url", "search_providers", "search_mode", "search_min_results", "search_provider_settings",
        "max_turns", "verdict_timeout_s", "strategy", "samples", "swap_labels", "evidence", "models")


def test_a_setting_pinned_for_good_is_refused_even_with_allow_settings_change():
    def manifest(**settings: object) -> Manifest:
        return Manifest("s.yaml", "sha", 1, ["m/a"], "p", dict(settings), starts=["t"])

    pinned = Pins({"samples": "--samples", "evidence": "--evidence"}, never=frozenset({"evidence"}))
    allowed = reconcile(manifest(samples=1), manifest(samples=3), pinned=pinned, pin_models=False, allow_change=True)
    assert [c["what"] for c in allowed.changes] == ["--samples was 1 and is now 3"]
    with pytest.raises(ConfigError) as refused:
        reconcile(manifest(evidence={"mode": "own"}), manifest(evidence={"mode": "shared"}), pinned=pinned,
                  pin_models=False, allow_change=True)
    assert str(refused.value) == (
        "cannot resume this run directory: --evidence was {'mode': 'own'} and is now {'mode': 'shared'}, which no "
        "resume may change. Resume with the settings it started with, or use a new --run-dir.")


def test_the_files_a_run_reads_are_listed_in_the_order_the_manifest_always_had():
    options = RunOptions(labels=Path("l.yaml"), search_config=Path("s.yaml"), gates_file=Path("g.yaml"),
                         limits_file=Path("m.yaml"))
    assert input_files(options) == (Path("m.yaml"), Path("g.yaml"), Path("s.yaml"), Path("l.yaml"))
    with pytest.raises(TypeError, match="RunSettings has no option fetch_delay"):
        RunOptions(fetch_delay=0)


# --- seed 003's JUDGE_* names as defaults ------------------------------------------------


def settings_in(environ: dict[str, str], *argv: str) -> RunSettings:
    args = run_parser().parse_args(["snap.yaml", *argv])
    return settings_from(options_from_args(args, RunSettings, environ=environ))


def test_seed_003s_variables_are_read_as_defaults_and_a_flag_wins():
    environ = {"JUDGE_ENABLE_ROUTER": "1", "JUDGE_ENABLE_COMMITTEE": "0", "JUDGE_COMMITTEE_MODELS": '["m/c"]',
               "JUDGE_MODEL": "m/z", "JUDGE_ENABLE_SELF_CONSISTENCY": "1", "JUDGE_SELF_CONSISTENCY_RUNS": "3",
               "JUDGE_ENABLE_SWAP": "0"}
    router = settings_in(environ)
    assert (router.strategy.name, [m.name for m in router.models], router.samples, router.swap_labels) == (
        "router", ["nvidia/nemotron-3-nano-30b-a3b", "allenai/olmo-3.1-32b-instruct", "deepseek/deepseek-v3.2",
                   "anthropic/claude-4.5-haiku-20251001"], 3, False)
    assert router.sources == {"strategy": "JUDGE_ENABLE_ROUTER", "samples": "JUDGE_SELF_CONSISTENCY_RUNS",
                              "swap_labels": "JUDGE_ENABLE_SWAP"}
    committee = settings_in({**environ, "JUDGE_ENABLE_ROUTER": "0", "JUDGE_ENABLE_COMMITTEE": "1",
                             "JUDGE_COMMITTEE_MODELS": '["m/a", "m/b"]'}, "--samples", "2", "-m", "m/x,m/y")
    assert (committee.strategy.name, [m.name for m in committee.models], committee.samples) == ("all", ["m/x", "m/y"], 2)
    assert committee.sources == {"models": "--models", "strategy": "JUDGE_ENABLE_COMMITTEE", "samples": "--samples",
                                 "swap_labels": "JUDGE_ENABLE_SWAP"}
    committee_models = settings_in({"JUDGE_ENABLE_COMMITTEE": "1", "JUDGE_COMMITTEE_MODELS": "m/a, m/b"})
    assert [m.name for m in committee_models.models] == ["m/a", "m/b"]
    single = settings_in({"JUDGE_MODEL": "m/z", "JUDGE_ENABLE_SELF_CONSISTENCY": "0",
                          "JUDGE_SELF_CONSISTENCY_RUNS": "3"})
    assert ([m.name for m in single.models], single.samples) == (["m/z"], 1)


@pytest.mark.parametrize(("environ", "message"), [
    ({"JUDGE_SELF_CONSISTENCY_RUNS": "x"}, "JUDGE_SELF_CONSISTENCY_RUNS must be a whole number (got 'x')."),
    ({"JUDGE_SELF_CONSISTENCY_RUNS": "25"}, "JUDGE_SELF_CONSISTENCY_RUNS must be at most 20 (got 25)."),
    ({"JUDGE_ENABLE_SWAP": "maybe"}, "JUDGE_ENABLE_SWAP must be 1 or 0 (or true/false, yes/no, on/off), got 'maybe'"),
    ({"JUDGE_COMMITTEE_MODELS": "[1, 2]"},
     "JUDGE_COMMITTEE_MODELS must be a JSON list of names or a comma-separated list, got '[1, 2]'"),
    ({"JUDGE_ENABLE_ROUTER": "1", "JUDGE_ENABLE_COMMITTEE": "1"},
     "JUDGE_ENABLE_ROUTER and JUDGE_ENABLE_COMMITTEE are both on; a run has one strategy: switch one off, or give "
     "--strategy"),
])
def test_a_bad_variable_is_one_line_naming_the_variable_and_exit_2(tmp_path, capsys, monkeypatch, environ, message):
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    run_dir = tmp_path / "run"
    assert main(["run", str(package_data("sample_snapshot.yaml")), "--run-dir", str(run_dir), "--dry-run"]) == 2
    assert capsys.readouterr().err == f"fanout run: error: {message}\n"
    assert not run_dir.exists()


def test_the_manifest_says_where_values_came_from_only_when_one_came_from_the_environment(tmp_path):
    by_flags = run_scripted(tmp_path / "flags", settings_in({}, "-m", "m/a,m/b", "--samples", "2"))
    assert "sources" not in by_flags["settings"]
    by_env = run_scripted(tmp_path / "env", settings_in({"JUDGE_SELF_CONSISTENCY_RUNS": "2"}, "-m", "m/a,m/b"))
    assert by_env["settings"]["samples"] == 2
    assert by_env["settings"]["sources"] == {"models": "--models", "samples": "JUDGE_SELF_CONSISTENCY_RUNS"}
    assert list(by_env["settings"])[-2:] == ["models", "sources"]
    assert {k: v for k, v in by_env["settings"].items() if k != "sources"} == by_flags["settings"]
