"""``MemoryStore``: the state of one process, bounded.

The default when a spec names no backend: each loaded harness gets its own (two harnesses in
one process never share run counts), and a stateful middleware never attached to a store makes
a private one. It is exact within the process and shared with nothing outside it.

It is bounded so that a long-lived process cannot grow without end: at most ``max_keys`` keys
(counters and records together, least recently used dropped first) and ``max_holds`` holds and
marks per counter (the ones expiring first dropped first). Dropping a key forgets its counts;
dropping a mark forgets that a hold id was committed. Both happen only past the bounds.
"""

from __future__ import annotations

import heapq
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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

__all__ = ["MemoryStore"]


@dataclass(slots=True)
class _Entry:
    """One key: its counter (base, live holds, marks) and its record, and when they expire.

    Each call's purge must not cost the number of holds (a budget keeps a mark per charge for
    days; a rate limit a hold per call in its window): each dict has a heap of
    ``(expires_at, hold)``, stale entries skipped lazily, and the live amounts a running sum.
    """

    base: float = 0.0
    live: dict[str, tuple[float, float]] = field(default_factory=dict)
    """hold -> (amount, expires_at)"""
    done: dict[str, float] = field(default_factory=dict)
    """hold -> expires_at of the committed mark"""
    live_sum: float = 0.0
    live_heap: list[tuple[float, str]] = field(default_factory=list)
    done_heap: list[tuple[float, str]] = field(default_factory=list)
    counter_expires: float | None = None
    has_counter: bool = False
    record: str | None = None
    """the record's JSON text (a copy: a caller's later changes never reach it)"""
    version: int = 0
    record_expires: float | None = None

    def add_live(self, hold: str, amount: float, expires: float) -> None:
        self.drop_live(hold)
        self.live[hold] = (amount, expires)
        self.live_sum += amount
        heapq.heappush(self.live_heap, (expires, hold))
        if len(self.live_heap) > 2 * len(self.live) + 64:  # mostly stale: rebuilt
            self.live_heap = [(exp, h) for h, (_, exp) in self.live.items()]
            heapq.heapify(self.live_heap)

    def drop_live(self, hold: str) -> None:
        old = self.live.pop(hold, None)
        if old is not None:
            self.live_sum = self.live_sum - old[0] if self.live else 0.0

    def add_done(self, hold: str, expires: float) -> None:
        self.done[hold] = expires
        heapq.heappush(self.done_heap, (expires, hold))
        if len(self.done_heap) > 2 * len(self.done) + 64:
            self.done_heap = [(exp, h) for h, exp in self.done.items()]
            heapq.heapify(self.done_heap)

    def purge(self, now: float) -> None:
        if self.has_counter and self.counter_expires is not None and self.counter_expires <= now:
            self.base, self.live, self.done, self.live_sum = 0.0, {}, {}, 0.0
            self.live_heap, self.done_heap = [], []
            self.has_counter, self.counter_expires = False, None
        if self.version and self.record_expires is not None and self.record_expires <= now:
            self.record, self.version, self.record_expires = None, 0, None
        live, done = self.live_heap, self.done_heap
        while live and live[0][0] <= now:
            expires, hold = heapq.heappop(live)
            held = self.live.get(hold)
            if held is not None and held[1] == expires:
                self.drop_live(hold)
        while done and done[0][0] <= now:
            expires, hold = heapq.heappop(done)
            if self.done.get(hold) == expires:
                del self.done[hold]

    def evict(self, count: int) -> None:
        """Forget ``count`` holds: the marks expiring first, then the live holds."""
        for heap, dict_is_done in ((self.done_heap, True), (self.live_heap, False)):
            while count > 0 and heap:
                expires, hold = heapq.heappop(heap)
                if dict_is_done and self.done.get(hold) == expires:
                    del self.done[hold]
                    count -= 1
                elif not dict_is_done and hold in self.live and self.live[hold][1] == expires:
                    self.drop_live(hold)
                    count -= 1

    @property
    def total(self) -> float:
        return self.base + self.live_sum

    @property
    def empty(self) -> bool:
        return not self.has_counter and not self.version


class MemoryStore:
    """A :class:`~harnessweaver.state.Store` in this process's memory (thread-safe).

    ``clock`` gives seconds (default :func:`time.monotonic`: expiry never jumps with the wall
    clock); tests pass their own."""

    backend = "memory"
    __slots__ = ("_clock", "_closed", "_keys", "_lock", "max_holds", "max_keys")

    def __init__(
        self,
        max_keys: int = 65536,
        *,
        max_holds: int = 65536,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_keys < 1 or max_holds < 1:
            raise ValueError("max_keys and max_holds must be at least 1")
        self.max_keys = max_keys
        self.max_holds = max_holds
        self._clock = clock
        self._keys: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    def __repr__(self) -> str:
        return f"MemoryStore(keys={len(self._keys)}, max_keys={self.max_keys})"

    def __len__(self) -> int:
        """The number of keys held now (expired ones included until touched)."""
        return len(self._keys)

    # -- helpers (called with the lock held) ---------------------------------------------

    def _check_open(self, operation: str) -> None:
        if self._closed:
            raise StateUnavailable(self.backend, operation, "closed")

    def _get(self, key: str, now: float, create: bool) -> _Entry | None:
        entry = self._keys.get(key)
        if entry is not None:
            entry.purge(now)
            if entry.empty and not create:
                del self._keys[key]
                return None
            self._keys.move_to_end(key)
            return entry
        if not create:
            return None
        entry = self._keys[key] = _Entry()
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)
        return entry

    def _counter(self, key: str, now: float, life: float | None) -> _Entry:
        entry = self._get(key, now, True)
        assert entry is not None
        entry.has_counter = True
        entry.counter_expires = None if life is None else now + life
        return entry

    def _bound(self, entry: _Entry) -> None:
        """Past ``max_holds``, the marks expiring first go, then the live holds expiring
        first."""
        excess = len(entry.live) + len(entry.done) - self.max_holds
        if excess > 0:
            entry.evict(excess)

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
        with self._lock:
            self._check_open("reserve")
            now = self._clock()
            found = self._get(key, now, False)
            total = 0.0 if found is None else found.total
            if found is not None and (hold in found.live or hold in found.done):
                return Reservation(True, total, True)
            if limit is not None and total + amount > limit:
                return Reservation(False, total, False)
            entry = self._counter(key, now, life)
            entry.add_live(hold, float(amount), now + ttl)
            self._bound(entry)
            return Reservation(True, entry.total, False)

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
        with self._lock:
            self._check_open("commit")
            now = self._clock()
            found = self._get(key, now, False)
            if found is not None and hold in found.done:
                return found.total
            entry = self._counter(key, now, life)
            entry.drop_live(hold)
            if ttl is not None:
                entry.add_live(hold, float(amount), now + ttl)
            else:
                entry.base += amount
                entry.add_done(hold, now + MARK_TTL)
            self._bound(entry)
            return entry.total

    async def release(self, key: str, hold: str) -> float:
        check_key(key)
        check_key(hold, "hold id")
        with self._lock:
            self._check_open("release")
            entry = self._get(key, self._clock(), False)
            if entry is None:
                return 0.0
            entry.drop_live(hold)
            return entry.total

    async def total(self, key: str) -> float:
        check_key(key)
        with self._lock:
            self._check_open("total")
            entry = self._get(key, self._clock(), False)
            return 0.0 if entry is None else entry.total

    async def read(self, key: str) -> Record:
        check_key(key)
        with self._lock:
            self._check_open("read")
            entry = self._get(key, self._clock(), False)
            if entry is None or not entry.version:
                return Record(None, 0)
            value: JsonValue = json.loads(entry.record or "null")
            return Record(value, entry.version)

    async def swap(
        self, key: str, version: int, value: JsonValue, *, life: float | None = None
    ) -> bool:
        check_key(key)
        check_life(life)
        check_version(version)
        text = dump_json(value)
        with self._lock:
            self._check_open("swap")
            now = self._clock()
            found = self._get(key, now, False)
            current = 0 if found is None else found.version
            if current != version:
                return False
            entry = self._get(key, now, True)
            assert entry is not None
            entry.record, entry.version = text, version + 1
            entry.record_expires = None if life is None else now + life
            return True

    async def delete(self, *keys: str) -> None:
        for key in keys:
            check_key(key)
        with self._lock:
            self._check_open("delete")
            for key in keys:
                self._keys.pop(key, None)

    async def close(self) -> None:
        with self._lock:
            self._closed = True
            self._keys.clear()
