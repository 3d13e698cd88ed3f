"""The approval rules as pure functions: what a decision or a claim does to a record.

Every refusal is an :class:`ApprovalRefused` with its code; the checks run in a fixed order
(the conformance corpus pins it), so two implementations refuse the same thing the same way.
No clock and no store here: ``now`` is given, the record in, the record out.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from .record import ApprovalDecision, ApprovalRecord, ApprovalRefused, ApprovalUse

__all__ = ["VERDICTS", "VerdictKind", "claim", "decide", "status_at", "when"]

VerdictKind = Literal["pending", "approved", "denied"]
VERDICTS: tuple[VerdictKind, ...] = ("pending", "approved", "denied")


def when(at: float) -> str:
    """``at`` (epoch seconds) as ``2026-12-07T16:00:00Z``, the form messages show."""
    return datetime.fromtimestamp(int(at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_at(record: ApprovalRecord, now: float) -> str:
    """The record's status, ``"expired"`` when it is pending or approved and ``now`` is at or
    past its expiry (decided-and-used records keep their status: it is what happened)."""
    if record.status in ("pending", "approved") and now >= record.expires_at:
        return "expired"
    return record.status


def _expired(record: ApprovalRecord, now: float) -> ApprovalRefused:
    return ApprovalRefused(
        "approval_expired",
        f"approval {record.id} expired at {when(record.expires_at)} "
        f"(now {when(now)}): file it again",
        record.id,
    )


def _spec_changed(record: ApprovalRecord, spec: str) -> ApprovalRefused:
    return ApprovalRefused(
        "approval_spec_changed",
        f"approval {record.id} was filed under spec {record.spec}, not {spec}: "
        "an approval holds for the spec version it was filed under",
        record.id,
    )


def decide(
    record: ApprovalRecord, decision: Mapping[str, Any], now: float, spec: str | None = None
) -> ApprovalRecord:
    """The record with ``decision`` (``approved``, ``role``, ``by``, ``reason``, ``edited``)
    made at ``now``. Refused, in this order: a used record (``approval_replayed``) or one
    decided already (``approval_decided``); expired (``approval_expired``); another spec
    (``approval_spec_changed``); not the approver role (``approval_wrong_role``); an edit that
    is no JSON object or not an approval (``approval_invalid_edit``)."""
    if record.status == "used":
        raise ApprovalRefused(
            "approval_replayed",
            f"approval {record.id} was used already: it is single use",
            record.id,
        )
    if record.status != "pending":
        raise ApprovalRefused(
            "approval_decided",
            f"approval {record.id} is {record.status} already: a decision is made once",
            record.id,
        )
    if now >= record.expires_at:
        raise _expired(record, now)
    if spec is not None and spec != record.spec:
        raise _spec_changed(record, spec)
    role = decision.get("role")
    if record.approver_role is not None and role != record.approver_role:
        given = "no role" if role is None else f"role {role!r}"
        raise ApprovalRefused(
            "approval_wrong_role",
            f"approval {record.id} is decided by role {record.approver_role!r}, not {given}",
            record.id,
        )
    approved = decision.get("approved")
    edited = decision.get("edited")
    if edited is not None and (not isinstance(edited, Mapping) or approved is not True):
        why = (
            "an approval"
            if isinstance(edited, Mapping)
            else f"a JSON object, not a {type(edited).__name__}"
        )
        raise ApprovalRefused(
            "approval_invalid_edit", f"approval {record.id}: an edit is {why}", record.id
        )
    made = ApprovalDecision(
        approved=bool(approved),
        role=role,
        by=decision.get("by"),
        reason=decision.get("reason") or "",
        at=now,
        edited=None if edited is None else dict(edited),
    )
    status = "approved" if made.approved else "denied"
    return record.model_copy(update={"status": status, "decision": made})


def claim(
    record: ApprovalRecord, identity: str, spec: str, consumer: str, now: float
) -> tuple[VerdictKind, ApprovalRecord]:
    """What the record says to the call about to run (``identity`` of its action, ``spec``,
    ``consumer`` naming the call). Refused, in this order: another spec
    (``approval_spec_changed``); another action (``approval_mismatch``); used or closed
    (``approval_replayed``); expired (``approval_expired``). Then ``pending`` (unchanged),
    ``denied`` (the record closed) or ``approved`` (the record used: single use, strictly)."""
    if spec != record.spec:
        raise _spec_changed(record, spec)
    if identity != record.identity:
        raise ApprovalRefused(
            "approval_mismatch",
            f"approval {record.id} binds action {record.identity}, not {identity}: "
            "an approval holds for the exact action it was filed for",
            record.id,
        )
    if record.status in ("used", "closed"):
        by = f" by {record.used.by}" if record.used is not None else ""
        raise ApprovalRefused(
            "approval_replayed",
            f"approval {record.id} was {record.status}{by} already: it is single use",
            record.id,
        )
    if now >= record.expires_at:
        raise _expired(record, now)
    if record.status == "pending":
        return "pending", record
    used = ApprovalUse(at=now, by=consumer)
    if record.status == "denied":
        return "denied", record.model_copy(update={"status": "closed", "used": used})
    return "approved", record.model_copy(update={"status": "used", "used": used})
