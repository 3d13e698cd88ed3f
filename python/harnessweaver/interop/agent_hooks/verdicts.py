"""AGENT-HOOKS verdicts (its §5) as harnessweaver outcomes.

``allow`` is a Continue; its warnings (its §5.1) are the outcome's warnings (I24). ``deny`` is
a Block whose code is the verdict's ``reason`` and whose reason is its ``message``. A liftable
deny (one carrying ``approval``, its §9) is a Suspend: the run waits for a decision, as its
approval seam does; at ``output`` and ``agent_shutdown`` (``task.end``), where a run has nothing
left to suspend, it is a Block, the safer answer. ``transform`` is handled by the middleware,
which writes the transformed target back into the event. Result labels and evidence have no
counterpart and are dropped.
"""

from __future__ import annotations

from typing import Any, Final

from ...outcomes import Block, Continue, Outcome, Suspend

__all__ = ["checked_verdict", "outcome_of", "permitted", "warning_texts"]

_UNSUSPENDABLE: Final = frozenset({"output", "agent_shutdown"})

EVIDENCE_LIMIT = 10240
"""Canonical bytes a verdict's evidence may take (AGENT-HOOKS §5.3)."""


def checked_verdict(raw: Any) -> Any:
    """An interceptor's return as a ``Verdict``: a verdict or its wire form, within the
    contract's bounds (``TypeError``/``ValueError`` otherwise)."""
    from agent_hooks import Verdict, canonical_json

    if isinstance(raw, dict):
        raw = Verdict.from_wire(raw)
    if not isinstance(raw, Verdict):
        kind = type(raw).__name__
        raise TypeError(f"an interceptor returns a Verdict or its wire form, got {kind}")
    if raw.evidence is not None:
        size = len(canonical_json(raw.to_wire()["evidence"]).encode())
        if size > EVIDENCE_LIMIT:
            raise ValueError(f"evidence of {size} canonical bytes (at most {EVIDENCE_LIMIT})")
    return raw


def warning_texts(verdict: Any) -> list[str]:
    """A verdict's warnings as texts: ``reason: message``, or whichever is given."""
    return [
        ": ".join(part for part in (warning.reason, warning.message) if part)
        for warning in verdict.warnings
        if warning.reason or warning.message
    ]


def permitted(event: Any, current: Any, warnings: list[str]) -> Continue | None:
    """What the bus is told when every point at a hook point permitted: ``None`` when
    nothing changed and nothing was said, else a Continue with the event as the verdicts
    left it (when they changed it) and their warnings."""
    if current is event and not warnings:
        return None
    return Continue(None if current is event else current, warnings=warnings or None)


def outcome_of(verdict: Any, point: str, warnings: list[str], *, suspend: bool = True) -> Outcome:
    """The outcome of a ``deny`` verdict given at ``point``, with ``warnings``; a liftable one
    suspends only where ``suspend`` lets it (and the run has something left to suspend)."""
    reason = verdict.message or verdict.reason or f"denied at {point}"
    if suspend and verdict.approval is not None and point not in _UNSUSPENDABLE:
        return Suspend(reason, code=verdict.reason, warnings=warnings or None)
    return Block(reason, code=verdict.reason, warnings=warnings or None)
