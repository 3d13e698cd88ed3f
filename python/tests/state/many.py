"""A counter key with thousands of committed marks and expired holds still gives exact totals
(each backend keeps a call's cost independent of how many holds and marks a key has)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from harnessweaver.state import Store

__all__ = ["check_many_marks"]


async def check_many_marks(make_store: Callable[[], Store], key: str, n: int = 5000) -> None:
    store = make_store()
    try:
        await store.delete(key)
        for i in range(n):  # committed marks: base grows by 1 each
            assert await store.commit(key, f"m{i}", 1) == i + 1
        for i in range(n // 10):  # holds that expire soon
            await store.reserve(key, f"x{i}", 2, limit=None, ttl=0.05)
        got = await store.reserve(key, "live", 5, limit=None, ttl=600)
        assert got.granted and not got.repeated
        await asyncio.sleep(0.2)
        assert await store.total(key) == n + 5  # the expired holds are gone, exactly
        again = await store.reserve(key, "m7", 1, limit=None, ttl=600)
        assert again.repeated and again.total == n + 5  # marks are still known
        assert await store.commit(key, "m8", 1) == n + 5
        assert await store.release(key, "live") == n
        assert await store.total(key) == n
        refused = await store.reserve(key, "over", 1, limit=n, ttl=600)
        assert not refused.granted and refused.total == n
        assert await store.commit(key, "late", 0.5, ttl=600) == n + 0.5
        assert await store.release(key, "late") == n
        await store.delete(key)
        assert await store.total(key) == 0
    finally:
        await store.close()
