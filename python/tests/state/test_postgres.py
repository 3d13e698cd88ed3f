"""PostgresStore against a real PostgreSQL (python/tests/state/servers.py): the contract every
store keeps, then many asyncio tasks and several processes on one limit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from concurrency import check_processes, check_tasks
from contract import StoreContract
from many import check_many_marks
from servers import SECRET, postgres_url

from harnessweaver.state import Store

__all__ = ["postgres_url"]  # the session's server, a fixture

PostgresStore = pytest.importorskip("harnessweaver.state.postgres").PostgresStore


class TestPostgresContract(StoreContract):
    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"  # psycopg.AsyncConnection

    @pytest.fixture
    def make_store(self, postgres_url: str) -> Callable[[], Store]:
        return lambda: PostgresStore(postgres_url)

    @pytest.fixture
    def secrets(self, postgres_url: str) -> tuple[str, ...]:
        return (postgres_url, SECRET)


def test_many_tasks_one_limit(postgres_url: str) -> None:
    asyncio.run(check_tasks(lambda: PostgresStore(postgres_url)))


def test_several_processes_one_limit(postgres_url: str) -> None:
    async def total(key: str) -> float:
        store = PostgresStore(postgres_url)
        try:
            return await store.total(key)
        finally:
            await store.close()

    check_processes("postgres", postgres_url, lambda key: asyncio.run(total(key)))


def test_the_tables_are_the_briefs(postgres_url: str) -> None:
    """The tables SQLite has too, which a TypeScript worker reads."""
    import psycopg

    async def fill() -> None:
        store = PostgresStore(postgres_url)
        try:
            await store.commit("hw1/layout/k", "a", 2)
            await store.reserve("hw1/layout/k", "b", 3, limit=None, ttl=60, life=3600)
            await store.swap("hw1/layout/k", 0, {"n": 1})
        finally:
            await store.close()

    asyncio.run(fill())
    with psycopg.connect(postgres_url) as conn:
        base, expires = conn.execute(
            "SELECT base, expires_at FROM hw_state_counter WHERE key = 'hw1/layout/k'"
        ).fetchone() or (None, None)
        assert base == 2 and expires is not None
        holds = conn.execute(
            "SELECT hold, amount, done FROM hw_state_hold WHERE key = 'hw1/layout/k' ORDER BY hold"
        ).fetchall()
        assert holds == [("a", 2.0, True), ("b", 3.0, False)]
        record = conn.execute(
            "SELECT version, value, expires_at FROM hw_state_record WHERE key = 'hw1/layout/k'"
        ).fetchone()
        assert record == (1, '{"n":1}', None)


def test_many_marks_exact_totals(postgres_url: str) -> None:
    asyncio.run(check_many_marks(lambda: PostgresStore(postgres_url), "hw1/many/postgres"))
