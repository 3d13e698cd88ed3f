"""``SqliteStore``: state shared by the processes of one machine, in one SQLite file.

The embedded default across processes (the hook command's per-session store, several local
workers): the standard library's ``sqlite3``, no server. What makes it safe across processes:

- WAL journal: readers never wait for the writer, the writer never waits for readers;
- every write is one ``BEGIN IMMEDIATE`` transaction: it takes the file's write lock *before*
  reading, so a read-compute-write (a reservation against a limit) cannot interleave with
  another process's: no overspend, no lost charge;
- ``busy_timeout``: a process that finds the lock taken waits for it instead of failing.

Calls run in a worker thread (:func:`anyio.to_thread.run_sync`), so the event loop never blocks
on the file or on another process's lock; one connection per store, used by one thread at a
time. Any ``sqlite3`` or OS error (a read-only file, a full disk, ``SQLITE_FULL`` past
``max_pages``, a corrupt file) is :class:`StateUnavailable`; the connection is dropped and the
next call opens it again, so the store recovers when the file does. A call its caller stops
waiting for (a view's timeout) finishes in its thread: its write may still land, which the hold
ids make harmless (a retried reserve is ``repeated``, a retried commit a no-op). Time is the
process's wall clock (:func:`time.time`), which every process on the machine shares.

The tables are the ones PostgreSQL uses (docs/state.md): ``hw_state_counter``,
``hw_state_hold`` (live holds ``done = 0``, committed marks ``done = 1``) and
``hw_state_record``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import anyio.to_thread

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

__all__ = ["SCHEMA", "SqliteStore"]

T = TypeVar("T")
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hw_state_counter (key TEXT PRIMARY KEY, "
    "base DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION)",
    "CREATE TABLE IF NOT EXISTS hw_state_hold (key TEXT NOT NULL, hold TEXT NOT NULL, "
    "amount DOUBLE PRECISION NOT NULL, expires_at DOUBLE PRECISION NOT NULL, "
    "done INTEGER NOT NULL, PRIMARY KEY (key, hold))",
    "CREATE TABLE IF NOT EXISTS hw_state_record (key TEXT PRIMARY KEY, "
    "version BIGINT NOT NULL, value TEXT NOT NULL, expires_at DOUBLE PRECISION)",
    # A call reads a key's live sum and purges its expired rows through these, never all the
    # rows of the key (thousands of committed marks cost nothing).
    "CREATE INDEX IF NOT EXISTS hw_state_hold_live ON hw_state_hold (key, expires_at) "
    "WHERE NOT done",
    "CREATE INDEX IF NOT EXISTS hw_state_hold_expiry ON hw_state_hold (key, expires_at)",
)
"""The tables and their indexes, created when missing (the same as PostgreSQL's)."""
SWEEP_EVERY = 256
"""Every this many writes, up to this many expired rows of keys nobody touches any more are
dropped from each table (a key's own expired rows go at each call on it)."""
WAL_RETRY = 0.005
"""Seconds between two tries of the switch to WAL of a file other processes are opening."""

Work = Callable[[sqlite3.Connection, float], T]


def _total(conn: sqlite3.Connection, key: str, now: float) -> float:
    """Base + the live holds' sum, through the index hw_state_hold_live (marks not read)."""
    row = conn.execute(
        "SELECT c.base + COALESCE((SELECT SUM(amount) FROM hw_state_hold h "
        "WHERE h.key = ? AND NOT h.done AND h.expires_at > ?), 0) "
        "FROM hw_state_counter c WHERE c.key = ?",
        (key, now, key),
    ).fetchone()
    return 0.0 if row is None else float(row[0])


def _purge(conn: sqlite3.Connection, key: str, now: float) -> None:
    """Drop ``key``'s counter when its life is over, and its expired holds and marks (index
    hw_state_hold_expiry: the rows still alive are not read)."""
    gone = conn.execute(
        "DELETE FROM hw_state_counter WHERE key = ? AND expires_at <= ?", (key, now)
    ).rowcount
    if gone:
        conn.execute("DELETE FROM hw_state_hold WHERE key = ?", (key,))
    else:
        conn.execute("DELETE FROM hw_state_hold WHERE key = ? AND expires_at <= ?", (key, now))


def _touch(conn: sqlite3.Connection, key: str, now: float, life: float | None) -> None:
    """The counter row exists and its life starts again now."""
    expires = None if life is None else now + life
    conn.execute(
        "INSERT INTO hw_state_counter (key, base, expires_at) VALUES (?, 0, ?) "
        "ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at",
        (key, expires),
    )


def _hold_done(conn: sqlite3.Connection, key: str, hold: str) -> int | None:
    """None: the hold id is unknown; 0: a live hold; 1: committed."""
    row = conn.execute(
        "SELECT done FROM hw_state_hold WHERE key = ? AND hold = ?", (key, hold)
    ).fetchone()
    return None if row is None else int(row[0])


class SqliteStore:
    """A :class:`~harnessweaver.state.Store` in the SQLite file ``path`` (created if missing),
    safe for many processes at once.

    ``busy_timeout``: seconds a call waits for another process's write lock; ``max_pages``: a
    bound on the file's size in pages (``PRAGMA max_page_count``): past it, writes fail as
    :class:`StateUnavailable` as on a full disk; ``clock``: seconds (wall clock)."""

    backend = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 5.0,
        max_pages: int | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not (math.isfinite(busy_timeout) and busy_timeout >= 0):
            raise ValueError("busy_timeout is a number of seconds >= 0")
        if max_pages is not None and max_pages < 1:
            raise ValueError("max_pages is at least 1")
        self.path = os.fspath(path)
        self.busy_timeout = float(busy_timeout)
        self.max_pages = max_pages
        self._clock = clock
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._closed = False
        self._writes = 0

    def __repr__(self) -> str:
        return "SqliteStore()"  # the path may name a user or a secret folder: not shown

    # -- the connection and the transaction, in the worker thread ---------------------

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path,
            timeout=self.busy_timeout,
            isolation_level=None,  # transactions are ours: BEGIN IMMEDIATE ... COMMIT
            check_same_thread=False,  # one thread at a time, under self._lock
        )
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            if self.max_pages is not None:
                conn.execute(f"PRAGMA max_page_count = {int(self.max_pages)}")
            self._use_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable across process crashes
            conn.execute("BEGIN IMMEDIATE")
            for statement in SCHEMA:
                conn.execute(statement)
            conn.execute("COMMIT")
        except BaseException:
            conn.close()
            raise
        return conn

    def _use_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL. Processes that open a new file at once race for it: the
        switch needs the file to itself, and SQLite answers "database is locked" (or the old
        mode) at once, without waiting ``busy_timeout``; so it is tried again until then."""
        deadline = time.monotonic() + self.busy_timeout
        while True:
            try:
                (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
                if str(mode).lower() == "wal":
                    return
                failure = sqlite3.OperationalError("the file cannot use a WAL journal")
            except sqlite3.OperationalError as exc:
                failure = exc
            if time.monotonic() >= deadline:
                raise failure
            time.sleep(WAL_RETRY)

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(sqlite3.Error):
                conn.close()

    def _run(self, operation: str, work: Work[T], write: bool) -> T:
        with self._lock:
            if self._closed:
                raise StateUnavailable(self.backend, operation, "closed")
            try:
                if self._conn is None:
                    self._conn = self._connect()
                conn = self._conn
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    now = self._clock()
                    result = work(conn, now)
                    if write:
                        self._writes += 1
                        if self._writes % SWEEP_EVERY == 0:
                            self._sweep(conn, now)
                    conn.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                return result
            except (sqlite3.Error, OSError, MemoryError) as exc:
                self._drop()  # opened again by the next call: the store recovers
                raise StateUnavailable.of(self.backend, operation, exc) from None

    @staticmethod
    def _sweep(conn: sqlite3.Connection, now: float) -> None:
        dead = conn.execute(
            "SELECT key FROM hw_state_counter WHERE expires_at <= ? LIMIT ?", (now, SWEEP_EVERY)
        ).fetchall()
        for (key,) in dead:
            conn.execute("DELETE FROM hw_state_hold WHERE key = ?", (key,))
            conn.execute("DELETE FROM hw_state_counter WHERE key = ?", (key,))
        conn.execute(
            "DELETE FROM hw_state_hold WHERE rowid IN (SELECT rowid FROM hw_state_hold "
            "WHERE expires_at <= ? LIMIT ?)",
            (now, SWEEP_EVERY),
        )
        conn.execute(
            "DELETE FROM hw_state_record WHERE key IN (SELECT key FROM hw_state_record "
            "WHERE expires_at <= ? LIMIT ?)",
            (now, SWEEP_EVERY),
        )

    async def _call(self, operation: str, work: Work[T], *, write: bool = True) -> T:
        run = functools.partial(self._run, operation, work, write)
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)

    # -- the Store interface -------------------------------------------------------------

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

        def work(conn: sqlite3.Connection, now: float) -> Reservation:
            _purge(conn, key, now)
            total = _total(conn, key, now)
            if _hold_done(conn, key, hold) is not None:
                return Reservation(True, total, True)
            if limit is not None and total + amount > limit:
                return Reservation(False, total, False)
            _touch(conn, key, now, life)
            conn.execute(
                "INSERT INTO hw_state_hold (key, hold, amount, expires_at, done) "
                "VALUES (?, ?, ?, ?, 0)",
                (key, hold, float(amount), now + ttl),
            )
            return Reservation(True, total + amount, False)  # as memory and PostgreSQL answer

        return await self._call("reserve", work)

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

        def work(conn: sqlite3.Connection, now: float) -> float:
            _purge(conn, key, now)
            if _hold_done(conn, key, hold) == 1:
                return _total(conn, key, now)
            _touch(conn, key, now, life)
            if ttl is not None:
                row = (key, hold, float(amount), now + ttl, 0)
            else:
                conn.execute(
                    "UPDATE hw_state_counter SET base = base + ? WHERE key = ?",
                    (float(amount), key),
                )
                row = (key, hold, float(amount), now + MARK_TTL, 1)
            conn.execute(
                "INSERT INTO hw_state_hold (key, hold, amount, expires_at, done) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (key, hold) DO UPDATE SET "
                "amount = excluded.amount, expires_at = excluded.expires_at, "
                "done = excluded.done",
                row,
            )
            return _total(conn, key, now)

        return await self._call("commit", work)

    async def release(self, key: str, hold: str) -> float:
        check_key(key)
        check_key(hold, "hold id")

        def work(conn: sqlite3.Connection, now: float) -> float:
            _purge(conn, key, now)
            conn.execute(
                "DELETE FROM hw_state_hold WHERE key = ? AND hold = ? AND done = 0", (key, hold)
            )
            return _total(conn, key, now)

        return await self._call("release", work)

    async def total(self, key: str) -> float:
        check_key(key)

        def work(conn: sqlite3.Connection, now: float) -> float:
            row = conn.execute(
                "SELECT c.base + COALESCE((SELECT SUM(amount) FROM hw_state_hold h "
                "WHERE h.key = ? AND NOT h.done AND h.expires_at > ?), 0) "
                "FROM hw_state_counter c WHERE c.key = ? "
                "AND (c.expires_at IS NULL OR c.expires_at > ?)",
                (key, now, key, now),
            ).fetchone()
            return 0.0 if row is None else float(row[0])

        return await self._call("total", work, write=False)

    async def read(self, key: str) -> Record:
        check_key(key)

        def work(conn: sqlite3.Connection, now: float) -> Record:
            row = conn.execute(
                "SELECT version, value FROM hw_state_record WHERE key = ? "
                "AND (expires_at IS NULL OR expires_at > ?)",
                (key, now),
            ).fetchone()
            if row is None:
                return Record(None, 0)
            value: JsonValue = json.loads(row[1])
            return Record(value, int(row[0]))

        return await self._call("read", work, write=False)

    async def swap(
        self, key: str, version: int, value: JsonValue, *, life: float | None = None
    ) -> bool:
        check_key(key)
        check_version(version)
        check_life(life)
        text = dump_json(value)

        def work(conn: sqlite3.Connection, now: float) -> bool:
            conn.execute(
                "DELETE FROM hw_state_record WHERE key = ? AND expires_at <= ?", (key, now)
            )
            row = conn.execute(
                "SELECT version FROM hw_state_record WHERE key = ?", (key,)
            ).fetchone()
            if (0 if row is None else int(row[0])) != version:
                return False
            expires = None if life is None else now + life
            conn.execute(
                "INSERT INTO hw_state_record (key, version, value, expires_at) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
                "version = excluded.version, value = excluded.value, "
                "expires_at = excluded.expires_at",
                (key, version + 1, text, expires),
            )
            return True

        return await self._call("swap", work)

    async def delete(self, *keys: str) -> None:
        for key in keys:
            check_key(key)

        def work(conn: sqlite3.Connection, now: float) -> None:
            for key in keys:
                conn.execute("DELETE FROM hw_state_hold WHERE key = ?", (key,))
                conn.execute("DELETE FROM hw_state_counter WHERE key = ?", (key,))
                conn.execute("DELETE FROM hw_state_record WHERE key = ?", (key,))

        if keys:
            await self._call("delete", work)

    async def close(self) -> None:
        def shut() -> None:
            with self._lock:
                self._closed = True
                self._drop()

        await anyio.to_thread.run_sync(shut)
