"""Invariant 15, generated: a damaged line of any run file the layout declares is set aside, counted, never a crash.

The kinds of line come from fanout.store.layout.RUN_FILES (each log's schema
and example line); Hypothesis damages the example field by field (wrong
types, values out of range, NaN, Infinity, a 400-digit integer, a missing
field) and as a whole (not JSON, nested past any depth, not UTF-8). Every
reader then reads the run: status, report, queue, compare, the desk's API,
and a resume. A run file declared later is covered by the same cases.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import aiohttp
import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from fanout.base.validate import package_data
from fanout.cli import main
from fanout.engine.runner import RunRequest, run
from fanout.engine.settings import RunSettings
from fanout.llm.models import ModelSpec
from fanout.report import ReportOptions, build_report
from fanout.review.desk import Desk
from fanout.review.server import running_desk
from fanout.store.layout import LOG_NAME, RUN_FILES, RunFile
from fanout.store.lines import check_line
from fanout.workloads.patrol.workload import PATROL

from test_output_guard import verdict

LINE_FILES = [f for f in RUN_FILES.values() if f.schema is not None]
IDS = [f.name for f in LINE_FILES]
BAD_VALUES = ["abc", "", "bogus", 42, -1, 2, -0.5, 1.5, None, True, [], {}, math.nan, math.inf, -math.inf, 10 ** 400,
              1e308, [1, "x"], {"a": 1}]
WHOLE_BAD = [b"[" * 100_000, b"{" * 50_000, b"null", b"[]", b"42", b'"text"', b"\xff\xfe\x00", b'{"a":', b"{}",
             b'{"model": ' + b"9" * 400 + b"}"]


def _fields(run_file: RunFile) -> tuple[dict[str, Any], tuple[str, ...]]:
    schema: Any = run_file.schema
    schema = getattr(schema, "kinds", [schema])[0]  # one of several (an in-flight file): its first, the header
    return dict(schema.fields), tuple(schema.required)


def damaged_lines(run_file: RunFile) -> st.SearchStrategy[bytes]:
    """Lines of `run_file` that its schema must refuse: its example damaged in one field, or not a record at all.
    Made once a kind (Hypothesis validates a strategy the first time it draws from it: made anew each example, that
    was a third of the module's time)."""
    if run_file.name not in _DAMAGED:
        _DAMAGED[run_file.name] = _damaged_lines(run_file)
    return _DAMAGED[run_file.name]


def one_damaged_line(run_file: RunFile) -> st.SearchStrategy[bytes]:
    """Damaged lines that stay one line of the file (made once a kind, as damaged_lines)."""
    if run_file.name not in _ONE_LINE:
        _ONE_LINE[run_file.name] = damaged_lines(run_file).filter(
            lambda b: b"\n" not in b and b"\r" not in b and b.strip() != b"")
    return _ONE_LINE[run_file.name]


_DAMAGED: dict[str, st.SearchStrategy[bytes]] = {}
_ONE_LINE: dict[str, st.SearchStrategy[bytes]] = {}


def _damaged_lines(run_file: RunFile) -> st.SearchStrategy[bytes]:
    assert run_file.example is not None, f"{run_file.name} declares a schema but no example line"
    example = dict(run_file.example)
    fields, required = _fields(run_file)
    swapped = st.tuples(st.sampled_from(sorted(fields)), st.sampled_from(BAD_VALUES)).map(
        lambda fv: {**example, fv[0]: fv[1]})
    dropped = (st.sampled_from(required).map(lambda key: {k: v for k, v in example.items() if k != key}) if required
               else st.nothing())  # a line kind with no required field (a watch's journal) cannot lose one
    as_json = st.one_of(swapped, dropped).map(lambda d: json.dumps(d, allow_nan=True).encode())
    return st.one_of(as_json, st.sampled_from(WHOLE_BAD), st.binary(max_size=200))


@pytest.mark.parametrize("run_file", LINE_FILES, ids=IDS)
def test_every_declared_line_file_has_an_example_its_schema_accepts(run_file: RunFile) -> None:
    assert run_file.example is not None
    assert check_line(json.dumps(run_file.example).encode() + b"\n", run_file) == (None, run_file.example)


@pytest.mark.parametrize("run_file", LINE_FILES, ids=IDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_damaged_line_of_any_declared_kind_is_named_never_raised(run_file: RunFile, data: st.DataObject) -> None:
    line = data.draw(damaged_lines(run_file))
    try:
        parsed = json.loads(line)
    except (ValueError, RecursionError):
        parsed = None
    assume(parsed is None or run_file.schema.problem(parsed) is not None)  # type: ignore[union-attr]
    problem, record = check_line(line + b"\n", run_file)
    assert isinstance(problem, str) and problem and record is None


# --- every reader over a run holding one damaged line -----------------------------------------------------------

@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("damage")
    snapshot = root / "today.yaml"
    shutil.copyfile(package_data("sample_snapshot.yaml"), snapshot)
    resume_once(snapshot, root / "run")
    return root


def resume_once(snapshot: Path, run_dir: Path) -> str:
    out = StringIO()
    request = RunRequest(snapshot, run_dir, RunSettings(models=(ModelSpec("m/a"), ModelSpec("m/b"))), limit=3,
                         handle_signals=False, progress_interval_s=3600, out=out, workload=PATROL)
    anyio.run(lambda: run(request, verdict_fn=verdict))
    return out.getvalue()


def plant(run_dir: Path, run_file: RunFile, line: bytes) -> Path:
    """The damaged line between two good ones (a log's last line would be a torn tail, cut rather than counted)."""
    path = run_dir / run_file.name.replace("*", "1-abc")
    path.parent.mkdir(exist_ok=True)
    good = json.dumps(run_file.example).encode() + b"\n"
    if run_file.name == LOG_NAME:
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(lines[0] + line + b"\n" + b"".join(lines[1:]))
        (run_dir / "checkpoint.index").unlink(missing_ok=True)
    else:
        path.write_bytes(good + line + b"\n" + good)
    return path


async def desk_answers(run_dir: Path) -> list[int]:
    async with running_desk(Desk(run_dir, ReportOptions()), "t", port=0) as url:
        async with aiohttp.ClientSession() as session:
            async with session.get(url + "api/edits") as listing:
                rows = (await listing.json())["edits"]
                statuses = [listing.status]
            async with session.get(url + f"api/edits/{rows[0]['rcid']}") as detail:
                statuses.append(detail.status)
    return statuses


def readers(run_dir: Path, tmp: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[tuple[str, str]]:
    """Each reader in turn, with what it printed; none may raise or exit other than 0."""
    for argv in (["status", str(run_dir)], ["queue", str(run_dir)], ["compare", str(run_dir), str(run_dir)],
                 ["report", str(run_dir), "--json", str(tmp / "r.json"), "--force"]):
        capsys.readouterr()
        code = main(argv)
        out = capsys.readouterr()
        assert code == 0 and "Traceback" not in out.err, (argv, out.err)
        yield argv[0], out.out
    assert anyio.run(desk_answers, run_dir) == [200, 200]


@pytest.mark.timeout(600)
@pytest.mark.parametrize("run_file", LINE_FILES, ids=IDS)
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.filter_too_much])
@given(data=st.data())
def test_every_reader_survives_a_damaged_line_of_every_kind_and_counts_it(
        finished: Path, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str],
        run_file: RunFile, data: st.DataObject) -> None:
    line = data.draw(one_damaged_line(run_file))
    problem, _ = check_line(line + b"\n", run_file)
    assume(problem is not None)
    work = tmp_path_factory.mktemp("w")
    shutil.copytree(finished, work, dirs_exist_ok=True)
    run_dir = work / "run"
    (run_dir / "manifest.yaml").write_text((run_dir / "manifest.yaml").read_text().replace(str(finished), str(work)))
    plant(run_dir, run_file, line)
    said = dict(readers(run_dir, work, capsys))
    if "*" not in run_file.name:  # a family of files (in-flight attempts): the start that settles them warns
        note = f"1 damaged line in {run_file.name}, set aside (line 2: "
        assert note in said["status"], said["status"]
        # resamples=0: the warnings do not depend on the agreement intervals (the `report` reader above made them)
        assert any(w.startswith(note) for w in build_report(run_dir, ReportOptions(resamples=0)).run.warnings)
    resumed = resume_once(work / "today.yaml", run_dir)
    if run_file.name == LOG_NAME:
        assert "Line(s) 2 of the log were not verdict records; set aside in checkpoint.torn-1.jsonl." in resumed
