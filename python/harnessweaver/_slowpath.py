"""Finishing middleware that really suspend, with sound timeouts under asyncio and trio.

A core's ``Registry.emit`` runs the chain synchronously and returns a ``HookResult``, or a
*pending* step when a middleware has to wait for the event loop. This module awaits that step
and hands the answer back (``resume``/``fail``/``timed_out``), until the chain is done.

Why timeouts are armed here and not per middleware: a cancel scope costs 15-30 µs, 85% of a
naive emit (``shared/research/perf-baseline.md``), and a middleware that finishes without
suspending can never be interrupted anyway; its late answer is caught by the core's monotonic
deadline check (ruling 10). So:

* asyncio: a suspended middleware's deadline is a timer (``loop.call_at``, one ``_Timer`` per
  emit) that cancels the task; the cancellation is recognised as ours and withdrawn with
  ``Task.uncancel`` (what ``asyncio.timeout`` does). No scope is ever entered.
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
from collections.abc import Awaitable, Callable, Generator
from typing import Any, Protocol, TypeVar

import anyio

__all__ = [
    "NOT_STARTED",
    "Step",
    "caller_mark",
    "callers_cancellation",
    "cancelled_since",
    "finish",
    "forward",
    "run_structured",
    "stray_cancellation",
]

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


def caller_mark() -> Any:
    """The caller's cancellation as it stands, taken before a middleware can suspend, for
    ``cancelled_since`` to compare with once it has ended (I30).

    asyncio: the task and its count of cancellation requests (``Task.cancelling``); a request
    made later raises it. trio: whether an enclosing cancel scope is cancelled already.
    """
    loop = _get_running_loop()
    if loop is not None:
        task = asyncio.current_task(loop)
        return None if task is None else (task, task.cancelling())
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            return bool(trio.current_effective_deadline() == -math.inf)
        except RuntimeError:  # not inside trio after all
            return None
    return None


def cancelled_since(mark: Any) -> bool:
    """Whether the caller began to be cancelled after ``mark`` was taken (I30): asyncio, a
    cancellation request was made (one the middleware swallowed is still counted); trio, an
    enclosing cancel scope not cancelled then is cancelled now."""
    if type(mark) is tuple:
        task, requests = mark
        return bool(task.cancelling() > requests)
    if mark is False:
        return bool(sys.modules["trio"].current_effective_deadline() == -math.inf)
    return False


@types.coroutine
def callers_cancellation() -> Generator[Any, Any, None]:
    """Raise the caller's cancellation, which a middleware swallowed (I30).

    trio: the cancellation itself, from a checkpoint (a cancelled scope raises at every one).
    asyncio: anyio's scopes deliver their cancellation again on every turn of the loop, and
    know it by its message, so one turn brings it; asyncio's own cancellers (``Task.cancel``,
    ``asyncio.timeout``, task groups) deliver once and count their requests, so a plain
    ``CancelledError`` is theirs.
    """
    if _get_running_loop() is None:
        yield from sys.modules["trio"].lowlevel.checkpoint().__await__()
        return
    yield  # one turn of the loop, as ``asyncio.sleep(0)``
    raise asyncio.CancelledError


_COROUTINES = (types.CoroutineType, types.GeneratorType)


@types.coroutine
def _forward(iterator: Any, yielded: Any) -> Generator[Any, Any, Any]:
    """Forward a half-run coroutine's traffic with the event loop until it returns: its first
    yield is passed out here, then (a coroutine or generator sent ``None``, as asyncio's task
    always sends) ``yield from`` hands the rest to the interpreter, which forwards every send,
    throw and close in C, with no Python frame of ours per resumption."""
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
            continue
        if sent is None and type(iterator) in _COROUTINES:
            return (yield from iterator)
        try:
            yielded = iterator.send(sent)
        except StopIteration as stop:
            return stop.value


forward = _forward  # for the pure core's drive loop


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


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


_IDLE = math.inf
_EARLY = 0.001
"""Seconds a new handle is armed before its deadline. The next middleware's deadline, read
through two clocks, can come out a few microseconds earlier than this one's even when they
started in the same tick of the core's coarse clock; armed this much early, the handle still
serves it (and, firing early, re-arms for the deadline itself: never late)."""


class _Timer:
    """The deadline of the suspended middleware of one emit under asyncio: one object per
    emit, called by the loop (``loop.call_at(when, timer)``) instead of a closure per
    suspension, and one timer handle for as many suspensions as it can serve.

    ``arm`` sets the deadline of the middleware now suspended, ``disarm`` says none is. The
    handle is kept across middleware: a later middleware's deadline is rarely earlier, so a
    handle armed for an earlier deadline stays, and when it fires it re-arms for the current
    one (only an emit running near its first timeout ever sees that). A handle is replaced
    only for an earlier deadline, and cancelled when the emit ends (``close``). So the
    middleware is cancelled at its own deadline, as by a handle of its own, never later.
    """

    __slots__ = ("armed", "cancelling", "fired", "handle", "loop", "task", "when")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        task = asyncio.current_task()
        assert task is not None  # an emit is always awaited inside a task
        self.loop = loop
        self.task = task
        self.handle: asyncio.TimerHandle | None = None
        self.armed = _IDLE  # when ``handle`` fires
        self.when = _IDLE  # the deadline of the middleware suspended now, if any
        self.fired = False
        self.cancelling = 0

    def arm(self, remaining: float) -> None:
        loop = self.loop
        when = loop.time() + (remaining if remaining > 0.0 else 0.0)
        self.when = when
        self.fired = False
        self.cancelling = self.task.cancelling()
        if self.handle is None or self.armed > when:
            if self.handle is not None:
                self.handle.cancel()
            self.armed = when - _EARLY
            self.handle = loop.call_at(self.armed, self)

    def disarm(self) -> None:
        self.when = _IDLE

    def close(self) -> None:
        if self.handle is not None:
            self.handle.cancel()
            self.handle = None

    def __call__(self) -> None:
        """The handle fired: cancel the task if the current deadline is the one it was for."""
        self.handle = None
        when = self.when
        if when == _IDLE:  # no middleware is suspended under a deadline now
            self.armed = _IDLE
            return
        loop = self.loop
        if when > self.armed:  # armed for an earlier middleware: wait for this one's
            self.handle, self.armed = loop.call_at(when, self), when
            return
        if _shielded(self.task):  # a shield holds off the deadline until the task leaves it
            self.armed = loop.time() + _SHIELD_RECHECK
            self.handle = loop.call_at(self.armed, self)
            return
        self.armed = _IDLE
        self.fired = True
        self.task.cancel()

    def uncancel(self) -> int:
        return self.task.uncancel()


@types.coroutine
def _timed(step: Step[Any], timer: _Timer) -> Generator[Any, Any, Any]:
    """Finish a suspended step under asyncio with its deadline on ``timer``; raises
    ``DeadlinePassed`` when the timer cancelled it (ruling 10: also when it swallowed the
    cancellation and answered late). A cancellation that is not only ours propagates (I12)."""
    timer.arm(step.remaining())
    try:
        value = yield from _forward(step.awaitable, step.yielded)
    except asyncio.CancelledError:
        if timer.fired and timer.uncancel() <= timer.cancelling:
            raise _DeadlinePassed from None
        raise
    except Exception:
        if timer.fired:  # it turned our cancellation into another error: late, so a timeout
            timer.uncancel()  # withdrawn, or the task would stay marked as being cancelled
            raise _DeadlinePassed from None
        raise
    finally:
        timer.disarm()
    if timer.fired:  # it swallowed our cancellation and answered late
        timer.uncancel()
        raise _DeadlinePassed
    return value


async def drive_with_deadline(step: Step[Any]) -> Any:
    """Finish a suspended step under asyncio, its deadline armed now; raises
    ``DeadlinePassed`` when it fires (the pure-Python core's drive loop uses this)."""
    timer = _Timer(asyncio.get_running_loop())
    try:
        return await _timed(step, timer)
    finally:
        timer.close()


async def _await_step(step: Step[Any]) -> Any:
    """A step awaited with no deadline armed here (trio's cancel scope holds it)."""
    if step.yielded is NOT_STARTED:
        return await step.awaitable
    return await _forward(step.awaitable, step.yielded)


@types.coroutine
def finish(result: R | Step[R], done: type[R]) -> Generator[Any, Any, R]:
    """Await pending steps until the core returns its ``HookResult`` (type ``done``).

    A generator-based coroutine, not ``async def``: the Rust core's ``Emit`` forwards the
    event loop's sends straight into it, and it forwards them on with ``yield from``, so a
    resumption of a suspended middleware passes through as few Python frames as can be
    (this, ``_timed`` when timed, ``_forward``). The emit's deadline timer is made at its
    first timed suspension and cancelled when the emit ends, however it ends.
    """
    loop = _get_running_loop()
    timer: _Timer | None = None
    mark = caller_mark()  # no middleware has let the event loop run yet (I30)
    try:
        while type(result) is not done:
            step: Step[R] = result  # type: ignore[assignment]
            yielded = step.yielded
            failure: BaseException | None = None
            late = False
            try:
                if yielded is NOT_STARTED:
                    value = yield from _awaited(step.awaitable)
                elif loop is None or step.timeout is None:
                    value = yield from _forward(step.awaitable, yielded)
                else:
                    if timer is None:
                        timer = _Timer(loop)
                    value = yield from _timed(step, timer)
            except _DeadlinePassed:
                late = True
            except Exception as exc:
                failure = exc
            except BaseException as exc:  # the caller's cancellation is the caller's (I12), ...
                if not stray_cancellation(exc):
                    raise
                failure = exc  # ... a stray one the middleware's failure (I15)
            if cancelled_since(mark):  # it swallowed the caller's cancellation (I30)
                yield from callers_cancellation()
            if late:
                result = step.timed_out()
            elif failure is not None:
                result = step.fail(failure)
            else:
                result = step.resume(value)
        return result
    finally:
        if timer is not None:
            timer.close()


async def run_structured(begin: Callable[[], R | Step[R]], done: type[R]) -> R:
    """Run a chain with timeouts under structured cancellation (trio): see the module doc."""
    action: Callable[[], R | Step[R]] = begin
    mark = caller_mark()  # no middleware has let the event loop run yet (I30)
    while True:
        with anyio.CancelScope() as scope:
            result = action()
            while type(result) is not done:
                step: Step[R] = result  # type: ignore[assignment]
                scope.deadline = _deadline(step)
                value: Any = None
                failure: BaseException | None = None
                try:
                    value = await _await_step(step)
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
                if cancelled_since(mark):  # it swallowed the caller's cancellation (I30)
                    await callers_cancellation()
                result = step.resume(value) if failure is None else step.fail(failure)
            else:
                return result
        if scope.cancelled_caught:
            action = step.timed_out
        # Outside the spent scope, whose own cancellation would look like the caller's.
        if cancelled_since(mark):  # it swallowed the caller's cancellation too (I30)
            await callers_cancellation()


def _deadline(step: Step[Any]) -> float:
    if step.timeout is None:
        return math.inf
    return anyio.current_time() + max(step.remaining(), 0.0)


def continue_emit(
    started: Any,
    registry: Any,
    hook: str,
    event: Any,
    ctx: Any,
    done: type[R],
    deadline: object = None,
) -> Awaitable[R]:
    """The rest of an emit that could not finish synchronously (the Rust core's ``Emit``
    awaits this): a pending step, or ``None`` for a chain with timeouts (or a chain deadline,
    I26: ``deadline`` is the emit's own) under trio. Returns the coroutine itself, not an
    ``async def`` around it: one frame fewer on every resumption. Nothing runs before it is
    awaited."""
    if started is None:
        return run_structured(
            lambda: registry.emit(hook, event, ctx.envelope, ctx.trace, deadline), done
        )
    return finish(started, done)


def exception_of(kind: Any, value: Any = None) -> BaseException:
    """The exception ``throw(kind, value)`` means (for an emit thrown into before it ran)."""
    if isinstance(kind, BaseException):
        return kind
    if isinstance(value, BaseException):
        return value
    return kind() if value is None else kind(value)  # type: ignore[no-any-return]
