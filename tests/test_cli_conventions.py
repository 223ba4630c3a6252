"""The command line as users of other tools expect it: repeatable -m with comma lists, options whose value is
optional that never eat a positional, `-` for standard output, messages that name the fix, and --help that
says what a command reads, how it exits and how to call it."""

from __future__ import annotations

import argparse
import importlib
import json

import anyio
import pytest

from fanout.workloads.patrol.workload import PATROL
from fanout.cli import COMMANDS, build_parser, main
from fanout.base.validate import package_data
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.engine.runner import RunRequest, run
from fanout.base.records import VerdictRecord

SAMPLE = package_data("sample_snapshot.yaml")
LOCAL = ["--base-url", "http://127.0.0.1:9/v1", "--searxng-url", "http://127.0.0.1:9"]


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    return err


def planned_models(capsys, *argv: str) -> str:
    """The models line of a dry run (which contacts and writes nothing)."""
    assert main(["run", *argv, "--dry-run", *LOCAL]) == 0, capsys.readouterr().err
    return next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Models"))


# --- -m / --model / --models ------------------------------------------------------


def test_model_is_repeatable_and_takes_comma_separated_lists(tmp_path, capsys):
    line = planned_models(capsys, str(SAMPLE), "--run-dir", str(tmp_path / "run"), "-m", "a/x", "--model", "b/y,c/z")
    assert line == "Models (3): a/x, b/y, c/z"


def test_models_before_the_snapshot_leaves_the_snapshot_to_the_run(tmp_path, capsys):
    line = planned_models(capsys, "--run-dir", str(tmp_path / "run"), "--models", "a/x", "b/y", str(SAMPLE))
    assert line == "Models (2): a/x, b/y"


def test_models_that_ate_every_word_says_the_snapshot_is_missing_in_one_line(tmp_path, capsys):
    code = main(["run", "--run-dir", str(tmp_path / "run"), "--models", "a/x", "b/y", *LOCAL])
    assert code == 2
    assert one_line_error(capsys) == (
        "fanout run: error: SNAPSHOT is missing: give the snapshot YAML, e.g. `fanout run today.yaml -m a,b` or "
        "`--snapshot today.yaml` (--models reads every word after it as a model name)"
    )
    assert not (tmp_path / "run").exists()


# --- SNAPSHOT or seed 001's --snapshot PATH -----------------------------------------


def planned_snapshot(capsys, *argv: str) -> str:
    """The snapshot line of a dry run."""
    assert main(["run", *argv, "--dry-run", *LOCAL]) == 0, capsys.readouterr().err
    return next(line for line in capsys.readouterr().out.splitlines() if line.startswith("Snapshot"))


def test_snapshot_option_names_the_snapshot_as_the_positional_does(tmp_path, capsys):
    run_dir = str(tmp_path / "run")
    by_option = planned_snapshot(capsys, "--snapshot", str(SAMPLE), "--run-dir", run_dir, "-m", "a/x")
    assert by_option == planned_snapshot(capsys, str(SAMPLE), "--run-dir", run_dir, "-m", "a/x")
    assert str(SAMPLE) in by_option


def test_snapshot_option_and_positional_may_both_name_one_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(SAMPLE.parent)
    line = planned_snapshot(capsys, SAMPLE.name, "--snapshot", f"./{SAMPLE.name}", "--run-dir", str(tmp_path / "run"))
    assert SAMPLE.name in line


def test_snapshot_option_after_models_leaves_the_models_alone(tmp_path, capsys):
    line = planned_models(capsys, "--snapshot", str(SAMPLE), "--run-dir", str(tmp_path / "run"), "--models", "a/x", "b/y")
    assert line == "Models (2): a/x, b/y"


def test_snapshot_option_and_a_different_positional_are_one_clear_error(tmp_path, capsys):
    other = tmp_path / "other.yaml"
    other.write_text(SAMPLE.read_text())
    code = main(["run", str(SAMPLE), "--snapshot", str(other), "--run-dir", str(tmp_path / "run"), *LOCAL])
    assert code == 2
    assert one_line_error(capsys) == (
        f"fanout run: error: SNAPSHOT ({SAMPLE}) and --snapshot ({other}) name different files; give one of them"
    )
    assert not (tmp_path / "run").exists()


def test_check_takes_the_same_model_options(capsys):
    import fanout.cli.check as check

    parser = __import__("argparse").ArgumentParser()
    check.configure(parser)
    assert parser.parse_args(["-m", "a/x,b/y", "--models", "c/z", "d/w"]).models == ["a/x", "b/y", "c/z", "d/w"]


# --- fanout report: --html / --json never eat RUN_DIR; `-` is standard output -----


@pytest.fixture
def finished_run(tmp_path):
    """Two edits x two models, all with verdicts."""

    async def verdict(edit, model):
        return VerdictRecord(
            model=model.name, edit_rcid=edit.rcid, edit_revid=edit.revid, qid=edit.title,
            property=edit.parsed.property, diff_type=edit.diff_type, timestamp="2026-11-22T10:00:00Z",
            status="ok", verdict="plausible", cost_usd=0.01,
        )

    run_dir = tmp_path / "run"
    settings = RunSettings(models=(ModelSpec("m/a"), ModelSpec("m/b")))
    request = RunRequest(SAMPLE, run_dir, settings, limit=2, handle_signals=False, progress_interval_s=3600,
                         workload=PATROL)
    anyio.run(lambda: run(request, verdict_fn=verdict))
    return run_dir


@pytest.mark.parametrize("flags", [["--html"], ["--json", "--html"], ["--html", "--json"]])
def test_a_bare_html_or_json_before_run_dir_writes_into_the_run_dir(finished_run, capsys, flags):
    assert main(["report", "-q", *flags, str(finished_run)]) == 0
    written = sorted(line for line in capsys.readouterr().out.splitlines() if line.startswith("wrote "))
    expected = {"--html": [f"wrote {finished_run / 'report.html'}", f"wrote 2 edit pages in {finished_run / 'report/edits'}"],
                "--json": [f"wrote {finished_run / 'report.json'}"]}
    assert written == sorted(line for flag in flags for line in expected[flag])


def test_json_dash_writes_the_json_to_standard_output_and_the_summary_to_stderr(finished_run, capsys):
    assert main(["report", str(finished_run), "--json", "-"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)  # nothing but the JSON on standard output
    assert (data["run_dir"], data["models"], data["edits"]) == (str(finished_run), ["m/a", "m/b"], 2)
    assert not (finished_run / "-").exists()
    assert err.startswith(f"fanout report: {finished_run}\n")  # the summary went to stderr
    assert [line for line in (out + err).splitlines() if line.startswith("wrote ")] == []


def test_html_on_standard_output_is_refused_because_it_is_a_page_and_a_folder(finished_run, capsys):
    assert main(["report", str(finished_run), "--json", "-", "--html", "-"]) == 2
    assert one_line_error(capsys) == (
        "fanout report: error: --html writes a page and a folder of edit pages beside it, so it needs a file, not -"
    )


# --- messages that say what to do --------------------------------------------------


def test_report_on_the_log_file_names_the_run_directory_to_pass(finished_run, capsys):
    log = finished_run / "checkpoint.jsonl"
    assert main(["report", str(log)]) == 2
    assert one_line_error(capsys) == (
        f"fanout report: error: {log} is a file; pass the run directory that holds it (the --run-dir of a "
        f"`fanout run`): fanout report {finished_run}"
    )


def test_status_on_the_log_file_names_the_run_directory_to_pass(finished_run, capsys):
    log = finished_run / "checkpoint.jsonl"
    assert main(["status", str(log)]) == 2
    assert one_line_error(capsys) == (
        f"fanout status: error: {log} is a file; pass the run directory that holds it (the --run-dir of a "
        f"`fanout run`): fanout status {finished_run}"
    )


def test_an_unreachable_searxng_is_named_with_its_flag_and_the_provider_that_needs_none(tmp_path, capsys):
    code = main(["run", str(SAMPLE), "--run-dir", str(tmp_path / "run"), *LOCAL])
    assert code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "fanout run: error: SearXNG is unreachable at http://127.0.0.1:9 (ConnectError): start it with "
        "`make searxng-up`, point --searxng-url at a running one, or search without it: --search-providers wikipedia"
    )
    assert not (tmp_path / "run").exists()


# --- --help ------------------------------------------------------------------------


def help_of(command: str, capsys) -> str:
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main([command, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


def parser_of(command: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    importlib.import_module(f"fanout.cli.{COMMANDS[command][0]}").configure(parser)
    return parser


ALL_COMMANDS = sorted(COMMANDS)
"""Every command of the command table `fanout --help` is built from: a new command is held to these
conventions without a line here."""


def test_the_commands_checked_are_the_ones_fanout_help_lists(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    text = capsys.readouterr().out
    listed = [line.split()[0] for line in text[text.index("  COMMAND\n"):text.index("\noptions:")].splitlines()[1:]
              if line.startswith("    ") and not line.startswith("     ")]
    assert listed == list(COMMANDS)
    assert len(ALL_COMMANDS) == 12  # watch is the twelfth


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_every_help_names_the_environment_it_reads_its_exit_codes_and_examples(command, capsys):
    text = help_of(command, capsys)
    epilog = text[text.index("\nenvironment:\n"):]
    assert [line for line in epilog.splitlines() if line and not line.startswith(" ")] == [
        "environment:", "exit codes:", "examples:",
    ]
    assert f"  fanout {command} " in epilog
    assert "  2 bad input" in epilog
    assert max(len(line) for line in epilog.splitlines()) <= 80


@pytest.mark.parametrize("command", ["run", "check"])
def test_run_and_check_help_list_the_default_models_by_name(command, capsys):
    from fanout.llm.models import DEFAULT_MODELS

    text = help_of(command, capsys)
    listed = text[text.index("default models (without -m):\n"):text.index("\nenvironment:")].splitlines()[1:]
    assert listed == [f"  {m.name}" for m in DEFAULT_MODELS]
    assert "OPENROUTER_API_KEY" in text and "FANOUT_API_KEY" in text and "seed design" not in text


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_metavars_are_the_same_everywhere(command):
    for action in parser_of(command)._actions:
        if not action.option_strings:
            # `run` reads a snapshot or, with --workload claims, texts: SNAPSHOT|TEXTS names both, the snapshot first
            assert action.dest not in ("snapshot", "run_dir") or action.metavar.split("|")[0] == action.dest.upper()
        elif action.type is int:
            assert action.metavar == "N", action.option_strings
        elif action.option_strings[-1].endswith("-url"):
            assert action.metavar == "URL", action.option_strings
        elif action.dest == "run_dir":
            assert action.metavar == "RUN_DIR"


# --- one-line errors, for every command of the table -------------------------------

RUN_DIRS = ("RUN_DIR", "RUN_A", "RUN_B")
"""The metavars of a positional that names a run directory."""


def run_dir_positionals(command: str) -> list[str]:
    return [a.metavar for a in parser_of(command)._actions if not a.option_strings and a.metavar in RUN_DIRS]


RUN_DIR_COMMANDS = [c for c in ALL_COMMANDS if run_dir_positionals(c)]


def test_the_commands_that_read_a_run_are_found_by_their_run_dir_argument():
    assert RUN_DIR_COMMANDS == ["compare", "queue", "report", "review", "status"]


@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_an_unknown_option_is_refused_in_one_line_that_points_at_the_commands_help(command, capsys):
    assert main([command, "--no-such-option"]) == 2
    line = one_line_error(capsys)
    assert line.startswith(f"fanout {command}: error: ") and line.endswith(f"; see `fanout {command} --help`")


@pytest.mark.parametrize("command", RUN_DIR_COMMANDS)
def test_a_log_file_given_for_a_run_directory_names_the_directory_and_the_same_command(command, finished_run, capsys):
    log = finished_run / "checkpoint.jsonl"
    given = [str(log)] * len(run_dir_positionals(command))
    assert main([command, *given]) == 2
    fixed = " ".join([str(finished_run)] * len(given))
    assert one_line_error(capsys) == (
        f"fanout {command}: error: {log} is a file; pass the run directory that holds it (the --run-dir of a "
        f"`fanout run`): fanout {command} {fixed}"
    )


@pytest.mark.parametrize("command", RUN_DIR_COMMANDS)
def test_a_run_directory_that_does_not_exist_is_refused_in_one_line_naming_it(command, tmp_path, capsys):
    nowhere = tmp_path / "nowhere"
    assert main([command, *[str(nowhere)] * len(run_dir_positionals(command))]) == 2
    line = one_line_error(capsys)
    assert line.startswith(f"fanout {command}: error: ") and str(nowhere) in line
    assert list(tmp_path.iterdir()) == []
