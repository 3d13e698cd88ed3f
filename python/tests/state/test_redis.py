"""RedisStore against a real redis-server (python/tests/state/servers.py): the contract every
store keeps, then many asyncio tasks and several processes on one limit."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from concurrency import check_processes, check_tasks
from contract import StoreContract
from many import check_many_marks
from servers import SECRET, redis_url

from harnessweaver.state import Store

__all__ = ["redis_url"]  # the session's server, a fixture

RedisStore = pytest.importorskip("harnessweaver.state.redis").RedisStore


class TestRedisContract(StoreContract):
    @pytest.fixture
    def anyio_backend(self) -> str:
        return "asyncio"  # redis.asyncio

    @pytest.fixture
    def make_store(self, redis_url: str) -> Callable[[], Store]:
        return lambda: RedisStore(redis_url)

    @pytest.fixture
    def secrets(self, redis_url: str) -> tuple[str, ...]:
        return (redis_url, SECRET)


def test_many_tasks_one_limit(redis_url: str) -> None:
    asyncio.run(check_tasks(lambda: RedisStore(redis_url)))


def test_several_processes_one_limit(redis_url: str) -> None:
    async def total(key: str) -> float:
        store = RedisStore(redis_url)
        try:
            return await store.total(key)
        finally:
            await store.close()

    check_processes("redis", redis_url, lambda key: asyncio.run(total(key)))


def test_the_layout_is_the_briefs(redis_url: str) -> None:
    """The keys a TypeScript worker reads: {K}:base, {K}:live, {K}:exp, {K}:done, {K}:held and
    {K}:rec."""
    import redis

    async def fill() -> None:
        store = RedisStore(redis_url)
        try:
            await store.commit("hw1/layout/k", "a", 2)
            await store.reserve("hw1/layout/k", "b", 3, limit=None, ttl=60)
            await store.swap("hw1/layout/k", 0, {"n": 1})
        finally:
            await store.close()

    asyncio.run(fill())
    client = redis.Redis.from_url(redis_url)
    try:
        tag = "{hw1/layout/k}"
        assert float(client.get(f"{tag}:base") or 0) == 2
        assert client.hgetall(f"{tag}:live") == {b"b": b"3.0"}
        assert client.zscore(f"{tag}:exp", "b") is not None
        assert client.zscore(f"{tag}:done", "a") is not None
        assert float(client.get(f"{tag}:held") or 0) == 3
        assert client.hgetall(f"{tag}:rec") == {b"v": b"1", b"d": b'{"n":1}'}
    finally:
        client.close()


def test_the_scripts_are_loaded_again_after_a_flush(redis_url: str) -> None:
    """A server that forgot the scripts (SCRIPT FLUSH, a restart) gets them again (NOSCRIPT)."""
    import redis

    async def go() -> None:
        store = RedisStore(redis_url)
        try:
            await store.commit("hw1/flush/k", "a", 1)
            redis.Redis.from_url(redis_url).script_flush()
            assert await store.commit("hw1/flush/k", "b", 1) == 2
        finally:
            await store.close()

    asyncio.run(go())


def test_the_scripts_are_the_typescript_packages_byte_for_byte() -> None:
    """A Node worker runs the same scripts (ts-runner/src/state/lua/): one budget, one layout."""
    from pathlib import Path

    from harnessweaver.state import redis as module

    ours = Path(module.__file__).parent / "lua"
    theirs = Path(__file__).resolve().parents[3] / "ts-runner" / "src" / "state"
    if not theirs.is_dir():
        pytest.skip("no ts-runner/src/state here (not a checkout with the TypeScript package)")
    names = sorted(path.name for path in ours.glob("*.lua"))
    assert names == sorted(path.name for path in (theirs / "lua").glob("*.lua"))
    for name in names:
        assert (ours / name).read_bytes() == (theirs / "lua" / name).read_bytes(), name


def test_many_marks_exact_totals(redis_url: str) -> None:
    asyncio.run(check_many_marks(lambda: RedisStore(redis_url), "hw1/many/redis"))


def test_held_is_dropped_with_the_last_hold_and_by_delete(redis_url: str) -> None:
    import redis

    key = "hw1/held/k"

    async def step(n: int) -> None:
        store = RedisStore(redis_url)
        try:
            if n == 0:
                await store.reserve(key, "a", 0.1, limit=None, ttl=60, life=30)
                await store.reserve(key, "b", 0.2, limit=None, ttl=60, life=30)
            elif n == 1:
                await store.release(key, "a")
                assert await store.commit(key, "b", 0.2) == 0.2
            else:
                await store.delete(key)
        finally:
            await store.close()

    client = redis.Redis.from_url(redis_url)
    try:
        asyncio.run(step(0))
        assert 0 < client.pttl("{hw1/held/k}:held") <= 30000
        asyncio.run(step(1))
        assert client.exists("{hw1/held/k}:held") == 0  # no drift once no hold is live
        asyncio.run(step(0))
        asyncio.run(step(2))
        assert client.exists("{hw1/held/k}:held", "{hw1/held/k}:live") == 0
    finally:
        client.close()
