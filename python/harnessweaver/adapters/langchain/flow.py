"""One flow, two drivers: the adapter's logic is written once as a generator of operations
(emit on the bus, call LangChain's handler, wait), and driven either synchronously (for
``agent.invoke``) or asynchronously (for ``agent.ainvoke``).

LangGraph's ``interrupt()`` is called by the flow itself, in the node that runs it: it reads
the node's config from context variables, which both drivers leave in place.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import time
from collections.abc import Awaitable, Callable, Coroutine, Generator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from ...bus import HookBus
from ...context import RunContext
from ...outcomes import HookResult

__all__ = ["Await", "Call", "Emit", "Flow", "Sleep", "drive", "drive_async", "replay"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Emit:
    bus: HookBus
    hook: str
    event: Any
    ctx: RunContext
    replayed: bool = True
    """Whether a node run again answers it from memory (see :func:`replay`)."""


@dataclass(frozen=True, slots=True)
class Call:
    """Call LangChain's handler (the model or the tool) with ``request``."""

    handler: Callable[[Any], Any]
    request: Any


@dataclass(frozen=True, slots=True)
class Sleep:
    seconds: float


@dataclass(frozen=True, slots=True)
class Await:
    """Await ``work()`` (the approvals book: the store is asynchronous).

    A node run again answers it from memory (what was done is not done again: a claim, a
    decision), but with ``settled`` given, only a value for which ``settled(value)`` holds is
    remembered: a look at the book that found the approval still pending is made afresh each
    time the node runs, since someone may have decided it meanwhile."""

    work: Callable[[], Awaitable[Any]]
    settled: Callable[[Any], bool] | None = None


Op = Emit | Call | Sleep | Await
Flow = Generator[Op, Any, R]


def replay(flow: Flow[R], memo: list[tuple[bool, Any]]) -> Flow[R]:
    """Run ``flow``, answering its first operations from ``memo`` (what a node that LangGraph
    runs again after an interrupt already did: the emits' results, the tool's or the
    model's answer, each as ``(raised, value)``) and adding what it does beyond them.

    So a resumed node goes on where it paused: the bus sees each emit once, the tool and the
    model run once, as in harnessweaver's own run loop. The flow is deterministic given its
    operations' results, so it asks for the same operations again."""
    done = 0
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            op = flow.throw(error) if error is not None else flow.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        if isinstance(op, Emit) and not op.replayed:
            try:
                value, error = (yield op), None
            except Exception as exc:
                value, error = None, exc
            continue
        if done < len(memo):
            raised, got = memo[done]
        else:
            try:
                raised, got = False, (yield op)
            except Exception as exc:
                raised, got = True, exc
            check = op.settled if isinstance(op, Await) and not raised else None
            if check is not None and not check(got):
                value, error = got, None  # asked afresh next time: not kept, not counted
                continue
            memo.append((raised, got))
        done += 1
        value, error = (None, got) if raised else (got, None)


def _run_coroutine(coro: Coroutine[Any, Any, R]) -> R:
    """Run ``coro`` to its end from synchronous code: on a new event loop, or, when this
    thread already runs one (``invoke`` called from async code), on a worker thread that
    sees this thread's context variables."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    ctx = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(ctx.run, asyncio.run, coro).result()


async def _emit(op: Emit) -> HookResult:
    return await op.bus.emit(op.hook, op.event, op.ctx)


async def _awaited(op: Await) -> Any:
    return await op.work()


def drive(flow: Flow[R]) -> R:
    """Run ``flow`` synchronously: each emit on its own event loop, the handler called as it
    is (LangChain gives a synchronous one to synchronous hooks)."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            op = flow.throw(error) if error is not None else flow.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            if isinstance(op, Emit):
                value = _run_coroutine(_emit(op))
            elif isinstance(op, Await):
                value = _run_coroutine(_awaited(op))
            elif isinstance(op, Call):
                value = op.handler(op.request)
            else:
                time.sleep(op.seconds)
        except Exception as exc:  # the flow decides (it re-raises what it does not handle)
            error = exc


async def drive_async(flow: Flow[R]) -> R:
    """Run ``flow`` on the running event loop, awaiting LangChain's asynchronous handler."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            op = flow.throw(error) if error is not None else flow.send(value)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
        value, error = None, None
        try:
            if isinstance(op, Emit):
                value = await _emit(op)
            elif isinstance(op, Await):
                value = await op.work()
            elif isinstance(op, Call):
                result = op.handler(op.request)
                value = await result if inspect.isawaitable(result) else result
            else:
                await asyncio.sleep(op.seconds)
        except Exception as exc:
            error = exc
