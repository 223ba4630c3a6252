"""Shared test set-up: nothing reaches the internet, nothing needs a key; a failure says how to report it."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import httpx
import pytest
import respx

from fanout.base.validate import package_data
from fanout.workloads.patrol.edit import Edit
from fanout.workloads.patrol.snapshot import load_snapshot
from loopback import closed_port
from simulated import SimulatedRuns

PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
FILE_DURATIONS = Path(__file__).with_name("file_durations.json")
"""Seconds each test file took in a recent run (scripts/test_durations.py writes it)."""
FILES_RUN: list[str] = []
"""The test files this process (one xdist worker, or the whole run) has run so far, in order."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest files first, so that under `--dist loadfile --no-loadscope-reorder` (make test) no long
    file is the last one a worker starts. A file keeps its tests' order; one the table does not know
    (new since it was written) comes after those it knows."""
    seconds = json.loads(FILE_DURATIONS.read_text(encoding="utf-8")) if FILE_DURATIONS.exists() else {}
    items.sort(key=lambda item: -seconds.get(item.nodeid.partition("::")[0], 0.0))


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    if not FILES_RUN or FILES_RUN[-1] != location[0]:
        FILES_RUN.append(location[0])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    """A failure carries what a report of a flaky test needs: which worker ran it, after which files, under
    what load, and the commands that run it again alone and after the same files (docs/development.md)."""
    report: pytest.TestReport = yield
    if report.failed:
        report.sections.append(("how to report this failure", failure_note(item.nodeid)))
    return report


def failure_note(nodeid: str) -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")
    load = " ".join(f"{n:.1f}" for n in os.getloadavg())
    before = FILES_RUN[:-1]
    return "\n".join([
        f"worker {worker} of {workers}; load average {load} on {os.cpu_count()} CPUs",
        f"files this worker ran before: {' '.join(before[-8:]) or 'none'}" + (f" (and {len(before) - 8} more)"
                                                                            if len(before) > 8 else ""),
        f"alone:  .venv/bin/python -m pytest -p no:xdist '{nodeid}'",
        f"in turn: .venv/bin/python -m pytest -p no:xdist {' '.join(before)} '{nodeid}'",
        "File an issue with this section, the error above, and whether the two commands pass.",
    ])


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loopback servers must be reached directly, no real key may leak in, and no setting of the developer's
    environment (seed 003's JUDGE_* names, read as defaults of fanout run's options) may change a run."""
    for var in (*PROXY_VARS, *(name for name in os.environ if name.startswith("JUDGE_"))):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    for var in ("OPENROUTER_API_KEY", "FANOUT_API_KEY", "NCBI_API_KEY", "NCBI_EMAIL", "SERPAPI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def respx_transport(router: respx.Router) -> httpx.MockTransport:
    """A transport answered by a respx router, for make_http_client(transport=...) or main(argv, transport=...).

    fanout's wire is aiohttp, which respx's patching never sees, so tests hand
    the router in as httpx's own tests hand in theirs. The router has already
    read each answer's body; the answer goes on as a new response over the same
    bytes, so a caller that streams it (web_fetch) can.
    """

    async def answer(request: httpx.Request) -> httpx.Response:
        mocked = await router.async_handler(request)
        return httpx.Response(mocked.status_code, headers=mocked.headers, stream=mocked.stream,
                              extensions=mocked.extensions)

    return httpx.MockTransport(answer)


@pytest.fixture
def transport_for() -> Callable[[respx.Router], httpx.MockTransport]:
    """respx_transport, for tests that open their own router (`with respx.mock(...) as router`)."""
    return respx_transport


@pytest.fixture
def mocked_transport(respx_mock: respx.MockRouter) -> httpx.MockTransport:
    """respx's `respx_mock` router as a transport."""
    return respx_transport(respx_mock)


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A loopback port that refuses connections for the whole test (tests/loopback.py: closed_port)."""
    with closed_port() as port:
        yield port


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """A plain httpx client for tests that hand fanout a client of their own."""
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture(scope="module")
def edit() -> Edit:
    """Edit 1 of the packaged sample: Douglas Adams's date of birth."""
    return load_snapshot(package_data("sample_snapshot.yaml")).edits[0]


@pytest.fixture(scope="session")
def simulated_runs(tmp_path_factory: pytest.TempPathFactory) -> SimulatedRuns:
    """Finished simulated runs, made once per session and seed for all workers (see tests/simulated.py).

    Under pytest-xdist each worker has its own base temporary folder; their parent is the session's.
    """
    base = tmp_path_factory.getbasetemp()
    return SimulatedRuns((base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "simulated-runs")
