"""What the benchmarks run: buses of N no-op middleware, and the floors they are compared with.

Every emit workload has a floor that does the same middleware work with nothing around it: a
plain ``for f in fns: await f(event, env)`` loop (``perf-baseline.md``, lower bound A), or that
loop with the same early stop or event hand-over the workload has. A batch runs ``per`` emits
(or floor passes) in one coroutine, so the cost of entering the event loop is shared by both
and cancels out of every difference.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import harnessweaver as hw

EVENT = hw.ToolCallEvent(
    tool=hw.ToolSpec(name="refund_payment"),
    call=hw.ToolCall(name="refund_payment", arguments={"amount_usd": 20, "card": "4111"}),
)
ENV = hw.Envelope(clock=hw.FixedClock("2026-11-30T12:00:00+00:00"))
HOOK = "tool.before"

Middleware = Callable[[Any, hw.Envelope], Awaitable[Any]]


def _named(fn: Middleware, kind: str, i: int) -> Middleware:
    fn.__name__ = fn.__qualname__ = f"{kind}{i}"
    return fn


def returns_none(i: int) -> Middleware:
    async def mw(event: Any, env: hw.Envelope) -> None:
        return None

    return _named(mw, "none", i)


def suspends_once(i: int) -> Middleware:
    async def mw(event: Any, env: hw.Envelope) -> None:
        await asyncio.sleep(0)  # one trip through the event loop

    return _named(mw, "suspend", i)


def modifies(i: int) -> Middleware:
    async def mw(event: Any, env: hw.Envelope) -> hw.Continue:
        arguments = {**event.call.arguments, f"seen{i}": True}
        call = event.call.model_copy(update={"arguments": arguments})
        return hw.Continue(modified=event.model_copy(update={"call": call}))

    return _named(mw, "modify", i)


def blocks(i: int) -> Middleware:
    async def mw(event: Any, env: hw.Envelope) -> hw.Block:
        return hw.Block("over the refund cap", code="refund_cap")

    return _named(mw, "block", i)


def raises(i: int) -> Middleware:
    async def mw(event: Any, env: hw.Envelope) -> None:
        raise ValueError("refund service unavailable")

    return _named(mw, "raise", i)


Factory = Callable[[int], Middleware]
BODIES: dict[str, Factory] = {"complete": returns_none, "suspend": suspends_once}


def chain_of(*parts: tuple[Factory, int]) -> list[Middleware]:
    """Middleware made by each factory, as many as asked, in order, numbered throughout."""
    fns: list[Middleware] = []
    for factory, count in parts:
        start = len(fns)
        fns.extend([factory(start + k) for k in range(count)])
    return fns


def bus_of(fns: list[Middleware], timeout: str | None) -> hw.HookBus:
    bus = hw.HookBus()
    for fn in fns:
        bus.register(hw.middleware(hooks=[HOOK], fail_mode="closed", timeout=timeout)(fn))
    return bus


@dataclass(frozen=True, slots=True)
class Batch:
    """``per`` emits on ``bus`` in one coroutine; the last result and the context it used."""

    bus: hw.HookBus
    per: int

    async def __call__(self, ctx: hw.RunContext) -> hw.HookResult:
        emit = self.bus.emit
        result = None
        for _ in range(self.per):
            result = await emit(HOOK, EVENT, ctx)
        assert result is not None
        return result


def last_emit_records(
    bus: hw.HookBus, per: int
) -> Callable[[hw.RunContext], Awaitable[list[dict[str, Any]]]]:
    """A batch of ``per`` emits that returns the last emit's records (all emits of a batch
    leave as many), for the benchmark to check what it timed."""

    async def batch(ctx: hw.RunContext) -> list[dict[str, Any]]:
        for _ in range(per):
            await bus.emit(HOOK, EVENT, ctx)
        trace = ctx.trace
        total = len(trace)
        return [trace[i] for i in range(total - total // per, total)]

    return batch


async def floor_loop(fns: list[Middleware], per: int) -> None:
    """Lower bound A: every middleware awaited in a plain loop, ``per`` times."""
    event, env = EVENT, ENV
    for _ in range(per):
        for f in fns:
            await f(event, env)


async def floor_timeout_loop(fns: list[Middleware], per: int) -> None:
    """The honest floor of a walk with timeouts: every middleware awaited under its own
    ``asyncio.timeout(2)``, as a hand-written loop that enforces 2 s timeouts would, ``per``
    times. A suspending emit with 2 s timeouts is judged against this (issue 17)."""
    event, env, timeout = EVENT, ENV, asyncio.timeout
    for _ in range(per):
        for f in fns:
            async with timeout(2):
                await f(event, env)


async def floor_until_answer(fns: list[Middleware], per: int) -> int:
    """The floor of a chain that stops at the first answer (Block) or exception."""
    event, env = EVENT, ENV
    ran = 0
    for _ in range(per):
        for f in fns:
            ran += 1
            try:
                if await f(event, env) is not None:
                    break
            except Exception:
                break
    return ran


async def floor_handing_on(fns: list[Middleware], per: int) -> Any:
    """The floor of a chain where each middleware hands a modified event to the next."""
    env = ENV
    event: Any = None
    for _ in range(per):
        event = EVENT
        for f in fns:
            answer = await f(event, env)
            if answer is not None:
                event = answer.modified
    return event
