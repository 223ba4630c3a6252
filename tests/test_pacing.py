"""The per-model limiter learns a provider's rate from its 429s (issue 17).

Everything here runs on a virtual clock: a sleep parks its task until every
task is blocked, then the clock jumps to the earliest wake-up. The runs are
deterministic, take no wall time, and their numbers are exact.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable

import anyio
import anyio.lowlevel
import pytest

from fanout.llm.limits import BACK_OFF, CAP_SPARE, MARGIN, LearnedPace, ModelLimiter
from fanout.sim.faults import ModelFaults, RpmLimiter, TokenBucket, retry_after_header

ONE_A_SECOND = ModelFaults(bucket_rpm=60)
"""The issue's server: one chat call a second per model, no burst, Retry-After: 1."""


class VirtualClock:
    """A clock and a sleep for anyio tasks: time moves only when every task waits on it."""

    def __init__(self) -> None:
        self.now = 0.0
        self._sleepers: list[tuple[float, int, anyio.Event]] = []
        self._order = itertools.count()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken = anyio.Event()
        heapq.heappush(self._sleepers, (self.now + max(0.0, seconds), next(self._order), woken))
        await woken.wait()

    async def drive(self) -> None:
        """Run beside the tasks under test (cancel it when they are done)."""
        while True:
            await settle()  # the check below polls every 0.1 s while any task can still run
            await anyio.wait_all_tasks_blocked()
            if self._sleepers:
                self.now, _, woken = heapq.heappop(self._sleepers)
                woken.set()


async def settle() -> None:
    """Let the tasks just woken run on to their next wait (the clock does not move meanwhile)."""
    for _ in range(10):
        await anyio.lowlevel.checkpoint()


async def run_callers(clock: VirtualClock, work) -> None:
    async with anyio.create_task_group() as driver:
        driver.start_soon(clock.drive)
        await work()
        driver.cancel_scope.cancel()


class Server:
    """The simulator's token bucket, or its sliding window, behind a limiter, as ChatClient drives it."""

    def __init__(self, clock: VirtualClock, limiter: ModelLimiter, faults: ModelFaults = ONE_A_SECOND, *,
                 latency_s: float = 0.0, trip_s: Callable[[int], float] = lambda n: 0.0) -> None:
        self.clock, self.limiter, self.faults = clock, limiter, faults
        self.latency_s = latency_s
        """How long an admitted call takes to answer (a refusal comes back at once)."""
        self.trip_s = trip_s
        """Seconds from the n-th request's send to its arrival at the bucket (0 for the first request)."""
        self.bucket = TokenBucket(clock)
        self.window = RpmLimiter(clock)
        self.admitted: list[float] = []
        self.refused: list[float] = []
        self._sent = itertools.count()

    async def call(self) -> None:
        """One chat call to success; each refusal is retried after its Retry-After, as the retry policy would."""
        while True:
            ticket = await self.limiter.acquire()
            if trip := self.trip_s(next(self._sent)):
                await self.clock.sleep(trip)
            wait_s = self.window.admit("m", self.faults.rpm, self.faults.rate_window_s) or self.bucket.admit("m", self.faults)
            if wait_s is None:
                self.admitted.append(ticket.sent_at)
                if self.latency_s:
                    await self.clock.sleep(self.latency_s)
                return
            self.refused.append(ticket.sent_at)
            retry_after = float(retry_after_header(wait_s))
            self.limiter.rate_limited(retry_after, ticket)
            await self.clock.sleep(retry_after)

    async def verdicts(self, callers: int, calls: int, think_s: float) -> None:
        """`callers` verdicts at once, each `calls` chat calls `think_s` apart (the tools' time)."""

        async def verdict() -> None:
            for _ in range(calls):
                await self.call()
                await self.clock.sleep(think_s)

        async with anyio.create_task_group() as tg:
            for _ in range(callers):
                tg.start_soon(verdict)


# --- the controller alone ---------------------------------------------------------------------


def refuse(pace: LearnedPace, *, sent_at: float, now: float, wait_s: float) -> None:
    """A request sent at `sent_at` refused at `now`, the provider naming `wait_s`."""
    pace.sent(sent_at)
    pace.refused(sent_at, now, wait_s)


def first_refusal(pace: LearnedPace, *, sent_at: float, now: float, wait_s: float) -> None:
    """The first 429, and its wait running out (when the first estimate is made)."""
    refuse(pace, sent_at=sent_at, now=now, wait_s=wait_s)
    pace.rate(now + wait_s)


def held_at_one_a_second() -> LearnedPace:
    """One request admitted, then one refused at once naming 1 s: held at 0.98 a second, the gate open at 1.0."""
    pace = LearnedPace()
    pace.sent(0.0)
    first_refusal(pace, sent_at=0.0, now=0.0, wait_s=1.0)
    return pace


def test_the_first_refusal_paces_at_what_was_admitted_over_the_span_plus_the_wait_named():
    pace = LearnedPace()
    for i in range(25):  # a sliding window of 25 per 10 s, spent in the first 0.24 s
        pace.sent(i * 0.01)
    refuse(pace, sent_at=0.25, now=0.25, wait_s=10.0)
    assert pace.rate(10.0) is None  # the wait named is not over: the gate holds everything back meanwhile
    assert pace.rate(10.25) == pytest.approx(25 / 10.25 * (1 - MARGIN))


def test_requests_still_being_answered_when_the_first_429_comes_back_count_as_admitted():
    pace = LearnedPace()
    pace.sent(0.0)  # admitted, its answer still being written when the 429 below comes back
    refuse(pace, sent_at=0.004, now=0.006, wait_s=1.0)
    assert pace.rate(1.006) == pytest.approx(1 / 1.006 * (1 - MARGIN))


def test_requests_refused_with_the_first_one_do_not_count_as_admitted():
    pace = LearnedPace()
    pace.sent(0.0)  # admitted
    pace.sent(0.001)  # refused: its 429 comes back after the first one's
    refuse(pace, sent_at=0.002, now=0.004, wait_s=1.0)
    pace.refused(0.001, 0.005, 1.0)
    assert pace.rate(1.004) == pytest.approx(1 / 1.004 * (1 - MARGIN))


def test_with_the_users_cap_the_first_refusal_holds_the_cap_less_the_margin():
    pace = LearnedPace(ceiling=1.0 * (1 - MARGIN))  # told 60 a minute
    pace.sent(0.0)  # one admitted, then one sent a second later refused: a request early
    first_refusal(pace, sent_at=1.0, now=1.004, wait_s=1.0)
    assert pace.held == pytest.approx(0.98)  # not 1 / 2.004: the cap is the limit the user knows
    assert pace.rate(100.0) == pytest.approx(0.98)  # and no probe goes past it


def test_a_refusal_with_nothing_admitted_lately_sets_no_pace():
    pace = LearnedPace()
    pace.sent(0.0)
    refuse(pace, sent_at=40.0, now=40.0, wait_s=1.0)  # the one admission is older than the 30 s counted
    assert (pace.held, pace.rate(41.0)) == (None, None)


def test_the_first_estimate_is_held_five_seconds_from_the_gate_opening_then_probed_along_a_cubic():
    """The first estimate is rough (a Retry-After in whole seconds makes it low), so its hold is short."""
    pace = LearnedPace()
    pace.sent(0.0)
    refuse(pace, sent_at=0.5, now=0.5, wait_s=1.5)  # one admitted in 0.5 s, then 1.5 s of wait: 0.5 a second
    held, gate = 0.5 * (1 - MARGIN), 2.0
    assert [pace.rate(gate), pace.rate(gate + 5)] == [held, held]
    probe = 4 / held  # 8 s or 4 requests (8.2 s): the longer
    assert pace.rate(gate + 5 + probe / 2) == pytest.approx(held * 1.125)
    assert pace.rate(gate + 5 + probe) == pytest.approx(held * 2)


def test_a_long_retry_after_is_not_counted_in_the_hold():
    """A window of 60 a minute spent in 18 s names 42 s: the hold starts when the gate opens, not at the 429."""
    pace = LearnedPace()
    for i in range(60):
        pace.sent(i * 0.3)
    first_refusal(pace, sent_at=18.0, now=18.0, wait_s=42.0)  # 60 in 60 s: 1 a second
    assert [pace.rate(60.0 + 4.9), pace.rate(60.0 + 5 + 4)] == [pytest.approx(0.98), pytest.approx(0.98 * 1.125)]


def test_a_refusal_while_probing_holds_the_last_rate_that_was_admitted():
    pace = held_at_one_a_second()  # 1 a second, held at 0.98 for 5 s from 1.0
    pace.sent(9.05)
    pace.sent(10.0)  # halfway up the probe, where the pace is 0.98 x 1.125: admitted 0.95 s apart
    refuse(pace, sent_at=10.9, now=10.9, wait_s=1.0)  # then one 0.9 s on, refused
    assert pace.held == pytest.approx(1 / 0.95 * (1 - MARGIN))  # the gap admitted, below the probe's rate then
    pace.sent(99.5)
    pace.sent(100.0)  # far up the next probe, 2 a second admitted
    refuse(pace, sent_at=100.5, now=100.5, wait_s=1.0)
    assert pace.held == pytest.approx(2 * (1 - MARGIN))


def test_after_a_burst_a_probe_is_measured_over_as_many_requests_as_the_provider_let_through_at_once():
    """A sliding window of 10 per 10 s lets a probe's quicker requests through until it is full: the last gap
    admitted (0.5 s) says nothing about its rate, the last ten intervals admitted (10.5 s) do."""
    pace = LearnedPace()
    for i in range(10):
        pace.sent(i * 0.01)  # ten let through at once, then the window is full
    first_refusal(pace, sent_at=0.1, now=0.1, wait_s=20.0)  # 10 in 20.1 s: held at 0.49 a second
    for t in [30.0 + i * 1.1 for i in range(10)] + [40.5]:
        pace.sent(t)  # 1.1 s apart, then 0.6 s as the probe climbs: each with at most 10 in 10 s
    refuse(pace, sent_at=41.0, now=41.0, wait_s=1.0)  # the eleventh within 10 s
    assert pace.held == pytest.approx(10 / 10.5 * (1 - MARGIN / 10))  # the margin over ten requests, a tenth


def test_a_burst_sent_at_under_twice_the_rate_estimated_is_still_taken_for_one():
    """Ten admitted in 4.5 s, then 4 s named: 1.11 a second estimated, but since a Retry-After in whole
    seconds may be a second long, as fast as 1.25 a second, and ten in 4.5 s are 3.75 beyond that."""
    pace = LearnedPace()
    for i in range(10):
        pace.sent(i * 0.5)
    first_refusal(pace, sent_at=5.0, now=5.0, wait_s=4.0)
    for t in [20.0 + i * 0.85 for i in range(10)] + [28.15]:
        pace.sent(t)
    refuse(pace, sent_at=28.5, now=28.5, wait_s=1.0)
    assert pace.held == pytest.approx(10 / 8.15 * (1 - MARGIN / 10))  # over ten intervals, not the last gap


def test_requests_paced_below_a_limit_with_no_burst_are_not_taken_for_a_burst():
    """9 a second against 10 a second: the Retry-After rounded up makes the estimate 8.6, not 9; a probe is
    still measured by its last gap."""
    pace = LearnedPace()
    for i in range(180):
        pace.sent(i / 9)
    first_refusal(pace, sent_at=20.0, now=20.0, wait_s=1.0)
    pace.sent(30.0)
    pace.sent(30.1)  # 10 a second admitted
    refuse(pace, sent_at=30.19, now=30.19, wait_s=1.0)
    assert pace.held == pytest.approx(10 * (1 - MARGIN))


def paced(pace: LearnedPace, start: float, end: float, rate: float) -> float:
    """Requests sent at `rate` from `start` while before `end`; the time the next one would go."""
    t = start
    while t < end:
        pace.sent(t)
        t += 1 / rate
    return t


def test_each_probe_that_finds_the_limit_where_it_was_held_doubles_the_next_hold_up_to_a_minute():
    pace = held_at_one_a_second()
    gate = 1.0
    for hold in (5.0, 40.0, 60.0, 60.0):  # the first estimate's short hold, then 20 s doubled
        assert (pace.rate(gate + hold), pace.rate(gate + hold + 4)) == (pytest.approx(0.98), pytest.approx(0.98 * 1.125))
        refused_at = paced(pace, gate, gate + hold + 3, 0.98) - 0.03  # the probe's first request, 1.01 a second
        refuse(pace, sent_at=refused_at, now=refused_at, wait_s=1.0)
        gate = refused_at + 1.0
        assert pace.held == pytest.approx(0.98)  # found where it was held


def test_after_the_limit_fell_the_rate_held_before_is_sought_again_within_seconds_for_two_minutes():
    pace = held_at_one_a_second()
    refuse(pace, sent_at=5.0, now=5.0, wait_s=1.0)  # at the held rate, little admitted lately: the limit fell
    fallen, back = 0.98 * BACK_OFF, 0.98 * (1 - MARGIN)
    assert pace.rate(16.0) == pytest.approx(fallen)  # held for 10 s from the gate opening, not 20
    # then up to the old rate quickly, and slowly near it (the probe spans 8 s): seven eighths of the way at 4 s
    assert [pace.rate(16.0 + t) for t in (4.0, 8.0)] == [pytest.approx(fallen + (back - fallen) * 7 / 8),
                                                         pytest.approx(back)]
    # two minutes on, a probe refused at 0.87 a second, below the old rate: the next hold is 20 s again
    pace.sent(128.75)
    pace.sent(130.0)
    refuse(pace, sent_at=131.15, now=131.15, wait_s=1.0)
    assert pace.held == pytest.approx(0.8 * (1 - MARGIN))
    assert pace.rate(132.15 + 19.9) == pytest.approx(0.8 * (1 - MARGIN))


def test_a_probe_goes_no_further_than_eight_times_the_held_rate():
    pace = held_at_one_a_second()
    assert pace.rate(3600.0) == pytest.approx(0.98 * 8)  # an hour idle: not millions a second


def test_a_refusal_while_probing_never_lowers_the_held_rate():
    pace = held_at_one_a_second()
    refuse(pace, sent_at=21.0, now=21.0, wait_s=1.0)  # probing (the first hold is 5 s), nothing admitted since
    assert pace.held == pytest.approx(0.98)


def test_a_single_early_request_refused_at_the_held_rate_costs_only_the_margin():
    pace = held_at_one_a_second()  # held at 0.98 a second from 1.0
    for i in range(4):
        pace.sent(1.0 + i / 0.98)  # admitted at the held pace
    refuse(pace, sent_at=5.0, now=5.0, wait_s=1.0)  # then one that reached the provider early
    assert pace.held == pytest.approx(0.98 * (1 - MARGIN))


def test_a_refusal_at_the_held_rate_with_few_admitted_lately_cuts_the_pace_by_a_quarter_at_most():
    pace = held_at_one_a_second()
    refuse(pace, sent_at=5.0, now=5.0, wait_s=2.0)
    assert pace.held == pytest.approx(0.98 * BACK_OFF)


def test_a_refusal_of_a_request_sent_before_the_last_cut_changes_nothing():
    pace = held_at_one_a_second()
    refuse(pace, sent_at=5.0, now=5.0, wait_s=1.0)  # the limit fell: cut by a quarter
    pace.refused(4.9, 5.1, 1.0)  # already in flight when that refusal came back: news already acted on
    assert pace.held == pytest.approx(0.98 * BACK_OFF)


# --- the limiter on a virtual clock ------------------------------------------------------------


async def test_after_a_429_waiting_requests_are_released_one_by_one_at_the_learned_pace():
    clock = VirtualClock()
    limiter = ModelLimiter(clock=clock, sleep=clock.sleep)
    sent: list[float] = []

    async def waiter() -> None:
        sent.append((await limiter.acquire()).sent_at)

    async def work() -> None:
        await limiter.acquire()  # t=0: admitted
        limiter.rate_limited(1.0, await limiter.acquire())  # t=0: refused, Retry-After 1
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(waiter)

    await run_callers(clock, work)
    interval = 1 / (1 / 1.0 * (1 - MARGIN))  # one admitted in 0 s, then 1 s of wait: 1 a second, less the margin
    assert sent == pytest.approx([(i + 1) * interval for i in range(4)])  # paced from the refused request on


async def test_a_cancelled_waiter_gives_its_turn_to_the_next():
    clock = VirtualClock()
    limiter = ModelLimiter(clock=clock, sleep=clock.sleep)
    sent: list[float] = []

    async def work() -> None:
        await limiter.acquire()
        limiter.rate_limited(5.0, await limiter.acquire())
        async with anyio.create_task_group() as tg:
            with anyio.move_on_after(0):  # cancelled while it waits at the gate
                await limiter.acquire()
            tg.start_soon(lambda: _append(sent, limiter))

    await run_callers(clock, work)
    assert sent == [pytest.approx(5.0 / (1 - MARGIN))]  # the gate's 5 s, and the pace learned: 1 per 5 s


async def _append(sent: list[float], limiter: ModelLimiter) -> None:
    sent.append((await limiter.acquire()).sent_at)


async def test_the_users_cap_stays_a_hard_bound_above_a_learned_rate():
    clock = VirtualClock()
    limiter = ModelLimiter(30, clock=clock, sleep=clock.sleep)  # one every 2 s
    server = Server(clock, limiter, ModelFaults(bucket_rpm=120))  # the provider allows 2 a second
    await run_callers(clock, lambda: server.verdicts(callers=4, calls=10, think_s=0.0))
    gaps = {round(b - a, 6) for a, b in itertools.pairwise(server.admitted)}
    assert (gaps, server.refused) == ({round(2.0 / (1 - CAP_SPARE), 6)}, [])  # 2.01 s: never sooner than 2 s


async def test_the_learned_rate_shows_only_while_requests_wait_on_it():
    clock = VirtualClock()
    limiter = ModelLimiter(clock=clock, sleep=clock.sleep)
    shown: list[float | None] = []

    async def work() -> None:
        await limiter.acquire()
        limiter.rate_limited(1.0, await limiter.acquire())
        await limiter.acquire()  # through the gate a second later, when the pace is learned
        shown.append(limiter.held_back_rpm())  # learned, but nobody waits
        async with anyio.create_task_group() as tg:
            tg.start_soon(limiter.acquire)
            await settle()
            shown.append(limiter.held_back_rpm())

    await run_callers(clock, work)
    assert shown == [None, pytest.approx(60 * (1 - MARGIN))]


# --- closed loop against the simulator's token bucket --------------------------------------------


async def test_the_issues_server_one_a_second_no_burst_is_learned_with_few_refusals():
    """4 verdicts of 40 calls at once against one admitted call a second: 160 calls, ideally 159 s.

    An admitted call is answered 0.2 s later, a refusal at once (the bench's
    latency). Before the learned pace the gate reopened for every waiter at
    once: about one refusal per successful call. Then, while the first
    estimate counted only answers already back, it saw one request in the
    second before the 429 and held half the limit for 20 s: 0.85 of ideal.
    Then it probed every 23 s however often the probe found the limit where
    it was held: 0.94 of ideal, 8 refusals. Now the hold doubles each time.
    """
    clock = VirtualClock()
    server = Server(clock, ModelLimiter(clock=clock, sleep=clock.sleep), latency_s=0.2)
    await run_callers(clock, lambda: server.verdicts(callers=4, calls=40, think_s=1.0))
    assert len(server.admitted) == 160
    ideal = 159.0
    # goodput 0.96 of ideal, 4 refusals for 160 calls (2.5 %): the first, then probes after holds of 5, 40, 60 s
    assert (round(ideal / server.admitted[-1], 2), len(server.refused)) == (0.96, 4)


async def test_a_sliding_window_is_learned_with_few_refusals():
    """4 verdicts of 40 calls against 10 calls per 10 s: 160 calls, ideally 159 s.

    The window lets the probe's quicker requests through until it is full,
    so the last gap admitted overstated its rate: the pace was set above
    the limit and cut 2 % at a time, refusal after refusal (0.95 of ideal,
    13 refusals). Measured over ten requests, the rate admitted is the limit.
    """
    clock = VirtualClock()
    window = ModelFaults(rpm=10, rate_window_s=10.0)
    server = Server(clock, ModelLimiter(clock=clock, sleep=clock.sleep), window, latency_s=0.2)
    await run_callers(clock, lambda: server.verdicts(callers=4, calls=40, think_s=1.0))
    assert len(server.admitted) == 160
    assert (round(159.0 / server.admitted[-1], 2), len(server.refused)) == (0.97, 5)


async def test_told_the_buckets_own_rate_requests_that_arrive_unevenly_meet_no_refusal():
    """--rpm 60 against a bucket of 60 a minute, every other request reaching it 5 ms after it was sent.

    Paced at exactly the cap, a request that arrives 5 ms sooner after the
    one before it was refused (0.97 of ideal, one refusal). Paced CAP_SPARE
    below it, 5 ms a second, none is.
    """
    clock = VirtualClock()
    limiter = ModelLimiter(60, clock=clock, sleep=clock.sleep)
    server = Server(clock, limiter, latency_s=0.2, trip_s=lambda n: 0.005 * (n % 2))
    await run_callers(clock, lambda: server.verdicts(callers=4, calls=40, think_s=1.0))
    gaps = {round(b - a, 4) for a, b in itertools.pairwise(server.admitted[3:])}
    assert (round(159.0 / server.admitted[-1], 2), server.refused, gaps) == (1.0, [], {round(1 / (1 - CAP_SPARE), 4)})


async def test_a_limit_that_halves_is_followed_down_and_back_up():
    """60 a minute, 30 a minute from the 60th second to the 120th, then 60 again."""
    clock = VirtualClock()
    halving = ModelFaults(bucket_rpm=60, bucket_schedule=((60.0, 30.0), (120.0, 60.0)))
    server = Server(clock, ModelLimiter(clock=clock, sleep=clock.sleep), halving)
    await run_callers(clock, lambda: server.verdicts(callers=4, calls=60, think_s=1.0))
    down = settled(server.refused, 60.0) - 60
    admitted_after = [t for t in server.admitted if t >= 120]
    up = next(b for a, b in itertools.pairwise(admitted_after) if b - a < 1 / 0.95) - 120
    # seconds to follow it down, and back up (21.49 before the fallen-from rate was sought every 10 s)
    assert (round(down, 2), round(up, 2)) == (8.03, 6.8)


def settled(refusals: list[float], change_at: float) -> float:
    """The last refusal of the run of them a change of limit sets off: the next is a probe, 10 s or more on."""
    after = [t for t in refusals if t >= change_at]
    return next((a for a, b in itertools.pairwise(after) if b - a >= 10.0), after[-1])


# --- what the user sees -----------------------------------------------------------------------


async def test_the_progress_line_names_each_model_held_back_by_a_learned_limit_and_its_rate():
    from fanout.engine.progress import Progress, Tally

    clock = VirtualClock()
    limiters = {"m/slow": ModelLimiter(clock=clock, sleep=clock.sleep), "m/free": ModelLimiter(clock=clock, sleep=clock.sleep)}
    progress = Progress(Tally(total=4, models=list(limiters)), held_back=lambda: {
        name: rpm for name, limiter in limiters.items() if (rpm := limiter.held_back_rpm()) is not None})
    slow = limiters["m/slow"]
    lines: list[str] = []

    async def work() -> None:
        lines.append(progress.line())
        await slow.acquire()
        slow.rate_limited(2.0, await slow.acquire())  # one admitted, then 2 s named: 0.5 a second
        await slow.acquire()  # through the gate
        async with anyio.create_task_group() as tg:
            tg.start_soon(slow.acquire)
            await settle()
            lines.append(progress.line())

    await run_callers(clock, work)
    assert "held back" not in lines[0]
    assert lines[1].endswith(" | held back by learned limits: m/slow 29/min")  # 30 a minute less the margin
