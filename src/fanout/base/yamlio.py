"""Plain data, fast: dataclasses to dicts, dicts to YAML, and libyaml when PyYAML has it.

Plain data is what a record is made of: str, int, float, bool and None, in
lists and dicts, nothing shared. The writer turns one VerdictRecord into a
dict and a YAML view per verdict, and a run reads a snapshot of thousands of
edits, so each of those has a fast path for plain data beside the general
one (dataclasses.asdict, PyYAML's representer, PyYAML's composer). Every
fast path raises NotPlain for anything else, and its caller then takes the
general path, which gives the same result: speed never changes an output.

This module imports nothing of fanout, so every layer may use it.
"""

from __future__ import annotations

import dataclasses
import io
from typing import Any, NamedTuple

import yaml

SAFE_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter when PyYAML has it: ten times faster on a verdict record (2 ms instead of 20),
the same data when read back; only the folding of long quoted strings differs."""
SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader when PyYAML has it, for files fanout wrote or ships (no bounds: files from elsewhere are read through fanout.base.reading)."""
EVENT_PARSER: Any = getattr(getattr(yaml, "cyaml", None), "CParser", None)
"""libyaml's parser, about seven times faster than PyYAML's own; None when PyYAML was built without it.
(PyYAML's CSafeLoader is built on it; the type stubs do not re-export it.)"""

_TAG = "tag:yaml.org,2002:"
_STR_TAG = _TAG + "str"
_INF = float("inf")
_ATOMIC = (str, int, float, bool, type(None))


class NotPlain(Exception):
    """Data a fast path leaves to the general one: another type, a shared object, a shape it does not read."""


# --- dataclasses to dicts --------------------------------------------------------------------------


def plain_asdict(instance: Any) -> dict[str, Any]:
    """dataclasses.asdict(instance), without its deepcopy call on every leaf; NotPlain past plain data.

    Atoms are returned as they are (deepcopy returns them unchanged), lists
    and dicts are copied, dataclasses become dicts; any other type (a tuple,
    a datetime) raises NotPlain, for the caller to use asdict itself.
    """
    return {name: _plain(getattr(instance, name)) for name in _field_names(type(instance))}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}
"""Each dataclass's field names, found once per type rather than once per record."""


def _field_names(kind: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def _plain(value: Any) -> Any:
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is list:
        return [_plain(v) for v in value]
    if kind is dict:
        return {_plain(k): _plain(v) for k, v in value.items()}
    if kind in _FIELD_NAMES or dataclasses.is_dataclass(kind):
        return plain_asdict(value)
    raise NotPlain


# --- dicts to YAML ---------------------------------------------------------------------------------


def dump_yaml(data: Any) -> str:
    """Block-style YAML, keys in their order: what yaml.dump with SAFE_DUMPER writes, byte for byte.

    Plain data is turned into libyaml's events here (fast_events), exactly
    the events PyYAML's representer and serializer would hand it but without
    their generic dispatch and per-node resolver calls, which were most of the
    cost of writing a verdict view; anything else goes through PyYAML.
    """
    try:
        events = fast_events(data)
    except NotPlain:
        return yaml.dump(data, Dumper=SAFE_DUMPER, default_flow_style=False, allow_unicode=True, sort_keys=False,
                         width=100)
    return _emit(events).getvalue()  # type: ignore[no-any-return]


def dump_yaml_utf8(data: Any) -> bytes:
    """dump_yaml(data) encoded as UTF-8, made as bytes by libyaml (no decoding into text and encoding back):
    what a file of the run is written from."""
    try:
        events = fast_events(data, encoding="utf-8")
    except NotPlain:
        return dump_yaml(data).encode("utf-8")
    return _emit(events, "utf-8").getvalue()  # type: ignore[no-any-return]


def _emit(events: list[yaml.Event], encoding: str | None = None) -> Any:
    """What yaml.emit does: the events through SAFE_DUMPER's emitter with dump_yaml's settings, into a
    StringIO, or a BytesIO for an encoding (which the stream's first event names too, as yaml.dump's does)."""
    stream = io.StringIO() if encoding is None else io.BytesIO()
    dumper = SAFE_DUMPER(stream, allow_unicode=True, width=100, encoding=encoding)
    try:
        for event in events:
            dumper.emit(event)
    finally:
        dumper.dispose()
    return stream


def fast_events(data: Any, encoding: str | None = None) -> list[yaml.Event]:
    """The stream of events PyYAML's serializer emits for plain data under SAFE_DUMPER; NotPlain past it.

    Tags and implicit flags are those the serializer gets from its resolver:
    a scalar's plain form is implicit when the implicit resolvers read it back
    as its own tag (a str "null" or "1.5" is quoted), its quoted form when the
    tag is str. Path resolvers would make them depend on the place in the
    document, so a dumper with any is left to PyYAML (NotPlain).
    """
    if SAFE_DUMPER.yaml_path_resolvers:
        raise NotPlain
    events: list[yaml.Event] = [yaml.StreamStartEvent(encoding=encoding), yaml.DocumentStartEvent(explicit=False)]
    _Events(events, _implicit_table()).add(data)
    events += [yaml.DocumentEndEvent(explicit=False), yaml.StreamEndEvent()]
    return events


class _Resolvers(NamedTuple):
    """SAFE_DUMPER's implicit resolvers by first character, each list followed by the wildcard ones, as
    BaseResolver.resolve tries them; the wildcard ones alone, for any other first character; and the key
    events made under them."""

    by_first: dict[str, list[tuple[str, Any]]]
    wildcard: list[tuple[str, Any]]
    keys: dict[str, yaml.Event]


_RESOLVERS: list[tuple[Any, _Resolvers]] = []
_KEY_EVENTS = 4096
"""At most this many mapping keys' events are kept (a record has a few dozen distinct keys) ..."""
_KEY_CHARS = 64
"""... each at most this long."""


def _implicit_table() -> _Resolvers:
    """The table for SAFE_DUMPER's resolvers as they are now: made once, and again should they change."""
    resolvers = SAFE_DUMPER.yaml_implicit_resolvers
    shape = tuple((key, tuple(found)) for key, found in resolvers.items())
    if _RESOLVERS and _RESOLVERS[0][0] == shape:
        return _RESOLVERS[0][1]
    wildcard = list(resolvers.get(None, []))
    table = _Resolvers({key: list(found) + wildcard for key, found in resolvers.items() if key is not None},
                       wildcard, {})
    _RESOLVERS[:] = [(shape, table)]
    return table


class _Events:
    """Appends the events of one plain value, containers once each (a container met again would be an anchor
    and an alias, which only PyYAML's own path writes: NotPlain)."""

    def __init__(self, events: list[yaml.Event], table: _Resolvers) -> None:
        self.events = events
        self.by_first, self.wildcard, keys = table
        self.containers: set[int] = set()
        self.keys = keys

    def add(self, data: Any) -> None:
        kind = type(data)
        if kind is str:
            self.scalar(_STR_TAG, data)
        elif kind is dict or kind is list:
            self.container(data)
        elif data is None:
            self.scalar(_TAG + "null", "null")
        elif kind is bool:
            self.scalar(_TAG + "bool", "true" if data else "false")
        elif kind is int:
            self.scalar(_TAG + "int", str(data))
        elif kind is float:
            self.scalar(_TAG + "float", _float_text(data))
        else:
            raise NotPlain

    def scalar(self, tag: str, value: str) -> None:
        """As the serializer's ScalarEvent: implicit in plain style when the resolvers give the tag back."""
        plain = _STR_TAG
        for resolved, regexp in self.by_first.get(value[:1], self.wildcard):
            if regexp.match(value):
                plain = resolved
                break
        self.events.append(yaml.ScalarEvent(None, tag, (plain == tag, tag == _STR_TAG), value))

    def key(self, key: Any) -> None:
        """A mapping's key: a str key's event is made once and reused (the emitter only reads an event, and a
        record's keys are few: `turn`, `tool`, `result` again and again)."""
        if type(key) is not str:
            self.add(key)
            return
        known = self.keys.get(key)
        if known is None:
            self.scalar(_STR_TAG, key)
            if len(key) <= _KEY_CHARS and len(self.keys) < _KEY_EVENTS:
                self.keys[key] = self.events[-1]
        else:
            self.events.append(known)

    def container(self, data: dict[Any, Any] | list[Any]) -> None:
        if id(data) in self.containers:
            raise NotPlain
        self.containers.add(id(data))
        add = self.add
        if type(data) is dict:
            self.events.append(yaml.MappingStartEvent(None, _TAG + "map", True, flow_style=False))
            for key, value in data.items():
                self.key(key)
                add(value)
            self.events.append(yaml.MappingEndEvent())
        else:
            self.events.append(yaml.SequenceStartEvent(None, _TAG + "seq", True, flow_style=False))
            for value in data:
                add(value)
            self.events.append(yaml.SequenceEndEvent())


def _float_text(value: float) -> str:
    """As SafeRepresenter.represent_float writes it."""
    if value != value:
        return ".nan"
    if value == _INF:
        return ".inf"
    if value == -_INF:
        return "-.inf"
    text = repr(value).lower()
    if "." not in text and "e" in text:
        text = text.replace("e", ".0e", 1)
    return text
