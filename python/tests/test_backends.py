"""Telling asyncio from trio on every emit of a chain with timeouts.

Under trio a suspending middleware must run inside a cancel scope entered before its first
step; under asyncio its deadline is a loop timer. The Rust core keeps the calling thread's view
of sniffio's thread-local between emits (``backend.rs``), so these tests switch library and
thread between emits and check that every emit's deadline still interrupts the middleware
(a mistaken library would let it run to its end and only judge it late afterwards).
"""

from __future__ import annotations

import threading
from typing import Any

import anyio
from conftest import tool_call

import harnessweaver as hw

TIMED_OUT = (
    hw.Block("middleware slow failed: timeout", code="middleware_timeout"),
    "interrupted",
)


async def emit_slow() -> tuple[object, str]:
    """Emit to one middleware that sleeps past its 50 ms deadline; its outcome and fate."""
    fate: list[str] = []

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="50ms")
    async def slow(event: Any, env: hw.Envelope) -> None:
        try:
            await anyio.sleep(3)
        except anyio.get_cancelled_exc_class():
            fate.append("interrupted")
            raise
        fate.append("ran to its end")

    bus = hw.HookBus()
    bus.register(slow)
    result = await bus.emit("tool.before", tool_call(), hw.RunContext())
    return result.outcome, fate[0]


def emit_under(backend: str) -> object:
    return anyio.run(emit_slow, backend=backend)


def emit_in_thread(backend: str) -> object:
    outcomes: list[object] = []
    thread = threading.Thread(target=lambda: outcomes.append(emit_under(backend)))
    thread.start()
    thread.join()
    return outcomes[0]


def test_each_library_is_recognised_whatever_ran_before_on_any_thread() -> None:
    outcomes = [
        emit_under("asyncio"),
        emit_under("trio"),
        emit_in_thread("trio"),
        emit_in_thread("asyncio"),
        emit_under("asyncio"),
        emit_in_thread("trio"),
        emit_under("trio"),
    ]
    assert outcomes == [TIMED_OUT] * 7


def test_trio_is_recognised_in_a_thread_while_asyncio_runs_elsewhere() -> None:
    async def main() -> list[object]:
        first = await emit_slow()
        in_thread = await anyio.to_thread.run_sync(emit_in_thread, "trio")
        return [first, in_thread, await emit_slow()]

    assert anyio.run(main, backend="asyncio") == [TIMED_OUT] * 3
