"""The caller's answer to a suspended call: what ``Command(resume=...)`` may hold.

``{"decision": "approve"}``, ``{"decision": "deny", "reason": "..."}`` or ``{"decision":
"edit", "arguments": {...}}`` (each may name the approver's ``"role"``), or an
``hw.Decision`` (``hw.Decision.edit(event)`` edits any hook point's event, I23).

LangChain's own human-in-the-loop answer is read too (``HumanInTheLoopMiddleware``'s
``HITLResponse``: ``{"decisions": [decision]}``, one decision since each interrupt of the
adapter asks about one call; or the bare decision its ``per_call`` mode takes):
``{"type": "approve"}``, ``{"type": "edit", "edited_action": {"name": ..., "args": {...}}}``,
``{"type": "reject", "message": "..."}``, and ``{"type": "respond", "message": "..."}``, which
the adapter takes as a denial with that message (the tool does not run; there is no "answer
for the tool" in the bus). LangChain's format has no approver: the adapter reads a
``"role"`` beside ``"type"`` (or beside ``"decisions"``), and a decision naming none is
refused when the ``Suspend`` names an ``approver_role``, as ours is.

Anything else is a denial: an answer the adapter cannot read never lets a call run.
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
    tool: str | None = None
    """The tool an edit names (LangChain's ``edited_action.name``): another than the call's
    is refused (a call is never renamed, hook contract ``tool_unchanged``)."""
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
    if isinstance(value, Mapping) and ("decisions" in value or "type" in value):
        return _langchain_answer(value)
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


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _langchain_answer(value: Mapping[str, Any]) -> Answer:
    """LangChain's ``HITLResponse`` (``{"decisions": [...]}``) or one of its decisions."""
    decision: Any = value
    role = value.get("role")
    if "decisions" in value:
        decisions = value.get("decisions")
        if not isinstance(decisions, list) or len(decisions) != 1:
            count = len(decisions) if isinstance(decisions, list) else type(decisions).__name__
            why = (
                f"the resume value's decisions ({count}) are not one decision: each interrupt "
                "of the adapter asks about one call"
            )
            return Answer("deny", why, unreadable=True)
        decision = decisions[0]
    if not isinstance(decision, Mapping):
        name = type(decision).__name__
        return Answer(
            "deny", f"the decision ({name}) is not one the adapter reads", unreadable=True
        )
    own = decision.get("role", role)
    role = own if isinstance(own, str) else None
    kind = decision.get("type")
    if kind == "approve":
        return Answer("approve", "", role)
    if kind in ("reject", "respond"):
        return Answer("deny", _text(decision.get("message")), role)
    action = decision.get("edited_action")
    if kind == "edit" and isinstance(action, Mapping) and isinstance(action.get("args"), Mapping):
        arguments = {str(k): v for k, v in action["args"].items()}
        tool = action.get("name")
        return Answer("edit", "", role, arguments, tool=tool if isinstance(tool, str) else None)
    why = (
        f"the decision type {kind!r} is not one the adapter reads"
        if isinstance(kind, str)
        else ("the decision has no type the adapter reads")
    )
    return Answer("deny", why, unreadable=True)
