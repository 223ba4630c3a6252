"""A connection pool whose cost per request does not grow with the number of connections.

httpcore's pool (1.0.x) re-examines every connection whenever a request starts
or a response closes: for each idle connection it asks the socket whether the
server hung up (a poll plus, through anyio's extra attributes, a getpeername
call), and it counts the pool once per connection, which is quadratic. With the
pool sized to --concurrency that is most of the engine's CPU at 8 verdicts in
flight and hundreds of system calls per request at 256 (measured by
`make bench`; see the README).

LeanConnectionPool changes only that bookkeeping, in one overridden method:
the full check of every connection runs at most once per SWEEP_INTERVAL_S, and
in between only the connection about to be reused is asked whether it expired
(the one case where the answer matters: reusing a connection the server has
closed would fail the request). Which connection is reused, when one is
created and when an idle one is closed to make room all stay as httpcore
decides them.
"""

from __future__ import annotations

import time

import httpcore
import httpx

SWEEP_INTERVAL_S = 1.0


class LeanConnectionPool(httpcore.AsyncConnectionPool):
    _swept_at = float("-inf")

    def _assign_requests_to_connections(self) -> list[httpcore.AsyncConnectionInterface]:  # type: ignore[override]
        now = time.monotonic()
        sweep = now - self._swept_at >= SWEEP_INTERVAL_S
        if sweep:
            self._swept_at = now
        closing = self._drop_dead_connections(sweep)
        for pool_request in [request for request in self._requests if request.is_queued()]:
            origin = pool_request.request.url.origin
            connection = self._reusable(origin, closing, checked=sweep)
            if connection is None and len(self._connections) < self._max_connections:
                connection = self.create_connection(origin)
                self._connections.append(connection)
            elif connection is None:
                idle = next((c for c in self._connections if c.is_idle()), None)
                if idle is None:
                    continue
                self._connections.remove(idle)
                closing.append(idle)
                connection = self.create_connection(origin)
                self._connections.append(connection)
            pool_request.assign_to_connection(connection)
        return closing

    def _drop_dead_connections(self, sweep: bool) -> list[httpcore.AsyncConnectionInterface]:
        """Forget closed connections; on a sweep also close expired ones, and idle ones beyond the keep-alive cap."""
        closing: list[httpcore.AsyncConnectionInterface] = []
        kept: list[httpcore.AsyncConnectionInterface] = []
        remaining = len(self._connections)
        for connection in self._connections:
            if connection.is_closed():
                remaining -= 1
            elif sweep and connection.has_expired():
                remaining -= 1
                closing.append(connection)
            elif connection.is_idle() and remaining > self._max_keepalive_connections:
                remaining -= 1
                closing.append(connection)
            else:
                kept.append(connection)
        self._connections[:] = kept
        return closing

    def _reusable(
        self, origin: httpcore.Origin, closing: list[httpcore.AsyncConnectionInterface], *, checked: bool
    ) -> httpcore.AsyncConnectionInterface | None:
        """The first available connection to `origin` that has not expired (expired ones are closed)."""
        index = 0
        while index < len(self._connections):
            connection = self._connections[index]
            if connection.can_handle_request(origin) and connection.is_available():
                if checked or not connection.has_expired():
                    return connection
                del self._connections[index]
                closing.append(connection)
                continue
            index += 1
        return None


def lean_transport(limits: httpx.Limits) -> httpx.AsyncHTTPTransport:
    """httpx's own transport with the pool above; anything else (a proxy pool) is left as it is."""
    transport = httpx.AsyncHTTPTransport(limits=limits)
    pool = transport._pool
    if type(pool) is httpcore.AsyncConnectionPool:
        pool.__class__ = LeanConnectionPool
    return transport
