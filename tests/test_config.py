"""Settings check themselves once, however they are made, and each default is written in one place."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from fanout.workloads.patrol.workload import PATROL
from fanout.cli import run as run_cli
from fanout.base.validate import package_data
from fanout.engine.options import RunOptions, settings_from
from fanout.engine.settings import RunSettings
from fanout.llm.keys import api_key_from_env, is_openrouter, key_env
from fanout.llm.models import ModelSpec
from fanout.tools.settings import ToolSettings
from fanout.engine.runner import RunRequest, run
from fanout.base.errors import ConfigError
from fanout.sim import SimConfig, profile_from_dict, running_simulator


def parse_run_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    run_cli.configure(parser)
    return parser.parse_args(["snap.yaml", *argv])


def test_the_command_line_without_flags_gives_exactly_the_dataclass_defaults():
    assert run_cli.settings_from_args(parse_run_args()) == RunSettings()
    assert settings_from(RunOptions()) == RunSettings()


def test_each_flag_lands_on_its_setting():
    settings = run_cli.settings_from_args(parse_run_args(
        "--models", "m/a", "m/b", "m/a", "--concurrency", "3", "--timeout", "60", "--request-timeout", "45",
        "--max-turns", "4", "--max-lead", "2", "--grace", "0", "--max-cost", "1.5", "--retry", "timeout,error",
        "--per-model-concurrency", "2", "--rpm", "30", "--base-url", "http://127.0.0.1:9/v1",
        "--searxng-url", "http://127.0.0.1:8", "--fetch-delay", "0", "--allow-private-urls",
    ))
    assert settings == RunSettings(
        models=(ModelSpec("m/a", max_concurrency=2, requests_per_minute=30.0),
                ModelSpec("m/b", max_concurrency=2, requests_per_minute=30.0)),
        base_url="http://127.0.0.1:9/v1",
        tools=ToolSettings(searxng_url="http://127.0.0.1:8", allow_private_urls=True, per_host_delay_s=0.0),
        concurrency=3, max_turns=4, verdict_timeout_s=60.0, chat_timeout_s=45.0, max_lead=2, grace_s=0.0,
        max_cost_usd=1.5, retry_statuses=frozenset({"timeout", "error"}),
    )


def test_the_default_lead_is_the_larger_of_ten_and_four_edits_per_slot_and_model():
    two_models = ("a/x", "b/y")
    assert settings_from(RunOptions(models=two_models, concurrency=4)).max_lead == 10
    assert settings_from(RunOptions(models=two_models, concurrency=7)).max_lead == 14
    assert settings_from(RunOptions(models=two_models, concurrency=7, max_lead=3)).max_lead == 3


def test_a_lead_that_holds_back_the_concurrency_is_named_and_one_that_does_not_is_not():
    held = RunSettings(models=(ModelSpec("a/x"), ModelSpec("b/y")), concurrency=64, max_lead=10)
    assert held.lead_warning() == (
        "--max-lead 10 with 2 model(s) lets about 20 verdicts run at once, fewer than --concurrency 64"
    )
    assert dataclasses.replace(held, max_lead=32).lead_warning() is None


@pytest.mark.parametrize(
    ("build", "expected"),
    [
        (lambda: RunSettings(concurrency=0), "--concurrency must be at least 1 (got 0)."),
        (lambda: RunSettings(concurrency=2.5), "--concurrency must be a whole number (got 2.5)."),  # type: ignore[arg-type]
        (lambda: RunSettings(models=()), "--models: name at least one model."),
        (lambda: dataclasses.replace(RunSettings(), grace_s=-1.0), "--grace must not be negative (got -1)."),
        (lambda: RunSettings(chat_timeout_s=float("nan")), "--request-timeout must be a finite number (got nan)."),
        (lambda: RunSettings(retry_statuses=frozenset({"ok"})),
         "--retry: unknown status ok; choose from timeout, incomplete, invalid_json, error, refused."),
        (lambda: ToolSettings(searxng_url="127.0.0.1:8080"),
         "--searxng-url must be an http:// or https:// URL with a host (got '127.0.0.1:8080')."),
        (lambda: ToolSettings(fetch_max_chars=0), "--max-chars must be at least 1 (got 0)."),
        (lambda: ToolSettings(max_redirects=-1), "max_redirects must be at least 0 (got -1)."),
        (lambda: ToolSettings(extract_memory_mb=200), "extract_memory_mb must be at least 256 (got 200)."),
        (lambda: ToolSettings(fetch_timeout_s=0.0), "fetch_timeout_s must be more than 0 (got 0)."),
        (lambda: ToolSettings(search_cache_ttl_s=float("nan")), "search_cache_ttl_s must be a finite number (got nan)."),
        (lambda: ModelSpec(" "), "a model name must be a non-empty string (got ' ')."),
        (lambda: ModelSpec("m/a", input_price=float("inf")), "model m/a: input_price must be a finite number (got inf)."),
        (lambda: ModelSpec("m/a", requests_per_minute="10"),  # type: ignore[arg-type]
         "model m/a: requests_per_minute must be a number (got '10')."),
        (lambda: RunRequest(package_data("sample_snapshot.yaml"), package_data("nowhere"), RunSettings(), limit=0,
                            workload=PATROL),
         "--limit must be at least 1 (got 0)."),
    ],
)
def test_settings_made_in_code_are_checked_like_flags(build, expected):
    with pytest.raises(ConfigError) as caught:
        build()
    assert str(caught.value) == expected


def test_a_limits_file_that_cannot_be_read_is_named(tmp_path):
    missing = tmp_path / "limits.yaml"
    with pytest.raises(ConfigError) as caught:
        settings_from(RunOptions(limits_file=missing))
    assert str(caught.value) == f"--limits {missing} does not exist; pass the path of an existing file to --limits"


def test_limits_from_the_file_apply_and_flags_win_over_them(tmp_path):
    limits = tmp_path / "limits.yaml"
    limits.write_text("m/a: {max_concurrency: 3, requests_per_minute: 12, input_price: 0.5}\n")
    settings = settings_from(RunOptions(models=("m/a",), limits_file=limits, per_model_concurrency=1))
    assert settings.models == (ModelSpec("m/a", input_price=0.5, max_concurrency=1, requests_per_minute=12),)


def test_the_limits_file_can_force_a_models_tool_protocol(tmp_path):
    limits = tmp_path / "limits.yaml"
    limits.write_text("m/a: {tool_protocol: prompted}\nm/b: {tool_protocol: native}\n")
    settings = settings_from(RunOptions(models=("m/a", "m/b", "m/c"), limits_file=limits))
    assert [m.tool_protocol for m in settings.models] == ["prompted", "native", None]


def test_an_unknown_tool_protocol_in_the_limits_file_is_one_clear_error(tmp_path):
    limits = tmp_path / "limits.yaml"
    limits.write_text("m/a: {tool_protocol: json}\n")
    with pytest.raises(ConfigError) as caught:
        settings_from(RunOptions(models=("m/a",), limits_file=limits))
    assert str(caught.value) == f"--limits {limits}: model m/a: tool_protocol must be native or prompted (got 'json')."


async def test_the_request_timeout_bounds_each_chat_request_of_a_run(tmp_path):
    """A stalled chat request is given up after --request-timeout and asked again, well inside the verdict's time."""
    stalling = "allenai/olmo-3.1-32b-instruct"
    profile = profile_from_dict({"models": {stalling: {"stall": 1.0, "stall_s": 60}}})
    async with running_simulator(SimConfig(seed=3, profile=profile)) as sim:
        settings = RunSettings(
            models=(ModelSpec(stalling),), base_url=sim.api_base,
            tools=ToolSettings(searxng_url=sim.searxng_url, allow_private_urls=True, per_host_delay_s=0),
            verdict_timeout_s=3.0, chat_timeout_s=0.2,
        )
        request = RunRequest(package_data("sample_snapshot.yaml"), tmp_path, settings, limit=1,
                             handle_signals=False, progress_interval_s=3600, workload=PATROL)
        report = await run(request)
        stalls = sim.stats()["faults"]["stall"]
    assert report is not None and report.tally.count("timeout") == 1
    # 0.2 s, a first back-off of at most 2 s, then the second request: two stalls where one request
    # held for the whole 3 s would make one.
    assert stalls >= 2


@pytest.mark.parametrize(
    ("base_url", "openrouter", "variable"),
    [
        ("https://openrouter.ai/api/v1", True, "OPENROUTER_API_KEY"),
        ("https://OpenRouter.AI:443/api/v1", True, "OPENROUTER_API_KEY"),
        ("https://eu.openrouter.ai/api/v1", True, "OPENROUTER_API_KEY"),
        ("http://openrouter.ai/api/v1", False, "FANOUT_API_KEY"),  # the key never goes out in clear text
        ("http://127.0.0.1:8000/openrouter.ai/v1", False, "FANOUT_API_KEY"),
        ("https://openrouter.ai.example.com/v1", False, "FANOUT_API_KEY"),
        ("https://notopenrouter.ai/v1", False, "FANOUT_API_KEY"),
    ],
)
def test_only_openrouters_own_https_host_is_openrouter_and_gets_its_key(base_url, openrouter, variable):
    assert (is_openrouter(base_url), key_env(base_url)) == (openrouter, variable)


def test_another_endpoint_gets_fanout_api_key_and_never_the_openrouter_key(monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-v1-secret")
    assert api_key_from_env("http://127.0.0.1:8000/v1") is None
    monkeypatch.setenv("FANOUT_API_KEY", "local-secret")
    assert api_key_from_env("http://127.0.0.1:8000/v1") == "local-secret"
    assert api_key_from_env("https://openrouter.ai/api/v1") == "sk-or-v1-secret"
