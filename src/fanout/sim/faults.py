"""The fault profile: which failures the simulator injects, how often, how slowly.

A profile is data (a YAML file or flags), so a demo, a benchmark and a test can
each ask for their own mix without code. Rates are probabilities per request,
drawn from seeded dice keyed by (model, rcid, turn, attempt): a retry of the
same request is a new attempt and gets a fresh draw, so a 502 does not repeat
forever, yet the same seed replays the same faults.

    defaults:                 # every model, unless its own section says otherwise
      latency: {median_s: 0.8, p95_s: 2.5}
      http_502: 0.02
    models:
      allenai/olmo-3.1-32b-instruct: {rpm: 60, response_format_unsupported: true}
      nvidia/nemotron-3-nano-30b-a3b: {rpm: 15, rate_window_s: 10, temperature_noise: 0}   # 15 per 10 s; no sampling noise
      deepseek/deepseek-v3.2: {bucket_rpm: 60, bucket_burst: 1}      # a token bucket: one a second, no burst
      anthropic/claude-haiku-4.5: {bucket_rpm: 60, bucket_schedule: [[60, 30], [120, 60]]}  # halved for a minute
    search: {unresponsive: 0.1, latency: {median_s: 0.05, p95_s: 0.2}}
    stream: {drop_every: 200, stall_every: 500, retention_events: 1000, revertrisk_http_503: 0.05}
"""

from __future__ import annotations

import collections
import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fanout.base.reading import SIDE_FILE_BOUNDS, OverLimit, load_yaml, parse_yaml
from fanout.base.validate import package_data
from fanout.base.errors import ConfigError
from fanout.sim.models import SimModel

PROFILE_DIR = "sim/profiles"

# Per-request probabilities a model section may set, in the order they are drawn.
RATE_KINDS: tuple[str, ...] = (
    "http_502",
    "http_503",
    "stall",
    "error_in_200",
    "malformed_args",
    "unknown_tool",
    "invalid_json",
    "length",
)


@dataclass(frozen=True)
class Latency:
    """A lognormal latency, given as its median and 95th percentile in seconds."""

    median_s: float = 0.0
    p95_s: float = 0.0


@dataclass(frozen=True)
class ModelFaults:
    """What one model does wrong, and how slowly it answers."""

    latency: Latency = Latency()
    rpm: int | None = None
    """Requests allowed per sliding window (60 s: per minute) before 429; None = unlimited."""
    rate_window_s: float = 60.0
    """The window rpm counts over; OpenRouter's own limits also use short (10 s) windows."""
    bucket_rpm: float | None = None
    """A token bucket beside the window: this many tokens a minute, one per request; None = no bucket."""
    bucket_burst: int = 1
    """Tokens the bucket holds at most (and holds at the start): the requests that may go at once."""
    bucket_schedule: tuple[tuple[float, float], ...] = ()
    """(seconds after the model's first request, new bucket_rpm) pairs: a limit that changes during a run."""
    stall_s: float = 30.0
    """How long a stall hangs before answering (not scaled by latency_scale)."""
    response_format_unsupported: bool = False
    """Answer 400 to any request that sends response_format, as some providers do."""
    http_502: float = 0.0
    http_503: float = 0.0
    stall: float = 0.0
    error_in_200: float = 0.0
    malformed_args: float = 0.0
    unknown_tool: float = 0.0
    invalid_json: float = 0.0
    length: float = 0.0
    label_position_bias: float | None = None
    """Replaces the model's own (fanout.sim.models.SimModel) when set: a benchmark plants or removes it."""
    temperature_noise: float | None = None
    """Replaces the model's own when set."""

    def habits(self, model: SimModel) -> SimModel:
        """The model with the habits this section sets in place of its own."""
        if self.label_position_bias is not None:
            model = dataclasses.replace(model, label_position_bias=self.label_position_bias)
        if self.temperature_noise is not None:
            model = dataclasses.replace(model, temperature_noise=self.temperature_noise)
        return model


@dataclass(frozen=True)
class SearchFaults:
    """How the SearXNG stand-in misbehaves."""

    latency: Latency = Latency()
    unresponsive: float = 0.0
    """Chance that a search lists an engine in unresponsive_engines (and loses its results)."""
    http_429: float = 0.0
    """Chance of SearXNG's limiter answering 429 Too Many Requests."""


@dataclass(frozen=True)
class StreamFaults:
    """How the live stream (EventStreams' stand-in) and the revert-risk stand-in misbehave."""

    drop_every: int = 0
    """End each stream connection after this many events (0: never)."""
    stall_every: int = 0
    """After this many events a connection goes silent but for keep-alive comments (0: never)."""
    keepalive_s: float = 1.0
    """How often a stalled connection sends a `:` comment line (0: none at all)."""
    retention_events: int = 0
    """Events per topic the stream can still replay; a resume from further back starts at the oldest (0: all)."""
    revertrisk_http_503: float = 0.0
    """Chance that a revert-risk request is answered 503."""
    revertrisk_latency: Latency = Latency()


@dataclass(frozen=True)
class FaultProfile:
    name: str = "clean"
    latency_scale: float = 1.0
    """Multiplies every latency (not stalls): benchmarks shrink it, demos keep 1."""
    generation_delay_s: float = 0.0
    """How long /api/v1/generation answers 404 after a completion."""
    defaults: ModelFaults = ModelFaults()
    models: Mapping[str, ModelFaults] = field(default_factory=dict)
    """Sections keyed by model id or canonical slug, merged over `defaults`."""
    search: SearchFaults = SearchFaults()
    stream: StreamFaults = StreamFaults()

    def for_model(self, *names: str) -> ModelFaults:
        for name in names:
            if name in self.models:
                return self.models[name]
        return self.defaults


def load_profile(spec: str | Path) -> FaultProfile:
    """A profile by bundled name (`demo`, `clean`, `default`) or by file path."""
    path = Path(spec)
    if not path.suffix and not path.is_file():  # a directory named like a profile (./bench) is not one
        path = package_data(f"{PROFILE_DIR}/{spec}.yaml")
        if not path.exists():
            names = sorted(p.stem for p in package_data(PROFILE_DIR).glob("*.yaml"))
            raise ConfigError(f"no fault profile named {spec!r}; bundled profiles: {', '.join(names)}")
    data = load_yaml(path, f"--profile {path}", fix="name a bundled profile or a profile YAML file") or {}
    return profile_from_dict(data, default_name=path.stem)


def profile_from_dict(data: Mapping[str, Any], *, default_name: str = "custom") -> FaultProfile:
    data = _mapping(data, "profile")
    _reject_unknown(data, {"name", "latency_scale", "generation_delay_s", "defaults", "models", "search", "stream"},
                    "profile")
    defaults = _model_faults(_mapping(data.get("defaults") or {}, "defaults"), ModelFaults(), "defaults")
    models = {
        str(name): _model_faults(_mapping(section or {}, f"models.{name}"), defaults, f"models.{name}")
        for name, section in _mapping(data.get("models") or {}, "models").items()
    }
    search = _search_faults(_mapping(data.get("search") or {}, "search"))
    stream = _stream_faults(_mapping(data.get("stream") or {}, "stream"), StreamFaults())
    return FaultProfile(
        name=str(data.get("name", default_name)),
        latency_scale=_number(data.get("latency_scale", 1.0), "latency_scale"),
        generation_delay_s=_number(data.get("generation_delay_s", 0.0), "generation_delay_s"),
        defaults=defaults,
        models=models,
        search=search,
        stream=stream,
    )


def with_overrides(profile: FaultProfile, assignments: list[str]) -> FaultProfile:
    """Apply `--fault [MODEL:]KEY=VALUE` flags; `search:` addresses the search stand-in, `stream:` the live stream."""
    for assignment in assignments:
        lhs, sep, value = assignment.partition("=")
        target, _, key = lhs.rpartition(":")
        if not sep or not key:
            raise ConfigError(f"--fault {assignment!r}: expected [MODEL:]KEY=VALUE, e.g. http_502=0.1")
        try:
            parsed = parse_yaml(value.encode(), SIDE_FILE_BOUNDS)
        except (OverLimit, yaml.YAMLError) as exc:
            raise ConfigError(f"--fault {assignment!r}: the value is not a plain YAML value ({exc})") from None
        if target == "search":
            section = _search_faults({**_search_dict(profile.search), key: parsed})
            profile = dataclasses.replace(profile, search=section)
        elif target == "stream":
            profile = dataclasses.replace(profile, stream=_stream_faults({key: parsed}, profile.stream))
        elif target:
            base = profile.models.get(target, profile.defaults)
            faults = _model_faults({key: parsed}, base, f"--fault {target}")
            profile = dataclasses.replace(profile, models={**profile.models, target: faults})
        else:
            defaults = _model_faults({key: parsed}, profile.defaults, "--fault")
            models = {n: _model_faults({key: parsed}, m, "--fault") for n, m in profile.models.items()}
            profile = dataclasses.replace(profile, defaults=defaults, models=models)
    return profile


def _model_faults(section: Mapping[str, Any], base: ModelFaults, where: str) -> ModelFaults:
    allowed = {f.name for f in dataclasses.fields(ModelFaults)}
    _reject_unknown(section, allowed, where)
    changes = {key: _model_fault(key, value, base, f"{where}.{key}") for key, value in section.items()}
    return dataclasses.replace(base, **changes)


def _model_fault(key: str, value: Any, base: ModelFaults, where: str) -> Any:
    """One model setting checked by its kind (`where` names it in the error); anything else is a rate."""
    if key == "latency":
        return _latency(value, base.latency, where)
    if key in ("rpm", "bucket_rpm", "bucket_burst", "bucket_schedule"):
        return _limit(key, value, where)
    if key == "response_format_unsupported":
        return bool(value)
    if key in ("stall_s", "rate_window_s"):
        return _number(value, where)
    if key in ("label_position_bias", "temperature_noise") and value is None:
        return None  # None keeps the model's own habit
    return _rate(value, where)


def _limit(key: str, value: Any, where: str) -> Any:
    """A rate limit's setting: None lifts rpm or the bucket; a burst is at least one request."""
    if key == "bucket_burst":
        return max(1, int(_number(value, where)))
    if key == "bucket_schedule":
        return _schedule(value, where)
    if value is None:
        return None
    return int(_number(value, where)) if key == "rpm" else _positive(value, where)


def _search_faults(section: Mapping[str, Any]) -> SearchFaults:
    _reject_unknown(section, {"latency", "unresponsive", "http_429"}, "search")
    return SearchFaults(
        latency=_latency(section.get("latency") or {}, Latency(), "search.latency"),
        unresponsive=_rate(section.get("unresponsive", 0.0), "search.unresponsive"),
        http_429=_rate(section.get("http_429", 0.0), "search.http_429"),
    )


def _stream_faults(section: Mapping[str, Any], base: StreamFaults) -> StreamFaults:
    _reject_unknown(section, {f.name for f in dataclasses.fields(StreamFaults)}, "stream")
    changes: dict[str, Any] = {}
    for key, value in section.items():
        if key in ("drop_every", "stall_every", "retention_events"):
            changes[key] = int(_number(value, f"stream.{key}"))
        elif key == "keepalive_s":
            changes[key] = _number(value, "stream.keepalive_s")
        elif key == "revertrisk_latency":
            changes[key] = _latency(value, base.revertrisk_latency, "stream.revertrisk_latency")
        else:
            changes[key] = _rate(value, f"stream.{key}")
    return dataclasses.replace(base, **changes)


def _search_dict(search: SearchFaults) -> dict[str, Any]:
    return {
        "latency": dataclasses.asdict(search.latency),
        "unresponsive": search.unresponsive,
        "http_429": search.http_429,
    }


def _latency(value: Any, base: Latency, where: str) -> Latency:
    section = _mapping(value, where)
    _reject_unknown(section, {"median_s", "p95_s"}, where)
    median = _number(section.get("median_s", base.median_s), f"{where}.median_s")
    p95 = _number(section.get("p95_s", max(base.p95_s, median)), f"{where}.p95_s")
    if p95 < median:
        raise ConfigError(f"{where}: p95_s ({p95}) is below median_s ({median})")
    return Latency(median, p95)


def _schedule(value: Any, where: str) -> tuple[tuple[float, float], ...]:
    if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 for p in value):
        raise ConfigError(f"{where}: expected a list of [seconds, rpm] pairs, got {value!r}")
    steps = tuple((_number(at, where), _positive(rpm, where)) for at, rpm in value)
    if list(steps) != sorted(steps):
        raise ConfigError(f"{where}: the pairs must be in order of their seconds, got {value!r}")
    return steps


def _positive(value: Any, where: str) -> float:
    number = _number(value, where)
    if number == 0:
        raise ConfigError(f"{where}: expected a positive number, got {value!r}")
    return number


def _rate(value: Any, where: str) -> float:
    rate = _number(value, where)
    if not 0.0 <= rate <= 1.0:
        raise ConfigError(f"{where}: a rate is a probability between 0 and 1, got {value!r}")
    return rate


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ConfigError(f"{where}: expected a non-negative number, got {value!r}")
    return float(value)


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _reject_unknown(section: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(section) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(allowed))}")


class RpmLimiter:
    """A sliding window per model: the (limit+1)-th request inside it is refused.

    Only accepted requests enter the window, so a client that honours
    Retry-After gets through exactly when the oldest request ages out.
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._accepted: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)

    def forget_last(self, model: str) -> None:
        """Take back the latest request counted: another limit refused it after all."""
        self._accepted[model].pop()

    def admit(self, model: str, limit: int | None, window_s: float = 60.0) -> float | None:
        """None if the request may go ahead (and is counted), else seconds to wait."""
        if limit is None:
            return None
        now = self._clock()
        window = self._accepted[model]
        while window and window[0] <= now - window_s:
            window.popleft()
        if len(window) < limit:
            window.append(now)
            return None
        return window[0] + window_s - now


class TokenBucket:
    """A token bucket per model: tokens drip in at the rate, up to `burst`; each request takes one.

    The other way providers limit: no window to spend in a burst, just a
    steady rate, with `burst` requests allowed at once after a quiet spell.
    The rate may change during a run (a schedule keyed by the time since the
    model's first request), as a provider's does when it is busy.
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._first: dict[str, float] = {}
        self._tokens: dict[str, tuple[float, float]] = {}
        """Per model: tokens held, and the clock time they were counted."""

    def admit(self, model: str, faults: ModelFaults) -> float | None:
        """None if the request may go ahead (and takes a token), else seconds until a token is there."""
        if faults.bucket_rpm is None:
            return None
        now = self._clock()
        per_s = self._rpm(model, faults, now) / 60.0
        held, counted_at = self._tokens.get(model, (float(faults.bucket_burst), now))
        held = min(float(faults.bucket_burst), held + (now - counted_at) * per_s)
        if held >= 1.0 - 1e-9:
            self._tokens[model] = (held - 1.0, now)
            return None
        self._tokens[model] = (held, now)
        return (1.0 - held) / per_s

    def _rpm(self, model: str, faults: ModelFaults, now: float) -> float:
        since_first = now - self._first.setdefault(model, now)
        rpm = faults.bucket_rpm or 0.0
        for after_s, changed in faults.bucket_schedule:
            if since_first >= after_s:
                rpm = changed
        return rpm


def retry_after_header(wait_s: float) -> str:
    """Whole seconds, rounded up, at least 1: what HTTP's Retry-After allows."""
    return str(max(1, math.ceil(wait_s)))
