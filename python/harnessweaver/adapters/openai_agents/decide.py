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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...agent.edits import checked_edit
from ...agent.errors import AgentError
from ...agent.state import Decision, PendingApproval
from ...outcomes import Suspend
from .run import ToolCallRecord, call_id_of
from .tools import denial

if TYPE_CHECKING:
    from .run import GuardedRun

__all__ = ["decide"]

_RULE = "I23"


def _suspended(run: GuardedRun, call_id: str) -> tuple[ToolCallRecord, Suspend]:
    record = run.call(call_id)
    outcome = None if record is None else record.before.outcome
    if record is None or not isinstance(outcome, Suspend):
        raise AgentError(
            "no_pending_call",
            _RULE,
            f"call {call_id!r}: this run holds no tool.before suspended for it; decide in the "
            f"GuardedRun whose segment suspended it, or approve or reject on the SDK's "
            f"RunState ({_RULE})",
        )
    return record, outcome


async def decide(
    run: GuardedRun, state: Any, item: Any, decision: Decision
) -> PendingApproval | None:
    """Apply ``decision`` to the SDK's ``state`` for the approval ``item``; the edited call's
    new pending approval when the chain suspends it again (then ``state`` is unchanged)."""
    if not isinstance(decision, Decision):
        raise TypeError(f"decide takes an hw.Decision, got {type(decision).__name__}")
    call_id = call_id_of(item)
    record, outcome = _suspended(run, call_id)
    if outcome.approver_role is not None and decision.role != outcome.approver_role:
        raise AgentError(
            "wrong_approver",
            "resume",
            f"decision by role {decision.role!r}: call {call_id!r} waits for approver role "
            f"{outcome.approver_role!r} (resume)",
        )
    if not decision.is_edit:
        if decision.approved:
            state.approve(item)
        else:
            state.reject(item, rejection_message=denial(decision.reason))
        return None
    edited = checked_edit("tool.before", record.before.event, decision)
    answer = await run.ask("tool.before", edited)  # what will run passes the chain
    run.keep(ToolCallRecord(answer, record.event, approval_asked=True))
    again = answer.outcome
    if isinstance(again, Suspend):
        return PendingApproval(
            hook="tool.before",
            reason=again.reason,
            approver_role=again.approver_role,
            code=again.code,
            event=answer.event.model_dump(mode="json"),
        )
    state.approve(item)  # the input guardrail acts on the kept answer (a Block: a refusal)
    return None
