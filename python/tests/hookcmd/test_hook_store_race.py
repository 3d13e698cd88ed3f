"""Opening the state database: several processes opening a new database at the same moment
(a warm helper forks one child per event, all within milliseconds) all get it. SQLite may
answer ``PRAGMA journal_mode = WAL`` and the schema with "database is locked" without waiting
for its busy timeout; the store waits and tries again instead of failing the event."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from harnessweaver.hookcmd.store import Store

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forks processes")


def _open(path: str, barrier: object, results: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    try:
        Store(Path(path)).close()
        results.put("ok")  # type: ignore[attr-defined]
    except Exception as exc:  # what the hook command would have failed closed on
        results.put(type(exc).__name__)  # type: ignore[attr-defined]


def test_processes_opening_a_new_database_at_once_all_get_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    count = 8
    for attempt in range(15):
        path = str(tmp_path / f"state-{attempt}.sqlite3")
        barrier, results = context.Barrier(count), context.Queue()
        procs = [context.Process(target=_open, args=(path, barrier, results)) for _ in range(count)]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(120)
        assert sorted(results.get(timeout=60) for _ in range(count)) == ["ok"] * count
