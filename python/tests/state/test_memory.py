"""MemoryStore: the contract, and its bounds (a long-lived process never grows without end)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from contract import StoreContract
from many import check_many_marks

from harnessweaver.state import MemoryStore, Record, Reservation, Store

pytestmark = pytest.mark.anyio


class TestMemoryContract(StoreContract):
    @pytest.fixture
    def make_store(self) -> Callable[[], Store]:
        shared = MemoryStore()  # every "process" of the contract's tests shares it
        return _Handle.over(shared)


class _Handle:
    """A second handle on one MemoryStore whose close() closes only itself, as a second
    connection to a server would."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store
        self._closed = False
        self.backend = store.backend

    @classmethod
    def over(cls, store: MemoryStore) -> Callable[[], Store]:
        return lambda: cls(store)  # type: ignore[return-value]

    def __getattr__(self, name: str) -> object:
        if self._closed:
            closed = MemoryStore()
            closed._closed = True
            return getattr(closed, name)
        return getattr(self._store, name)

    async def close(self) -> None:
        self._closed = True


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_at_most_max_keys_least_recently_used_go_first() -> None:
    store = MemoryStore(3)
    for key in "abc":
        await store.commit(key, "h", 1)
    await store.total("a")  # a is used again: b is now the oldest
    await store.swap("d", 0, "x")
    assert len(store) == 3
    assert [await store.total(k) for k in "abc"] == [1, 0, 1]
    assert await store.read("d") == Record("x", 1)


async def test_at_most_max_holds_per_counter_marks_expiring_first_go_first() -> None:
    clock = Clock()
    store = MemoryStore(max_holds=3, clock=clock)
    for i in range(3):
        clock.now += 1
        await store.commit("k", f"m{i}", 1)
    await store.reserve("k", "live", 1, limit=None, ttl=60)
    assert await store.total("k") == 4  # the base is never forgotten, only the oldest mark
    assert await store.commit("k", "m0", 1) == 5  # m0's mark went: charged again
    assert await store.commit("k", "m2", 1) == 5  # m2's is kept


async def test_expiry_follows_the_clock() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock)
    assert await store.reserve("k", "a", 5, limit=5, ttl=10) == Reservation(True, 5, False)
    clock.now += 9.999
    assert await store.total("k") == 5
    clock.now += 0.001
    assert await store.total("k") == 0
    await store.commit("k", "b", 1, life=30)
    await store.swap("r", 0, 1, life=30)
    clock.now += 30
    assert (await store.total("k"), await store.read("r")) == (0, Record(None, 0))
    assert len(store) == 0  # a key with nothing left is dropped when it is touched


async def test_repr_names_the_backend_only() -> None:
    assert repr(MemoryStore(10)) == "MemoryStore(keys=0, max_keys=10)"


def test_bounds_are_checked() -> None:
    with pytest.raises(ValueError):
        MemoryStore(0)
    with pytest.raises(ValueError):
        MemoryStore(max_holds=0)


def test_it_is_safe_across_threads() -> None:
    import threading

    import anyio

    store = MemoryStore()
    granted: list[bool] = []

    def worker(n: int) -> None:
        async def run() -> None:
            for i in range(50):
                got = await store.reserve("k", f"{n}/{i}", 1, limit=100, ttl=60)
                granted.append(got.granted)

        anyio.run(run)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert granted.count(True) == 100


def test_many_marks_exact_totals() -> None:
    store = MemoryStore()
    asyncio.run(check_many_marks(lambda: store, "hw1/many/memory"))
