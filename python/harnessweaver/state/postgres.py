"""The PostgreSQL backend of the state store (``psycopg`` 3, async).

One transaction per operation. A counter's row in ``hw_state_counter`` is made if missing
(``INSERT ... ON CONFLICT DO NOTHING``) and locked (``SELECT ... FOR UPDATE``) before anything
else, so every operation on one key runs one after the other, across processes and machines;
its holds (``hw_state_hold``) are only touched under that lock. Time is the server's
(``clock_timestamp()``, read after the lock is held), in seconds since the epoch.

The tables (the same as SQLite's, shared with the TypeScript package) are made if missing, once
per store, under a transaction-scoped advisory lock so that many workers starting at once do
not race. Connections come from a small pool of the store's own; a connection that failed or
was interrupted (a timeout) is closed, never reused, and an idle one is checked before use
(a restarted server has closed it), so the store recovers by itself when the server comes back.
Nothing is retried: a transaction whose outcome is unknown (the connection lost at COMMIT) is
reported as StateUnavailable, never run twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import select
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import psycopg

from .store import (
    MARK_TTL,
    Record,
    Reservation,
    StateUnavailable,
    check_counter_args,
    check_key,
    check_life,
    check_version,
    dump_json,
)

if TYPE_CHECKING:
    from pydantic import JsonValue

__all__ = ["SCHEMA", "PostgresStore"]

SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hw_state_counter (key TEXT PRIMARY KEY, "
    "base DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION)",
    "CREATE TABLE IF NOT EXISTS hw_state_hold (key TEXT NOT NULL, hold TEXT NOT NULL, "
    "amount DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, "
    "done BOOLEAN NOT NULL, PRIMARY KEY (key, hold))",
    "CREATE TABLE IF NOT EXISTS hw_state_record (key TEXT PRIMARY KEY, "
    "version BIGINT NOT NULL, value TEXT NOT NULL, expires_at DOUBLE PRECISION)",
    # A call reads a key's live sum and purges its expired rows through these, never all the
    # rows of the key (thousands of committed marks cost nothing).
    "CREATE INDEX IF NOT EXISTS hw_state_hold_live ON hw_state_hold (key, expires_at) "
    "WHERE NOT done",
    "CREATE INDEX IF NOT EXISTS hw_state_hold_expiry ON hw_state_hold (key, expires_at)",
)
_SCHEMA_LOCK = 0x68775F7374617465  # "hw_state": the advisory lock around the CREATEs

_NOW = "SELECT extract(epoch FROM clock_timestamp())::float8"
_CREATE = "INSERT INTO hw_state_counter (key, base, expires_at) VALUES (%s, 0, NULL) "
_CREATE += "ON CONFLICT (key) DO NOTHING"
_LOCK = "SELECT base, expires_at FROM hw_state_counter WHERE key = %s FOR UPDATE"
_PURGE = (
    # The server's now, read with the counter locked; the holds and marks expired by then
    # deleted (index hw_state_hold_expiry); and what is left (the delete's effect is not seen
    # by this statement's SELECT, hence the same condition in its filters): the live sum
    # (index hw_state_hold_live: the marks are not read), the hold's own live amount and
    # whether it is marked (its own row, by the primary key).
    "WITH clock AS MATERIALIZED (SELECT extract(epoch FROM clock_timestamp())::float8 AS now), "
    # The expired rows are found in the order of hw_state_hold_expiry (so the planner walks
    # that index, whatever it estimates of the clock's value or of a key that fills the
    # table) and deleted by their row ids; at most 1,000 a call, the rest by the next call
    # (every read below filters expires_at, so a row left behind counts for nothing).
    "gone AS (DELETE FROM hw_state_hold WHERE ctid = ANY(ARRAY(SELECT ctid FROM hw_state_hold "
    "WHERE key = %(key)s AND expires_at <= (SELECT now FROM clock) ORDER BY expires_at "
    "LIMIT 1000)) AND key = %(key)s AND expires_at <= (SELECT now FROM clock)) "
    "SELECT clock.now, "
    "coalesce((SELECT sum(h.amount) FROM hw_state_hold h WHERE h.key = %(key)s "
    "AND NOT h.done AND h.expires_at > clock.now), 0), "
    "(SELECT h.amount FROM hw_state_hold h WHERE h.key = %(key)s AND h.hold = %(hold)s "
    "AND NOT h.done AND h.expires_at > clock.now), "
    "coalesce((SELECT h.done AND h.expires_at > clock.now FROM hw_state_hold h "
    "WHERE h.key = %(key)s AND h.hold = %(hold)s), false) "
    "FROM clock"
)
_PUT = (
    "INSERT INTO hw_state_hold (key, hold, amount, expires_at, done) VALUES (%s, %s, %s, %s, %s) "
    "ON CONFLICT (key, hold) DO UPDATE SET amount = EXCLUDED.amount, "
    "expires_at = EXCLUDED.expires_at, done = EXCLUDED.done"
)


class _Counter:
    """A locked counter, purged: its base, the sum of its live holds, the hold's own live
    amount (None: not live) and whether the hold is marked (committed); the server's now."""

    __slots__ = ("base", "held", "live", "marked", "now")

    def __init__(
        self, base: float, live: float, held: float | None, marked: bool, now: float
    ) -> None:
        self.base, self.live, self.held, self.marked, self.now = base, live, held, marked, now

    @property
    def total(self) -> float:
        return self.base + self.live


class PostgresStore:
    """A :class:`~harnessweaver.state.store.Store` on PostgreSQL. ``url`` is a libpq
    connection string or ``postgresql://`` URL (credentials allowed); it never appears in an
    error or a repr. At most ``max_connections`` connections at once."""

    backend = "postgres"

    def __init__(
        self, url: str, *, max_connections: int = 10, connect_timeout: float = 2.0
    ) -> None:
        self._url = url
        self._connect_timeout = max(1, round(connect_timeout))  # libpq: whole seconds
        self._max = max_connections
        self._idle: list[psycopg.AsyncConnection[Any]] = []
        self._slots: asyncio.Semaphore | None = None
        self._schema_ready = False
        self._closed = False

    def __repr__(self) -> str:
        return "PostgresStore(backend='postgres')"

    @contextlib.asynccontextmanager
    async def _cursor(self, operation: str) -> AsyncIterator[psycopg.AsyncCursor[Any]]:
        """A cursor in a transaction of its own; any failure is StateUnavailable."""
        if self._closed:
            raise StateUnavailable(self.backend, operation, "closed")
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._max)
        async with self._slots:
            conn = None
            while self._idle and conn is None:
                conn = self._idle.pop()
                if _stale(conn):
                    with contextlib.suppress(Exception):
                        await conn.close()
                    conn = None
            try:
                if conn is None:
                    conn = await psycopg.AsyncConnection.connect(
                        self._url, autocommit=True, connect_timeout=self._connect_timeout
                    )
                    if not self._schema_ready:
                        await self._create_tables(conn)
                async with conn.transaction(), conn.cursor() as cursor:
                    yield cursor
            except BaseException as exc:
                if conn is not None:
                    with contextlib.suppress(Exception):
                        await conn.close()
                if isinstance(exc, psycopg.Error | OSError):
                    raise StateUnavailable.of(self.backend, operation, exc) from None
                raise
            else:
                self._idle.append(conn)

    async def _create_tables(self, conn: psycopg.AsyncConnection[Any]) -> None:
        async with conn.transaction(), conn.cursor() as cursor:
            await cursor.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in SCHEMA:
                await cursor.execute(statement)
        self._schema_ready = True

    async def _counter(
        self, cursor: psycopg.AsyncCursor[Any], key: str, hold: str, *, create: bool
    ) -> _Counter | None:
        """Lock the counter (made first when ``create``), then purge what expired."""
        if create:
            await cursor.execute(_CREATE, (key,))
        await cursor.execute(_LOCK, (key,))
        row = await cursor.fetchone()
        if row is None:
            return None
        base, expires_at = row
        await cursor.execute(_PURGE, {"key": key, "hold": hold})
        now, live, held, marked = await _one(cursor)
        if expires_at is not None and expires_at <= now:  # its life is over: a fresh counter
            await cursor.execute("DELETE FROM hw_state_hold WHERE key = %s", (key,))
            await cursor.execute(
                "UPDATE hw_state_counter SET base = 0, expires_at = NULL WHERE key = %s", (key,)
            )
            return _Counter(0.0, 0.0, None, False, now)
        return _Counter(float(base), float(live), held, bool(marked), now)

    async def _touch(
        self, cursor: psycopg.AsyncCursor[Any], key: str, now: float, life: float | None
    ) -> None:
        expires = None if life is None else now + life
        await cursor.execute(
            "UPDATE hw_state_counter SET expires_at = %s WHERE key = %s", (expires, key)
        )

    async def reserve(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        limit: float | None,
        ttl: float,
        life: float | None = None,
    ) -> Reservation:
        check_counter_args(key, hold, amount, limit=limit, ttl=ttl, ttl_required=True, life=life)
        async with self._cursor("reserve") as cursor:
            counter = await self._counter(cursor, key, hold, create=True)
            assert counter is not None
            total = counter.total
            if counter.held is not None or counter.marked:
                return Reservation(True, total, True)
            if limit is not None and total + amount > limit:
                return Reservation(False, total, False)
            await cursor.execute(_PUT, (key, hold, amount, counter.now + ttl, False))
            await self._touch(cursor, key, counter.now, life)
            return Reservation(True, total + amount, False)

    async def commit(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        ttl: float | None = None,
        life: float | None = None,
    ) -> float:
        check_counter_args(key, hold, amount, ttl=ttl, life=life)
        async with self._cursor("commit") as cursor:
            counter = await self._counter(cursor, key, hold, create=True)
            assert counter is not None
            if counter.marked:
                return counter.total
            live = counter.live - (counter.held or 0.0)
            base = counter.base
            if ttl is not None:  # an expiring charge (a rate-limit window)
                await cursor.execute(_PUT, (key, hold, amount, counter.now + ttl, False))
                live += amount
            else:
                await cursor.execute(_PUT, (key, hold, amount, counter.now + MARK_TTL, True))
                base += amount
            await cursor.execute(
                "UPDATE hw_state_counter SET base = %s, expires_at = %s WHERE key = %s",
                (base, None if life is None else counter.now + life, key),
            )
            return base + live

    async def release(self, key: str, hold: str) -> float:
        check_key(key)
        check_key(hold, "hold id")
        async with self._cursor("release") as cursor:
            counter = await self._counter(cursor, key, hold, create=False)
            if counter is None:
                return 0.0
            if counter.held is None:
                return counter.total
            await cursor.execute(
                "DELETE FROM hw_state_hold WHERE key = %s AND hold = %s AND NOT done", (key, hold)
            )
            return counter.base + (counter.live - counter.held)

    async def total(self, key: str) -> float:
        check_key(key)
        async with self._cursor("total") as cursor:
            counter = await self._counter(cursor, key, "", create=False)
            return 0.0 if counter is None else counter.total

    async def read(self, key: str) -> Record:
        check_key(key)
        async with self._cursor("read") as cursor:
            await cursor.execute(
                "SELECT version, value, expires_at, extract(epoch FROM clock_timestamp())::float8"
                " FROM hw_state_record WHERE key = %s",
                (key,),
            )
            row = await cursor.fetchone()
        if row is None or (row[2] is not None and row[2] <= row[3]):
            return Record(None, 0)
        return Record(json.loads(row[1]), int(row[0]))

    async def swap(
        self, key: str, version: int, value: JsonValue, *, life: float | None = None
    ) -> bool:
        check_key(key)
        check_life(life)
        check_version(version)
        data = dump_json(value)
        async with self._cursor("swap") as cursor:
            await cursor.execute(
                "INSERT INTO hw_state_record (key, version, value, expires_at) "
                "VALUES (%s, 0, 'null', NULL) ON CONFLICT (key) DO NOTHING",
                (key,),
            )
            await cursor.execute(
                "SELECT version, expires_at FROM hw_state_record WHERE key = %s FOR UPDATE",
                (key,),
            )
            current, expires_at = await _one(cursor)
            await cursor.execute(_NOW)
            (now,) = await _one(cursor)
            if expires_at is not None and expires_at <= now:
                current = 0  # its life is over: no record
            if current != version:
                if current == 0:  # none (or a placeholder): do not leave it behind
                    await cursor.execute("DELETE FROM hw_state_record WHERE key = %s", (key,))
                return False
            await cursor.execute(
                "UPDATE hw_state_record SET version = %s, value = %s, expires_at = %s "
                "WHERE key = %s",
                (current + 1, data, None if life is None else now + life, key),
            )
            return True

    async def delete(self, *keys: str) -> None:
        for key in keys:
            check_key(key)
        if not keys:
            return
        names = sorted(set(keys))
        async with self._cursor("delete") as cursor:
            # The counters' locks first, in one order: as every other operation takes them.
            await cursor.execute(
                "SELECT key FROM hw_state_counter WHERE key = ANY(%s) ORDER BY key FOR UPDATE",
                (names,),
            )
            await cursor.execute("DELETE FROM hw_state_hold WHERE key = ANY(%s)", (names,))
            await cursor.execute("DELETE FROM hw_state_counter WHERE key = ANY(%s)", (names,))
            await cursor.execute("DELETE FROM hw_state_record WHERE key = ANY(%s)", (names,))

    async def close(self) -> None:
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                await conn.close()


def _stale(conn: psycopg.AsyncConnection[Any]) -> bool:
    """Whether an idle connection is of no use: closed, broken, or readable (an idle
    connection has nothing to read; a server gone or restarted has closed it)."""
    if conn.closed or conn.broken:
        return True
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


async def _one(cursor: psycopg.AsyncCursor[Any]) -> Any:
    row = await cursor.fetchone()
    assert row is not None
    return row
