"""A finished `fanout run` of the sample snapshot against the simulator, for the tests that read a real run.

The run is the same for every test that asks for a seed, so it is made once per test session and seed,
under a file lock that the workers of a parallel run share, and each module gets a copy of its own to
read or change: three modules asked for two seeds and paid for three runs before.
"""

from __future__ import annotations

import dataclasses
import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from anyio.from_thread import start_blocking_portal

from fanout.base.validate import package_data
from fanout.cli import main
from fanout.sim import SimConfig, SimHandle, running_simulator
from fanout.sim.faults import FaultProfile, ModelFaults, load_profile

SAMPLE = package_data("sample_snapshot.yaml")
WAITS = 0.1
"""A profile's waits (rate-limit windows, stalls, the /generation delay) are this share as long in a test's run.

The demo profile's waits are real seconds the run sits out (its latency is already off): 72 s of wall for the
demo run on seed 7, 21 s at a tenth. Checked on seed 7: the run's records are the same, field for field, but for
their times and the simulator's port (429s are still answered: the windows count as many requests, a tenth as
long), and so are the report's numbers but for durations and the intervals seeded by the run's start time."""


class SimulatedRuns:
    """Finished runs by seed, kept in `shared`: a folder every worker of the session sees."""

    def __init__(self, shared: Path) -> None:
        self.shared = shared

    def copy(self, seed: int, run_dir: Path, profile: str | None = None) -> Path:
        """A copy at `run_dir` of the sample snapshot through the four default models on `seed` (and `profile`)."""
        shutil.copytree(self._finished(seed, profile), run_dir)
        return run_dir

    def _finished(self, seed: int, profile: str | None) -> Path:
        self.shared.mkdir(parents=True, exist_ok=True)
        name = f"seed-{seed}" + (f"-{profile}" if profile else "")
        done = self.shared / name
        with open(self.shared / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one worker makes it; the others wait and read it
            if not done.exists():
                making = self.shared / f"{name}.making"
                shutil.rmtree(making, ignore_errors=True)
                simulated_run(making, seed, profile)
                making.rename(done)
        return done


@contextmanager
def serving_simulator(config: SimConfig) -> Iterator[SimHandle]:
    """The simulator, served from a thread, for a test that runs `fanout run` through the command line's entry
    point in its own thread: the run's signal handling needs the main thread, and a child interpreter would
    pay two seconds of imports for the same run."""
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(running_simulator(config)) as sim:
        yield sim


def simulated_run(run_dir: Path, seed: int, profile: str | None = None) -> Path:
    """The sample snapshot through the four default models on `seed`, as a user types it; with `profile` (`demo`:
    what `make demo` runs), the simulator's faults of that profile, without its latency and with its waits shorter."""
    config = SimConfig(seed=seed, latency_scale=0.0)
    if profile is not None:
        config = SimConfig(seed=seed, profile=shorter_waits(load_profile(profile), WAITS), latency_scale=0.0)
    with serving_simulator(config) as sim:
        code = main(["run", str(SAMPLE), "--run-dir", str(run_dir), "--base-url", sim.api_base,
                     "--searxng-url", sim.searxng_url, "--allow-private-urls", "--fetch-delay", "0"])
    assert code == 0, f"the simulated run on seed {seed} exited {code}"
    return run_dir


def shorter_waits(profile: FaultProfile, share: float) -> FaultProfile:
    """`profile` with its waits (not its latency, which latency_scale sets) `share` as long (no bundled profile has a
    token bucket; one would need its rate and schedule scaled too)."""

    def model(faults: ModelFaults) -> ModelFaults:
        return dataclasses.replace(faults, stall_s=faults.stall_s * share, rate_window_s=faults.rate_window_s * share)

    return dataclasses.replace(profile, generation_delay_s=profile.generation_delay_s * share,
                               defaults=model(profile.defaults),
                               models={name: model(faults) for name, faults in profile.models.items()})
