"""bus.emit(...) is a coroutine: awaitable once, schedulable as a task, cancellable."""

from __future__ import annotations

import asyncio
import collections.abc
import io
from typing import Any

import anyio
import pytest
from conftest import tool_call, untimed

import harnessweaver as hw

pytestmark = pytest.mark.anyio


def counting_bus(calls: list[str], *, suspend: bool = False) -> hw.HookBus:
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def count(event: Any, env: hw.Envelope) -> None:
        calls.append("ran")
        if suspend:
            await anyio.sleep(0)

    bus.register(count)
    return bus


async def test_nothing_runs_until_the_emit_is_awaited(ctx: hw.RunContext) -> None:
    calls: list[str] = []
    bus = counting_bus(calls)
    pending = bus.emit("tool.before", tool_call(), ctx)
    assert isinstance(pending, collections.abc.Coroutine)
    await anyio.sleep(0)
    assert calls == [] and len(ctx.trace) == 0
    result = await pending
    assert calls == ["ran"] and result.outcome == hw.Continue()


@pytest.mark.parametrize("suspend", [False, True])
async def test_an_emit_is_awaited_once(ctx: hw.RunContext, suspend: bool) -> None:
    pending = counting_bus([], suspend=suspend).emit("tool.before", tool_call(), ctx)
    await pending
    with pytest.raises(RuntimeError, match=r"already awaited|cannot reuse"):
        await pending


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_asyncio_schedules_emits_as_tasks(ctx: hw.RunContext) -> None:
    calls: list[str] = []
    bus = counting_bus(calls, suspend=True)
    task = asyncio.create_task(bus.emit("tool.before", tool_call(), ctx))
    gathered = await asyncio.gather(bus.emit("tool.before", tool_call(), hw.RunContext()), task)
    assert [r.outcome for r in gathered] == [hw.Continue(), hw.Continue()] and calls == ["ran"] * 2


@pytest.mark.parametrize("anyio_backend", ["trio"])
async def test_trio_starts_emits_in_a_nursery() -> None:
    import trio

    calls: list[str] = []
    bus = counting_bus(calls, suspend=True)
    async with trio.open_nursery() as nursery:
        for _ in range(3):
            nursery.start_soon(bus.emit, "tool.before", tool_call(), hw.RunContext())
    assert calls == ["ran"] * 3


async def test_a_suspended_emit_cancelled_from_outside_keeps_what_it_recorded() -> None:
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def first(event: Any, env: hw.Envelope) -> None:
        return None

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def stuck(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(30)

    bus.register(first)
    bus.register(stuck)
    ctx = hw.RunContext()
    with anyio.move_on_after(0.02):
        await bus.emit("tool.before", tool_call(), ctx)
    assert [(r["kind"], r.get("middleware")) for r in untimed(ctx.trace)] == [("outcome", "first")]


def test_a_fresh_emit_takes_no_value_and_closes_quietly(ctx: hw.RunContext) -> None:
    bus = counting_bus([])
    fresh = bus.emit("tool.before", tool_call(), ctx)
    with pytest.raises(TypeError, match="non-None"):
        fresh.send(1)
    fresh.close()
    unused = bus.emit("tool.before", tool_call(), ctx)
    unused.close()
    thrown = bus.emit("tool.before", tool_call(), ctx)
    with pytest.raises(KeyError):
        thrown.throw(KeyError("stop"))
    assert len(ctx.trace) == 0


def test_driving_an_emit_by_hand_returns_through_stop_iteration(ctx: hw.RunContext) -> None:
    emit = counting_bus([]).emit("tool.before", tool_call(), ctx)
    with pytest.raises(StopIteration) as stopped:
        emit.send(None)
    assert stopped.value.value.outcome == hw.Continue()


async def test_errors_surface_when_awaited(ctx: hw.RunContext) -> None:
    pending = hw.HookBus().emit("tool.befor", tool_call(), ctx)
    with pytest.raises(hw.EmitError, match=r"tool\.befor"):
        await pending


async def test_emit_takes_its_arguments_by_keyword_too(ctx: hw.RunContext) -> None:
    bus = counting_bus([])
    by_keyword = await bus.emit(hook="tool.before", event=tool_call(), ctx=ctx)
    mixed = await bus.emit("tool.before", tool_call(), ctx=ctx)
    assert by_keyword.outcome == mixed.outcome == hw.Continue()
    with pytest.raises(TypeError, match="ctx"):
        bus.emit("tool.before", tool_call())  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        bus.emit("tool.before", tool_call(), ctx, "extra")  # type: ignore[call-arg]


async def test_an_emit_someone_still_holds_is_never_handed_out_again(
    ctx: hw.RunContext,
) -> None:
    # The Rust core reuses a finished emit object nobody references any more; one that is
    # still referenced must stay what it was: finished, and refusing a second await.
    bus = counting_bus([])
    kept = [bus.emit("tool.before", tool_call(), ctx) for _ in range(3)]
    for pending in kept:
        await pending
    later = [bus.emit("tool.before", tool_call(), ctx) for _ in range(3)]
    assert not any(new is old for new in later for old in kept)
    for pending in later:
        assert (await pending).outcome == hw.Continue()
    for pending in kept:
        with pytest.raises(RuntimeError, match=r"already awaited|cannot reuse"):
            await pending


class _YieldOnce:
    """An awaitable that suspends exactly once: lets a test drive an emit by hand."""

    def __await__(self) -> Any:
        yield None


def test_an_abandoned_suspended_emit_still_leaves_its_records() -> None:
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def first(event: Any, env: hw.Envelope) -> None:
        return None

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def waits(event: Any, env: hw.Envelope) -> None:
        await _YieldOnce()

    bus.register(first)
    bus.register(waits)
    ctx = hw.RunContext()
    pending = bus.emit("tool.before", tool_call(), ctx)
    pending.send(None)  # `waits` suspends; the emit is dropped without being finished
    del pending
    assert [(r["kind"], r.get("middleware")) for r in untimed(ctx.trace)] == [("outcome", "first")]
    # The next emit starts afresh: nothing of the abandoned one is reused.
    finished = bus.emit("tool.before", tool_call(), ctx)
    with pytest.raises(StopIteration):
        while True:
            finished.send(None)
    assert [r["kind"] for r in untimed(ctx.trace)][-3:] == ["outcome", "outcome", "hook"]


class _HookName(str):
    """A str subclass: matched by its text, never by identity."""


async def test_the_hook_point_is_found_by_name_whatever_string_object_carries_it(
    ctx: hw.RunContext,
) -> None:
    # The Rust core answers a repeat of the last string object by identity (hook_names.rs).
    calls: list[str] = []
    bus = counting_bus(calls)
    same = ".".join(["tool", "before"])  # built at run time: not the catalogue's own object
    other = "".join(["tool", ".before"])
    names = [same, same, "tool.before", other, _HookName("tool.before"), same]
    for name in names:
        await bus.emit(name, tool_call(), ctx)
    assert len(calls) == len(names)
    assert {record["hook"] for record in ctx.trace.records()} == {"tool.before"}
    for wrong in ("tool.befor", _HookName("tool.unknown")):
        with pytest.raises(hw.EmitError) as caught:
            await bus.emit(wrong, tool_call(), ctx)
        assert caught.value.kind == "unknown_hook" and str(wrong) in str(caught.value)
    await bus.emit(same, tool_call(), ctx)
    assert len(calls) == len(names) + 1


@pytest.mark.parametrize(
    "answer",
    [
        hw.Block("r", code="c\udcff"),
        hw.Block("r\udcff"),
        hw.Suspend("r", approver_role="\ud800"),
        hw.Escalate("r", to="x\udcff"),
        hw.Retry("r", code="\udcff"),
    ],
    ids=repr,
)
async def test_an_outcome_holding_a_lone_surrogate_is_an_invalid_return(
    bus: hw.HookBus, ctx: hw.RunContext, answer: hw.Outcome
) -> None:
    # I16: the Rust core's emit raised UnicodeEncodeError; the pure core blocked, and then
    # trace.write_jsonl raised. Both now judge it where the answer is judged.
    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def odd(event: Any, env: hw.Envelope) -> hw.Outcome:
        return answer

    bus.register(odd)
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome == hw.Block(
        "middleware odd failed: invalid_return", code="middleware_error"
    )
    assert untimed(ctx.trace)[0]["error"] == "InvalidReturn"
    buffer = io.StringIO()
    ctx.trace.write_jsonl(buffer)
    assert "InvalidReturn" in buffer.getvalue()
