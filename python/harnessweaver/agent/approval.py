"""Durable approvals in the run loop: file a record when a chain suspends, and settle it when
the run resumes (docs/approvals.md, "The run loop").

A run with ``AgentOptions.approvals`` set files an approval record (subject ``run:<id>``,
filed by ``"run loop"``) for every ``Suspend`` and keeps its id in ``PendingApproval.approval``.
Resuming then goes through the store, so an approval is used once, whichever process holds
the state:

- ``resume(state)`` with no decision claims the record: the decision recorded in the store
  (approved, edited or denied) is the run's; a record still pending raises ``AgentError``
  (kind ``approval_pending``) and nothing runs; a refusal (replayed, expired, another spec,
  another action...) raises ``ApprovalRefused``.
- ``resume(state, decision)`` decides the record with the caller's decision and claims it, so
  the same approval cannot be replayed elsewhere.

Either way the claim comes before anything runs, and the journal's decision line names the
approval: a run recovered after it goes on from the journal and claims nothing again. A crash
between the claim and that line leaves the approval used and the tool not run (never twice,
never without approval: the approver decides again).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..events import EVENT_TYPES
from .errors import AgentError
from .state import Decision, PendingApproval, RunState

if TYPE_CHECKING:
    from ..approvals import ApprovalRecord, Approvals, Verdict

__all__ = ["claimed_decision", "consumer", "file_pending", "settle"]

FILED_BY = "run loop"
_RULE = "approvals"
logger = logging.getLogger(__name__)


def consumer(state: RunState, hook: str) -> str:
    """The claim's consumer token: the run, the step in flight (or the steps done) and the
    hook point that suspended."""
    step = state.step.number if state.step is not None else state.steps
    return f"{state.run_id}/{step}/{hook}"


async def file_pending(
    approvals: Approvals, state: RunState, pending: PendingApproval
) -> ApprovalRecord:
    """File the record of a suspension (idempotent per binding: a run suspended again at the
    same action, after a crash say, finds the record it filed before)."""
    record = await approvals.file(
        hook=pending.hook,
        event=pending.event,
        reason=pending.reason,
        code=pending.code,
        approver_role=pending.approver_role,
        subject=f"run:{state.run_id}",
        filed_by=FILED_BY,
    )
    from ..approvals import how_to_decide

    logger.info("run %s suspended at %s: %s", state.run_id, pending.hook, how_to_decide(record))
    return record


def _from_verdict(pending: PendingApproval, verdict: Verdict) -> Decision:
    """The run's decision from a claimed record: its role and reason; an edit (the record's
    ``edited``) as the event the verdict says to go on with, checked by ``resume`` as any
    edit is (I23)."""
    decided = verdict.record.decision
    role = None if decided is None else decided.role
    reason = "" if decided is None else decided.reason
    if verdict.kind == "denied":
        return Decision.deny(reason, role=role, identity=pending.identity)
    if decided is None or decided.edited is None:
        return Decision.approve(role=role, reason=reason, identity=pending.identity)
    kind = EVENT_TYPES[pending.hook]
    return Decision(
        approved=True,
        role=role,
        reason=reason,
        edited_type=kind.__name__,
        edited=dict(verdict.event),
        identity=pending.identity,
    )


async def claimed_decision(approvals: Approvals, state: RunState) -> Decision:
    """``resume(state)`` with no decision: claim the pending approval and answer its decision.

    A record still pending raises ``AgentError`` (``approval_pending``, with where to decide
    it); a refusal raises ``ApprovalRefused``; a store failure ``StateUnavailable``. Nothing
    has run or been journaled in any of these cases: the run stays suspended.
    """
    pending = state.pending
    assert pending is not None and pending.approval is not None
    verdict = await approvals.claim(
        pending.approval,
        hook=pending.hook,
        event=pending.event,
        consumer=consumer(state, pending.hook),
    )
    if verdict.kind == "pending":
        from ..approvals import how_to_decide

        raise AgentError(
            "approval_pending",
            _RULE,
            f"run {state.run_id} is suspended at {pending.hook}: {how_to_decide(verdict.record)}"
            f"; resume it once the approval is decided, or with an hw.Decision ({_RULE})",
        )
    return _from_verdict(pending, verdict)


def _edited_value(pending: PendingApproval, decision: Decision) -> dict[str, object] | None:
    """What the record holds as an edit: at ``tool.before`` the call's new arguments, at a
    hook point outside the tool hooks the whole new event. At ``tool.after`` an edit changes
    the result, which a record cannot hold (its edits are arguments): it is recorded as an
    approval, and the journal's decision line holds the edit itself."""
    edited = decision.edited
    if edited is None or pending.hook == "tool.after":
        return None
    if pending.hook == "tool.before":
        call = edited.get("call")
        arguments = call.get("arguments") if isinstance(call, dict) else None
        return dict(arguments) if isinstance(arguments, dict) else {}
    return dict(edited)


async def _decide_record(
    approvals: Approvals, pending: PendingApproval, decision: Decision
) -> None:
    """Record the caller's decision in the store. A record the CLI (or anyone) already
    decided the same way is taken as it is; decided otherwise, the refusal stands."""
    from ..approvals import ApprovalRefused

    assert pending.approval is not None
    ident, role, reason = pending.approval, decision.role, decision.reason
    by = "resume"
    try:
        edited = _edited_value(pending, decision)
        if edited is not None:
            await approvals.edit(ident, edited, role=role, by=by, reason=reason)
        elif decision.approved:
            await approvals.approve(ident, role=role, by=by, reason=reason)
        else:
            await approvals.deny(ident, role=role, by=by, reason=reason)
    except ApprovalRefused as refused:
        if refused.code != "approval_decided":
            raise
        record = await approvals.get(ident)
        same = record.decision is not None and record.decision.approved == decision.approved
        if not same or decision.is_edit:
            raise


async def settle(approvals: Approvals, state: RunState, decision: Decision) -> None:
    """``resume(state, decision)`` while a record exists: decide it with ``decision`` and
    claim it, so it cannot be replayed elsewhere (``ApprovalRefused`` otherwise: nothing
    runs). The decision applied is the caller's."""
    pending = state.pending
    assert pending is not None and pending.approval is not None
    await _decide_record(approvals, pending, decision)
    verdict = await approvals.claim(
        pending.approval,
        hook=pending.hook,
        event=pending.event,
        consumer=consumer(state, pending.hook),
    )
    if verdict.kind != ("approved" if decision.approved else "denied"):
        raise AgentError(
            "approval_conflict",
            _RULE,
            f"approval {pending.approval} is {verdict.kind} in the store, the decision given "
            f"{'approves' if decision.approved else 'denies'}: the run stays suspended ({_RULE})",
        )
