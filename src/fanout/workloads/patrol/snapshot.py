"""Load an enriched snapshot: the edits every model is asked about.

A snapshot is YAML: a mapping with an `edits:` list (a bare list is accepted
too). Each edit is a mapping:

    rcid: 2540801101              int, unique in the file (the checkpoint keys on it)
    revid: 2464599101             int
    parent_revid: 2463871150      int or null (optional)
    title: Q42                    the item's QID
    user: "81.107.44.12"          str; quote names that YAML would read as numbers
    timestamp: 2026-02-19T08:02:14Z   ISO 8601 UTC; an unquoted YAML timestamp is
                                  normalised to this string form
    tags: [mobile edit]           list of str ([] when none)
    comment: "/* wbsetclaim-update:2||1 */ [[Property:P569]]: 11 March 1852"  (optional)
    parsed_edit:
      operation: wbsetclaim-update
      property: P569              null only for edits that touch no statement
      property_label: date of birth   (label, description, alias or sitelink
      value_raw: "+1852-03-11T00:00:00Z"  edits, where property_label and
      value_label: 11 March 1852          value_raw may be null too)
      # optional: old_value_raw, old_value_label, qualifier_property,
      # qualifier_property_label, qualifier_value_raw, qualifier_value_label,
      # reference_property, reference_property_label, reference_value, language
    edit_diff: {type: value_changed, old: ..., new: ...}
    item:                         the item as of the edit's revision (after it)
      label_en: Douglas Adams     str, or null when the item has no English label
      description_en: ...         (optional)
      claims: {P31: [{value: Q5, label: human, qualifiers: {...}}], ...}
    prefetched_references: [{url, text}]   (optional)

Validation hands each edit on as a typed, immutable fanout.workloads.patrol.edit.Edit.
Bad input stops the run before any work with one message that names the file,
the edit (1-based index and rcid), the field and what to put there, because
a user fixing a 500-edit file needs to find the line, not read a traceback.
The file and its YAML are held to fanout.base.reading.SNAPSHOT_BOUNDS (size,
nesting, value length, what aliases repeat) while they are read, so a file
that would exhaust memory or never end is refused the same way.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from fanout.base.reading import (
    SNAPSHOT_BOUNDS,
    STR_TAG,
    AliasBudget,
    OverLimit,
    alias_loop,
    open_regular,
    parse_yaml,
    read_bounded,
    read_errors,
    too_deep,
    too_long,
    value_parts,
    yaml_problem,
)
from fanout.base.errors import ConfigError
from fanout.judging.policy import is_term_diff
from fanout.workloads.patrol.edit import Edit
from fanout.store.layout import WATCH_EDITS_NAME, run_file
from fanout.store.lines import ReadLines, each_record
from fanout.base.yamlio import EVENT_PARSER, NotPlain

JSON_LINES = ".jsonl"
"""A snapshot whose name ends so is read as JSON lines, one edit each (`fanout watch`'s edits file)."""
ENTITY_ID_RE = re.compile(r"[QPL][1-9][0-9]*")
PID_RE = re.compile(r"P[1-9][0-9]*")
TIMESTAMP_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")


@dataclass(frozen=True)
class Snapshot:
    """A validated snapshot; sha256 is of the file's bytes, for the run manifest."""

    path: Path
    sha256: str
    edits: list[Edit]


def load_snapshot(path: str | Path) -> Snapshot:
    """Read, parse and validate a snapshot; raise ConfigError on the first problem.

    A snapshot of the plain shape (see stream_snapshot) is built straight from
    libyaml's events, in about half the time PyYAML's composer and constructor
    take; any other is composed (_load_composed).
    """
    path = Path(path)
    raw = _read_bytes(path)
    sink = _EditList()
    if not _read_plain(path, raw, sink):
        sink.edits = _load_composed(path, raw)
    return Snapshot(path=path, sha256=hashlib.sha256(raw).hexdigest(), edits=sink.edits)


def file_sha256(path: str | Path) -> str:
    """The sha256 of a snapshot's bytes (what the manifest pins), read in chunks."""
    path = Path(path)
    digest = hashlib.sha256()
    with _open_snapshot(path) as fh, _read_errors(path):
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class EditSink(Protocol):
    """Where stream_snapshot puts validated edits; `clear` undoes the adds of an attempt it restarts."""

    def add(self, edit: Edit) -> None: ...

    def clear(self) -> None: ...


def stream_snapshot(path: str | Path, sink: EditSink) -> None:
    """Validate a snapshot into `sink` one edit at a time; raise ConfigError exactly as load_snapshot would.

    The file is read as it is parsed and libyaml's events are built into one
    edit at a time (_build_value), so only the edit in hand is in memory: a
    25 000-edit snapshot composed whole is a gigabyte of YAML nodes and Python
    objects. Anything but the plain shape (a mapping with one `edits` list, or
    a bare list, in one document), and any YAML error, is composed instead
    (_load_composed) after `sink.clear()`, so every message stays the same; so
    is the order of problems: the first invalid edit is reported only once the
    whole file has parsed, as composing (which parses first) would.
    """
    path = Path(path)
    if path.suffix == JSON_LINES:
        _read_json_lines(path, sink)
        return
    with _open_snapshot(path) as fh, _read_errors(path):
        plain = _read_plain(path, fh, sink)
    if not plain:
        sink.clear()
        for edit in _load_composed(path, _read_bytes(path)):
            sink.add(edit)


def _read_json_lines(path: Path, sink: EditSink) -> None:
    """A snapshot of JSON lines, one edit each (what `fanout watch` writes as it goes: a last line still being
    written is not read); a line that is no JSON object, or no valid edit, is a ConfigError naming it."""
    found = ReadLines(path)
    seen: dict[int, int] = {}
    for index, data in enumerate(each_record(path, run_file(WATCH_EDITS_NAME), found), start=1):  # held to its schema
        place = _EditPlace(path, index, data)
        sink.add(_validate_edit(place, data))
        _check_unique_rcid(place, seen)
    if found.skipped:
        raise ConfigError(f"snapshot {path}: {found.skipped} line(s) are not edits (a JSON object with a whole rcid and revid); give one edit per line")


def validate_edit(path: Path, index: int, data: Any) -> Edit:
    """One edit held to a snapshot's checks (fanout watch's, as it writes them); ConfigError naming the edit."""
    return _validate_edit(_EditPlace(path, index, data), data)


class _EditList:
    """The EditSink load_snapshot fills."""

    def __init__(self) -> None:
        self.edits: list[Edit] = []

    def add(self, edit: Edit) -> None:
        self.edits.append(edit)

    def clear(self) -> None:
        self.edits = []


def _read_plain(path: Path, source: bytes | BinaryIO, sink: EditSink) -> bool:
    """Validate a plain snapshot into `sink` from its events; False when it is not plain or not valid YAML."""
    try:
        problem = _stream_document(path, _StreamLoader(source), sink)
    except OverLimit as exc:
        raise ConfigError(f"snapshot {path} {exc}") from None
    except (NotPlain, yaml.YAMLError):  # a shape the streaming reader leaves to load_snapshot (and its messages)
        return False
    if problem is not None:
        raise problem
    return True


def _load_composed(path: Path, raw: bytes) -> list[Edit]:
    """Any snapshot PyYAML reads (explicit tags, merge keys...), composed whole first; YAML errors in its wording."""
    edits: list[Edit] = []
    seen: dict[int, int] = {}
    for index, data in enumerate(_edit_list(path, _parse_yaml(path, raw)), start=1):
        place = _EditPlace(path, index, data)
        edits.append(_validate_edit(place, data))
        _check_unique_rcid(place, seen)
    return edits


# --- the file ------------------------------------------------------------------------


FILE_BOUNDS = SNAPSHOT_BOUNDS._replace(special_hint="save the snapshot to a file and pass that file",
                                       size_owner="a snapshot")
"""SNAPSHOT_BOUNDS, with the snapshot's own words in the messages about the file."""


def _name(path: Path) -> str:
    return f"snapshot {path}"


def _read_errors(path: Path) -> AbstractContextManager[None]:
    """The file's own problems (missing, a directory, unreadable) as one message each (fanout.base.reading.read_errors)."""
    return read_errors(_name(path), "", missing=_MISSING.format(path=path), directory=_DIRECTORY)


_MISSING = ("snapshot file not found: {path}; pass the path of an enriched snapshot YAML "
            "(`fanout fetch-edits --enrich -o FILE` writes one)")
_DIRECTORY = "pass the snapshot YAML file inside it"


def _read_bytes(path: Path) -> bytes:
    return read_bounded(path, _name(path), FILE_BOUNDS, missing=_MISSING.format(path=path), directory=_DIRECTORY)


def _open_snapshot(path: Path) -> BinaryIO:
    """The snapshot opened for reading, once it is known to be a regular file of at most its size cap
    (fanout.base.reading.open_regular: a FIFO would block the open, /dev/zero never end)."""
    with _read_errors(path):
        return open_regular(path, _name(path), FILE_BOUNDS)


def _parse_yaml(path: Path, raw: bytes) -> Any:
    try:
        return parse_yaml(raw, SNAPSHOT_BOUNDS)
    except OverLimit as exc:
        raise ConfigError(f"snapshot {path} {exc}") from None
    except yaml.YAMLError as exc:
        raise yaml_problem(_name(path), exc) from exc


def _edit_list(path: Path, data: Any) -> list[Any]:
    if data is None:
        raise ConfigError(f"snapshot {path} is empty; it needs an `edits:` list of enriched edits")
    if isinstance(data, Mapping):
        if "edits" not in data:
            raise ConfigError(f"snapshot {path} has no `edits:` key; put the edits in a list under `edits:`")
        data = data["edits"]
    if not isinstance(data, list):
        raise ConfigError(
            f"snapshot {path}: `edits` must be a list of edits, got {_describe(data)}; "
            "write each edit as a `- rcid: ...` list item"
        )
    if not data:
        raise ConfigError(f"snapshot {path} has no edits; the `edits:` list is empty")
    return data


# --- the loaders ------------------------------------------------------------------------


class _PyStreamLoader(yaml.SafeLoader):
    """PyYAML's own events for the event reader, when PyYAML was built without libyaml."""

    def __init__(self, stream: bytes | BinaryIO) -> None:
        yaml.SafeLoader.__init__(self, stream)
        _start_stream(self)


def _start_stream(loader: Any) -> None:
    """What the event reader (_build_value) keeps across a file, as PyYAML's composer keeps its anchors."""
    loader.anchors = {}
    loader.aliases = AliasBudget(value_parts)
    loader.building = set()  # ids of anchored collections still being built: an alias to one is a loop


if EVENT_PARSER is not None:

    class _LibyamlStreamLoader(EVENT_PARSER, SafeConstructor, Resolver):  # type: ignore[misc]
        """libyaml's events, with PyYAML's rules for what a plain scalar means (int, date, null...)."""

        def __init__(self, stream: bytes | BinaryIO) -> None:
            EVENT_PARSER.__init__(self, stream)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            _start_stream(self)

_StreamLoader: Any = _LibyamlStreamLoader if EVENT_PARSER is not None else _PyStreamLoader


# --- streaming ------------------------------------------------------------------------


def _stream_document(path: Path, loader: Any, sink: EditSink) -> ConfigError | None:
    try:
        loader.get_event()  # stream start
        if loader.check_event(StreamEndEvent):
            raise NotPlain  # empty file
        loader.get_event()  # document start
        if loader.check_event(SequenceStartEvent):
            problem = _stream_edits(path, loader, sink, level=1)
        elif loader.check_event(MappingStartEvent):
            problem = _stream_top_mapping(path, loader, sink)
        else:
            raise NotPlain
        loader.get_event()  # document end
        if not loader.check_event(StreamEndEvent):
            raise NotPlain  # a second document: load_snapshot refuses it
        return problem
    finally:
        loader.dispose()


def _stream_top_mapping(path: Path, loader: Any, sink: EditSink) -> ConfigError | None:
    loader.get_event()
    problem: ConfigError | None = None
    found = False
    while not loader.check_event(MappingEndEvent):
        if not loader.check_event(ScalarEvent):
            raise NotPlain
        key = _build_value(loader, 1)
        if key == "edits":
            if found or not loader.check_event(SequenceStartEvent):
                raise NotPlain
            found = True
            problem = _stream_edits(path, loader, sink, level=2)
        else:
            _build_value(loader, 1)  # another top-level key: read and dropped
    loader.get_event()
    if not found:
        raise NotPlain
    return problem


def _stream_edits(path: Path, loader: Any, sink: EditSink, *, level: int) -> ConfigError | None:
    """Each item composed, built, validated and handed over; the first problem is kept, not raised.

    `level` is the edit list's own nesting (1 for a bare list), as fanout.base.reading.BoundedComposer counts it.
    """
    loader.get_event()
    seen: dict[int, int] = {}
    problem: ConfigError | None = None
    index = 0
    while not loader.check_event(SequenceEndEvent):
        data = _build_value(loader, level)
        index += 1
        if problem is None:
            place = _EditPlace(path, index, data)
            try:
                edit = _validate_edit(place, data)
                _check_unique_rcid(place, seen)
            except ConfigError as exc:
                problem = exc
                continue
            sink.add(edit)
    loader.get_event()
    if index == 0:
        raise NotPlain
    return problem


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _build_value(loader: Any, level: int) -> Any:
    """The next value, built straight from parser events as SafeLoader would build it.

    Skipping PyYAML's node tree (composer, then constructor) halves the time of
    a big snapshot's first read. Anchors and aliases are honoured across the
    document (loader.anchors, as PyYAML's composer keeps them); explicit tags,
    merge keys (`<<`) and non-scalar keys are left to load_snapshot
    (NotPlain), whose rules for them are PyYAML's own. `level` is how many
    collections hold the value: every node is held to the limits
    fanout.base.reading.BoundedComposer holds it to, at the same place.
    """
    anchors: dict[str, Any] = loader.anchors
    event = loader.get_event()
    kind = type(event)
    if kind is AliasEvent:
        if event.anchor not in anchors:
            raise NotPlain
        return _alias(loader, anchors[event.anchor], level, event)
    if event.tag not in (None, "!"):
        raise NotPlain
    if kind is ScalarEvent:
        if len(event.value) > SNAPSHOT_BOUNDS.max_text:
            raise too_long(len(event.value), event.start_mark)
        scalar = _scalar(loader, event)
        _remember(loader, event, scalar)
        return scalar
    return _build_collection(loader, event, kind, level)


def _build_collection(loader: Any, event: Any, kind: type, level: int) -> Any:
    """A mapping or sequence opened by `event`, built to its end; NotPlain for any other event."""
    if kind is not MappingStartEvent and kind is not SequenceStartEvent:
        raise NotPlain
    if level >= SNAPSHOT_BOUNDS.max_nesting:
        raise too_deep(event.start_mark)
    value: Any = {} if kind is MappingStartEvent else []
    _remember(loader, event, value)
    if kind is MappingStartEvent:
        _build_items(loader, value, level + 1)
    else:
        while type(loader.peek_event()) is not SequenceEndEvent:
            value.append(_build_value(loader, level + 1))
    loader.get_event()
    if event.anchor is not None:
        loader.building.discard(id(value))
    return value


def _build_items(loader: Any, mapping: dict[Any, Any], level: int) -> None:
    """A mapping's keys and values, up to its end event."""
    while type(loader.peek_event()) is not MappingEndEvent:
        key = _build_value(loader, level)
        if isinstance(key, (dict, list)):
            raise NotPlain  # unhashable: load_snapshot words PyYAML's error
        mapping[key] = _build_value(loader, level)


def _alias(loader: Any, target: Any, level: int, event: AliasEvent) -> Any:
    if id(target) in loader.building:
        raise alias_loop(event.start_mark)
    loader.aliases.charge(target, level, event.start_mark)
    return target


def _scalar(loader: Any, event: ScalarEvent) -> Any:
    if not event.implicit[0]:  # quoted, or a block scalar: always a string
        return event.value
    tag = loader.resolve(ScalarNode, event.value, event.implicit)
    if tag == STR_TAG:
        return event.value
    if tag == _MERGE_TAG:
        raise NotPlain
    # libyaml's events carry its own Mark class, which has the fields PyYAML's error messages read.
    node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)  # type: ignore[arg-type]
    return loader.yaml_constructors[tag](loader, node)


def _remember(loader: Any, event: Any, value: Any) -> None:
    if event.anchor is not None:
        loader.anchors[event.anchor] = value
        if isinstance(value, (dict, list)):
            loader.building.add(id(value))


# --- one edit ------------------------------------------------------------------------


@dataclass(frozen=True)
class _EditPlace:
    """Where an edit sits, so every message can point at it."""

    path: Path
    index: int
    edit: Any

    def error(self, field: str, problem: str) -> ConfigError:
        rcid = self.edit.get("rcid") if isinstance(self.edit, Mapping) else None
        rcid_text = f"rcid {rcid}" if _is_int(rcid) else "rcid unknown"
        return ConfigError(f"snapshot {self.path}: edit #{self.index} ({rcid_text}): field {field} {problem}")


@dataclass(frozen=True)
class _Field:
    """One field rule: a dotted path, a type test, and the fix in words."""

    name: str
    accepts: Callable[[Any], bool]
    expected: str
    required: bool = True


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_text(v: Any) -> bool:
    return isinstance(v, str) and v.strip() != ""


def _is_scalar(v: Any) -> bool:
    return isinstance(v, (str, int, float)) and not isinstance(v, bool)


def _or_none(test: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or test(v)


def _is_entity_id(v: Any) -> bool:
    return isinstance(v, str) and ENTITY_ID_RE.fullmatch(v) is not None


def _is_pid(v: Any) -> bool:
    return isinstance(v, str) and PID_RE.fullmatch(v) is not None


def _is_timestamp(v: Any) -> bool:
    return isinstance(v, dt.datetime) or (isinstance(v, str) and TIMESTAMP_RE.fullmatch(v) is not None)


def _is_text_list(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(t, str) for t in v)


def _is_mapping(v: Any) -> bool:
    return isinstance(v, Mapping)


def _is_list(v: Any) -> bool:
    return isinstance(v, list)


FIELDS: tuple[_Field, ...] = (
    _Field("rcid", _is_int, "an integer (the recent-changes id)"),
    _Field("revid", _is_int, "an integer (the revision id)"),
    _Field("parent_revid", _or_none(_is_int), "an integer or null", required=False),
    _Field("title", _is_entity_id, "the item's QID, like Q42"),  # property (P31) and lexeme (L7) ids pass too
    # null when revision deletion hides the user
    _Field("user", _or_none(_is_text), "the editor's user name as a string (quote it if it looks like a number)"),
    _Field("timestamp", _is_timestamp, "an ISO 8601 UTC time like 2026-02-19T08:02:14Z"),
    _Field("tags", _is_text_list, "a list of tag names ([] when there are none)"),
    _Field("comment", _or_none(lambda v: isinstance(v, str)), "the edit summary as a string, or null", required=False),
    _Field("parsed_edit", _is_mapping, "a mapping with operation, property, property_label, value_raw, value_label"),
    _Field("parsed_edit.operation", _is_text, "the summary's operation, like wbsetclaim-update"),
    _Field("parsed_edit.property", _or_none(_is_pid), "a property id like P569 (null only for label, description or alias edits)"),
    _Field("parsed_edit.property_label", _or_none(_is_text), "the property's English label, like date of birth"),
    _Field("parsed_edit.value_raw", _or_none(_is_scalar), "the new (or removed) value as a string or number"),
    _Field("parsed_edit.value_label", _or_none(_is_scalar), "the value's readable label, or null"),
    _Field("parsed_edit.qualifier_property", _or_none(_is_pid), "a property id like P580, or null", required=False),
    _Field("parsed_edit.reference_property", _or_none(_is_pid), "a property id like P854, or null", required=False),
    _Field("edit_diff", _is_mapping, "a mapping with the kind of change under `type`"),
    _Field("edit_diff.type", _is_text, "the kind of change, like value_added, value_changed or label_changed"),
    _Field("item", _is_mapping, "a mapping with label_en and claims"),
    _Field("item.label_en", _or_none(_is_text), "the item's English label, or null if it has none"),
    _Field("item.description_en", _or_none(lambda v: isinstance(v, str)), "a string or null", required=False),
    _Field("item.claims", _is_mapping, "a mapping from property id to a list of {value, label}"),
    _Field("prefetched_references", _is_list, "a list of {url, text} mappings", required=False),
)


def _validate_edit(place: _EditPlace, data: Any) -> Edit:
    """The Edit of one snapshot entry; ConfigError, naming the entry and the field, when it is not one."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"snapshot {place.path}: edit #{place.index} must be a mapping with rcid, revid, title, ..., "
            f"got {_describe(data)}"
        )
    for rule in FIELDS:
        _check_field(place, data, rule)
    _check_statement_fields(place, data)
    _check_claims(place, data["item"]["claims"])
    _check_references(place, data.get("prefetched_references") or [])
    if isinstance(data["timestamp"], dt.datetime):
        data["timestamp"] = _iso_utc(data["timestamp"])
    return Edit.from_validated(data)


def _check_field(place: _EditPlace, edit: Mapping[str, Any], rule: _Field) -> None:
    *parents, leaf = rule.name.split(".")
    holder: Any = edit
    for part in parents:
        holder = holder[part]  # parents come earlier in FIELDS, so they are mappings here
    if leaf not in holder:
        if rule.required:
            raise place.error(rule.name, f"is missing; add {rule.expected}")
        return
    value = holder[leaf]
    if not rule.accepts(value):
        raise place.error(rule.name, f"must be {rule.expected}, got {_describe(value)}")


def _check_statement_fields(place: _EditPlace, edit: Mapping[str, Any]) -> None:
    """A statement edit needs its property, label and value; only term edits may omit them."""
    diff_type = edit["edit_diff"]["type"]
    if is_term_diff(diff_type):
        return
    parsed = edit["parsed_edit"]
    for name, expected in (
        ("property", "a property id like P569"),
        ("property_label", "the property's English label"),
        ("value_raw", "the new (or removed) value"),
    ):
        if parsed[name] is None:
            raise place.error(
                f"parsed_edit.{name}",
                f"is null, but edit_diff.type {diff_type} changes a statement; give {expected}",
            )


def _check_claims(place: _EditPlace, claims: Mapping[Any, Any]) -> None:
    for pid, values in claims.items():
        field = f"item.claims.{pid}"
        if not _is_pid(pid):
            raise place.error(field, "has a key that is not a property id; claims are keyed like P31")
        if not isinstance(values, list):
            raise place.error(field, f"must be a list of {{value, label}} mappings, got {_describe(values)}")
        for n, claim in enumerate(values):
            if not isinstance(claim, Mapping) or "value" not in claim:
                raise place.error(f"{field}[{n}]", f"must be a mapping with a value, got {_describe(claim)}")


def _check_references(place: _EditPlace, references: list[Any]) -> None:
    for n, ref in enumerate(references):
        field = f"prefetched_references[{n}]"
        if not isinstance(ref, Mapping):
            raise place.error(field, f"must be a mapping with url and text, got {_describe(ref)}")
        url = ref.get("url")
        if not (isinstance(url, str) and url.startswith(("http://", "https://"))):
            raise place.error(f"{field}.url", f"must be an http(s) URL, got {_describe(url)}")
        if not isinstance(ref.get("text"), str):
            raise place.error(f"{field}.text", f"must be the page text as a string, got {_describe(ref.get('text'))}")


def _check_unique_rcid(place: _EditPlace, seen: dict[int, int]) -> None:
    rcid = place.edit["rcid"]
    if rcid in seen:
        raise place.error("rcid", f"repeats edit #{seen[rcid]}; each rcid must appear once, so remove the duplicate")
    seen[rcid] = place.index


def _iso_utc(moment: dt.datetime) -> str:
    """YAML reads an unquoted timestamp as a datetime; keep the Wikidata string form."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({type(value).__name__})"
