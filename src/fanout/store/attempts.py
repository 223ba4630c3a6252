"""Attempts that never reached the log: their chat calls written down as they happen, their cost settled later.

A verdict in flight when the process dies (kill -9, a crash, a Ctrl-C that
cancels it) leaves no record, but its chat calls may have been paid for. So
each verdict writes its calls down in a file of its own as they happen,
`inflight/<rcid>-<model hash>.jsonl`: a header line, then `sent` when a call
goes out and `answered` (response id, cost, tokens) or `failed` when it comes
back. Each line is one unbuffered write and no fsync, microseconds: it
survives the process being killed (the kernel holds the bytes), not a power
cut. The checkpoint writer removes the file once the verdict's record is in
the log.

On the next start every file still there is an abandoned attempt, settled
once (`settle_abandoned`): the pricer the run passes in (fanout.llm.cost.Pricing)
prices each answered call in the one cost order; a call sent and never
answered may have been billed too, so it makes the attempt's cost unknown. One line per attempt goes to `abandoned.jsonl`
(fsynced), which progress, `fanout status`, the report and --max-cost count.

In-flight files are read as untrusted: only regular files, never through a
symbolic link, at most INFLIGHT_MAX_BYTES each (a link to /dev/zero grew a
start to 6.5 GB), parsed depth-capped (a header of 5 000 `[` once ended
`fanout status` in a RecursionError), and a file whose header is damaged is
left in place with one warning line (it once ended the start in a traceback).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time
from collections import Counter
from contextlib import contextmanager
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from fanout.base.reading import SIDE_FILE_BOUNDS, open_if_regular, parse_json, read_upto
from fanout.base.records import utc_now
from fanout.store.atomic import DISK_FULL, open_append
from fanout.store.layout import ABANDONED_NAME, INFLIGHT_DIR, own_folder, run_file
from fanout.store.lines import read_lines
from fanout.store.line_schemas import ATTEMPT_CALL, ATTEMPT_HEADER
from fanout.store.log_index import LogIndex
from fanout.store.prepared import read_prepared


class AnsweredCall(Protocol):
    """A chat call that came back (fanout.llm.reply.ChatResult): what its line in the in-flight file keeps."""

    def call_record(self) -> dict[str, Any]:
        """Response id, reported cost and token counts, as plain data."""
        ...


class AttemptPricer(Protocol):
    """What an abandoned attempt cost (fanout.llm.cost.Pricing): the store keeps the calls, not their prices."""

    async def attempt_cost(self, model: str, answered: Sequence[Mapping[str, Any]],
                           cut_off: int) -> tuple[float | None, str]:
        """The known cost of the answered calls and its source; calls cut off make it unknown in part."""
        ...


Warn = Callable[[str], None]
"""Where a settling start says, in one line, that it left a file alone."""
INFLIGHT_MAX_BYTES = 1 << 20
"""An attempt writes a header and about 200 bytes per call: a megabyte is thousands of calls, more than any verdict."""


def attempt_path(run_dir: Path, edit_rcid: int, model: str) -> Path:
    """The in-flight file of one pair; the model is hashed, as any two model ids must give two names."""
    digest = hashlib.sha256(model.encode()).hexdigest()[:16]
    return run_dir / INFLIGHT_DIR / f"{edit_rcid}-{digest}.jsonl"


def discard_attempt(run_dir: Path, edit_rcid: int, model: str) -> None:
    """The pair's record is in the log: its in-flight file has nothing left to tell."""
    attempt_path(run_dir, edit_rcid, model).unlink(missing_ok=True)


class AttemptFile:
    """One verdict's calls, written down as they happen (a CallWatcher for ChatClient.complete)."""

    def __init__(self, run_dir: Path, edit_rcid: int, model: str, log_bytes: int) -> None:
        path = attempt_path(run_dir, edit_rcid, model)
        self._fd = -1
        self.answered_calls = 0
        """Calls answered so far: an attempt that has none and ends in a refusal of its model cost nothing."""
        self.answered_records: list[dict[str, Any]] = []
        """Each answered call's call_record(), to price an attempt that ends in an unexpected exception."""
        self.cut_off = 0
        """Calls sent and neither answered nor failed yet: at an unexpected end, each may have been billed."""
        with _unless_disk_full():  # made anew, never opened through a link left in its place
            path.unlink(missing_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_APPEND | os.O_CLOEXEC,
                               0o644)
        # log_bytes: a record of this pair that ends past it was logged by this attempt (see settle_abandoned).
        started_ns = time.time_ns()
        self.attempt_id = f"{path.name}@{started_ns}"
        """How abandoned.jsonl names this attempt once settled; a line of another log that names it (a prepared
        unit's `attempt`) says it was logged there, so it is never settled as abandoned too."""
        self._write({"edit_rcid": edit_rcid, "model": model, "log_bytes": log_bytes, "started_ns": started_ns})

    def sent(self) -> None:
        self.cut_off += 1
        self._write({"e": "sent"})

    def answered(self, result: AnsweredCall) -> None:
        self.answered_calls += 1
        self.cut_off -= 1
        record = result.call_record()
        self.answered_records.append(record)
        self._write({"e": "answered", **record})

    def failed(self) -> None:
        self.cut_off -= 1
        self._write({"e": "failed"})

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _write(self, line: dict[str, Any]) -> None:
        if self._fd < 0:
            return
        with _unless_disk_full():
            os.write(self._fd, json.dumps(line, separators=(",", ":")).encode() + b"\n")


@contextmanager
def _unless_disk_full() -> Iterator[None]:
    """On a full disk the verdict goes on unwritten: the log's writer meets the same disk and stops the run,
    and a record that is logged carries its own cost."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in DISK_FULL:
            raise


@dataclass
class Abandoned:
    """One line of abandoned.jsonl: an attempt that never reached the log, and what it cost."""

    edit_rcid: int
    model: str
    attempt: str
    """The in-flight file's name and start time: an attempt is settled once, even if settling is interrupted."""
    calls: int
    """Chat calls sent."""
    cut_off: int
    """Calls sent and never answered: billed or not, nobody can say."""
    cost_usd: float | None
    cost_source: str
    """reported, generation, estimated or unknown (fanout.llm.cost)."""
    response_ids: list[str] = field(default_factory=list)
    settled_at: str = ""


class SpendTotals(NamedTuple):
    """Money over a set of attempts: known (reported, looked up or estimated), the estimated part, and how many
    attempts' cost is unknown in whole or in part."""

    spent_usd: float = 0.0
    estimated_usd: float = 0.0
    unknown: int = 0


ABANDONED_BOUNDS = SIDE_FILE_BOUNDS._replace(
    kind="run file", max_bytes=1 << 30, split_hint="a line per attempt cut off is a few hundred bytes",
    special_hint="fanout writes only regular files there; move it out of the run directory",
)
"""abandoned.jsonl: a regular file, at most 1 GiB (three million cut-off attempts)."""


def read_abandoned(run_dir: Path) -> list[Abandoned]:
    """Every settled abandoned attempt; a line that cannot be read (a torn tail) is skipped."""
    found = []
    for line in read_lines(run_dir, run_file(ABANDONED_NAME)).lines:  # each held to ABANDONED_LINE
        try:
            found.append(Abandoned(**line.data))
        except TypeError:  # a field this fanout does not know
            continue
    return found


def abandoned_totals(entries: list[Abandoned]) -> SpendTotals:
    return SpendTotals(
        sum(e.cost_usd or 0.0 for e in entries),
        sum(e.cost_usd or 0.0 for e in entries if e.cost_source == "estimated"),
        sum(e.cost_usd is None or e.cost_source == "unknown" for e in entries),
    )


def unsettled_attempts(run_dir: Path) -> Counter[str]:
    """In-flight files per model, from each file's header: the verdicts of a run in progress, or attempts
    cut off since the run last started (which of the two, only the run's lock can say)."""
    found: Counter[str] = Counter()
    inflight = run_dir / INFLIGHT_DIR
    try:
        if not stat.S_ISDIR(os.lstat(inflight).st_mode):
            return found  # a link or a file: not fanout's (a run refuses to start on it)
        names = [name for name in os.listdir(inflight) if name.endswith(".jsonl")]
    except OSError:
        return found
    for name in names:
        data = _read_inflight(inflight / name)  # the writer removes a file once its record is logged: one may go
        written, header, _ = _read_attempt(data or b"")
        if _file_problem(data) is None and written and _header_problem(header) is None:
            found[str(header["model"])] += 1
    return found


LoggedElsewhere = Callable[[int, str, int], bool]
"""Whether an attempt (item key, the name it was written down under, when it started in ns) was logged in a file
other than the checkpoint (a research team's step in team.jsonl): its cost is counted there."""


async def settle_abandoned(run_dir: Path, index: LogIndex, pricing: AttemptPricer,
                           warn: Warn | None = None, logged_elsewhere: LoggedElsewhere | None = None) -> list[Abandoned]:
    """Turn every in-flight file left by an earlier process into a line of abandoned.jsonl; returns the new lines.

    A file whose pair has a record logged after the attempt started is not
    abandoned (the process died between logging it and removing the file);
    nor is one `logged_elsewhere` says was logged.
    A file fanout cannot have written as it is (not a regular file, too large,
    a damaged header) is left where it is, and `warn` told in one line.
    """
    inflight = own_folder(run_dir, INFLIGHT_DIR)
    done = {entry.attempt for entry in read_abandoned(run_dir)} | logged_attempts(run_dir)
    settled = []
    for path in sorted(inflight.glob("*.jsonl")):
        data = _read_inflight(path)
        written, header, calls = _read_attempt(data or b"")
        problem = _file_problem(data) or (_header_problem(header) if written else None)
        if problem is not None:
            if warn is not None:
                warn(f"{path}: {problem}; not settled, left in place")
            continue
        attempt = f"{path.name}@{header.get('started_ns')}" if written else path.name
        sent = any(call.get("e") == "sent" for call in calls)  # an attempt that sent nothing cost nothing
        if written and sent and attempt not in done and not _logged_since(index, header) and not (
                logged_elsewhere is not None and logged_elsewhere(
                    int(header["edit_rcid"]), str(header["model"]), int(header.get("started_ns") or 0))):
            entry = await _settle(header, calls, attempt, pricing)
            _append_abandoned(run_dir, entry)
            settled.append(entry)
        path.unlink()
    return settled


def logged_attempts(run_dir: Path) -> set[str]:
    """Attempts whose result another log holds (a prepared unit names its attempt): the process died between
    logging the line and removing the in-flight file, and the line carries the cost already."""
    lines = read_prepared(run_dir)
    return {str(line.data["attempt"]) for line in lines if isinstance(line.data.get("attempt"), str)}


def _read_inflight(path: Path) -> bytes | None:
    """The file's bytes, at most one more than INFLIGHT_MAX_BYTES; None when it is gone or is not a regular file
    (a symbolic link is not followed; a FIFO does not block the open)."""
    try:
        opened = open_if_regular(path, follow_links=False)
    except OSError:
        return None
    if opened is None:
        return None
    with opened:
        return read_upto(opened, INFLIGHT_MAX_BYTES + 1)


def _file_problem(data: bytes | None) -> str | None:
    if data is None:
        return "not a regular file (a link, a device or a FIFO)"
    if len(data) > INFLIGHT_MAX_BYTES:
        return f"larger than {INFLIGHT_MAX_BYTES // (1 << 20)} MB, more than any attempt writes"
    return None


def _read_attempt(data: bytes) -> tuple[bool, Any, list[dict[str, Any]]]:
    """Whether the header was written, the header as its first line holds it, and the calls after it. The
    header was not written when the file holds no whole line: the process died first, so it sent nothing."""
    first, newline, rest = data.partition(b"\n")
    if not newline:
        return False, None, []
    try:
        header = parse_json(first)
    except (ValueError, RecursionError):  # RecursionError: parse_json caps the depth; kept should that cap grow
        header = first.decode("utf-8", "replace")  # named in the warning
    return True, header, list(_json_lines(rest))


def _header_problem(header: Any) -> str | None:
    """What is wrong with an in-flight file's header (its declared schema, ATTEMPT_HEADER), named for the warning;
    None when it is as fanout writes it."""
    if not isinstance(header, dict):
        return f"damaged header ({_shown(header)} is not an attempt's header)"
    problem = ATTEMPT_HEADER.problem(header)
    return None if problem is None else f"damaged header ({problem})"


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _json_lines(data: bytes) -> Iterator[dict[str, Any]]:
    for line in data.splitlines():
        try:
            value = parse_json(line)
        except (ValueError, RecursionError):  # the last line, torn by the kill; or nested past json's depth
            continue
        if isinstance(value, dict) and ATTEMPT_CALL.problem(value) is None:  # a damaged call line is left out
            yield value


def _logged_since(index: LogIndex, header: Mapping[str, Any]) -> bool:
    end = index.latest_end((int(header["edit_rcid"]), str(header["model"])))
    return end is not None and end > int(header["log_bytes"])


async def _settle(header: Mapping[str, Any], calls: list[dict[str, Any]], attempt: str,
                  pricing: AttemptPricer) -> Abandoned:
    model = str(header["model"])
    answered = [c for c in calls if c.get("e") == "answered"]
    sent = sum(c.get("e") == "sent" for c in calls)
    cut_off = max(sent - len(answered) - sum(c.get("e") == "failed" for c in calls), 0)
    cost, source = await pricing.attempt_cost(model, answered, cut_off)
    return Abandoned(
        edit_rcid=int(header["edit_rcid"]), model=model, attempt=attempt, calls=sent, cut_off=cut_off,
        cost_usd=cost, cost_source=source,
        response_ids=[str(c["id"]) for c in answered if c.get("id")], settled_at=utc_now(),
    )


def _append_abandoned(run_dir: Path, entry: Abandoned) -> None:
    with open_append(run_dir / ABANDONED_NAME) as fh:
        fh.write(json.dumps(asdict(entry), separators=(",", ":")).encode() + b"\n")
        fh.flush()
        os.fsync(fh.fileno())
