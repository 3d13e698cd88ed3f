"""Asking the bus at one place of a LangChain run, and what its answer comes to.

A :class:`Verdict` is the combined outcome read for LangChain: go on with the event the chain
left (``go``), or not (``block``, ``deny``, ``escalate``), or ask again (``retry``). A
``Suspend`` never leaves this module: it becomes a LangGraph ``interrupt(...)`` whose resume
value (the caller's decision) turns it into ``go`` or ``deny``; an edit is checked as the
run loop checks it (I23: the hook point's event type, the hook contracts) and asked of the
chain again as the event that will really run. A decision that fails a check is refused:
nothing runs and the caller is asked again.

A pause is a segment's end, as in harnessweaver's own run loop: when LangGraph's interrupt
stops the run, ``task.end`` is emitted with ``exit_reason="suspended"`` (the steps completed
and the usage so far), and the run's ``task.end`` follows when it really ends. LangGraph runs
the interrupted node again from its start when it is resumed: ``flow.replay`` answers what
the node already did (the emits, the model or tool call) from memory, so the chain is not
asked again and nothing runs twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal

from langgraph.errors import GraphInterrupt
from langgraph.types import interrupt

from ...agent.edits import checked_edit
from ...agent.errors import AgentError
from ...agent.state import Decision
from ...approvals import Approvals, how_to_decide
from ...events import TaskEndEvent, ToolCallEvent, ToolResultEvent, Usage
from ...outcomes import Block, Continue, Escalate, Retry, Suspend
from .approval import Pause, Resolution, edit_of, poll, settle, settled
from .decisions import Answer, read_answer
from .flow import Await, Emit, Flow

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


@dataclass(frozen=True, slots=True)
class Place:
    """Where in a run the bus is asked: the run, and its usage so far (what a pause's
    ``task.end`` reports)."""

    run_id: str
    usage: Usage
    approvals: Approvals | None = None
    """The book a pause is filed in (docs/approvals.md); ``None``: in memory only."""
    subject: str | None = None
    """The record's subject: ``thread:<thread id>`` when the run has a thread."""


def ask(
    place: Place,
    hook: str,
    event: Any,
    emit: Callable[[str, Any], Emit],
) -> Flow[Verdict]:
    """Emit ``hook`` at ``place``; a ``Suspend`` waits for the caller's decision."""
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
    payload = _payload(place, hook, event, outcome)
    if place.approvals is not None:
        return (yield from _durable(place, hook, event, outcome, payload, emit))
    answer = read_answer((yield from _wait(place, payload, event, emit)))
    refused, edited = _judge(hook, event, outcome, answer)
    while refused is not None:
        # A refused decision (another role than the one asked for, an edit that fails a check
        # of I23) lets nothing run: the call waits again (LangGraph pairs each interrupt of a
        # node with its own resume value, in order, so it stays refused when the node runs
        # again).
        payload = {**payload, "refused": refused}
        answer = read_answer(interrupt(payload))
        refused, edited = _judge(hook, event, outcome, answer)
    if answer.kind == "approve":
        return Verdict("go", event, outcome.reason, outcome.code)
    if edited is not None:
        return (yield from ask(place, hook, edited, emit))  # what will run passes the chain
    reason = answer.reason or (
        "an edit applies only to a tool call" if answer.kind == "edit" else ""
    )
    return Verdict("deny", event, reason, outcome.code)


def _durable(
    place: Place,
    hook: str,
    event: Any,
    outcome: Suspend,
    payload: dict[str, Any],
    emit: Callable[[str, Any], Emit],
) -> Flow[Verdict]:
    """A ``Suspend`` kept in the approvals book (``approval.py``): the book is consulted
    before anything waits, and a resume value decides the record before it is claimed.

    LangGraph pairs a node's interrupts with resume values by their order, so a node run
    again calls ``interrupt`` for every pause a resume value settled before (it returns that
    value at once); a pause the book alone settled never called it."""
    assert place.approvals is not None
    call = event.call if isinstance(event, ToolCallEvent | ToolResultEvent) else None
    pause = Pause(
        place.approvals,
        hook,
        event,
        outcome,
        place.subject,
        f"langchain {place.run_id} step {getattr(event, 'step', 0)} {hook}"
        + (f" call {call.id}" if call is not None else ""),
        call.id if call is not None else None,
    )
    first = True
    while True:
        got: Resolution = yield Await(partial(poll, pause), settled)
        if got.how != "book":
            assert got.record is not None or got.how == "asked"
            if got.record is not None:
                payload = {
                    **payload,
                    "approval": got.record.id,
                    "how_to_decide": how_to_decide(got.record),
                }
            value = (yield from _wait(place, payload, event, emit)) if first else interrupt(payload)
            first = False
            record = got.record
            if got.how == "pending" and record is not None:
                answer = read_answer(value)
                refused, edited = _judge(hook, event, outcome, answer)
                if refused is not None:
                    got = yield Await(partial(_refused, record, refused))
                else:
                    got = yield Await(partial(settle, pause, record.id, answer, edited))
        if got.kind == "refused":
            payload = {**payload, "refused": got.reason}
            continue
        return (yield from _verdict(place, hook, event, outcome, got, emit))


async def _refused(record: Any, why: str) -> Resolution:
    return Resolution("asked", "refused", record, reason=why)


def _verdict(
    place: Place,
    hook: str,
    event: Any,
    outcome: Suspend,
    got: Resolution,
    emit: Callable[[str, Any], Emit],
) -> Flow[Verdict]:
    """A settled pause as the gate's verdict; an approved edit passes the chain again."""
    if got.kind == "go" and got.edited and got.event is not None:
        try:
            edited = checked_edit(hook, event, edit_of(hook, event, got.event))
        except AgentError as exc:  # our own message: types, fields, rule ids, never a value
            why = f"the approved edit was refused: {exc}"
            return Verdict("block", event, why, "approval_invalid_edit")
        return (yield from ask(place, hook, edited, emit))  # what will run passes the chain
    if got.kind == "go":
        return Verdict("go", event, outcome.reason, outcome.code)
    if got.kind == "deny":
        return Verdict("deny", event, got.reason, outcome.code)
    return Verdict("block", event, got.reason, got.code)


def _judge(hook: str, event: Any, outcome: Suspend, answer: Answer) -> tuple[str | None, Any]:
    """Why ``answer`` is refused (``None``: it is not), and the edited event it holds."""
    if outcome.approver_role and not answer.unreadable and answer.role != outcome.approver_role:
        # a decision that names no role is not the named approver's either (issue 31, as the
        # run loop's wrong_approver and the approvals book's approval_wrong_role)
        who = "naming no role" if answer.role is None else f"by role {answer.role!r}"
        return (
            f"the decision {who} was refused: this call waits for {outcome.approver_role!r}",
            None,
        )
    if answer.kind != "edit":
        return None, None
    decision = answer.decision
    if decision is None:
        if not isinstance(event, ToolCallEvent):
            return None, None  # an edit of arguments where there is no call: a denial
        change: dict[str, Any] = {"arguments": answer.arguments}
        if answer.tool is not None:
            change["name"] = answer.tool  # a rename is refused by the checks below
        call = event.call.model_copy(update=change)
        decision = Decision.edit(event.model_copy(update={"call": call}))
    try:
        return None, checked_edit(hook, event, decision)
    except AgentError as exc:  # our own message: types, fields, rule ids, never a value
        return f"the edit was refused: {exc}", None


def _wait(
    place: Place, payload: dict[str, Any], event: Any, emit: Callable[[str, Any], Emit]
) -> Flow[Any]:
    """The caller's decision; when LangGraph pauses the run for it, the segment ends with
    ``task.end`` (``suspended``), as the run loop's does. That emit is not replayed: the
    resumed node gets its decision instead."""
    try:
        return interrupt(payload)
    except GraphInterrupt:
        steps = max(getattr(event, "step", 1) - 1, 0)  # the steps completed; task.start: 0
        paused = TaskEndEvent(output=None, exit_reason="suspended", steps=steps, usage=place.usage)
        yield replace(emit("task.end", paused), replayed=False)
        raise


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
        # LangChain's own HITLRequest fields, so a client written for its
        # HumanInTheLoopMiddleware (it answers {"decisions": [...]}) can show the call too
        payload["action_requests"] = [
            {
                "name": event.call.name,
                "args": payload["tool_call"]["arguments"],
                "description": outcome.reason or "",
            }
        ]
        allowed = ["approve", "edit", "reject"]
        payload["review_configs"] = [{"action_name": event.call.name, "allowed_decisions": allowed}]
    return payload
