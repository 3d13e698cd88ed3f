"""The caller's answer to a suspended call: what ``Command(resume=...)`` may hold.

``{"decision": "approve"}``, ``{"decision": "deny", "reason": "..."}`` or ``{"decision":
"edit", "arguments": {...}}`` (each may name the approver's ``"role"``), or an
``hw.Decision`` (``hw.Decision.edit(event)`` edits any hook point's event, I23). Anything
else is a denial: an answer the adapter cannot read never lets a call run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ...agent.state import Decision

__all__ = ["Answer", "read_answer"]


@dataclass(frozen=True, slots=True)
class Answer:
    kind: Literal["approve", "deny", "edit"]
    reason: str = ""
    role: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    """The new arguments of a ``{"decision": "edit"}`` answer (a tool call's only)."""
    decision: Decision | None = None
    """An ``hw.Decision.edit``: the whole edited event, checked as I23 says."""
    unreadable: bool = False
    """No decision at all: the adapter's own denial (it fails closed), made for the role the
    pause waits for, which no caller's role is checked against."""


def read_answer(value: Any) -> Answer:
    """The decision in a resume value; an unreadable one is a denial that says so."""
    if isinstance(value, Decision):
        if value.is_edit:
            return Answer("edit", value.reason, value.role, decision=value)
        kind: Literal["approve", "deny"] = "approve" if value.approved else "deny"
        return Answer(kind, value.reason, value.role)
    if isinstance(value, Mapping):
        kind_ = value.get("decision")
        role = value.get("role")
        role = role if isinstance(role, str) else None
        reason = value.get("reason")
        reason = reason if isinstance(reason, str) else ""
        if kind_ == "approve":
            return Answer("approve", reason, role)
        if kind_ == "deny":
            return Answer("deny", reason, role)
        arguments = value.get("arguments")
        if kind_ == "edit" and isinstance(arguments, Mapping):
            return Answer("edit", reason, role, {str(k): v for k, v in arguments.items()})
    name = type(value).__name__
    why = f"the resume value ({name}) is not a decision the adapter reads"
    return Answer("deny", why, unreadable=True)
