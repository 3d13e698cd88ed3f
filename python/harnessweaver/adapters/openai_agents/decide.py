"""An ``hw.Decision`` for a call the SDK interrupted for approval, edits included (I23).

The SDK's own ``RunState.approve`` / ``reject`` can only let a call run as the model made it
or refuse it. ``await run.decide(state, item, decision)`` applies a harnessweaver decision
instead: approve and deny become ``approve`` / ``reject`` (with the run loop's wording), and
an edit is checked as the run loop checks it (the event type, the hook contracts, against the
event the chain left), then ``tool.before`` is asked again with it, before the SDK resumes.
The chain's answer is kept for the call, so the adapter's wrapped ``on_invoke_tool`` runs the
edited arguments (as the chain left them) and its input guardrail refuses or stops as for any
answer. A ``Suspend`` of the edited call is returned as an ``hw.PendingApproval`` and the call
is not approved: decide again (approve as is runs the edited call).

A ``GuardedRun`` that did not see the call (a ``RunState`` restored in another process) asks
the chain again about the call as the SDK holds it, as resuming the state would: its
``Suspend`` is the approval to decide, and ``await run.pending(state, item)`` returns it, with
the event an edit starts from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agents import FunctionTool

from ...agent.edits import checked_edit, checked_identity
from ...agent.errors import AgentError
from ...agent.state import Decision, PendingApproval
from ...identity import content_identity
from ...outcomes import Suspend
from .convert import arguments_of
from .run import GUARDED, ToolCallRecord, call_id_of
from .tools import denial

if TYPE_CHECKING:
    from .run import GuardedRun

__all__ = ["decide", "pending"]

_RULE = "I23"


def _tool_of(item: Any) -> Any:
    """The guarded function tool the approval ``item`` is for, among its agent's tools."""
    tools = getattr(getattr(item, "agent", None), "tools", None) or ()
    name = getattr(item, "tool_name", None)
    found = (tool for tool in tools if isinstance(tool, FunctionTool) and tool.name == name)
    return next((tool for tool in found if getattr(tool, GUARDED, False)), None)


async def _record(run: GuardedRun, state: Any, item: Any) -> ToolCallRecord | None:
    """The chain's answer for the call of ``item``: the one this run kept, or, in a run that
    did not see the call (a ``RunState`` restored in another process), the chain asked again,
    as resuming that state would ask it (its ``Suspend`` is the approval the state waits for)."""
    call_id = call_id_of(item)
    record = run.call(call_id)
    if record is not None:
        return record
    asked = _call_of(item)
    if asked is None:
        return None
    run.adopt(state)
    return await run.tool_before(*asked, approval_asked=True)


def _call_of(item: Any) -> tuple[Any, str, dict[str, Any]] | None:
    """The tool, call id and arguments of ``item`` as the SDK holds them, to ask the chain
    again about it; ``None`` when its tool or its arguments cannot be read."""
    tool = _tool_of(item)
    raw = getattr(item, "raw_item", None)
    text = raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", None)
    arguments = arguments_of(text if isinstance(text, str) else None)
    if tool is None or arguments is None:
        return None
    return tool, call_id_of(item), arguments


def _waiting(run: GuardedRun, record: ToolCallRecord) -> PendingApproval | None:
    """What the approver is asked, when the chain's answer is a ``Suspend``."""
    answer = record.before
    if not isinstance(answer.outcome, Suspend):
        return None
    return PendingApproval(
        hook="tool.before",
        reason=answer.outcome.reason,
        approver_role=answer.outcome.approver_role,
        code=answer.outcome.code,
        event=answer.event.model_dump(mode="json"),
        identity=_identity(run, answer.event),
    )


def _identity(run: GuardedRun, event: Any) -> str | None:
    """The identity a pending approval names (I27): only on a bus with an identity scheme."""
    return content_identity(event) if run.bus.identity is not None else None


async def pending(run: GuardedRun, state: Any, item: Any) -> PendingApproval | None:
    """The approval the chain waits for on the call of ``item`` (its event is what an edit
    starts from); ``None`` when the chain does not suspend it."""
    record = await _record(run, state, item)
    return None if record is None else _waiting(run, record)


async def _suspended(run: GuardedRun, state: Any, item: Any) -> tuple[ToolCallRecord, Suspend]:
    call_id = call_id_of(item)
    record = await _record(run, state, item)
    outcome = None if record is None else record.before.outcome
    if record is None or not isinstance(outcome, Suspend):
        raise AgentError(
            "no_pending_call",
            _RULE,
            f"call {call_id!r}: the chain does not suspend it ({_answered(record)}); approve or "
            f"reject on the SDK's RunState ({_RULE})",
        )
    return record, outcome


def _answered(record: ToolCallRecord | None) -> str:
    if record is None:
        return "it cannot be asked: no guarded tool of that name, or arguments not a JSON object"
    return f"it answers {type(record.before.outcome).__name__}"


async def decide(
    run: GuardedRun, state: Any, item: Any, decision: Decision
) -> PendingApproval | None:
    """Apply ``decision`` to the SDK's ``state`` for the approval ``item``; the edited call's
    new pending approval when the chain suspends it again (then ``state`` is unchanged)."""
    if not isinstance(decision, Decision):
        raise TypeError(f"decide takes an hw.Decision, got {type(decision).__name__}")
    call_id = call_id_of(item)
    record, outcome = await _suspended(run, state, item)
    if outcome.approver_role is not None and decision.role != outcome.approver_role:
        raise AgentError(
            "wrong_approver",
            "resume",
            f"decision by role {decision.role!r}: call {call_id!r} waits for approver role "
            f"{outcome.approver_role!r} (resume)",
        )
    checked_identity(decision, _identity(run, record.before.event), f"call {call_id!r}")
    if not decision.is_edit:
        if decision.approved:
            state.approve(item)
        else:
            state.reject(item, rejection_message=denial(decision.reason))
        return None
    edited = checked_edit("tool.before", record.before.event, decision)
    again = ToolCallRecord(await run.ask("tool.before", edited), record.event, approval_asked=True)
    run.keep(again)  # what will run passes the chain
    waiting = _waiting(run, again)
    if waiting is None:
        state.approve(item)  # the input guardrail acts on the kept answer (a Block: a refusal)
    return waiting
