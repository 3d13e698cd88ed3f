"""The chain walk: call each middleware, judge its answer, trace it, fold it into the result.

A ``Walk`` runs synchronously until a middleware suspends; then it is itself the pending step
(``_slowpath.Step``) the bus awaits before handing the answer back. It steps every middleware
by hand, as the Rust core does. ``drive``, the usual emit, simply awaits a middleware that has
no timeout and cannot suspend (a plain ``await`` is the cheapest way to run a coroutine from
Python, ``perf-baseline.md`` finding 4) and steps the others by hand, so that a deadline is
armed, the records so far written and the caller's cancellation looked at (I30) only for
those that really suspend.
"""

from __future__ import annotations

from collections.abc import Callable
from time import monotonic_ns
from types import CoroutineType
from typing import Any

from .._plain import final
from .._slowpath import (
    DeadlinePassed,
    caller_mark,
    callers_cancellation,
    cancelled_since,
    drive_with_deadline,
    forward,
    stray_cancellation,
)
from ..buslog import contract_warning, failed_open
from .contracts import violation
from .correlation import emit_key
from .deadline import SKIP, turn
from .failure import (
    CANCELLED,
    CONTRACT_VIOLATION,
    DEADLINE,
    EXCEPTION,
    INVALID_RETURN,
    SKIPPED,
    TIMEOUT,
    WRONG_EVENT_TYPE,
    closed_code,
    closed_reason,
    error_name,
)
from .identity import content_identity
from .outcomes import (
    Block,
    Continue,
    Escalate,
    HookResult,
    HookWarning,
    Retry,
    Suspend,
    has_invalid_text,
    hook_result,
    warned_result,
)
from .trace import MAX_EMIT, failure_shape, hook_shape, identified, outcome_shape
from .warnings import INVALID
from .warnings import judge as judge_warnings

__all__ = ["Walk", "drive"]

_CONTINUE = Continue()
_NO_WARNINGS = _CONTINUE.warnings  # what every outcome given no warnings holds (I24)


class _NotAwaitable(Exception):
    """A middleware returned something that cannot be awaited (an invalid return)."""


_UNCALLED: Any = object()  # what ``awaitable`` holds in ``drive`` while the call has not returned


def _cannot_await(value: Any) -> bool:
    return type(value) is not CoroutineType and not hasattr(value, "__await__")


def _is_event_of(value: Any, etype: type) -> bool:
    """Whether ``value``'s real type is ``etype`` or a subclass of it (I18): ``isinstance``
    would believe a ``__class__`` that claims the type, and call one that raises."""
    kind = type(value)
    return kind is etype or etype in kind.__mro__


_SEVERITY: dict[type, int] = {Retry: 2, Escalate: 3, Suspend: 4, Block: 5}
_KINDS = {0: "continue", 1: "continue", 2: "retry", 3: "escalate", 4: "suspend", 5: "block"}
_PLAIN_HOOK = hook_shape("continue", False, None)


@final("Pending")
class Walk:
    """One emit in progress (and, while it waits on a middleware, the pending step)."""

    __slots__ = (
        "_batch",
        "_best",
        "_best_sev",
        "_contracts",
        "_cut",
        "_deadline",
        "_entry",
        "_env",
        "_etype",
        "_event",
        "_fields",
        "_given",
        "_hook",
        "_identity",
        "_index",
        "_key",
        "_plan",
        "_record",
        "_t0",
        "_t_emit",
        "_warned",
        "awaitable",
        "timeout",
        "yielded",
    )

    def __init__(
        self,
        hook: str,
        plan: tuple[Any, ...],
        event: Any,
        env: Any,
        trace: Any,
        etype: type,
        key: tuple[Any, ...] | None = None,
        t_emit: int | None = None,
        contracts: str | None = None,
        budget: int | None = None,
        identity: str | None = None,
        batch: list[Any] | None = None,
    ):
        self._hook = hook
        self._plan = plan
        self._event = event
        self._env = env
        self._etype = etype
        self._contracts = contracts  # the hook-contract mode (I14); None checks nothing
        self._identity = identity  # the identity scheme (I27); None computes nothing
        self._given = event  # events never change in place (I18): this is what was given
        # Records gather in the batch (``drive``'s, when it brought this walk in) and reach the
        # trace whole: when the walk waits, ends, or is abandoned (``_flush``).
        self._fields = trace._fields
        self._batch: list[Any] = [] if batch is None else batch
        self._record = self._batch.extend
        # What every record of this emit is traced with: its number, the hook point and the
        # emit's correlation (I21).
        self._key = emit_key(trace._begin_emit(), hook, event, env) if key is None else key
        self._index = 0
        self._best: Any = _CONTINUE
        self._best_sev = -1
        self._t_emit = monotonic_ns() if t_emit is None else t_emit
        # The chain deadline (I26), an instant; None for nearly every emit.
        self._deadline = None if budget is None else self._t_emit + budget
        self._cut = 0  # the current middleware's cut-off limit (I26); 0: not cut off
        self._warned: list[HookWarning] | None = None  # the result's warnings (I24), once any
        self.awaitable: Any = None
        self.yielded: Any = None
        self.timeout: float | None = None

    # -- the pending-step protocol -------------------------------------------------------
    def remaining(self) -> float:
        deadline: int = self._t0 + self._limit_ns()
        return (deadline - monotonic_ns()) / 1e9

    def _limit_ns(self) -> Any:
        """Its timeout, or the time left to the chain deadline when it is cut off (I26)."""
        return self._cut or self._entry.timeout_ns

    def _overrun(self) -> str:
        """What running past the limit is: a timeout, or ``deadline`` when cut off (I26)."""
        return DEADLINE if self._cut else TIMEOUT

    def resume(self, value: Any) -> HookResult | Walk:
        try:
            self._answer(value)
        except BaseException:
            self._flush()
            raise
        return self.run()

    def fail(self, exc: BaseException) -> HookResult | Walk:
        """It raised ``exc``. As the Rust core's ``Pending.fail``: an ``Exception`` is its
        failure; any other ``BaseException`` goes through ``_cancelled`` (a stray cancellation
        is a failure, I15; ``KeyboardInterrupt``, ``SystemExit`` and the caller's cancellation
        propagate, I12, what finished staying in the trace); an exception class is raised as its
        instance, anything else is a ``TypeError`` (what ``raise`` makes of it)."""
        if isinstance(exc, type) and issubclass(exc, BaseException):
            exc = exc()
        try:
            if isinstance(exc, Exception):
                self._raised(exc)
            elif isinstance(exc, BaseException):
                self._cancelled(exc)
            else:
                self._raised(TypeError("exceptions must derive from BaseException"))
        except BaseException:
            self._flush()  # the caller's cancellation: what finished stays (I12)
            raise
        return self.run()

    def timed_out(self) -> HookResult | Walk:
        try:
            self._fail(self._overrun(), None)
        except BaseException:
            self._flush()
            raise
        return self.run()

    def _flush(self) -> None:
        """The batch to the trace in one ``list.extend``: whole, under the GIL, as the Rust
        core writes a batch under its trace's lock (docs/trace.md, threads)."""
        batch = self._batch
        if batch:
            self._fields.extend(batch)
            batch.clear()

    # -- the walk ------------------------------------------------------------------------
    def run(self) -> HookResult | Walk:
        """Go on from the current position until the chain ends or something must wait."""
        try:
            return self._run()
        except BaseException:
            self._flush()  # abandoned (I12): what finished stays in the trace (ruling 21)
            raise

    def _run(self) -> HookResult | Walk:
        plan = self._plan
        while self._index < len(plan):
            entry = plan[self._index]
            self._index += 1
            self._entry = entry
            self._t0 = monotonic_ns()
            if self._deadline is not None:
                cut = turn(self._deadline, self._t0, entry.timeout_ns)
                if cut == SKIP:  # its turn came after the chain deadline: not called (I26)
                    self._cut = 0
                    self._fail(SKIPPED, None)
                    continue
                self._cut = cut
            try:
                awaitable = entry.call(self._event, self._env)
            except Exception as exc:
                self._raised(exc)
                continue
            except BaseException as exc:
                self._cancelled(exc)
                continue
            if _cannot_await(awaitable):
                self._fail(INVALID_RETURN, None)
                continue
            # Every middleware is stepped by hand, as the Rust core does: only one that really
            # suspends makes the walk wait (and its records so far go to the trace).
            if type(awaitable) is not CoroutineType:
                awaitable = awaitable.__await__()
            try:
                yielded = awaitable.send(None)
            except StopIteration as stop:
                self._answer(stop.value)
            except Exception as exc:
                self._raised(exc)
            except BaseException as exc:
                self._cancelled(exc)
            else:
                return self._wait(awaitable, yielded)
        return self._finish()

    def _wait(self, awaitable: Any, yielded: Any) -> Walk:
        self._flush()  # a suspended emit may be abandoned (I12): nothing recorded is lost
        self.awaitable = awaitable
        self.yielded = yielded
        self.timeout = self._cut / 1e9 if self._cut else self._entry.timeout
        return self

    def _late(self, now: int) -> bool:
        limit = self._entry.timeout_ns
        if self._deadline is not None and now > self._deadline:
            return True  # past the chain deadline (I26)
        return limit is not None and now - self._t0 > limit

    def _raised(self, exc: BaseException) -> None:
        # Raising after the deadline is answering late: a timeout (ruling 10, I9). Only a
        # stray cancellation gets here without being an Exception (I15).
        kind = EXCEPTION if isinstance(exc, Exception) else CANCELLED
        self._fail(self._overrun() if self._late(monotonic_ns()) else kind, exc)

    def _cancelled(self, exc: BaseException) -> None:
        """Not an Exception: the runtime's cancellation while the caller is not cancelled is a
        failure (I15); the caller's cancellation, ``KeyboardInterrupt`` and ``SystemExit``
        propagate, the records of what finished staying in the trace (I12)."""
        if not stray_cancellation(exc):
            self._flush()
            raise exc
        self._raised(exc)

    def _answer(self, value: Any) -> None:
        if self._entry.audit:
            self._audited(self._judge, value)
        else:
            self._judge(value)

    def _fail(self, failure: str, exc: BaseException | None, contract: str | None = None) -> None:
        if self._entry.audit:
            self._audited(self._failed, failure, exc, contract)
        else:
            self._failed(failure, exc, contract)

    def _audited(self, judge: Callable[..., None], *args: Any) -> None:
        """I25: an audited middleware's answer is judged and traced as it would be, then the
        walk forgets it: no combined outcome, no modification, no stop."""
        kept = self._best, self._best_sev, self._event, self._index
        judge(*args)
        self._best, self._best_sev, self._event, self._index = kept

    def _judge(self, value: Any) -> None:
        entry = self._entry
        now = monotonic_ns()
        if self._late(now):
            self._fail(self._overrun(), None)  # a late answer is a timeout (ruling 10, I26)
            return
        if value is None:
            self._trace(entry, "continue", False, None, now)
            if self._best_sev < 0:
                self._best_sev = 0
            return
        kind = type(value)
        if kind is Continue:
            modified = value.modified
            if modified is not None and not _is_event_of(modified, self._etype):
                self._fail(WRONG_EVENT_TYPE, None)
                return
            warnings = self._warnings(value)
            if warnings is INVALID:
                return
            if modified is None:
                sev = 0
            else:
                if self._contracts is not None:
                    try:
                        rule = violation(self._hook, self._event, modified)
                    except Exception:
                        # What a contract compares cannot be read (a property or __iter__
                        # raised): the answer cannot be judged, so it is invalid (I29).
                        self._fail(INVALID_RETURN, None)
                        return
                    if rule is not None:
                        self._violated(rule, value, now, warnings)
                        return
                sev = 1
                self._event = modified
            self._trace(entry, "continue", sev == 1, None, now, None, warnings)
        else:
            sev = _SEVERITY.get(kind, -1)
            if sev < 0 or has_invalid_text(value):  # not an outcome, or not text (I16)
                self._fail(INVALID_RETURN, None)
                return
            warnings = self._warnings(value)
            if warnings is INVALID:
                return
            self._trace(entry, kind.kind, False, value.code, now, None, warnings)
            if sev == 5:
                self._index = len(self._plan)  # nothing outranks Block (ruling 6)
        if sev > self._best_sev:
            self._best_sev = sev
            self._best = value

    def _warnings(self, value: Any) -> Any:
        """The answer's kept warnings (I24): ``None`` when none; ``INVALID`` (after failing the
        middleware with an invalid return) when they are no list of texts."""
        given = value.warnings
        if given is _NO_WARNINGS:
            return None
        kept = judge_warnings(given)
        if kept is INVALID:
            self._fail(INVALID_RETURN, None)
        return kept

    def _violated(self, rule: str, value: Continue, now: int, warnings: Any = None) -> None:
        """The current middleware's modification broke contract ``rule`` (I14). Warn: it
        stands, traced with the rule. Strict: a failure, resolved by the fail mode."""
        if self._contracts == "strict":
            self._fail(CONTRACT_VIOLATION, None, rule)
            return
        self._event = value.modified
        self._trace(self._entry, "continue", True, None, now, rule, warnings)
        contract_warning(self._entry.name, self._hook, rule)
        if self._best_sev < 1:
            self._best_sev = 1
            self._best = value

    def _failed(self, failure: str, exc: BaseException | None, contract: str | None = None) -> None:
        entry = self._entry
        now = monotonic_ns()
        if failure == DEADLINE:
            self._deadline = 0  # a cut-off middleware ends the chain's time (I26)
        if entry.closed:
            code = closed_code(failure)
            outcome: Any = Block(closed_reason(entry.name, failure), code)
            sev, kind = 5, "block"
            self._index = len(self._plan)  # a closed failure stops the chain (ruling 11)
        else:
            code, outcome, sev, kind = None, _CONTINUE, 0, "continue"
        error = error_name(failure, exc)
        shape = failure_shape(entry.name, entry.band, kind, code, failure, error, entry.fail_mode,
                              contract, entry.audit)  # fmt: skip
        self._record((shape, self._key, self._t0, now))
        if not entry.closed:
            failed_open(entry.name, self._hook, failure, error)
        if sev > self._best_sev:
            self._best_sev = sev
            self._best = outcome

    def _trace(
        self,
        entry: Any,
        kind: str,
        modified: bool,
        code: str | None,
        now: int,
        contract: str | None = None,
        warnings: tuple[str, ...] | None = None,
    ) -> None:
        if kind == "continue" and not modified and contract is None and warnings is None:
            shape = entry.passed
        else:
            shape = outcome_shape(
                entry.name, entry.band, kind, modified, code, contract, entry.audit, warnings
            )
            # I24, I25: an audited middleware's warnings are on its record only (what it would
            # have said); like the rest of its answer, they do not reach the caller.
            if warnings is not None and not entry.audit:
                if self._warned is None:
                    self._warned = []
                self._warned.extend(HookWarning(entry.name, text) for text in warnings)
        self._record((shape, self._key, self._t0, now))

    def _finish(self) -> HookResult:
        best = self._best
        sev = self._best_sev
        code = None if sev < 2 else best.code
        shape = hook_shape(_KINDS[sev], sev == 1, code) if sev > 0 else _PLAIN_HOOK
        if self._identity is not None:
            shape = _identified(shape, self._given, self._event)
        self._record((shape, self._key, self._t_emit, monotonic_ns()))
        self._flush()
        self.awaitable = self.yielded = None
        outcome = best if sev > 0 else _CONTINUE
        if self._warned is not None:
            return warned_result(outcome, self._event, tuple(self._warned))
        return hook_result(outcome, self._event)


async def drive(
    hook: str,
    plan: tuple[Any, ...],
    event: Any,
    env: Any,
    trace: Any,
    etype: type,
    contracts: str | None = None,
    identity: str | None = None,
) -> HookResult:
    """A whole emit as one coroutine, for asyncio (and any chain without timeouts).

    A middleware that cannot suspend (``suspension.py``: no ``await`` in its code) is simply
    awaited: the cheapest way to run a coroutine from Python. Any other is stepped once by
    hand, as the Rust core steps every one: only if it really suspends do the records so far go
    to the trace (a suspended emit may be abandoned, I12), is its caller's cancellation looked
    at when it ends (I30), and, when it is timed, a deadline timer armed (``_slowpath``). The
    common answers (nothing, or a plain ``Continue``) are judged and traced inline; anything
    else, and the first timed middleware that suspends, bring in a ``Walk`` whose methods
    judge exactly as the step protocol does.

    The emit's records gather in ``batch`` and reach the trace in one ``list.extend`` (whole,
    under the GIL, as the Rust core writes a batch under its lock): at a suspension, at the
    end, and when the emit is abandoned.
    """
    # Trace._begin_emit, inlined (a method call is a tenth of a short emit): one ordinal per
    # emit, whatever threads share the trace (docs/trace.md, "Threads").
    ordinal, fields = next(trace._ordinals), trace._fields
    if len(fields) >= trace._due_at:
        trace._serve(everything=False)
    key = emit_key(ordinal if ordinal <= MAX_EMIT else MAX_EMIT, hook, event, env)
    batch: list[Any] = []
    record = batch.extend
    now = t_emit = monotonic_ns()
    walk: Walk | None = None
    # Plain answers leave the combined outcome a plain Continue: only a Walk keeps a severity.
    best_sev, count = -1, len(plan)
    mark: Any = _UNCALLED  # the caller's cancellation, taken at the first suspension (I30)
    try:
        for index, entry in enumerate(plan, 1):
            t0, limit = now, entry.timeout_ns
            awaitable = _UNCALLED
            try:
                awaitable = entry.call(event, env)
                if entry.awaited:
                    # A return that cannot be awaited raises TypeError here, before anything
                    # runs; the handler below tells it from a middleware's own TypeError.
                    value = await awaitable
                else:
                    if type(awaitable) is not CoroutineType:
                        if not hasattr(awaitable, "__await__"):
                            raise _NotAwaitable
                        awaitable = awaitable.__await__()
                    try:
                        yielded = awaitable.send(None)
                    except StopIteration as stop:
                        value = stop.value
                    else:
                        fields.extend(batch)  # a suspended emit may be abandoned (I12)
                        batch.clear()
                        if mark is _UNCALLED:
                            mark = caller_mark()
                        timed = None  # the walk that waits on it under its deadline
                        if limit is not None:
                            if walk is None:
                                walk = Walk(hook, plan, event, env, trace, etype, key, t_emit,
                                            contracts, None, identity, batch)  # fmt: skip
                            timed = walk
                        value = await _resumed(awaitable, yielded, mark, timed, entry, t0)
            except Exception as exc:
                failure: BaseException | None = exc
                if (
                    type(exc) is TypeError
                    and awaitable is not _UNCALLED
                    and _cannot_await(awaitable)
                ):
                    failure = _NotAwaitable()  # an invalid return (ruling 9), not an exception
            except BaseException as exc:
                if not stray_cancellation(exc):
                    raise  # the caller's cancellation, KeyboardInterrupt: the caller's (I12)
                failure = exc  # a cancellation that is not the caller's: a failure (I15)
            else:
                now = monotonic_ns()
                if (
                    value is None
                    or (
                        type(value) is Continue
                        and value.modified is None
                        and value.warnings is _NO_WARNINGS
                    )
                ) and (limit is None or now - t0 <= limit):
                    record((entry.passed, key, t0, now))
                    continue
                failure = None
            if walk is None:
                walk = Walk(hook, plan, event, env, trace, etype, key, t_emit, contracts, None,
                            identity, batch)  # fmt: skip
            walk._index, walk._entry, walk._t0, walk._best_sev = index, entry, t0, best_sev
            walk._event = event
            if failure is None:
                walk._answer(value)
            elif type(failure) is _NotAwaitable:
                walk._fail(INVALID_RETURN, None)
            elif type(failure) is DeadlinePassed:
                walk._fail(TIMEOUT, None)
            else:
                walk._raised(failure)
            best_sev, event = walk._best_sev, walk._event
            if walk._index >= count:
                break  # a Block, or a closed failure: nothing outranks it (rulings 6, 11)
            now = monotonic_ns()
        if walk is not None:
            walk._best_sev, walk._event = best_sev, event
            return walk._finish()
        # Only plain answers: the combined outcome is a plain Continue, the event unchanged.
        shape = _PLAIN_HOOK if identity is None else _identified(_PLAIN_HOOK, event, event)
        record((shape, key, t_emit, monotonic_ns()))
        fields.extend(batch)
    except BaseException:
        fields.extend(batch)  # abandoned (I12): what finished stays in the trace (ruling 21)
        raise
    return hook_result(_CONTINUE, event)


async def _resumed(
    awaitable: Any, yielded: Any, mark: Any, walk: Walk | None, entry: Any, t0: int
) -> Any:
    """The rest of a middleware that suspended: its answer, or what it raised. Timed, it is
    finished under its deadline (``walk`` waits on it). Ending any other way than with the
    caller's cancellation while its caller began to be cancelled, it swallowed that
    cancellation: the emit ends with it (I30)."""
    try:
        if walk is None:
            value = await forward(awaitable, yielded)
        else:
            walk._entry, walk._t0 = entry, t0
            walk._wait(awaitable, yielded)
            value = await drive_with_deadline(walk)
    except BaseException as exc:
        if (isinstance(exc, Exception) or stray_cancellation(exc)) and cancelled_since(mark):
            await callers_cancellation()
        raise
    if cancelled_since(mark):
        await callers_cancellation()
    return value


def _identified(shape: tuple[Any, ...], given: Any, left: Any) -> tuple[Any, ...]:
    """A hook record's shape with the identities of the event given and the event the chain
    left (I27); one hash when the chain changed nothing."""
    before = _identity_of(given)
    return identified(shape, before, before if left is given else _identity_of(left))


def _identity_of(event: Any) -> str | None:
    """An event's identity for a hook record (I27): ``None`` when its values cannot be had at
    all (its ``model_dump`` raised, or gave something that is no JSON value): the identity is
    what the trace says was seen, never an error of the emit (I29). Only what is not an
    ``Exception`` (``KeyboardInterrupt``) propagates, as everywhere in the walk."""
    try:
        return content_identity(event)
    except Exception:
        return None
