"""Finishing middleware that really suspend, with sound timeouts under asyncio and trio.

A core's ``Registry.emit`` runs the chain synchronously and returns a ``HookResult``, or a
*pending* step when a middleware has to wait for the event loop. This module awaits that step
and hands the answer back (``resume``/``fail``/``timed_out``), until the chain is done.

Why timeouts are armed here and not per middleware: a cancel scope costs 15-30 µs, 85% of a
naive emit (``shared/research/perf-baseline.md``), and a middleware that finishes without
suspending can never be interrupted anyway; its late answer is caught by the core's monotonic
deadline check (ruling 10). So:

* asyncio: a suspended middleware gets a ``loop.call_later`` timer that cancels the task; the
  cancellation is recognised as ours and withdrawn with ``Task.uncancel`` (what
  ``asyncio.timeout`` does). No scope is ever entered.
* trio (and any other anyio backend): cancel scopes form a stack that must be entered *before*
  the middleware's first step, or a middleware that opens its own scope (``anyio.sleep``)
  corrupts it. So a chain with timeouts runs inside one ``anyio.CancelScope`` per emit, whose
  deadline is set only while a suspended middleware runs. A scope that fired is spent (trio
  scopes cannot be un-cancelled), so the rest of the chain continues in a fresh one.
"""

from __future__ import annotations

import asyncio
import math
import sys
import types
from collections.abc import Callable, Generator
from typing import Any, Protocol, TypeVar

import anyio

__all__ = ["NOT_STARTED", "Step", "finish", "run_structured", "stray_cancellation"]

_get_running_loop = asyncio._get_running_loop  # C function: None under trio
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)


class _NotStarted:
    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_STARTED"


NOT_STARTED: Any = _NotStarted()
"""``Step.yielded`` when the core did not step the awaitable itself: just await it."""


class Step(Protocol[R_co]):
    """A middleware the core could not finish synchronously (the core's ``Pending``)."""

    @property
    def awaitable(self) -> Any: ...
    @property
    def yielded(self) -> Any: ...
    @property
    def timeout(self) -> float | None: ...
    def remaining(self) -> float: ...
    def resume(self, value: Any) -> R_co | Step[R_co]: ...
    def fail(self, exc: BaseException) -> R_co | Step[R_co]: ...
    def timed_out(self) -> R_co | Step[R_co]: ...


class DeadlinePassed(Exception):
    """Our own timer cancelled the middleware."""


_DeadlinePassed = DeadlinePassed


def stray_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is the runtime's cancellation raised while the caller is *not* being
    cancelled (I15): a middleware that awaited a future someone else cancelled. That is a
    failure of the middleware; the caller's own cancellation propagates at once (I12).

    asyncio: the task has no cancellation request pending (``Task.cancelling``, which
    ``asyncio.timeout``, task groups and anyio's scopes all raise). trio: no enclosing cancel
    scope is cancelled (the effective deadline is not minus infinity).
    """
    if isinstance(exc, asyncio.CancelledError):
        if _get_running_loop() is None:
            return False
        task = asyncio.current_task()
        return task is not None and task.cancelling() == 0
    trio = sys.modules.get("trio")
    if trio is not None and isinstance(exc, trio.Cancelled):
        try:
            return bool(trio.current_effective_deadline() != -math.inf)
        except RuntimeError:  # not inside trio after all
            return False
    return False


@types.coroutine
def _drive(iterator: Any, yielded: Any) -> Generator[Any, Any, Any]:
    """Forward a half-run coroutine's traffic with the event loop until it returns."""
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            iterator.close()
            raise
        except BaseException as exc:  # cancellation and throw() reach the middleware
            try:
                yielded = iterator.throw(exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                yielded = iterator.send(sent)
            except StopIteration as stop:
                return stop.value


_SHIELD_RECHECK = 0.005
"""Seconds between looks at a task whose deadline passed inside a shielded scope."""


def _shielded(task: asyncio.Task[Any]) -> bool:
    """Whether ``task`` is inside a shielded anyio cancel scope. Under asyncio anyio keeps its
    scopes per task (private state, read defensively), and ``Task.cancel`` ignores them, so
    the bus asks before cancelling: trio respects a shield by itself.

    Every shield counts, including one the caller opened around the emit (telling them apart
    would cost a look-up on every emit); the middleware is then timed out when it answers
    (ruling 10) rather than interrupted.
    """
    backend = sys.modules.get("anyio._backends._asyncio")
    if backend is None:
        return False
    try:
        state = backend._task_states.get(task)
        scope = None if state is None else state.cancel_scope
        while scope is not None:
            if scope._shield:
                return True
            scope = scope._parent_scope
    except AttributeError:  # another anyio: no shields seen, as before
        return False
    return False


async def _drive_asyncio(step: Step[Any], loop: asyncio.AbstractEventLoop) -> Any:
    task = asyncio.current_task()
    assert task is not None  # an emit is always awaited inside a task
    fired = False
    handle: asyncio.TimerHandle  # armed below; a shield re-arms it

    def fire() -> None:
        nonlocal fired, handle
        if _shielded(task):  # a shield holds off the deadline until the task leaves it
            handle = loop.call_later(_SHIELD_RECHECK, fire)
            return
        fired = True
        task.cancel()

    cancelling = task.cancelling()
    handle = loop.call_later(max(step.remaining(), 0.0), fire)
    try:
        value = await _drive(step.awaitable, step.yielded)
    except asyncio.CancelledError:
        if fired and task.uncancel() <= cancelling:
            raise _DeadlinePassed from None
        raise
    finally:
        handle.cancel()
    if fired:  # it swallowed our cancellation and answered late
        task.uncancel()
        raise _DeadlinePassed
    return value


async def drive_with_deadline(step: Step[Any]) -> Any:
    """Finish a suspended step under asyncio, its deadline armed now; raises
    ``DeadlinePassed`` when it fires (the pure-Python core's drive loop uses this)."""
    return await _drive_asyncio(step, asyncio.get_running_loop())


async def _await_step(step: Step[Any], loop: asyncio.AbstractEventLoop | None) -> Any:
    if step.yielded is NOT_STARTED:
        return await step.awaitable
    if step.timeout is None or loop is None:
        return await _drive(step.awaitable, step.yielded)
    return await _drive_asyncio(step, loop)


async def finish(result: R | Step[R], done: type[R]) -> R:
    """Await pending steps until the core returns its ``HookResult`` (type ``done``)."""
    loop = _get_running_loop()
    while type(result) is not done:
        step: Step[R] = result  # type: ignore[assignment]
        try:
            value = await _await_step(step, loop)
        except _DeadlinePassed:
            result = step.timed_out()
        except Exception as exc:
            result = step.fail(exc)
        except BaseException as exc:  # the caller's cancellation is the caller's (I12), ...
            if not stray_cancellation(exc):
                raise
            result = step.fail(exc)  # ... a stray one the middleware's failure (I15)
        else:
            result = step.resume(value)
    return result


async def run_structured(begin: Callable[[], R | Step[R]], done: type[R]) -> R:
    """Run a chain with timeouts under structured cancellation (trio): see the module doc."""
    action: Callable[[], R | Step[R]] = begin
    while True:
        with anyio.CancelScope() as scope:
            result = action()
            while type(result) is not done:
                step: Step[R] = result  # type: ignore[assignment]
                scope.deadline = _deadline(step)
                value: Any = None
                failure: BaseException | None = None
                try:
                    value = await _await_step(step, None)
                except Exception as exc:
                    failure = exc
                except BaseException as exc:  # ours, when the deadline fired, is not stray
                    if not stray_cancellation(exc):
                        raise
                    failure = exc  # a cancellation not the caller's: a failure (I15)
                scope.deadline = math.inf
                if scope.cancel_called:  # answered after its deadline fired: a timeout
                    action = step.timed_out
                    break
                result = step.resume(value) if failure is None else step.fail(failure)
            else:
                return result
        if scope.cancelled_caught:
            action = step.timed_out


def _deadline(step: Step[Any]) -> float:
    if step.timeout is None:
        return math.inf
    return anyio.current_time() + max(step.remaining(), 0.0)


async def continue_emit(
    started: Any,
    registry: Any,
    hook: str,
    event: Any,
    ctx: Any,
    done: type[R],
    deadline: object = None,
) -> R:
    """The rest of an emit that could not finish synchronously (the Rust core's ``Emit``
    awaits this): a pending step, or ``None`` for a chain with timeouts (or a chain deadline,
    I26: ``deadline`` is the emit's own) under trio."""
    if started is None:
        return await run_structured(
            lambda: registry.emit(hook, event, ctx.envelope, ctx.trace, deadline), done
        )
    return await finish(started, done)


def exception_of(kind: Any, value: Any = None) -> BaseException:
    """The exception ``throw(kind, value)`` means (for an emit thrown into before it ran)."""
    if isinstance(kind, BaseException):
        return kind
    if isinstance(value, BaseException):
        return value
    return kind() if value is None else kind(value)  # type: ignore[no-any-return]
