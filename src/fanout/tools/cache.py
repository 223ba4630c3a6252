"""The run's tool cache: one SQLite file (RUN_DIR/search-cache.sqlite) shared by every model.

Fairness is the point: within a run, every model that searches the same
query (up to case, spacing and Unicode form) reads the same results, and
every model that fetches the same URL reads the same text. It also spares
the upstream engines. Only successes are stored; an error is asked again.

    search(provider, query, answer JSON, stored_at)   key: provider + normalised query
    page(url, text, final_url, stored_at)              key: the URL without its fragment

Entries older than `ttl_s` are treated as absent (None = never expire); a
search read may ask for a tighter bound (`max_age_s`, a provider's own
cache_ttl). The same class, pointed at a directory shared by all runs, is the
optional global search cache.

Threading: SQLite calls block (a commit may fsync, a WAL checkpoint may
write pages), and a blocked event loop stalls every verdict. So each call
runs in the cache's own worker thread (one per cache, so the one connection
is used by one thread at a time, in the order the calls were made). A plain
single-thread executor rather than anyio.to_thread: anyio's hop (capacity
limiter, cancel scope, worker lookup) cost several times the SQLite
statement itself, about 5% of a run's CPU at four hops a search. Writes are
queued without waiting for them (reads queued later still see them). WAL mode
lets several runs read a shared global cache while one writes. The cache is
an optimisation, so a failing disk never fails a tool call: the error is
logged once and the call goes upstream.

An owned cache (the run's: one process holds the run directory) also keeps a
front in memory, so that most reads take no hop at all (each cost about
2 ms of CPU per verdict, eight reads a verdict): the last FRONT_ENTRIES
answers and pages written or read, and the keys of every row in the file
(loaded when it opens, kept up to KNOWN_KEYS_MAX), so a query never asked
is known to be absent without asking SQLite. Every write still goes to the
file, in order, as before; the front only answers what the file would.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import anyio

from fanout.base.errors import ConfigError

RUN_CACHE_NAME = "search-cache.sqlite"
SCHEMA = """
CREATE TABLE IF NOT EXISTS search (
    provider TEXT NOT NULL,
    query TEXT NOT NULL,
    answer TEXT NOT NULL,
    stored_at REAL NOT NULL,
    PRIMARY KEY (provider, query)
);
CREATE TABLE IF NOT EXISTS page (
    url TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    final_url TEXT,
    stored_at REAL NOT NULL
);
"""
log = logging.getLogger(__name__)
T = TypeVar("T")
FRONT_ENTRIES = 2048
"""Answers and pages an owned cache keeps in memory, the most recently used (a page is at most ~60 KB)."""
KNOWN_KEYS_MAX = 250_000
"""Keys an owned cache remembers to know what is absent (~100 bytes each); past it, misses ask SQLite again."""
Key = tuple[str, ...]
Row = tuple[Any, ...]
ASK = object()
"""The front cannot say: ask the file."""


class Front:
    """What an owned cache can answer from memory: recent rows with their `stored_at`, and which keys exist."""

    def __init__(self, known: set[Key] | None) -> None:
        self._recent: OrderedDict[Key, tuple[Row, float]] = OrderedDict()
        self._known = known

    def lookup(self, key: Key, fresh_after: float) -> Row | None | object:
        """The row (None when absent or too old), or ASK when only the file can say."""
        hit = self._recent.get(key)
        if hit is not None:
            self._recent.move_to_end(key)
            return hit[0] if hit[1] >= fresh_after else None
        if self._known is not None and key not in self._known:
            return None
        return ASK

    def keep(self, key: Key, row: Row, stored_at: float) -> None:
        self._recent[key] = (row, stored_at)
        self._recent.move_to_end(key)
        if len(self._recent) > FRONT_ENTRIES:
            self._recent.popitem(last=False)
        if self._known is not None:
            self._known.add(key)
            if len(self._known) > KNOWN_KEYS_MAX:
                self._known = None


class CachedPage(NamedTuple):
    text: str
    final_url: str | None


def normalise_query(query: str) -> str:
    """`  Douglas  ADAMS\u00a0born ` and `douglas adams born` are one query: NFKC, casefold, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def page_key(url: str) -> str:
    """The fragment never reaches the server, so `a#x` and `a#y` are one page."""
    return url.strip().split("#", 1)[0]


class ToolCache:
    """Search answers and fetched pages in one SQLite file (or in memory when `path` is None)."""

    def __init__(self, connection: sqlite3.Connection, *, ttl_s: float | None, clock: Callable[[], float],
                 front: Front | None = None) -> None:
        self._db = connection
        self._front = front
        self._ttl_s = ttl_s
        self._clock = clock
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tool-cache")
        self._closed = False
        self._warned = False
        self.path: Path | None = None

    @classmethod
    async def open(
        cls, path: Path | None, *, ttl_s: float | None = None, clock: Callable[[], float] = time.time,
        owned: bool = False,
    ) -> ToolCache:
        """Create or reopen the cache; a file that is not a SQLite cache is a ConfigError naming it.

        `owned`: no other process writes it while this one has it open (the run's cache), so it may keep
        a front in memory (see the module's docstring).
        """
        connection, known = await anyio.to_thread.run_sync(_connect_owned if owned else _connect_shared, path)
        cache = cls(connection, ttl_s=ttl_s, clock=clock, front=Front(known) if owned else None)
        cache.path = path
        return cache

    async def get_search(self, provider: str, query: str, *, max_age_s: float | None = None) -> Any | None:
        """The stored answer (any JSON value), or None when absent, expired, or older than `max_age_s` seconds."""
        key = (provider, normalise_query(query))
        row = await self._read(("search", *key), self._select_search, *key, self._fresh_after(max_age_s))
        return json.loads(row[0]) if row is not None else None

    async def put_search(self, provider: str, query: str, answer: Any) -> None:
        key, row = (provider, normalise_query(query)), (json.dumps(answer, ensure_ascii=False),)
        self._write(("search", *key), "INSERT OR REPLACE INTO search VALUES (?, ?, ?, ?)", key, row)

    async def get_page(self, url: str) -> CachedPage | None:
        key = page_key(url)
        row = await self._read(("page", key), self._select_page, key, self._fresh_after())
        return CachedPage(row[0], row[1]) if row is not None else None

    async def put_page(self, url: str, text: str, final_url: str | None) -> None:
        key = page_key(url)
        self._write(("page", key), "INSERT OR REPLACE INTO page VALUES (?, ?, ?, ?)", (key,), (text, final_url))

    async def _read(self, key: Key, select: Callable[..., tuple[Row, float] | None], *args: Any) -> Row | None:
        """The row from the front when it can say (args end with the oldest usable `stored_at`), else the file's."""
        if self._front is not None:
            known = self._front.lookup(key, args[-1])
            if known is not ASK:
                return known  # type: ignore[return-value]  # a Row or None: ASK is the only other value
        found = await self._run(select, *args)
        if found is None:
            return None
        if self._front is not None:
            self._front.keep(key, *found)
        return found[0]

    def _write(self, key: Key, sql: str, keys: Row, row: Row) -> None:
        stored_at = self._clock()
        if self._front is not None:
            self._front.keep(key, row, stored_at)
        self._write_behind(sql, (*keys, *row, stored_at))

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._in_thread(self._db.close)
        self._closed = True
        self._thread.shutdown(wait=False)

    def _fresh_after(self, max_age_s: float | None = None) -> float:
        """The oldest `stored_at` still usable: the cache's ttl and the caller's bound, whichever is tighter."""
        ages = [age for age in (self._ttl_s, max_age_s) if age is not None]
        return self._clock() - min(ages) if ages else float("-inf")

    def _select_search(self, provider: str, query: str, fresh_after: float) -> tuple[Row, float] | None:
        found = self._db.execute(
            "SELECT answer, stored_at FROM search WHERE provider = ? AND query = ? AND stored_at >= ?",
            (provider, query, fresh_after),
        ).fetchone()
        return None if found is None else ((found[0],), found[1])

    def _select_page(self, url: str, fresh_after: float) -> tuple[Row, float] | None:
        found = self._db.execute(
            "SELECT text, final_url, stored_at FROM page WHERE url = ? AND stored_at >= ?", (url, fresh_after)
        ).fetchone()
        return None if found is None else ((found[0], found[1]), found[2])

    def _write_behind(self, sql: str, values: tuple[Any, ...]) -> None:
        """Queue a write in the cache's thread and go on without waiting for it.

        Nothing is lost by not waiting: the thread runs calls in the order
        they were queued, so every later read (and the close) comes after
        this write, and a failed write is only logged, as before. It spares
        a search half of its thread hops (the wake-up on the way back).
        """
        if self._closed:
            self._upsert(sql, values)  # fails at once on the closed connection, and says so
        else:
            self._thread.submit(self._upsert, sql, values)

    def _upsert(self, sql: str, values: tuple[Any, ...]) -> None:
        try:
            self._db.execute(sql, values)  # autocommit: one statement is one transaction
        except sqlite3.Error as exc:
            self._failed(exc)

    def _failed(self, exc: sqlite3.Error) -> None:
        if not self._warned:
            self._warned = True
            log.warning("tool cache %s failed (%s); searching upstream without it", self.path or ":memory:", exc)

    async def _run(self, call: Callable[..., T], *args: Any) -> T | None:
        try:
            return await self._in_thread(call, *args)
        except sqlite3.Error as exc:
            self._failed(exc)
            return None

    async def _in_thread(self, call: Callable[..., T], *args: Any) -> T:
        """`call(*args)` in the cache's thread, after every call queued before it.

        A caller cancelled meanwhile stops waiting; a statement already
        running still completes (each is its own transaction), and one not
        yet started is dropped, as a cancelled wait for anyio's limiter was.
        """
        if self._closed:
            return call(*args)  # fails at once on the closed connection, without a thread
        return await asyncio.get_running_loop().run_in_executor(self._thread, call, *args)


def _connect_shared(path: Path | None) -> tuple[sqlite3.Connection, None]:
    return _connect(path), None


def _connect_owned(path: Path | None) -> tuple[sqlite3.Connection, set[Key] | None]:
    """The connection and the keys of every row, when there are at most KNOWN_KEYS_MAX."""
    connection = _connect(path)
    try:
        rows = connection.execute("SELECT (SELECT COUNT(*) FROM search) + (SELECT COUNT(*) FROM page)").fetchone()[0]
        if rows > KNOWN_KEYS_MAX:
            return connection, None
        known: set[Key] = {("search", p, q) for p, q in connection.execute("SELECT provider, query FROM search")}
        known.update(("page", url) for (url,) in connection.execute("SELECT url FROM page"))
    except sqlite3.Error as exc:
        connection.close()
        raise ConfigError(f"cannot read the search cache {path}: {exc} (delete it to start afresh)") from exc
    return connection, known


def _connect(path: Path | None) -> sqlite3.Connection:
    target = ":memory:" if path is None else str(path)
    connection = None
    try:
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
        connection.execute("PRAGMA busy_timeout = 5000")
        if path is not None:
            connection.execute("PRAGMA journal_mode = WAL")
            connection.execute("PRAGMA synchronous = NORMAL")
        connection.executescript(SCHEMA)
    except (OSError, sqlite3.Error) as exc:
        if connection is not None:
            connection.close()
        raise ConfigError(f"cannot open the search cache {target}: {exc} (delete it to start afresh)") from exc
    return connection
