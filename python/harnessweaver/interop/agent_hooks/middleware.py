"""An AGENT-HOOKS interceptor as harnessweaver middleware.

The middleware runs the interceptor at each interception point of its hook point that it
was put at, in order (``task.start``: ``agent_startup`` then ``input``; ``task.end``:
``output`` then ``agent_shutdown``), on a context built from the event as the chain has left
it. The first ``deny`` answers; a ``transform`` is applied to the point's target (the SDK's
own path rules, its §5.2) and written back, so the next point and the rest of the chain see
it. A raise, a timeout, a verdict that is not one or a transform that does not apply is a
failure of the middleware, resolved by the fail mode it is given: ``"closed"`` is what
AGENT-HOOKS asks of a host (its §6.3).
"""

from __future__ import annotations

import copy
import inspect
import itertools
from collections.abc import Iterable
from typing import Any

from ...envelope import Envelope
from ...middleware import middleware
from ...outcomes import Outcome
from .contexts import HOOK_BY_EVENT, HOOK_OF, POINTS, build, write_back
from .verdicts import checked_verdict, outcome_of, permitted, warning_texts

__all__ = ["interceptor_middleware"]


def _points(at: Iterable[str] | None) -> dict[str, tuple[str, ...]]:
    """Hook point → the interception points asked there, in order."""
    if at is None:
        return dict(POINTS)
    wanted = set(at)
    unknown = sorted(wanted - HOOK_OF.keys())
    if unknown:
        known = ", ".join(HOOK_OF)
        raise ValueError(f"unknown interception points {unknown}: AGENT-HOOKS has {known}")
    chosen = {hook: tuple(p for p in points if p in wanted) for hook, points in POINTS.items()}
    return {hook: points for hook, points in chosen.items() if points}


def interceptor_middleware(
    interceptor: Any,
    *,
    name: str,
    fail_mode: str,
    at: Iterable[str] | None = None,
    band: str = "app",
    timeout: float | str | None = None,
    mode: str | None = None,
    agent_id: str = "harnessweaver",
    tools: Iterable[str] = (),
) -> Any:
    """``interceptor`` (an ``agent_hooks.Interceptor``: ``intercept(context)``, sync or async)
    as middleware named ``name``, at the hook points of the interception points ``at`` (all
    eight by default). ``fail_mode``, ``band``, ``timeout`` and ``mode`` are the declaration's
    (``mode="audit"`` is AGENT-HOOKS's ``evaluate_only``); contexts name the agent ``agent_id``
    and the run's id as the session, and ``agent_startup`` lists ``tools`` as the tools
    registered (``task.start``'s event names none). Register the result on a bus like any
    middleware.

    At ``task.end``, ``output`` is asked only when the run completed: a run that stopped
    otherwise has no output to release, and only ``agent_shutdown`` is asked."""
    from agent_hooks import Decision
    from agent_hooks.path import apply

    plan = _points(at)
    sequence = itertools.count()
    registered = sorted(tools)

    async def ask(point: str, event: Any, env: Envelope) -> Any:
        context = build(
            point, event, now=env.clock.now(), sequence=next(sequence), session=env.run_id,
            agent=agent_id, tools=registered,
        )  # fmt: skip
        raw = interceptor.intercept(copy.deepcopy(context))  # its changes change nothing
        if inspect.isawaitable(raw):
            raw = await raw
        return context, checked_verdict(raw)

    async def intercept(event: Any, env: Envelope) -> Outcome | None:
        current, warnings = event, []
        for point in plan[HOOK_BY_EVENT[type(event)]]:
            if point == "output" and event.exit_reason != "completed":
                continue  # no output to release (AGENT-HOOKS §3.1: output, then shutdown)
            context, verdict = await ask(point, current, env)
            warnings += warning_texts(verdict)
            if verdict.decision is Decision.DENY:
                return outcome_of(verdict, point, warnings)
            if verdict.decision is Decision.TRANSFORM:
                target = apply(context["target"], verdict.transform.path, verdict.transform.value)
                current = write_back(point, current, target)
        return permitted(event, current, warnings)

    intercept.__name__ = name
    return middleware(
        hooks=list(plan), fail_mode=fail_mode, band=band, timeout=timeout, mode=mode, name=name
    )(intercept)
