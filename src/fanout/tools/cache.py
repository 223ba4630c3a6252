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

The run's own cache also remembers, in memory, what it last stored or read
under each key (`remember_chars`, least recently used first out): a run's
file is written by that run alone (its lock says so), so the memory holds
what the file holds (after a failed write, what the run meant it to hold),
and a read it can answer, fresh or too old, needs no thread at all: the
second, third and fourth model searching what the first one did. A file
that was empty when the run opened it is known whole as long as nothing has
been let go from memory, so a miss needs no thread either (the first model's
two reads per new query).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Hashable
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
RUN_CACHE_MEMORY_CHARS = 16 << 20
"""What a run's cache remembers in memory at most: 16 Mi characters (16 to 64 MB), thousands of search answers."""
log = logging.getLogger(__name__)
T = TypeVar("T")


class CachedPage(NamedTuple):
    text: str
    final_url: str | None


def normalise_query(query: str) -> str:
    """`  Douglas  ADAMS\u00a0born ` and `douglas adams born` are one query: NFKC, casefold, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def page_key(url: str) -> str:
    """The fragment never reaches the server, so `a#x` and `a#y` are one page."""
    return url.strip().split("#", 1)[0]


class Stored(NamedTuple):
    """A row as the cache holds it: the text stored (JSON for a search), the final URL of a page, and when."""

    text: str
    final_url: str | None
    stored_at: float


class Remembered:
    """The rows a run's cache last stored or read, by key, at most `chars` characters of text, least recently
    used first out; the event loop's alone (never touched from the cache's thread)."""

    def __init__(self, chars: int, *, whole: bool = False) -> None:
        self._chars = chars
        self._held = 0
        self._rows: OrderedDict[Hashable, Stored] = OrderedDict()
        self.whole = whole
        """Every row of the file is here (it was empty at the start, and nothing has been let go since)."""

    def get(self, key: Hashable) -> Stored | None:
        row = self._rows.get(key)
        if row is not None:
            self._rows.move_to_end(key)
        return row

    def put(self, key: Hashable, row: Stored) -> None:
        old = self._rows.pop(key, None)
        if old is not None:
            self._held -= _size(old)
        if _size(row) > self._chars:
            self.whole = False
            return
        self._rows[key] = row
        self._held += _size(row)
        while self._held > self._chars:
            self.whole = False
            _, dropped = self._rows.popitem(last=False)
            self._held -= _size(dropped)


def _size(row: Stored) -> int:
    return len(row.text) + len(row.final_url or "")


class ToolCache:
    """Search answers and fetched pages in one SQLite file (or in memory when `path` is None)."""

    def __init__(self, connection: sqlite3.Connection, *, ttl_s: float | None, clock: Callable[[], float],
                 memory: Remembered | None = None) -> None:
        self._db = connection
        self._memory = memory
        self._ttl_s = ttl_s
        self._clock = clock
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tool-cache")
        self._closed = False
        self._warned = False
        self.path: Path | None = None

    @classmethod
    async def open(
        cls, path: Path | None, *, ttl_s: float | None = None, clock: Callable[[], float] = time.time,
        remember_chars: int = 0,
    ) -> ToolCache:
        """Create or reopen the cache; a file that is not a SQLite cache is a ConfigError naming it.

        `remember_chars` only for a file no other process writes (the run's own, under its lock).
        """
        connection = await anyio.to_thread.run_sync(_connect, path)
        memory = None
        if remember_chars > 0:
            memory = Remembered(remember_chars, whole=await anyio.to_thread.run_sync(_is_empty, connection))
        cache = cls(connection, ttl_s=ttl_s, clock=clock, memory=memory)
        cache.path = path
        return cache

    async def get_search(self, provider: str, query: str, *, max_age_s: float | None = None) -> Any | None:
        """The stored answer (any JSON value), or None when absent, expired, or older than `max_age_s` seconds."""
        normalised = normalise_query(query)
        row = await self._read(("search", provider, normalised), max_age_s, self._select_search, provider,
                               normalised)
        return json.loads(row.text) if row is not None else None

    async def put_search(self, provider: str, query: str, answer: Any) -> None:
        text, normalised, now = json.dumps(answer, ensure_ascii=False), normalise_query(query), self._clock()
        self._remember(("search", provider, normalised), Stored(text, None, now))
        self._write_behind("INSERT OR REPLACE INTO search VALUES (?, ?, ?, ?)", (provider, normalised, text, now))

    async def get_page(self, url: str) -> CachedPage | None:
        key = page_key(url)
        row = await self._read(("page", key), None, self._select_page, key)
        return CachedPage(row.text, row.final_url) if row is not None else None

    async def put_page(self, url: str, text: str, final_url: str | None) -> None:
        key, now = page_key(url), self._clock()
        self._remember(("page", key), Stored(text, final_url, now))
        self._write_behind("INSERT OR REPLACE INTO page VALUES (?, ?, ?, ?)", (key, text, final_url, now))

    async def _read(self, key: Hashable, max_age_s: float | None, select: Callable[..., Stored | None],
                    *args: Any) -> Stored | None:
        """The row under `key` if fresh enough: from memory when it holds the key (what the file holds), else
        from the file in the cache's thread, then remembered."""
        row = self._memory.get(key) if self._memory is not None else None
        if row is None:
            if self._memory is not None and self._memory.whole:
                return None  # not in the file either
            row = await self._run(select, *args)
            if row is None:
                return None
            self._remember(key, row)
        return row if row.stored_at >= self._fresh_after(max_age_s) else None

    def _remember(self, key: Hashable, row: Stored) -> None:
        if self._memory is not None:
            self._memory.put(key, row)

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True):
            await self._in_thread(self._db.close)
        self._closed = True
        self._thread.shutdown(wait=False)

    def _fresh_after(self, max_age_s: float | None = None) -> float:
        """The oldest `stored_at` still usable: the cache's ttl and the caller's bound, whichever is tighter."""
        ages = [age for age in (self._ttl_s, max_age_s) if age is not None]
        return self._clock() - min(ages) if ages else float("-inf")

    def _select_search(self, provider: str, query: str) -> Stored | None:
        row: tuple[str, float] | None = self._db.execute(
            "SELECT answer, stored_at FROM search WHERE provider = ? AND query = ?", (provider, query),
        ).fetchone()
        return None if row is None else Stored(row[0], None, row[1])

    def _select_page(self, url: str) -> Stored | None:
        row: tuple[str, str | None, float] | None = self._db.execute(
            "SELECT text, final_url, stored_at FROM page WHERE url = ?", (url,)
        ).fetchone()
        return None if row is None else Stored(*row)

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


def _is_empty(connection: sqlite3.Connection) -> bool:
    """Whether the cache holds no row at all (a new run's file)."""
    found = connection.execute("SELECT EXISTS (SELECT 1 FROM search) OR EXISTS (SELECT 1 FROM page)").fetchone()
    return not found[0]


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
