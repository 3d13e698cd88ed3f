"""Guard state between the processes of one agent session: an SQLite database.

A coding agent starts ``harnessweaver hook`` once per event, often several at once (Codex and
Claude Code run matching hooks concurrently), so the state the stateful guards keep (loop
guard, budget guard, tool-failure guard) lives in SQLite: WAL mode, and one ``BEGIN
IMMEDIATE`` transaction per invocation around reading the state, emitting and writing it
back, so concurrent invocations of one session take turns and no update is lost.

The guards themselves keep their counts in the state store (``harnessweaver.state``): by
default an ``SqliteStore`` on this same file (its ``hw_state_*`` tables), or the store the
spec's ``state:`` names (Redis, PostgreSQL: an org's budget shared by every developer's
agent). What this table keeps is the session's own: its step number, why it was refused for
good, and its generation (``epoch``), which the run-scope keys of the store are named by
(``hookcmd/state.py``), so a session that outlived its lifetime starts its guards afresh. Each
invocation reads and writes its row in short transactions, never across the emit: the store's
own calls, each one atomic, take the file's write lock in between.

A session's end is no reason to forget it: Claude Code and Gemini CLI end every ``-p``
invocation with ``SessionEnd`` and ``--resume`` goes on under the same id. So a row is
forgotten by age only: each write sets when it expires (its event's time plus the lifetime
the command runs with, ``hookcmd/lifetime.py``), and every transaction first deletes the rows
past theirs, through an index, so expiry costs a lookup when there is nothing to delete.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .lifetime import DEFAULT_TTL

__all__ = ["SessionRow", "Store", "default_path", "now"]

BUSY_TIMEOUT_MS: Final = 30_000
"""How long an invocation waits for another one of the same database (milliseconds)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    agent TEXT NOT NULL,
    session TEXT NOT NULL,
    harness TEXT NOT NULL,
    step INTEGER NOT NULL,
    blocked TEXT,
    states TEXT NOT NULL,
    updated REAL NOT NULL,
    expires REAL NOT NULL,
    epoch TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (agent, session, harness)
);
"""

_INDEX = "CREATE INDEX IF NOT EXISTS sessions_expires ON sessions (expires)"


def now() -> float:
    """The time the store ages sessions by (seconds since the epoch; tests replace it)."""
    return time.time()


def default_path() -> Path:
    """``$HARNESSWEAVER_HOOK_STATE``, else ``$XDG_STATE_HOME/harnessweaver/hook-state.sqlite3``
    (``~/.local/state`` when ``XDG_STATE_HOME`` is unset)."""
    given = os.environ.get("HARNESSWEAVER_HOOK_STATE")
    if given:
        return Path(given)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "harnessweaver" / "hook-state.sqlite3"


@dataclass(frozen=True, slots=True)
class SessionRow:
    """What one session keeps: its step count, why it is blocked for good (or ``None``), the
    guards' states of before the state store (JSON text, ``"[]"`` now) and its generation
    (``""``: none yet, a new session)."""

    step: int = 0
    blocked: str | None = None
    states: str = "[]"
    epoch: str = ""


_BUSY = frozenset({sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED})
"""Another connection holds the lock: worth another try."""


class Store:
    """One connection; use :meth:`transaction` around each invocation's read, emit and write."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = path
        self._db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            self._db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self._set_up()
        except BaseException:
            # Not a database, locked, read-only...: the caller gets the error, and the
            # connection is closed now rather than left to the collector (Python 3.13 warns).
            self._db.close()
            raise

    def _set_up(self) -> None:
        """WAL mode and the schema. Several processes opening a new database at once (a warm
        helper's children) can be told "locked" here without SQLite waiting its busy timeout
        (switching to WAL takes an exclusive lock): wait a little and try again, within it."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        for pause in itertools.cycle((0.005, 0.01, 0.02, 0.05)):
            try:
                self._db.execute("PRAGMA journal_mode = WAL")
                self._db.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable, fast
                self._db.executescript(_SCHEMA)
                self._migrate()
                self._db.execute(_INDEX)
                return
            except sqlite3.OperationalError as exc:
                busy = getattr(exc, "sqlite_errorcode", None) in _BUSY
                if not busy or time.monotonic() + pause > deadline:
                    raise
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                time.sleep(pause)

    def _migrate(self) -> None:
        """A database written before rows had an expiry time (``updated`` only): each row
        expires the default lifetime after its last event, and the old index goes. One
        written before rows had a generation: each gets one at its next event."""
        if self._has("expires") and self._has("epoch"):
            return
        self._db.execute("BEGIN IMMEDIATE")
        if not self._has("expires"):  # another process may have done it meanwhile
            self._db.execute("ALTER TABLE sessions ADD COLUMN expires REAL NOT NULL DEFAULT 0")
            self._db.execute("UPDATE sessions SET expires = updated + ?", (DEFAULT_TTL,))
            self._db.execute("DROP INDEX IF EXISTS sessions_updated")
        if not self._has("epoch"):
            self._db.execute("ALTER TABLE sessions ADD COLUMN epoch TEXT NOT NULL DEFAULT ''")
        self._db.execute("COMMIT")

    def _has(self, name: str) -> bool:
        columns = self._db.execute("PRAGMA table_info(sessions)").fetchall()
        return any(column[1] == name for column in columns)

    def close(self) -> None:
        self._db.close()

    def begin(self) -> None:
        """Take the write lock now (``BEGIN IMMEDIATE``): the invocations of a session run
        their read-emit-write one after another."""
        self._db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self._db.execute("COMMIT")

    def rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def load(self, agent: str, session: str, harness: str) -> SessionRow:
        row = self._db.execute(
            "SELECT step, blocked, states, epoch FROM sessions"
            " WHERE agent = ? AND session = ? AND harness = ?",
            (agent, session, harness),
        ).fetchone()
        if row is None:
            return SessionRow()
        return SessionRow(int(row[0]), row[1], str(row[2]), str(row[3]))

    def save(
        self, agent: str, session: str, harness: str, row: SessionRow, at: float, ttl: float
    ) -> None:
        """Write the session's row, seen at ``at``: it expires ``ttl`` seconds later."""
        self._db.execute(
            "INSERT OR REPLACE INTO sessions"
            " (agent, session, harness, step, blocked, states, updated, expires, epoch)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (agent, session, harness, row.step, row.blocked, row.states, at, at + ttl, row.epoch),
        )

    def expire(self, at: float) -> int:
        """Forget the rows whose lifetime ended before ``at``; how many there were."""
        return self._db.execute("DELETE FROM sessions WHERE expires < ?", (at,)).rowcount

    def sessions(self) -> list[tuple[str, str]]:
        """``(agent, session)`` of every row (for tests and inspection)."""
        rows = self._db.execute("SELECT agent, session FROM sessions ORDER BY agent, session")
        return [(str(agent), str(session)) for agent, session in rows]
