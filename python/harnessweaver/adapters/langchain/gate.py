"""Asking the bus at one place of a LangChain run, and what its answer comes to.

A :class:`Verdict` is the combined outcome read for LangChain: go on with the event the chain
left (``go``), or not (``block``, ``deny``, ``escalate``), or ask again (``retry``). A
``Suspend`` never leaves this module: it becomes a LangGraph ``interrupt(...)`` whose resume
value (the caller's decision) turns it into ``go`` or ``deny``; an edit is asked of the
chain again as the call that will really run.

LangGraph runs a node again from its start when it is resumed. So that the chain that
suspended is not asked again for the same call (as in harnessweaver's own run loop), the
events that suspended are kept in memory per run and place until the node finishes; a node
resumed in another process, which has no such memory, asks the chain again (a chain that
suspends again then receives the decision).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.types import interrupt

from ...events import ToolCallEvent
from ...outcomes import Block, Continue, Escalate, Retry, Suspend
from .decisions import read_answer
from .flow import Emit, Flow

__all__ = ["Place", "Verdict", "ask"]


@dataclass(frozen=True, slots=True)
class Verdict:
    action: Literal["go", "block", "deny", "escalate", "retry"]
    event: Any
    """The event to go on with: the chain's (``go``), else the event asked about."""
    reason: str = ""
    code: str | None = None
    to: str | None = None
    retry: Retry | None = None


@dataclass(slots=True)
class Place:
    """One place of a run where the bus is asked (a tool call, a model turn...), and the
    events that suspended there, in the order the node met them."""

    run_id: str
    key: str
    suspended: list[tuple[Any, Suspend]]
    kept: dict[tuple[str, str], list[tuple[Any, Suspend]]]
    """Where the middleware keeps the places that suspended (until the node finishes)."""
    met: int = 0


def ask(
    place: Place,
    hook: str,
    event: Any,
    emit: Callable[[str, Any], Emit],
) -> Flow[Verdict]:
    """Emit ``hook`` at ``place``; a ``Suspend`` waits for the caller's decision."""
    if place.met < len(place.suspended):
        event, outcome = place.suspended[place.met]  # resumed: the chain had its say
    else:
        result = yield emit(hook, event)
        outcome = result.outcome
        if isinstance(outcome, Continue):
            return Verdict("go", result.event)
        if isinstance(outcome, Block):
            return Verdict("block", event, outcome.reason, outcome.code)
        if isinstance(outcome, Escalate):
            return Verdict("escalate", event, outcome.reason, outcome.code, to=outcome.to)
        if isinstance(outcome, Retry):
            return Verdict("retry", event, outcome.reason, outcome.code, retry=outcome)
        assert isinstance(outcome, Suspend), f"unknown outcome {outcome!r}"
        event = result.event
        place.suspended.append((event, outcome))
        place.kept[(place.run_id, place.key)] = place.suspended  # only places that suspended
    place.met += 1
    payload = _payload(place, hook, event, outcome)
    answer = read_answer(interrupt(payload))
    while outcome.approver_role and answer.role and answer.role != outcome.approver_role:
        # A decision by another role than the one asked for is refused, and nothing runs:
        # the call waits again (LangGraph pairs each interrupt of a node with its own resume
        # value, in order, so the refused decision stays refused when the node runs again).
        refused = f"the decision by role {answer.role!r} was refused: this call waits for "
        payload = {**payload, "refused": refused + repr(outcome.approver_role)}
        answer = read_answer(interrupt(payload))
    if answer.kind == "approve":
        return Verdict("go", event, outcome.reason, outcome.code)
    if answer.kind == "edit" and isinstance(event, ToolCallEvent):
        edited = event.model_copy(
            update={"call": event.call.model_copy(update={"arguments": answer.arguments})}
        )
        return (yield from ask(place, hook, edited, emit))  # what will run passes the chain
    reason = answer.reason or (
        "an edit applies only to a tool call" if answer.kind == "edit" else ""
    )
    return Verdict("deny", event, reason, outcome.code)


def _payload(place: Place, hook: str, event: Any, outcome: Suspend) -> dict[str, Any]:
    """What the caller sees in ``result["__interrupt__"][0].value``: JSON only."""
    payload: dict[str, Any] = {
        "hook": hook,
        "reason": outcome.reason,
        "approver_role": outcome.approver_role,
        "code": outcome.code,
        "run_id": place.run_id,
        "step": getattr(event, "step", None),
        "event": event.model_dump(mode="json"),
    }
    if isinstance(event, ToolCallEvent):
        payload["tool_call"] = event.call.model_dump(mode="json")
    return payload
