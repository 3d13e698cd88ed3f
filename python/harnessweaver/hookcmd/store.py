"""Guard state between the processes of one agent session: an SQLite database.

A coding agent starts ``harnessweaver hook`` once per event, often several at once (Codex and
Claude Code run matching hooks concurrently), so the state the stateful guards keep (loop
guard, budget guard, tool-failure guard) lives in SQLite: WAL mode, and one ``BEGIN
IMMEDIATE`` transaction per invocation around reading the state, emitting and writing it
back, so concurrent invocations of one session take turns and no update is lost. A session's
rows go at its end (``SessionEnd``); rows of sessions that never ended go after
:data:`EXPIRE_AFTER` seconds without an event.
"""

from __future__ import annotations

import itertools
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["EXPIRE_AFTER", "SessionRow", "Store", "default_path"]

EXPIRE_AFTER: Final = 7 * 24 * 3600.0
"""Seconds after its last event that a session that never ended is forgotten."""

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
    PRIMARY KEY (agent, session, harness)
);
CREATE INDEX IF NOT EXISTS sessions_updated ON sessions (updated);
"""


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
    """What one session keeps: its step count, why it is blocked for good (or ``None``) and
    the guards' states (JSON text)."""

    step: int = 0
    blocked: str | None = None
    states: str = "[]"


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
                return
            except sqlite3.OperationalError as exc:
                busy = getattr(exc, "sqlite_errorcode", None) in _BUSY
                if not busy or time.monotonic() + pause > deadline:
                    raise
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                time.sleep(pause)

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
            "SELECT step, blocked, states FROM sessions"
            " WHERE agent = ? AND session = ? AND harness = ?",
            (agent, session, harness),
        ).fetchone()
        return SessionRow() if row is None else SessionRow(int(row[0]), row[1], str(row[2]))

    def save(self, agent: str, session: str, harness: str, row: SessionRow) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO sessions"
            " (agent, session, harness, step, blocked, states, updated)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (agent, session, harness, row.step, row.blocked, row.states, time.time()),
        )

    def end(self, agent: str, session: str) -> None:
        """Forget the session (every harness's state of it)."""
        self._db.execute("DELETE FROM sessions WHERE agent = ? AND session = ?", (agent, session))

    def expire(self, now: float | None = None) -> None:
        """Forget sessions with no event for :data:`EXPIRE_AFTER` seconds."""
        cutoff = (time.time() if now is None else now) - EXPIRE_AFTER
        self._db.execute("DELETE FROM sessions WHERE updated < ?", (cutoff,))

    def sessions(self) -> list[tuple[str, str]]:
        """``(agent, session)`` of every row (for tests and inspection)."""
        rows = self._db.execute("SELECT agent, session FROM sessions ORDER BY agent, session")
        return [(str(agent), str(session)) for agent, session in rows]
