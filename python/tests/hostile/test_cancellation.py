"""Hostile middleware that swallow their caller's cancellation (issue 28, ruling I30).

A middleware is suspended when its caller cancels the emit; it catches the cancellation and
answers anyway (a value, an outcome, or another error), maybe after its own cancel scope. The
caller's cancellation still ends the emit (I12, I30): the caller's scope catches it, the
middleware before it keep their records, it and every later one leave none, no later one is
started and no hook record is written. The generated chains vary what runs before it (plain,
suspending), where it sits, how it swallows and answers, whether it is timed, and how the
caller cancels, under asyncio and trio.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from conftest import tool_call
from hostile_support import hostile_settings
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw

BEFORE = ("plain", "none", "continue", "suspend", "raise")
"""What a middleware before the swallowing one does (none stops the chain). ``plain`` has no
``await`` in its code (the pure core awaits it whole); the others have one (stepped)."""

ANSWERS = ("none", "continue", "block", "modified", "raise", "retry")
"""What the swallowing middleware answers once it has caught its caller's cancellation."""

SWALLOWS = ("except", "scope", "suspend_first")
"""How it swallows: a plain ``except``; inside a cancel scope of its own (``move_on_after``
with a far deadline); after suspending once before the wait that is cancelled."""


def _before(name: str, does: str, log: list[str]) -> Any:
    if does == "plain":

        @hw.middleware(hooks=["tool.before"], fail_mode="open", name=name)
        async def plain(event: Any, env: hw.Envelope) -> None:
            log.append(name)

        return plain

    @hw.middleware(hooks=["tool.before"], fail_mode="open", name=name)
    async def mw(event: Any, env: hw.Envelope) -> Any:
        log.append(name)
        if does == "suspend":
            await anyio.sleep(0)
        if does == "raise":
            raise RuntimeError("the secret message of a middleware")
        return hw.Continue() if does == "continue" else None

    return mw


def _answer(answer: str, event: Any) -> Any:
    if answer == "raise":
        raise RuntimeError("the secret message of a middleware")
    if answer == "block":
        return hw.Block("blocked anyway", code="stubborn")
    if answer == "retry":
        return hw.Retry("again", code="stubborn")
    if answer == "modified":
        call = event.call.model_copy(update={"arguments": {"swallowed": True}})
        return hw.Continue(modified=event.model_copy(update={"call": call}))
    return hw.Continue() if answer == "continue" else None


def _swallower(
    swallow: str, answer: str, timeout: str | None, closed: bool, started: anyio.Event,
    log: list[str],
) -> Any:  # fmt: skip
    fail_mode = "closed" if closed else "open"

    @hw.middleware(hooks=["tool.before"], fail_mode=fail_mode, timeout=timeout, name="swallower")
    async def swallower(event: Any, env: hw.Envelope) -> Any:
        log.append("swallower")
        if swallow == "suspend_first":
            await anyio.sleep(0)
        never = anyio.Event()
        started.set()
        try:
            if swallow == "scope":
                with anyio.move_on_after(3600):
                    await never.wait()
            else:
                await never.wait()
        except anyio.get_cancelled_exc_class():
            log.append("swallowed")  # bad manners: it answers anyway
        return _answer(answer, event)

    return swallower


def _after(name: str, log: list[str]) -> Any:
    @hw.middleware(hooks=["tool.before"], fail_mode="open", name=name)
    async def mw(event: Any, env: hw.Envelope) -> None:
        log.append(name)

    return mw


async def _scenario(
    before: list[str], swallow: str, answer: str, timeout: str | None, closed: bool,
    after: int, how: str,
) -> None:  # fmt: skip
    bus, log = hw.HookBus(), list[str]()
    ctx = hw.RunContext(trace=hw.Trace(limit=None))
    started = anyio.Event()
    for i, does in enumerate(before):
        bus.register(_before(f"before{i}", does, log))
    bus.register(_swallower(swallow, answer, timeout, closed, started, log))
    for i in range(after):
        bus.register(_after(f"after{i}", log))

    caught = False
    async with anyio.create_task_group() as group:
        with anyio.CancelScope() as scope:

            async def cancel_when_started() -> None:
                await started.wait()
                if how == "cancel":
                    scope.cancel()
                else:  # a deadline that is already due, set from outside
                    scope.deadline = anyio.current_time()

            group.start_soon(cancel_when_started)
            await bus.emit("tool.before", tool_call(), ctx)
        caught = scope.cancelled_caught

    assert caught, "the caller's scope never saw its cancellation"
    ran = [name for name in log if name != "swallowed"]
    assert ran == [f"before{i}" for i in range(len(before))] + ["swallower"]
    assert "swallowed" in log  # it really did swallow it
    records = ctx.trace.records()
    # The middleware before it keep their records (I12); it, later ones and the hook none.
    assert [r["middleware"] for r in records] == [f"before{i}" for i in range(len(before))]
    assert all(r["kind"] in ("outcome", "failure") for r in records)
    assert ctx.trace.emits == 1
    text = ctx.trace.to_jsonl()
    assert "secret message" not in text

    # The bus and the caller go on: the next emit is whole, numbered 2.
    bus.unregister("swallower")
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome.kind == "continue"
    tail = ctx.trace.records()[len(records) :]
    assert {r["emit"] for r in tail} == {2} and tail[-1]["kind"] == "hook"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@hostile_settings
@given(
    before=st.lists(st.sampled_from(BEFORE), max_size=3),
    swallow=st.sampled_from(SWALLOWS),
    answer=st.sampled_from(ANSWERS),
    timeout=st.sampled_from([None, "30s"]),
    closed=st.booleans(),
    after=st.integers(min_value=0, max_value=2),
    how=st.sampled_from(["cancel", "deadline"]),
)
def test_a_swallowed_cancellation_of_the_caller_still_ends_the_emit(
    backend: str,
    before: list[str],
    swallow: str,
    answer: str,
    timeout: str | None,
    closed: bool,
    after: int,
    how: str,
) -> None:
    anyio.run(_scenario, before, swallow, answer, timeout, closed, after, how, backend=backend)


async def _asyncio_timeout_scenario(answer: str, timeout: str | None) -> None:
    """asyncio's own canceller: ``asyncio.timeout`` turns the caller's cancellation into a
    ``TimeoutError`` only when a ``CancelledError`` reaches it."""
    import asyncio

    bus, log = hw.HookBus(), list[str]()
    ctx = hw.RunContext(trace=hw.Trace(limit=None))
    started = anyio.Event()
    bus.register(_swallower("except", answer, timeout, False, started, log))
    bus.register(_after("after0", log))
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0):  # due at once: fires at the first suspension
            await bus.emit("tool.before", tool_call(), ctx)
    assert log == ["swallower", "swallowed"]
    assert ctx.trace.records() == []


@hostile_settings
@given(answer=st.sampled_from(ANSWERS), timeout=st.sampled_from([None, "30s"]))
def test_asyncio_timeout_sees_its_cancellation_swallowed_by_a_middleware(
    answer: str, timeout: str | None
) -> None:
    anyio.run(_asyncio_timeout_scenario, answer, timeout, backend="asyncio")
