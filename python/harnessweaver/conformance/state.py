"""The scripted store of a harness case (``given.harness.state``, INTERPRETING.md §2, I33).

The case's harness runs on a :class:`~harnessweaver.state.MemoryStore` (backend ``memory``)
seeded before the first emit with committed counter amounts (``seed.counters``: full key →
amount) and records (``seed.records``: full key → JSON value). While the case's current emit
(1-based, counting every emit of the case in step order) is one of ``down``, every store call
raises :class:`~harnessweaver.state.StateUnavailable`: a scripted outage, after which the store
answers again with what it held.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..state import MemoryStore, Record, Reservation, StateUnavailable

__all__ = ["SEED_HOLD", "ScriptedStore"]

SEED_HOLD = "seed"
"""The hold id a seeded counter amount is committed under."""


class ScriptedStore:
    """A MemoryStore that is down during the emits ``down`` (``emit()`` says which is current)."""

    backend = "memory"

    def __init__(self, down: Any, emit: Callable[[], int]) -> None:
        self.inner = MemoryStore()
        self.down = frozenset(int(n) for n in down)
        self.emit = emit

    async def seed(self, seed: Mapping[str, Any]) -> None:
        """Commit ``seed["counters"]`` and write ``seed["records"]`` (before any emit)."""
        for key, amount in seed.get("counters", {}).items():
            await self.inner.commit(key, SEED_HOLD, float(amount))
        for key, value in seed.get("records", {}).items():
            await self.inner.swap(key, 0, value)

    def _check(self, operation: str) -> None:
        if self.emit() in self.down:
            raise StateUnavailable(self.backend, operation, "scripted outage")

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
        self._check("reserve")
        return await self.inner.reserve(key, hold, amount, limit=limit, ttl=ttl, life=life)

    async def commit(
        self,
        key: str,
        hold: str,
        amount: float,
        *,
        ttl: float | None = None,
        life: float | None = None,
    ) -> float:
        self._check("commit")
        return await self.inner.commit(key, hold, amount, ttl=ttl, life=life)

    async def release(self, key: str, hold: str) -> float:
        self._check("release")
        return await self.inner.release(key, hold)

    async def total(self, key: str) -> float:
        self._check("total")
        return await self.inner.total(key)

    async def read(self, key: str) -> Record:
        self._check("read")
        return await self.inner.read(key)

    async def swap(self, key: str, version: int, value: Any, *, life: float | None = None) -> bool:
        self._check("swap")
        return await self.inner.swap(key, version, value, life=life)

    async def delete(self, *keys: str) -> None:
        self._check("delete")
        await self.inner.delete(*keys)

    async def close(self) -> None:
        await self.inner.close()
