"""Middleware that really suspend: timeouts, cancellation and scopes under asyncio and trio.

The corpus pins what a timeout produces; these tests pin how it is enforced: a suspended
middleware is interrupted at its deadline, cancel scopes of its own stay sound under trio, and
cancellation from outside belongs to the caller (I12).
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

import anyio
import pytest
from conftest import sleeper, tool_call, untimed

import harnessweaver as hw

pytestmark = pytest.mark.anyio


async def test_a_suspended_middleware_is_interrupted_at_its_deadline(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    log: list[str] = []
    bus.register(sleeper("slow", 30, log, timeout="50ms", fail_mode="closed"))
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert log == ["slow start", "slow cancelled"]
    assert result.outcome == hw.Block("middleware slow failed: timeout", code="middleware_timeout")
    assert untimed(ctx.trace)[0]["error"] == "MiddlewareTimeout"


async def test_the_chain_goes_on_after_an_open_timeout(bus: hw.HookBus, ctx: hw.RunContext) -> None:
    log: list[str] = []
    bus.register(sleeper("slow", 30, log, timeout="50ms"))
    bus.register(sleeper("next", 0.01, log, timeout="30s"))
    bus.register(sleeper("last", 0, log, timeout=None))
    result = await bus.emit("tool.before", tool_call(), ctx)
    # After a fired deadline, later middleware suspend and finish normally (under trio, in a
    # fresh cancel scope: a fired one cannot be reused).
    assert log == [
        "slow start",
        "slow cancelled",
        "next start",
        "next done",
        "last start",
        "last done",
    ]
    assert result.outcome == hw.Continue()
    assert [r["kind"] for r in untimed(ctx.trace)] == ["failure", "outcome", "outcome", "hook"]


async def test_each_suspended_middleware_is_held_to_its_own_deadline(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    """Under asyncio one timer serves an emit's suspensions (``_slowpath._Timer``): the
    deadline of a middleware that finished must not cut a later one short (``later`` is
    still suspended when ``quick``'s 80 ms pass), and a later, shorter deadline must not wait
    for an earlier, longer one (``short`` is interrupted at 50 ms, not after ``later``'s 30 s
    or its own 5 s sleep)."""
    log: list[str] = []
    bus.register(sleeper("quick", 0.01, log, timeout="80ms"))
    bus.register(sleeper("later", 0.2, log, timeout="30s"))
    bus.register(sleeper("short", 5, log, timeout="50ms"))
    bus.register(sleeper("last", 0, log, timeout="30s"))
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert log == [
        "quick start",
        "quick done",
        "later start",
        "later done",
        "short start",
        "short cancelled",
        "last start",
        "last done",
    ]
    assert result.outcome == hw.Continue()
    kinds = [r["kind"] for r in untimed(ctx.trace)]
    assert kinds == ["outcome", "outcome", "failure", "outcome", "hook"]
    assert untimed(ctx.trace)[2]["error"] == "MiddlewareTimeout"


async def test_middleware_with_their_own_cancel_scopes_stay_sound(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="30s")
    async def scoped(event: Any, env: hw.Envelope) -> hw.Outcome:
        with anyio.move_on_after(0.01):
            await anyio.sleep(30)
        with anyio.fail_after(5):
            await anyio.sleep(0)
        return hw.Suspend("checked", approver_role="ops")

    bus.register(scoped)
    bus.register(sleeper("after", 0, [], timeout="30s"))
    for _ in range(3):  # the scope stack must be intact emit after emit
        result = await bus.emit("tool.before", tool_call(), ctx)
        assert result.outcome == hw.Suspend("checked", approver_role="ops")
    await anyio.sleep(0)


async def test_a_middleware_that_swallows_cancellation_still_times_out(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="50ms")
    async def stubborn(event: Any, env: hw.Envelope) -> hw.Outcome:
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            pass  # bad manners: it answers anyway, after its deadline
        return hw.Continue()

    bus.register(stubborn)
    bus.register(sleeper("after", 0, log := [], timeout="30s"))
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome.kind == "block" and result.outcome.code == "middleware_timeout"
    assert log == []  # a closed failure stops the chain
    await anyio.sleep(0.01)  # and no stray cancellation is left behind for the caller


async def test_a_middleware_that_turns_its_cancellation_into_an_error_times_out_cleanly(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    """Interrupted at its deadline, it raises something else instead: that is an answer after
    its deadline, a timeout (I9), and the cancellation the bus asked for is withdrawn, so the
    caller's task is not left marked as being cancelled. Left marked, a long-running service
    would read every later stray cancellation as the caller's own (I15) and stop."""

    @hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="50ms")
    async def converter(event: Any, env: hw.Envelope) -> None:
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            raise RuntimeError("interrupted") from None

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="10s")
    async def fetcher(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(0)
        await _raise_stray_cancellation()

    bus.register(converter)
    bus.register(fetcher)
    result = await bus.emit("tool.before", tool_call(), ctx)
    records = untimed(ctx.trace)
    assert (records[0]["failure"], records[0]["error"]) == ("timeout", "MiddlewareTimeout")
    # The next stray cancellation is still the middleware's failure, not the caller's.
    assert (records[1]["failure"], records[1]["error"]) == ("cancelled", "MiddlewareCancelled")
    assert result.outcome == hw.Block(
        "middleware fetcher failed: cancelled", code="middleware_error"
    )
    await anyio.sleep(0.01)  # and the caller's task goes on


async def test_cancellation_from_outside_propagates_and_is_not_a_failure(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    log: list[str] = []
    bus.register(sleeper("quick", 0, log, timeout=None))
    bus.register(sleeper("slow", 30, log, timeout="10s", fail_mode="closed"))
    with anyio.move_on_after(0.05) as scope:
        await bus.emit("tool.before", tool_call(), ctx)
    assert scope.cancelled_caught
    assert log == ["quick start", "quick done", "slow start", "slow cancelled"]
    records = untimed(ctx.trace)
    assert [r["kind"] for r in records] == ["outcome"]  # no failure record, no hook record (I12)
    bus.unregister("slow")
    result = await bus.emit("tool.before", tool_call(), ctx)  # the bus is fine afterwards
    assert result.outcome == hw.Continue()
    assert untimed(ctx.trace)[-1] == {
        "emit": 2,
        "hook": "tool.before",
        "run": ctx.envelope.run_id,
        "step": 0,
        "tool": "refund_payment",
        "kind": "hook",
        "outcome": "continue",
        "modified": False,
    }


async def test_concurrent_emits_keep_their_traces_apart(bus: hw.HookBus) -> None:
    bus.register(sleeper("a", 0, [], timeout="30s"))
    bus.register(sleeper("b", 0.01, [], timeout=None))
    contexts = [hw.RunContext() for _ in range(5)]
    async with anyio.create_task_group() as group:
        for context in contexts:
            group.start_soon(bus.emit, "tool.before", tool_call(), context)
    for context in contexts:
        assert [(r["emit"], r["kind"], r.get("middleware")) for r in untimed(context.trace)] == [
            (1, "outcome", "a"),
            (1, "outcome", "b"),
            (1, "hook", None),
        ]


async def test_the_registry_does_not_keep_cycles_alive() -> None:
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="open")
    async def holds_the_bus(event: Any, env: hw.Envelope, _bus: object = bus) -> None:
        return None  # its default refers to the bus, which refers to it: a reference cycle

    bus.register(holds_the_bus)
    await bus.emit("tool.before", tool_call(), hw.RunContext())
    gone = weakref.ref(holds_the_bus)
    del bus, holds_the_bus
    gc.collect()
    assert gone() is None


async def test_a_deadline_waits_for_the_middlewares_shielded_scope(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    # Under asyncio the bus's timer used to cancel the task right through the shield; trio
    # respects shields by itself. The late answer still counts as a timeout (ruling 10).
    log: list[str] = []

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="20ms")
    async def cleanup(event: Any, env: hw.Envelope) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.2)  # ten deadlines long
            log.append("shielded work done")
        log.append("after the shield")

    bus.register(cleanup)
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert log[0] == "shielded work done"
    assert result.outcome == hw.Block(
        "middleware cleanup failed: timeout", code="middleware_timeout"
    )
    assert untimed(ctx.trace)[0]["failure"] == "timeout"


async def test_after_its_shield_a_late_middleware_is_interrupted(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    log: list[str] = []

    @hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="20ms")
    async def cleanup(event: Any, env: hw.Envelope) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0.1)
        log.append("left the shield")
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            log.append("cancelled")
            raise

    bus.register(cleanup)
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert log == ["left the shield", "cancelled"]
    assert result.outcome == hw.Continue()
    assert untimed(ctx.trace)[0]["error"] == "MiddlewareTimeout"


async def _raise_stray_cancellation() -> None:
    """The runtime's cancellation without the caller being cancelled (I15)."""
    import asyncio

    if asyncio._get_running_loop() is None:
        import trio

        raise trio.Cancelled._create()
    future = asyncio.get_running_loop().create_future()
    future.cancel()  # someone else's future, cancelled by someone else
    await future


@pytest.mark.parametrize("suspend_first", [False, True])
@pytest.mark.parametrize("timeout", [None, "10s"])
async def test_a_stray_cancellation_is_a_failure_of_the_middleware(
    bus: hw.HookBus, ctx: hw.RunContext, suspend_first: bool, timeout: str | None
) -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout=timeout)
    async def fetcher(event: Any, env: hw.Envelope) -> None:
        if suspend_first:
            await anyio.sleep(0)
        await _raise_stray_cancellation()

    bus.register(fetcher)
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome == hw.Block(
        "middleware fetcher failed: cancelled", code="middleware_error"
    )
    record = untimed(ctx.trace)[0]
    assert (record["failure"], record["error"]) == ("cancelled", "MiddlewareCancelled")
    await anyio.sleep(0)  # the caller's task was never cancelled: it goes on


async def test_the_callers_cancellation_still_cancels_at_once(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    log: list[str] = []

    @hw.middleware(hooks=["tool.before"], fail_mode="open")
    async def quick(event: Any, env: hw.Envelope) -> None:
        log.append("quick done")  # never suspends, so never sees the cancellation

    bus.register(quick)
    bus.register(sleeper("slow", 30, log, timeout=None, fail_mode="closed"))
    bus.register(sleeper("never", 0, log, timeout=None))
    with anyio.CancelScope() as scope:
        scope.cancel()  # cancelled before the emit: every suspension raises at once
        await bus.emit("tool.before", tool_call(), ctx)
    assert scope.cancelled_caught
    assert log == ["quick done", "slow start", "slow cancelled"]
    assert [r["kind"] for r in untimed(ctx.trace)] == ["outcome"]  # no failure record (I12)


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
async def test_an_interrupt_propagates_and_the_trace_keeps_what_ran(
    bus: hw.HookBus, ctx: hw.RunContext, interrupt: type[BaseException]
) -> None:
    log: list[str] = []
    bus.register(sleeper("first", 0, log, timeout=None))

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", timeout="10s")
    async def stop(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(0)
        raise interrupt

    bus.register(stop)
    with pytest.raises(interrupt):
        await bus.emit("tool.before", tool_call(), ctx)
    assert [(r["kind"], r["middleware"]) for r in untimed(ctx.trace)] == [("outcome", "first")]
