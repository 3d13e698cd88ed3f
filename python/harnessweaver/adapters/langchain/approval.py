"""A LangChain pause kept in the approvals book (docs/approvals.md), so it outlives the process.

When the chain suspends a call and the middleware has an approvals book (the harness's, or
``approvals=``), the pause is filed as a record (``filed_by="langchain"``, subject
``thread:<thread id>``) whose id and ``how_to_decide`` text go into the interrupt's payload.
Every time the node runs (the first time, on a ``Command(resume=...)``, or in another process
sharing the checkpointer and the store) the book is consulted before anything waits:

- decided (by the CLI, say): the record is claimed, single use, and that decision is applied;
  no interrupt;
- pending: LangGraph's ``interrupt`` as before; a resume value the adapter accepts is written
  as the record's decision (unless someone decided first: the first decision stands), then
  claimed.

A pause at ``tool.after`` comes after the tool ran: the result is in the record's action, and
a pointer from the call (thread, call id) to the record lets a node run again in another
process take that result instead of running the tool a second time.

Every failure of the book is a refusal (fail closed): the store down (``state_unavailable``),
a record used already, expired, for another spec (the ``approval_*`` codes).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Literal

from ...agent.state import Decision
from ...approvals import KEEP, ApprovalRecord, ApprovalRefused, Approvals
from ...approvals import Verdict as BookVerdict
from ...identity import content_identity
from ...outcomes import Suspend
from ...state.store import StateUnavailable
from .decisions import Answer

__all__ = [
    "BY",
    "FILED_BY",
    "Pause",
    "Ran",
    "Resolution",
    "edit_of",
    "poll",
    "ran_before",
    "refusal",
    "settle",
    "settled",
]

FILED_BY = "langchain"
BY = "langchain Command(resume)"
"""Who decided, in the record, when the decision came as a resume value of the same graph."""
_RAN = "hw1/langchain/ran/"
"""Pointers from a call (thread, call id) to the record of its pause at ``tool.after``."""


@dataclass(frozen=True, slots=True)
class Pause:
    """One suspended call, as the book sees it."""

    book: Approvals
    hook: str
    event: Any
    outcome: Suspend
    subject: str | None
    consumer: str
    """Names this call in the record's ``used.by``: run, step, hook, call id."""
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class Resolution:
    """What became of a pause: ``how`` it was settled (the book alone, or a resume value) and
    ``kind``: ``pending`` (wait), ``go`` (approved; ``event`` is the JSON form as approved,
    an edit applied), ``deny``, ``block`` (a refusal: ``code``), ``refused`` (the resume value
    was refused: the call waits again)."""

    how: Literal["pending", "book", "asked"]
    kind: Literal["pending", "go", "deny", "block", "refused"]
    record: ApprovalRecord | None = None
    event: dict[str, Any] | None = None
    edited: bool = False
    reason: str = ""
    code: str | None = None


def settled(resolution: Any) -> bool:
    """Whether a node run again may answer this look at the book from memory."""
    return not (isinstance(resolution, Resolution) and resolution.how == "pending")


def refusal(how: Literal["book", "asked"], exc: Exception) -> Resolution:
    """A failure of the book as a refusal; the message names the rule and the id, never a
    value (ApprovalRefused's own), or only the type of a store failure."""
    if isinstance(exc, ApprovalRefused):
        return Resolution(how, "block", reason=str(exc), code=exc.code)
    return Resolution(
        how,
        "block",
        reason=f"the approvals store could not answer ({type(exc).__name__}): refused",
        code="state_unavailable",
    )


def _resolved(how: Literal["book", "asked"], verdict: BookVerdict) -> Resolution:
    record = verdict.record
    if verdict.kind == "pending":
        if how == "asked":  # cannot be: the record was just decided; never go on without it
            return Resolution(how, "block", record, reason=f"approval {record.id} is pending")
        return Resolution("pending", "pending", record)
    decision = record.decision
    if verdict.kind == "denied":
        return Resolution(how, "deny", record, reason=decision.reason if decision else "")
    edited = decision is not None and decision.edited is not None
    return Resolution(how, "go", record, event=verdict.event, edited=edited)


def _ran_key(subject: str, call_id: str) -> str:
    identity = content_identity({"subject": subject, "call": call_id})
    assert identity is not None  # two strings: always I-JSON but a lone surrogate
    return _RAN + identity.removeprefix("sha256:")


async def _forget_ran(pause: Pause, resolution: Resolution) -> Resolution:
    if pause.hook == "tool.after" and pause.subject and pause.call_id and settled(resolution):
        # a failure leaves the pointer to expire with the record (it only reuses a result)
        with contextlib.suppress(StateUnavailable):
            await pause.book.store.delete(_ran_key(pause.subject, pause.call_id))
    return resolution


async def poll(pause: Pause) -> Resolution:
    """Consult the book for ``pause``: file it when there is no open record, claim it when it
    is decided (docs/approvals.md, ``consult``)."""
    outcome = pause.outcome
    try:
        verdict = await pause.book.consult(
            hook=pause.hook,
            event=pause.event,
            reason=outcome.reason or "",
            code=outcome.code,
            approver_role=outcome.approver_role,
            subject=pause.subject,
            filed_by=FILED_BY,
            consumer=pause.consumer,
        )
        if verdict.kind == "pending" and pause.hook == "tool.after":
            await _keep_ran(pause, verdict.record)
    except (ApprovalRefused, StateUnavailable) as exc:
        return refusal("book", exc)
    return await _forget_ran(pause, _resolved("book", verdict))


async def _keep_ran(pause: Pause, record: ApprovalRecord) -> None:
    if not pause.subject or not pause.call_id:
        return  # no thread: no other process can resume this run
    store = pause.book.store
    key = _ran_key(pause.subject, pause.call_id)
    life = max(record.expires_at - pause.book.clock(), 1.0) + KEEP
    found = await store.read(key)
    await store.swap(key, found.version, {"approval": record.id}, life=life)


async def settle(pause: Pause, approval_id: str, answer: Answer, edited: Any) -> Resolution:
    """Write the caller's accepted ``answer`` (``edited``: the checked edited event, if it is
    an edit) as the record's decision, then claim the record. Someone who decided first (the
    CLI) wins: the claim applies the record's decision, whatever the answer."""
    book = pause.book
    # it passed the adapter's role check: the pause's role when it names one; an unreadable
    # value is the adapter's own denial, for the role the pause waits for
    role = pause.outcome.approver_role if answer.unreadable else answer.role
    reason = answer.reason
    try:
        if answer.kind == "approve":
            await book.approve(approval_id, role=role, by=BY, reason=reason)
        elif edited is not None:
            whole = edited.model_dump(mode="json")
            change = whole["call"]["arguments"] if pause.hook.startswith("tool.") else whole
            await book.edit(approval_id, change, role=role, by=BY, reason=reason)
        else:
            if answer.kind == "edit" and not reason:
                reason = "an edit applies only to a tool call"
            await book.deny(approval_id, role=role, by=BY, reason=reason)
    except ApprovalRefused as exc:
        if exc.code not in ("approval_decided", "approval_replayed"):
            return await _forget_ran(pause, refusal("asked", exc))
        # decided (or used) before this answer came: the claim below says what stands
    except StateUnavailable as exc:
        return refusal("asked", exc)
    try:
        verdict = await book.claim(
            approval_id, hook=pause.hook, event=pause.event, consumer=pause.consumer
        )
    except (ApprovalRefused, StateUnavailable) as exc:
        return await _forget_ran(pause, refusal("asked", exc))
    return await _forget_ran(pause, _resolved("asked", verdict))


def edit_of(hook: str, event: Any, approved: dict[str, Any]) -> Decision:
    """The approved event (an edit applied) as the ``hw.Decision`` the run loop checks (I23)."""
    return Decision(approved=True, edited=approved, edited_type=type(event).__name__)


@dataclass(frozen=True, slots=True)
class Ran:
    """A call that ran before a pause at ``tool.after``: its arguments and result, from the
    record's action (``None`` fields: nothing known), or the store down."""

    arguments: dict[str, Any] | None = None
    result: Any = None
    unavailable: bool = False


async def ran_before(book: Approvals, subject: str | None, call_id: str | None) -> Ran | None:
    """The call's run before a pause at ``tool.after`` (in this or another process), if any."""
    if not subject or not call_id:
        return None
    try:
        found = await book.store.read(_ran_key(subject, call_id))
        value = found.value
        approval = value.get("approval") if isinstance(value, dict) else None
        if not isinstance(approval, str):
            return None
        record = await book.get(approval)
    except ApprovalRefused:
        return None  # dropped long after it expired
    except StateUnavailable:
        return Ran(unavailable=True)
    action = record.action
    arguments = action.get("arguments")
    if record.hook != "tool.after" or not isinstance(arguments, dict):
        return None
    return Ran(arguments=arguments, result=action.get("result"))
