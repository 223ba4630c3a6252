"""`fanout sim` as a user runs it: says what it is, prints where to point the client, stops cleanly."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys

import httpx
import pytest
import yaml

from fanout.cli import main


async def start_sim(*args: str) -> tuple[asyncio.subprocess.Process, list[str]]:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fanout", "sim", "--port", "0", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines: list[str] = []
    while not lines or not lines[-1].startswith("Ctrl-C"):
        line = await asyncio.wait_for(process.stdout.readline(), timeout=30)
        assert line, (await process.stderr.read()).decode()
        lines.append(line.decode().rstrip("\n"))
    return process, lines


async def test_the_simulator_says_it_is_a_stand_in_serves_until_sigterm_and_stops_cleanly():
    process, lines = await start_sim("--profile", "clean", "--seed", "9")
    try:
        assert lines[0].startswith("fanout sim: a stand-in for OpenRouter, SearXNG and the web, for testing and demos.")
        assert "not language models" in lines[0]
        assert lines[1] == "profile: clean (seed 9, latency x1)"
        api = next(line.split()[-1] for line in lines if line.startswith("OpenAI-compatible API:"))
        async with httpx.AsyncClient() as http:
            models = (await http.get(f"{api}/models")).json()["data"]
        assert len(models) == 4
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 0, err.decode()
    assert out.decode().strip().endswith("completions, $0.000000 simulated spend")


async def test_ctrl_c_stops_the_simulator_with_exit_status_zero():
    process, _ = await start_sim()
    process.send_signal(signal.SIGINT)
    await asyncio.wait_for(process.communicate(), timeout=30)
    assert process.returncode == 0


def test_help_says_the_simulator_is_a_stand_in_and_not_a_model(capsys):
    with pytest.raises(SystemExit) as done:
        main(["sim", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    assert "stand-in for OpenRouter, SearXNG and the web, for testing and demos" in out
    assert "not language models" in out


def test_labels_out_writes_every_rcid_with_its_truth_as_yaml_or_json(tmp_path, capsys):
    assert main(["sim", "--labels-out", str(tmp_path / "labels.yaml"), "--labels-only"]) == 0
    assert main(["sim", "--labels-out", str(tmp_path / "labels.json"), "--labels-only"]) == 0
    as_yaml = yaml.safe_load((tmp_path / "labels.yaml").read_text())
    as_json = yaml.safe_load((tmp_path / "labels.json").read_text())
    assert as_yaml == as_json
    assert len(as_yaml["labels"]) == 12
    assert as_yaml["labels"][0] == {"rcid": 2540801101, "truth": "incorrect"}
    assert "wrote 12 labels" in capsys.readouterr().out


def test_a_port_in_use_is_one_clear_error_with_exit_status_2(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["sim", "--port", str(port), "--profile", "clean"]) == 2
    err = capsys.readouterr().err
    assert f"port {port} on 127.0.0.1 is in use; pick another with --port" in err


def test_an_unknown_profile_is_one_clear_error_with_exit_status_2(capsys):
    assert main(["sim", "--profile", "chaos"]) == 2
    assert "no fault profile named 'chaos'; bundled profiles: clean, default, demo" in capsys.readouterr().err
