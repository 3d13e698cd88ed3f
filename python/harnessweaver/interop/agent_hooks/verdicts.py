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

from ...outcomes import Block, Outcome, Suspend

__all__ = ["outcome_of", "warning_texts"]

_UNSUSPENDABLE: Final = frozenset({"output", "agent_shutdown"})


def warning_texts(verdict: Any) -> list[str]:
    """A verdict's warnings as texts: ``reason: message``, or whichever is given."""
    return [
        ": ".join(part for part in (warning.reason, warning.message) if part)
        for warning in verdict.warnings
        if warning.reason or warning.message
    ]


def outcome_of(verdict: Any, point: str, warnings: list[str]) -> Outcome:
    """The outcome of a ``deny`` verdict given at ``point``, with ``warnings``."""
    reason = verdict.message or verdict.reason or f"denied at {point}"
    if verdict.approval is not None and point not in _UNSUSPENDABLE:
        return Suspend(reason, code=verdict.reason, warnings=warnings or None)
    return Block(reason, code=verdict.reason, warnings=warnings or None)
