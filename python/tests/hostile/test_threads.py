"""Threads sharing one run context (issue 28; docs/trace.md, "Threads").

Several threads, each with its own event loop (asyncio or trio), emit on one shared
``RunContext`` through one bus, with generated chains. Both cores give the same guarantees:
every emit gets its own ordinal, 1 to N, each exactly once; each emit's records are all in the
trace, in its chain's order, the hook record last; and an emit's records reach the trace in
whole batches, so another thread's records come between them only where one of its middleware
suspended (the records before the suspension are written then, I12).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise
from typing import Any

import anyio
from conftest import tool_call
from hostile_support import hostile_settings
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw

KINDS = ("plain", "none", "continue", "warn", "raise", "suspend", "block")
"""What a middleware of a generated chain does; ``block`` ends the chain there. ``plain`` has
no ``await`` in its code (the pure core awaits it whole); the others have one (stepped)."""


def _middleware(name: str, kind: str) -> Any:
    if kind == "plain":

        @hw.middleware(hooks=["tool.before"], fail_mode="open", name=name)
        async def plain(event: Any, env: hw.Envelope) -> None:
            return None

        return plain

    @hw.middleware(hooks=["tool.before"], fail_mode="open", name=name)
    async def mw(event: Any, env: hw.Envelope) -> Any:
        if kind == "suspend":
            await anyio.sleep(0)
        if kind == "raise":
            raise RuntimeError("the secret message of a middleware")
        if kind == "warn":
            return hw.Continue(warnings=["seen"])
        if kind == "block":
            return hw.Block("stop", code="stop")
        return hw.Continue() if kind == "continue" else None

    return mw


def _expected(chain: list[str]) -> list[str]:
    """The middleware names an emit of ``chain`` records, in order: up to a Block."""
    names = []
    for i, kind in enumerate(chain):
        names.append(f"m{i}")
        if kind == "block":
            break
    return names


@contextmanager
def _switching_often() -> Iterator[None]:
    """Threads switch every microsecond, so that they interleave inside one emit."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _run_threads(
    bus: hw.HookBus, ctx: hw.RunContext, threads: int, emits: int, backend: str
) -> list[BaseException]:
    errors: list[BaseException] = []

    async def emit_all() -> None:
        for _ in range(emits):
            await bus.emit("tool.before", tool_call(), ctx)

    def work() -> None:
        try:
            if backend == "asyncio":
                asyncio.run(emit_all())
            else:
                anyio.run(emit_all, backend=backend)
        except BaseException as exc:  # reported by the test, not lost in the thread
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    with _switching_often():
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return errors


@hostile_settings
@given(
    chain=st.lists(st.sampled_from(KINDS), min_size=1, max_size=6),
    threads=st.integers(min_value=2, max_value=4),
    emits=st.integers(min_value=50, max_value=300),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_threads_sharing_a_context_get_exact_ordinals_and_whole_batches(
    chain: list[str], threads: int, emits: int, backend: str
) -> None:
    bus = hw.HookBus()
    for i, kind in enumerate(chain):
        bus.register(_middleware(f"m{i}", kind))
    ctx = hw.RunContext(trace=hw.Trace(limit=None))

    assert _run_threads(bus, ctx, threads, emits, backend) == []

    total = threads * emits
    assert ctx.trace.emits == total
    records = ctx.trace.records()
    names = _expected(chain)
    assert len(records) == total * (len(names) + 1)
    by_emit: dict[int, list[int]] = {}
    for position, record in enumerate(records):
        by_emit.setdefault(record["emit"], []).append(position)
    assert sorted(by_emit) == list(range(1, total + 1))  # each ordinal used by one emit
    suspends = {f"m{i}" for i, kind in enumerate(chain) if kind == "suspend"}
    for positions in by_emit.values():
        mine = [records[p] for p in positions]
        assert [r.get("middleware") for r in mine] == [*names, None]  # its chain's order
        assert mine[-1]["kind"] == "hook"
        for (before, after), record in zip(pairwise(positions), mine[1:], strict=True):
            # Another thread's records come in only where this emit suspended: the batch
            # before the suspension was written then, the next one at the next suspension or
            # at the end.
            if after != before + 1:
                assert record.get("middleware") in suspends, (before, after, record)
    assert "secret message" not in ctx.trace.to_jsonl()


@hostile_settings
@given(threads=st.integers(min_value=2, max_value=4), reads=st.integers(min_value=1, max_value=40))
def test_readers_see_whole_emits_while_threads_emit(threads: int, reads: int) -> None:
    """A reader on another thread sees only whole emits of a chain that never suspends: every
    emit it sees has all its records, and they are contiguous."""
    bus = hw.HookBus()
    for i, kind in enumerate(["none", "continue", "warn"]):
        bus.register(_middleware(f"m{i}", kind))
    ctx = hw.RunContext(trace=hw.Trace(limit=None))
    seen: list[list[dict[str, Any]]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set() and len(seen) < reads:
            seen.append(ctx.trace.records())

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert _run_threads(bus, ctx, threads, 100, "asyncio") == []
    finally:
        done.set()
        reader.join()
    seen.append(ctx.trace.records())
    for snapshot in seen:
        assert len(snapshot) % 4 == 0
        for start in range(0, len(snapshot), 4):
            whole = snapshot[start : start + 4]
            assert len({r["emit"] for r in whole}) == 1, whole
            assert [r.get("middleware") for r in whole] == ["m0", "m1", "m2", None]
    assert ctx.trace.emits == threads * 100
