"""The hook command's seam to the state store (``hookcmd/state.py``): run-scope keys are the
agent session's (named by the harness and the session's generation, kept its lifetime, not
deleted at a ``SessionEnd``); every other scope's keys are the fleet's, untouched."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import harnessweaver as hw
from harnessweaver.builtins import LoopGuard
from harnessweaver.builtins.loops import LoopGuardSettings
from harnessweaver.hookcmd.state import SessionStore
from harnessweaver.state import MemoryStore, attach, state_key


class Recording(MemoryStore):
    """A MemoryStore that remembers the key and ``life`` of every write, and the deletes."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[tuple[str, float | None]] = []
        self.deleted: list[str] = []

    async def swap(self, key: str, version: int, value: Any, *, life: float | None = None) -> bool:
        self.writes.append((key, life))
        return await super().swap(key, version, value, life=life)

    async def commit(self, key: str, hold: str, amount: float, **kw: Any) -> float:
        self.writes.append((key, kw.get("life")))
        return await super().commit(key, hold, amount, **kw)

    async def delete(self, *keys: str) -> None:
        self.deleted += keys
        await super().delete(*keys)


def _call(n: int) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name="t"), call=hw.ToolCall(name="t", arguments={"n": n})
    )


def test_run_keys_are_the_sessions_and_live_its_lifetime() -> None:
    inner = Recording()
    store = SessionStore(inner)
    store.bind("h" * 64, "g1", 3600.0)
    run = state_key("app", "loops", "run", "s-1", "calls")
    org = state_key("app", "budget", "org", "-", "tokens")

    async def go() -> None:
        assert await store.swap(run, 0, {"recent": []})
        await store.commit(org, "hold", 5.0, life=99.0)
        assert (await store.read(run)).version == 1
        assert await inner.total(org) == 5.0
        await store.delete(run, org)

    asyncio.run(go())
    assert inner.writes == [
        ("hw1/app/loops/run/s-1~hhhhhhhhhhhhhhhh.g1/calls", 3600.0),
        (org, 99.0),  # the fleet's key: its own key and lifetime
    ]
    assert inner.deleted == [org]  # the run's key ages out with the session instead
    assert repr(store) == "SessionStore(memory)" and store.backend == "memory"


def test_another_generation_or_harness_starts_afresh() -> None:
    inner = MemoryStore()
    run = state_key("app", "loops", "run", "s/1", "calls")

    async def version(harness: str, generation: str) -> int:
        store = SessionStore(inner)
        store.bind(harness, generation, 60.0)
        found = await store.read(run)
        if found.version == 0:
            assert await store.swap(run, 0, {"recent": ["x"]})
        return found.version

    assert asyncio.run(version("a" * 64, "g1")) == 0
    assert asyncio.run(version("a" * 64, "g1")) == 1  # the same session: its record
    assert asyncio.run(version("a" * 64, "g2")) == 0  # expired and back: afresh
    assert asyncio.run(version("b" * 64, "g1")) == 0  # another harness: afresh


def test_an_unbound_store_refuses_run_keys() -> None:
    store = SessionStore(MemoryStore())
    with pytest.raises(RuntimeError):
        asyncio.run(store.read(state_key("app", "loops", "run", "s", "calls")))


def test_a_loop_guard_on_the_sessions_store_counts_across_instances() -> None:
    """Two guards built by two invocations (two processes) count in one window."""
    inner = MemoryStore()
    env = hw.Envelope(run_id="s-1")
    settings = LoopGuardSettings(warn_after=None, block_after=3, window=10)
    outcomes = []
    for _ in range(3):
        guard = LoopGuard(settings)
        store = SessionStore(inner)
        store.bind("c" * 64, "g", 60.0)
        attach(guard, store, name="loops")
        outcomes.append(asyncio.run(guard(_call(1), env)))
    assert [type(o).__name__ for o in outcomes] == ["NoneType", "NoneType", "Block"]
