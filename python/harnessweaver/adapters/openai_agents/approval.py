"""A suspended tool call kept in the approvals book (docs/approvals.md), so the SDK's
``RunState`` can be resumed anywhere that shares the store.

When a guarded tool's ``tool.before`` answers ``Suspend`` and the run has a book (the
harness's, or ``approvals=``), the call is filed (``filed_by="openai-agents"``, subject
``run:<run id>``); ``run.approval(item)`` is its record (the id, ``how_to_decide``).

When a ``GuardedRun`` resumes a ``RunState`` (``run.run(agent, state)``, in this process or
another), :func:`settle` goes through the calls it waits for, before the SDK does:

- the chain's answer for the call (the one this run kept, or the chain asked again, as
  resuming the state would ask it) is a ``Suspend``: the book is consulted. Decided there
  (the CLI): the record is claimed (single use) and the adapter approves or rejects the call on
  the state itself. Pending there but decided on the state (``state.approve``/``reject``,
  ``run.decide``): that decision is written to the record, then claimed. Pending in both:
  the call waits again (the SDK interrupts again).
- the first decision stands: one written to the book first wins over the state's;
- a refusal of the book (``approval_*``) or a store that cannot answer rejects the call with
  the refusal's text: fail closed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...agent.edits import checked_edit
from ...agent.errors import AgentError
from ...agent.state import Decision
from ...approvals import (
    ApprovalRecord,
    ApprovalRefused,
    action_of,
    binding_key,
    binding_of,
    status_at,
)
from ...approvals import Verdict as BookVerdict
from ...identity import content_identity
from ...outcomes import Suspend
from ...state.store import StateUnavailable
from .convert import arguments_of
from .run import ToolCallRecord, call_id_of
from .tools import denial, refusal

if TYPE_CHECKING:
    from .run import GuardedRun

__all__ = ["BY", "FILED_BY", "file_call", "settle"]

logger = logging.getLogger(__name__)

FILED_BY = "openai-agents"
BY = "openai-agents RunState"
"""Who decided, in the record, when the decision was made on the SDK's ``RunState``."""


def _subject(run: GuardedRun) -> str:
    return f"run:{run.run_id}"


def _consumer(run: GuardedRun, call_id: str) -> str:
    return f"openai-agents {run.run_id} call {call_id}"


async def file_call(run: GuardedRun, record: ToolCallRecord) -> None:
    """File the suspended call of ``record`` (its id kept on the record). A store that cannot
    answer files nothing: the call still waits (the SDK's interruption), decided on the state
    in this process only (never run without a decision)."""
    book = run.approvals
    outcome = record.before.outcome
    if book is None or not isinstance(outcome, Suspend):
        return
    try:
        filed_record = await book.file(
            hook="tool.before",
            event=record.before.event,
            reason=outcome.reason or "",
            code=outcome.code,
            approver_role=outcome.approver_role,
            subject=_subject(run),
            filed_by=FILED_BY,
        )
    except StateUnavailable as exc:
        logger.warning("run %s: the approval was not filed: %s", run.run_id, type(exc).__name__)
        return
    record.approval = filed_record


async def settle(run: GuardedRun, state: Any) -> None:
    """Apply the book to every call ``state`` waits for (module doc)."""
    if run.approvals is None:
        return
    for item in state.get_interruptions():
        await _settle_one(run, state, item)


async def _chain(run: GuardedRun, item: Any) -> ToolCallRecord | None:
    """The chain's answer for the call of ``item``: kept, or asked again (decide.py)."""
    from .decide import _call_of

    kept = run.call(call_id_of(item))
    if kept is not None:
        return kept
    asked = _call_of(item)
    if asked is None:
        return None
    return await run.tool_before(*asked, approval_asked=True)


async def _settle_one(run: GuardedRun, state: Any, item: Any) -> None:
    book = run.approvals
    assert book is not None
    call_id = call_id_of(item)
    context: Any = getattr(state, "_context", None)
    on_state = context.is_tool_approved(item.tool_name, call_id) if context is not None else None
    if on_state is False and run.call(call_id) is None:
        # rejected on a restored state: the call never runs, and the chain is not asked
        # again for it (as before the book); its pending record is closed as denied
        await _close_rejected(run, state, item)
        return
    record = await _chain(run, item)
    if record is None or not isinstance(record.before.outcome, Suspend):
        return  # not a call the chain suspends: the input guardrail answers for it
    outcome = record.before.outcome
    event = record.before.event
    consumer = _consumer(run, call_id)
    try:
        verdict = await book.consult(
            hook="tool.before",
            event=event,
            reason=outcome.reason or "",
            code=outcome.code,
            approver_role=outcome.approver_role,
            subject=_subject(run),
            filed_by=FILED_BY,
            consumer=consumer,
        )
        record.approval = verdict.record
        if verdict.kind == "pending" and on_state is not None:
            verdict = await _decide(run, verdict.record, on_state, state, item, outcome)
            verdict = await book.claim(
                verdict.record.id, hook="tool.before", event=event, consumer=consumer
            )
    except (ApprovalRefused, StateUnavailable) as exc:
        run.forget(call_id)
        state.reject(item, rejection_message=refusal("tool.before", _why(exc)))
        return
    await _apply(run, state, item, record, verdict, on_state)


async def _close_rejected(run: GuardedRun, state: Any, item: Any) -> None:
    """Deny the pending record of a call rejected on the state, found by its binding with the
    arguments the model gave (a call whose arguments the chain rewrote before suspending it
    is not found: its record expires undecided). Best effort: the call is rejected anyway."""
    book = run.approvals
    assert book is not None
    raw = getattr(item, "raw_item", None)
    text = raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", None)
    arguments = arguments_of(text if isinstance(text, str) else None)
    if arguments is None:
        return
    call = {"id": call_id_of(item), "name": item.tool_name, "arguments": arguments}
    identity = content_identity(action_of("tool.before", {"call": call}))
    if identity is None:
        return
    try:
        found = await book.store.read(binding_key(binding_of(identity, book.spec, _subject(run))))
        current = found.value.get("id") if isinstance(found.value, dict) else None
        if not isinstance(current, str):
            return
        record = await book.get(current)
        if status_at(record, book.clock()) != "pending":
            return
        await book.deny(record.id, role=record.approver_role, by=BY, reason=_rejection(state, item))
        await book.claim(
            record.id,
            hook="tool.before",
            event={"call": call},
            consumer=_consumer(run, call_id_of(item)),
        )
    except (ApprovalRefused, StateUnavailable) as exc:
        why = type(exc).__name__
        logger.info("run %s: a rejected call's record stays open: %s", run.run_id, why)


def _why(exc: Exception) -> str:
    if isinstance(exc, ApprovalRefused):
        return str(exc)  # names the id, the rule and the identities: never a value
    return f"the approvals store could not answer ({type(exc).__name__})"


async def _decide(
    run: GuardedRun,
    record: ApprovalRecord,
    approved: bool,
    state: Any,
    item: Any,
    outcome: Suspend,
) -> BookVerdict:
    """Write the state's decision to the pending record (the app that resumes is trusted with
    the role the pause asks for, as the SDK's approval names none); someone who decided first
    wins (the claim that follows applies their decision)."""
    book = run.approvals
    assert book is not None
    role = outcome.approver_role
    try:
        if approved:
            decided = await book.approve(record.id, role=role, by=BY)
        else:
            message = _rejection(state, item)
            decided = await book.deny(record.id, role=role, by=BY, reason=message)
    except ApprovalRefused as exc:
        if exc.code not in ("approval_decided", "approval_replayed"):
            raise
        decided = record
    return BookVerdict("pending", decided, {})


def _rejection(state: Any, item: Any) -> str:
    context: Any = getattr(state, "_context", None)
    try:
        message = context.get_rejection_message(item.tool_name, call_id_of(item))
    except Exception:  # the SDK's own bookkeeping: no message is a denial without a reason
        return ""
    return message if isinstance(message, str) else ""


async def _apply(
    run: GuardedRun,
    state: Any,
    item: Any,
    record: ToolCallRecord,
    verdict: BookVerdict,
    on_state: bool | None,
) -> None:
    call_id = call_id_of(item)
    if verdict.kind == "pending":
        return  # still waiting: the SDK interrupts the run again for it
    decision = verdict.record.decision
    if verdict.kind == "denied":
        run.forget(call_id)
        if on_state is not False:  # a rejection on the state keeps its own message
            state.reject(item, rejection_message=denial(decision.reason if decision else ""))
        return
    if decision is not None and decision.edited is not None:
        event = record.before.event
        try:
            edited = checked_edit(
                "tool.before",
                event,
                Decision(approved=True, edited=verdict.event, edited_type=type(event).__name__),
            )
        except AgentError as exc:
            run.forget(call_id)
            why = f"the approved edit was refused: {exc}"
            state.reject(item, rejection_message=refusal("tool.before", why))
            return
        # what will run passes the chain; the approver's edit is what they approved
        again = ToolCallRecord(await run.ask("tool.before", edited), record.event, True)
        again.approval = verdict.record
        run.keep(again)
    state.approve(item)
