"""SqliteStore: the contract on one file, many processes on one file, and a file that
cannot be written (read-only, full) as StateUnavailable, recovering when it can again."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest
from contract import StoreContract
from many import check_many_marks

from harnessweaver.state import Record, SqliteStore, StateUnavailable, StateView, Store

pytestmark = pytest.mark.anyio
PYTHONPATH = str(Path(__file__).resolve().parents[2])
"""``python/``: the package the children import."""


class TestSqliteContract(StoreContract):
    @pytest.fixture
    def make_store(self, tmp_path: Path) -> Callable[[], Store]:
        path = tmp_path / "secret-folder" / "state.db"
        path.parent.mkdir()
        return lambda: SqliteStore(path)  # each one its own connection, as a process has

    @pytest.fixture
    def secrets(self, tmp_path: Path) -> tuple[str, ...]:
        return ("secret-folder",)


def _child(code: str, **env: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": PYTHONPATH, **env},
    )


HAMMER = """
    import json, os, anyio
    from harnessweaver.state import SqliteStore

    async def main():
        store = SqliteStore(os.environ["DB"], busy_timeout=30)
        me, granted = os.environ["ME"], 0
        for i in range(int(os.environ["N"])):
            hold = f"{me}/{i}"
            got = await store.reserve("budget", hold, 1, limit=int(os.environ["LIMIT"]), ttl=60)
            if got.granted:
                granted += 1
                await store.commit("budget", hold, 1)
                await store.commit("budget", hold, 1)  # a retry: never charged twice
            await store.commit("shared", f"call{i % 40}", 1)  # every process charges the same 40
            if i % 3 == 0:
                record = await store.read("count")
                while not await store.swap("count", record.version, (record.value or 0) + 1):
                    record = await store.read("count")
        await store.close()
        print(json.dumps({"granted": granted}))

    anyio.run(main)
"""


async def test_many_processes_on_one_file_no_lost_or_double_charge(tmp_path: Path) -> None:
    db, processes, each, limit = tmp_path / "state.db", 6, 120, 500
    children = [
        _child(HAMMER, DB=str(db), ME=str(n), N=str(each), LIMIT=str(limit))
        for n in range(processes)
    ]
    granted = 0
    for child in children:
        out, err = child.communicate(timeout=240)
        assert child.returncode == 0, err
        granted += json.loads(out)["granted"]
    store = SqliteStore(db)
    assert granted == limit  # 720 asked, exactly the limit held: no overspend, none lost
    assert await store.total("budget") == limit
    assert await store.total("shared") == 40
    assert await store.read("count") == Record(processes * len(range(0, each, 3)), 240)
    await store.close()


READ_ONLY = """
    import anyio, os, tempfile
    from harnessweaver.state import SqliteStore, StateUnavailable

    async def main():
        if os.environ.get("AS_NOBODY"):  # root writes any file: become a user who cannot
            with tempfile.TemporaryDirectory() as scratch:  # every module imported first
                warm = SqliteStore(os.path.join(scratch, "warm.db"))
                await warm.commit("k", "h", 1)
                await warm.close()
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        store = SqliteStore(os.environ["DB"])
        calls = [
            lambda: store.reserve("k", "h", 1, limit=None, ttl=60),
            lambda: store.commit("k", "h", 1),
            lambda: store.release("k", "h"),
            lambda: store.swap("r", 1, "y"),
            lambda: store.delete("k"),
        ]
        for call in calls:
            try:
                await call()
            except StateUnavailable as exc:
                assert exc.backend == "sqlite", exc
                assert os.environ["DB"] not in str(exc)
                print(exc.operation, exc.cause)
            else:
                raise SystemExit("written to a read-only file")

    anyio.run(main)
"""


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder another user can read (``tmp_path`` is private to this one)."""
    folder = Path(tempfile.mkdtemp(prefix="hw-state-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def test_a_read_only_file_is_unavailable(shared_dir: Path) -> None:
    db = shared_dir / "state.db"
    store = SqliteStore(db)
    await store.commit("k", "old", 1)
    await store.swap("r", 0, "x")
    await store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for leftover in shared_dir.iterdir():
        leftover.chmod(0o444)
    nobody = {"AS_NOBODY": "1"} if os.geteuid() == 0 else {}
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(READ_ONLY)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": PYTHONPATH, "DB": str(db), **nobody},
        timeout=60,
    )
    assert child.returncode == 0, child.stderr
    assert [line.split()[0] for line in child.stdout.splitlines()] == [
        "reserve",
        "commit",
        "release",
        "swap",
        "delete",
    ]
    db.chmod(0o644)
    store = SqliteStore(db)
    assert (await store.total("k"), await store.read("r")) == (1, Record("x", 1))
    await store.close()


async def test_a_full_file_is_unavailable_and_recovers(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = SqliteStore(db, max_pages=12)
    written: list[str] = []
    with pytest.raises(StateUnavailable) as caught:
        for i in range(1000):
            await store.swap(f"r{i}", 0, "x" * 2000)
            written.append(f"r{i}")
    assert (caught.value.backend, caught.value.operation) == ("sqlite", "swap")
    assert written and str(db) not in str(caught.value)
    assert await store.read(written[0]) == Record("x" * 2000, 1)  # reading still works
    await store.delete(*written)  # room again: the same store writes again
    assert await store.swap("after", 0, "y" * 2000)
    await store.close()


async def test_an_unopenable_path_is_unavailable_then_recovers(tmp_path: Path) -> None:
    db = tmp_path / "missing-folder" / "state.db"
    store = SqliteStore(db)
    with pytest.raises(StateUnavailable) as caught:
        await store.commit("k", "h", 1)
    assert caught.value.cause == "OperationalError"
    assert "missing-folder" not in str(caught.value)
    db.parent.mkdir()
    assert await store.commit("k", "h", 1) == 1
    await store.close()


async def test_a_locked_file_never_blocks_the_event_loop(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = SqliteStore(db, busy_timeout=5)
    await store.commit("k", "a", 1)
    other = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    ticks = 0
    result: list[float] = []

    async def charge() -> None:
        result.append(await store.commit("k", "b", 1))

    async with anyio.create_task_group() as tg:
        tg.start_soon(charge)
        for _ in range(20):
            await anyio.sleep(0.01)
            ticks += 1
        assert not result  # still waiting for the lock, while the loop went on
        other.execute("COMMIT")
    other.close()
    assert ticks == 20 and result == [2]
    await store.close()


async def test_a_view_times_out_on_a_locked_file(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = SqliteStore(db, busy_timeout=5)
    await store.total("k")
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    view = StateView(store, layer="app", item="budget", fail_mode="closed", timeout=0.1)
    started = time.monotonic()
    with pytest.raises(StateUnavailable) as caught:
        await view.commit("k", "a", 1)
    assert time.monotonic() - started < 1.5
    assert caught.value.cause == "timed out"
    other.execute("COMMIT")
    other.close()
    await anyio.sleep(0.2)  # the abandoned call may finish in its thread: charged once at most
    assert await view.commit("k", "a", 1) == 1
    await store.close()


async def test_the_tables_are_the_shared_layout(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = SqliteStore(db)
    await store.reserve("k", "live", 2, limit=None, ttl=60)
    await store.commit("k", "done", 3)
    await store.swap("k", 0, {"a": 1})
    await store.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert conn.execute("SELECT key, base FROM hw_state_counter").fetchall() == [("k", 3.0)]
        holds = conn.execute("SELECT hold, amount, done FROM hw_state_hold ORDER BY hold")
        assert holds.fetchall() == [("done", 3.0, 1), ("live", 2.0, 0)]
        records = conn.execute("SELECT key, version, value FROM hw_state_record")
        assert records.fetchall() == [("k", 1, '{"a":1}')]


def test_repr_hides_the_path(tmp_path: Path) -> None:
    assert repr(SqliteStore(tmp_path / "secret")) == "SqliteStore()"


def test_many_marks_exact_totals(tmp_path: Path) -> None:
    anyio.run(check_many_marks, lambda: SqliteStore(tmp_path / "many.db"), "hw1/many/sqlite")


def test_the_indexes_serve_a_call(tmp_path: Path) -> None:
    """The live sum and the purge go through the indexes, never all the rows of a key."""
    from harnessweaver.state.sqlite import SCHEMA

    conn = sqlite3.connect(tmp_path / "plan.db")
    try:
        for statement in SCHEMA:
            conn.execute(statement)
        plans = {
            "hw_state_hold_live": "SELECT SUM(amount) FROM hw_state_hold "
            "WHERE key = ? AND NOT done AND expires_at > ?",
            "hw_state_hold_expiry": "DELETE FROM hw_state_hold WHERE key = ? AND expires_at <= ?",
        }
        for index, query in plans.items():
            plan = " ".join(
                str(row) for row in conn.execute("EXPLAIN QUERY PLAN " + query, ("k", 1.0))
            )
            assert index in plan, plan
    finally:
        conn.close()


async def test_stores_opening_a_new_file_at_once_all_answer(tmp_path: Path) -> None:
    # The switch of a new file to WAL needs the file to itself, and SQLite answers "database
    # is locked" at once to the others, without waiting its busy timeout: before the store
    # tried again, about 1 in 20 of these files refused a store its first call.
    refused: list[str] = []

    async def first_read(store: SqliteStore) -> None:
        try:
            assert await store.read("k") == Record(None, 0)
        except StateUnavailable as exc:
            refused.append(str(exc))

    for n in range(60):
        stores = [SqliteStore(tmp_path / f"new-{n}.sqlite3") for _ in range(6)]
        try:
            async with anyio.create_task_group() as tg:
                for store in stores:
                    tg.start_soon(first_read, store)
        finally:
            for store in stores:
                await store.close()
    assert refused == []
