"""Seed 003's JUDGE_* settings by their names: the router's gates and cost weights, and the report's thresholds.

The run's variables that stand for a flag of its own are tested with the
mechanism (test_settings_declared); here are the ones that needed more: the
gates as inline JSON where the flag takes a file, the cost weights the router
now takes (--cost-weights), and the committee's thresholds, which `fanout
report` (and queue, compare, review) read as the defaults of --pause, --delta
and --autopass, the report recording which came from the environment.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_settings_declared import run_parser, run_scripted, settings_in

from fanout.base.validate import package_data
from fanout.cli import main
from fanout.cli.declared import options_from_args
from fanout.engine.options import input_files
from fanout.engine.settings import RunSettings
from fanout.judging.router import RouterStrategy
from fanout.llm.models import DEFAULT_MODELS

NAMES = [m.name for m in DEFAULT_MODELS]
GATES = json.dumps({"time": [NAMES[2]], "*": NAMES[:2]})
WEIGHTS = json.dumps({NAMES[0]: 0.6, NAMES[1]: 0.4, NAMES[2]: 0.5, NAMES[3]: 0.9})


def test_the_gates_come_inline_from_judge_smoa_gates_and_the_cost_weights_from_judge_model_cost():
    settings = settings_in({"JUDGE_ENABLE_ROUTER": "1", "JUDGE_SMOA_GATES": GATES, "JUDGE_MODEL_COST": WEIGHTS})
    strategy = settings.strategy
    assert isinstance(strategy, RouterStrategy)
    assert strategy.settings() == {"name": "router", "gates": {"*": NAMES[:2], "time": [NAMES[2]]},
                                   "router_accuracy": None, "weights": json.loads(WEIGHTS)}
    assert settings.sources == {"strategy": "JUDGE_ENABLE_ROUTER", "gates_file": "JUDGE_SMOA_GATES",
                                "cost_weights": "JUDGE_MODEL_COST"}
    # Within the gate `*` (Nemotron and OLMo), OLMo's weight 0.4 is below Nemotron's 0.6, whatever their prices.
    assert strategy.router(NAMES, {m: 0.001 for m in NAMES}).cost[NAMES[1]] == 0.4


def test_a_flag_wins_over_the_variables_and_another_strategy_leaves_the_routers_variables_alone(tmp_path):
    flagged = settings_in({"JUDGE_ENABLE_ROUTER": "1", "JUDGE_MODEL_COST": WEIGHTS}, "--cost-weights",
                          json.dumps({NAMES[3]: 0.1}))
    assert flagged.strategy.settings()["weights"] == {NAMES[3]: 0.1}
    committee = settings_in({"JUDGE_ENABLE_COMMITTEE": "1", "JUDGE_SMOA_GATES": GATES, "JUDGE_MODEL_COST": WEIGHTS})
    assert committee.strategy.name == "all"


@pytest.mark.parametrize(("argv", "environ", "message"), [
    (["--cost-weights", "{}", "--strategy", "cascade"], {},
     "--gates, --router-accuracy and --cost-weights choose a router's model: add --strategy router."),
    (["--strategy", "router", "--cost-weights", "m/a=1"], {},
     "--cost-weights must be a JSON object of model to cost weight, got 'm/a=1'"),
    (["--strategy", "router"], {"JUDGE_MODEL_COST": '{"m/zz": 1}'},
     "--cost-weights names m/zz, not among the run's models"),
    (["--strategy", "router"], {"JUDGE_MODEL_COST": '{"' + NAMES[0] + '": -1}'},
     f"JUDGE_MODEL_COST: {NAMES[0]} must be a finite number of 0 or more (got -1)."),
    (["--strategy", "router"], {"JUDGE_SMOA_GATES": "[1]"},
     "JUDGE_SMOA_GATES must be a JSON object of aspect to a list of models, got '[1]'"),
])
def test_a_bad_router_setting_is_one_line_naming_where_it_came_from(tmp_path, capsys, monkeypatch, argv, environ,
                                                                    message):
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    run_dir = tmp_path / "run"
    code = main(["run", str(package_data("sample_snapshot.yaml")), "--run-dir", str(run_dir), "--dry-run", *argv])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err
    assert not run_dir.exists()


def test_the_manifest_records_inline_gates_as_the_routers_and_where_they_came_from(tmp_path):
    manifest = run_scripted(tmp_path, settings_in({"JUDGE_ENABLE_ROUTER": "1", "JUDGE_SMOA_GATES": GATES},
                                                  "-m", ",".join(NAMES)))
    assert manifest["settings"]["strategy"]["gates"] == {"*": NAMES[:2], "time": [NAMES[2]]}
    assert manifest["settings"]["sources"] == {"models": "--models", "strategy": "JUDGE_ENABLE_ROUTER",
                                               "gates_file": "JUDGE_SMOA_GATES"}
    args = run_parser().parse_args(["snap.yaml", "--strategy", "router"])
    assert input_files(options_from_args(args, RunSettings, environ={"JUDGE_SMOA_GATES": GATES})) == ()  # no file


# --- the report's thresholds ---------------------------------------------------------------------------


def report_json(run_dir: Path, capsys, *argv: str) -> dict:
    assert main(["report", str(run_dir), "--json", "-", "-q", *argv]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_report_reads_its_thresholds_from_seed_003s_variables_a_flag_wins_and_says_where_they_came_from(
    tmp_path, capsys, monkeypatch
):
    run_scripted(tmp_path, settings_in({}, "-m", "m/a,m/b"))
    tmp_path = tmp_path / "run"
    monkeypatch.setenv("JUDGE_PAUSE_THRESHOLD", "0.5")
    monkeypatch.setenv("JUDGE_DELTA_THRESH", "0.3")
    monkeypatch.setenv("JUDGE_MIN_CONF_FOR_AUTOPASS", "0.95")
    found = report_json(tmp_path, capsys, "--delta", "0.1")["settings"]
    assert (found["pause"], found["delta"], found["autopass"]) == (0.5, 0.1, 0.95)
    assert found["sources"] == {"pause": "JUDGE_PAUSE_THRESHOLD", "autopass": "JUDGE_MIN_CONF_FOR_AUTOPASS"}
    assert main(["report", str(tmp_path)]) == 0
    assert ("  from the environment: --pause from JUDGE_PAUSE_THRESHOLD, --delta from JUDGE_DELTA_THRESH, "
            "--autopass from JUDGE_MIN_CONF_FOR_AUTOPASS") in capsys.readouterr().out


def test_a_report_by_flags_alone_records_no_sources(tmp_path, capsys):
    run_scripted(tmp_path, settings_in({}, "-m", "m/a,m/b"))
    tmp_path = tmp_path / "run"
    assert "sources" not in report_json(tmp_path, capsys, "--pause", "0.5")["settings"]


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("JUDGE_DELTA_THRESH", "2", "JUDGE_DELTA_THRESH must be from 0 to 1 (got 2)."),
    ("JUDGE_PAUSE_THRESHOLD", "high", "JUDGE_PAUSE_THRESHOLD='high' is not a valid value for --pause"),
])
def test_a_bad_threshold_variable_is_one_line_naming_it(tmp_path, capsys, monkeypatch, variable, value, message):
    run_scripted(tmp_path, settings_in({}, "-m", "m/a,m/b"))
    monkeypatch.setenv(variable, value)
    assert main(["report", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and message in err, err
