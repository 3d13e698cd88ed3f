"""The approvals book: records filed, decided and claimed in a shared state store.

Every write is a compare-and-set loop over :meth:`Store.read` / :meth:`Store.swap`, so any
number of processes (the agent that paused, the operator's CLI, the agent that resumes) share
one book without a lock: a lost race reads again and recomputes. Three kinds of record:

- ``hw1/approvals/record/<id>``: the approval (:class:`ApprovalRecord`);
- ``hw1/approvals/binding/<64 hex>``: the binding's current record ``{"id", "serial"}``;
- ``hw1/approvals/index``: ``{"ids": [[id, drop_at], ...]}``, what ``list`` shows, bounded.

A store that cannot answer raises :class:`StateUnavailable`: the integration then fails
closed (refuses, stays paused), never goes on.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from pydantic import JsonValue, ValidationError

from ..identity import content_identity
from ..state.store import Record, StateUnavailable, Store
from .notify import Notifier, notify_safely
from .record import (
    KEEP,
    STATUSES,
    ApprovalRecord,
    ApprovalRefused,
    action_of,
    binding_of,
    event_json,
)
from .rules import VerdictKind, claim, decide, status_at, when

__all__ = [
    "INDEX_KEY",
    "MAX_OPEN",
    "MAX_TRIES",
    "PREFIX",
    "Approvals",
    "Verdict",
    "binding_key",
    "how_to_decide",
    "record_key",
]

PREFIX: Final = "hw1/approvals/"
INDEX_KEY: Final = PREFIX + "index"
MAX_OPEN: Final = 10_000
"""Entries the index holds at most (each until its record expires: ``drop_at`` is the record's
``expires_at``); full: ``approvals_full``."""
MAX_TRIES: Final = 64
"""Compare-and-set attempts before a write gives up as contended (StateUnavailable)."""
_ID = re.compile(r"ap_[0-9a-f]{16}_[1-9][0-9]{0,15}\Z")


def record_key(approval_id: str) -> str:
    return f"{PREFIX}record/{approval_id}"


def binding_key(binding: str) -> str:
    return f"{PREFIX}binding/{binding.removeprefix('sha256:')}"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a claim found: ``kind`` ``"pending"``, ``"approved"`` or ``"denied"``; the record
    as it is now; ``event`` the event to go on with (JSON form): an approval's edit applied
    (at tool hooks the call's arguments replaced, elsewhere the edited event), else the
    event as given."""

    kind: VerdictKind
    record: ApprovalRecord
    event: dict[str, Any]

    @property
    def approved(self) -> bool:
        return self.kind == "approved"

    def event_like(self, original: Any) -> Any:
        """:attr:`event` in ``original``'s form (a typed event, given to :meth:`Approvals.claim`
        or :meth:`Approvals.consult`): ``original`` itself unless the approval edited it; a
        tool call's edit replaces its arguments only."""
        decision = self.record.decision
        if decision is None or decision.edited is None:
            return original
        call = self.event.get("call")
        if isinstance(call, Mapping) and hasattr(original, "updated"):
            return original.updated({"call.arguments": call["arguments"]})
        return type(original).model_validate(self.event)


def _check_id(approval_id: object) -> None:
    """An id the book could have made, before a store key is made of it."""
    if not isinstance(approval_id, str) or not _ID.match(approval_id):
        raise ApprovalRefused(
            "approval_unknown", "no such approval: an id looks like ap_<16 hex>_<serial>"
        )


def _unknown(approval_id: str) -> ApprovalRefused:
    return ApprovalRefused(
        "approval_unknown",
        f"no approval {approval_id}: never filed, or dropped {KEEP / 86400:g} days after it "
        "expired",
        approval_id,
    )


def how_to_decide(record: ApprovalRecord) -> str:
    """The line an integration puts in its pause or refusal message: the id, the role, the
    expiry and the commands that decide it."""
    role = f"role {record.approver_role}, " if record.approver_role is not None else ""
    return (
        f"approval {record.id} is {record.status} ({role}expires {when(record.expires_at)}): "
        f"decide it with `harnessweaver approvals approve {record.id}` or "
        f"`harnessweaver approvals deny {record.id}`"
    )


def _applied(hook: str, event: dict[str, Any], record: ApprovalRecord) -> dict[str, Any]:
    """``event`` with the record's edit, if its decision made one."""
    edited = record.decision.edited if record.decision is not None else None
    if edited is None:
        return event
    if hook in ("tool.before", "tool.after"):
        call = dict(event.get("call") or {})
        call["arguments"] = edited
        return {**event, "call": call}
    return dict(edited)


def _text(name: str, value: object, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise TypeError(f"{name} is text, got {type(value).__name__}")


class Approvals:
    """The approvals of one spec version in ``store`` (docs/approvals.md).

    ``spec`` is the spec's identity (:func:`spec_identity`; ``"code"`` for a harness built in
    code); ``expires_after`` the seconds a filed record waits for its decision; ``notify`` is
    called with each new record (a failure never stops the filing); ``clock`` gives epoch
    seconds."""

    def __init__(
        self,
        store: Store,
        *,
        spec: str,
        expires_after: float = 86400.0,
        notify: Notifier | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(spec, str) or not spec:
            raise ValueError("an approvals book's spec is its spec identity, non-empty text")
        if (
            isinstance(expires_after, bool)
            or not isinstance(expires_after, int | float)
            or not math.isfinite(expires_after)
            or expires_after <= 0
        ):
            raise ValueError("expires_after is a number of seconds > 0")
        self.store = store
        self.spec = spec
        self.expires_after = float(expires_after)
        self.notify = notify
        self.clock = clock

    def __repr__(self) -> str:
        return f"Approvals(backend={self.store.backend!r}, spec={self.spec!r})"

    # -- the store, every failure a StateUnavailable ------------------------------------

    async def _read(self, key: str) -> Record:
        try:
            return await self.store.read(key)
        except StateUnavailable:
            raise
        except Exception as exc:  # named by type only, fail closed
            raise StateUnavailable.of(self.store.backend, "read", exc) from None

    async def _swap(self, key: str, version: int, value: JsonValue, life: float | None) -> bool:
        try:
            return await self.store.swap(key, version, value, life=life)
        except StateUnavailable:
            raise
        except Exception as exc:  # named by type only, fail closed
            raise StateUnavailable.of(self.store.backend, "swap", exc) from None

    def _contended(self) -> StateUnavailable:
        return StateUnavailable(self.store.backend, "swap", f"contended {MAX_TRIES} times")

    def _life(self, record: ApprovalRecord, now: float) -> float:
        return max(record.expires_at - now + KEEP, 1.0)

    async def _record(self, approval_id: str) -> tuple[ApprovalRecord | None, int]:
        found = await self._read(record_key(approval_id))
        if found.value is None:
            return None, found.version
        try:
            return ApprovalRecord.model_validate(found.value), found.version
        except ValidationError:  # not a record this version reads: never guessed at
            raise StateUnavailable(self.store.backend, "read", "invalid approval record") from None

    # -- filing --------------------------------------------------------------------------

    async def _index_add(self, approval_id: str, drop_at: float) -> None:
        for _ in range(MAX_TRIES):
            now = self.clock()
            found = await self._read(INDEX_KEY)
            value = found.value if isinstance(found.value, Mapping) else {}
            raw = value.get("ids")
            kept = [
                (entry[0], float(entry[1]))
                for entry in (raw if isinstance(raw, list) else [])
                if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], int | float) and entry[1] >= now
            ]  # fmt: skip
            if any(kept_id == approval_id for kept_id, _ in kept):
                return
            if len(kept) >= MAX_OPEN:
                raise ApprovalRefused(
                    "approvals_full",
                    f"the approvals index holds {MAX_OPEN} records already: decide or let "
                    "some expire before filing more",
                    None,
                )
            kept.append((approval_id, drop_at))
            ids: list[JsonValue] = [[kept_id, at] for kept_id, at in kept]
            if await self._swap(INDEX_KEY, found.version, {"ids": ids}, None):
                return
        raise self._contended()

    async def _current(self, binding: str) -> tuple[ApprovalRecord | None, int, Record]:
        """The binding's current record (or None), its serial, the binding as read."""
        found = await self._read(binding_key(binding))
        value = found.value if isinstance(found.value, Mapping) else None
        if value is None:
            return None, 0, found
        serial = value.get("serial")
        serial = serial if isinstance(serial, int) and not isinstance(serial, bool) else 0
        current_id = value.get("id")
        record = None
        if isinstance(current_id, str) and _ID.match(current_id):
            record, _ = await self._record(current_id)
        return record, serial, found

    async def file(
        self,
        *,
        hook: str,
        event: object,
        reason: str,
        code: str | None = None,
        approver_role: str | None = None,
        subject: str | None = None,
        filed_by: str,
    ) -> ApprovalRecord:
        """File an approval for ``event`` at ``hook``; idempotent per binding (action, spec,
        subject): the binding's current record when it is pending or approved and not
        expired, else a new one (notified)."""
        _text("reason", reason)
        _text("code", code, optional=True)
        _text("approver_role", approver_role, optional=True)
        _text("subject", subject, optional=True)
        _text("filed_by", filed_by)
        if not filed_by:
            raise ValueError("filed_by names who files (run loop, langchain, mcp proxy...)")
        action = action_of(hook, event_json(event))
        identity = content_identity(action)
        if identity is None:
            raise ValueError(f"the action at {hook} is outside I-JSON: it cannot be bound")
        binding = binding_of(identity, self.spec, subject)
        for _ in range(MAX_TRIES):
            now = self.clock()
            current, serial, found = await self._current(binding)
            if current is not None and status_at(current, now) in ("pending", "approved"):
                return current
            serial += 1
            approval_id = f"ap_{binding.removeprefix('sha256:')[:16]}_{serial}"
            existing, _ = await self._record(approval_id)
            if existing is not None:
                # Another filer wrote it first (or crashed before moving the binding on):
                # point the binding at it and look again.
                await self._swap(
                    binding_key(binding),
                    found.version,
                    {"id": approval_id, "serial": serial},
                    self._life(existing, now),
                )
                continue
            record = ApprovalRecord(
                id=approval_id,
                binding=binding,
                identity=identity,
                action=action,
                spec=self.spec,
                subject=subject,
                hook=hook,
                tool=action.get("tool"),
                reason=reason,
                code=code,
                approver_role=approver_role,
                filed_by=filed_by,
                filed_at=now,
                expires_at=now + self.expires_after,
            )
            await self._index_add(approval_id, record.expires_at)  # open until it expires
            if not await self._swap(
                record_key(approval_id), 0, record.to_json(), self._life(record, now)
            ):
                continue  # a racing filer wrote this serial: it is the one
            # the binding lives as long as its record: both go KEEP after the expiry
            await self._swap(
                binding_key(binding),
                found.version,
                {"id": approval_id, "serial": serial},
                self._life(record, now),
            )
            if self.notify is not None:
                await notify_safely(self.notify, record)
            return record
        raise self._contended()

    # -- reading -------------------------------------------------------------------------

    async def get(self, approval_id: str) -> ApprovalRecord:
        """The record ``approval_id``; ``approval_unknown`` when there is none."""
        _check_id(approval_id)
        record, _ = await self._record(approval_id)
        if record is None:
            raise _unknown(approval_id)
        return record

    async def list(self, *, status: str | None = None) -> list[ApprovalRecord]:
        """The records of the index in filing order; with ``status``, those whose
        :func:`status_at` now is ``status`` (``expired`` included)."""
        if status is not None and status not in (*STATUSES, "expired"):
            raise ValueError(f"a status is one of {', '.join((*STATUSES, 'expired'))}")
        found = await self._read(INDEX_KEY)
        value = found.value if isinstance(found.value, Mapping) else {}
        raw = value.get("ids")
        records = []
        now = self.clock()
        for entry in raw if isinstance(raw, list) else []:
            if not (isinstance(entry, list) and entry and isinstance(entry[0], str)):
                continue
            if not _ID.match(entry[0]):
                continue
            record, _ = await self._record(entry[0])
            if record is not None and (status is None or status_at(record, now) == status):
                records.append(record)
        return records

    # -- deciding ------------------------------------------------------------------------

    async def _decide(
        self, approval_id: str, decision: Mapping[str, Any], spec: str | None
    ) -> ApprovalRecord:
        _check_id(approval_id)  # approval_unknown before a key is made of it
        for _ in range(MAX_TRIES):
            now = self.clock()
            record, version = await self._record(approval_id)
            if record is None:
                raise _unknown(approval_id)
            decided = decide(record, decision, now, spec)
            if await self._swap(
                record_key(approval_id), version, decided.to_json(), self._life(decided, now)
            ):
                return decided
        raise self._contended()

    async def approve(
        self,
        approval_id: str,
        *,
        role: str | None = None,
        by: str | None = None,
        reason: str = "",
        spec: str | None = None,
    ) -> ApprovalRecord:
        """Approve ``approval_id`` (``spec``: refuse unless it was filed under that spec)."""
        decision = {"approved": True, "role": role, "by": by, "reason": reason, "edited": None}
        return await self._decide(approval_id, decision, spec)

    async def deny(
        self,
        approval_id: str,
        *,
        role: str | None = None,
        by: str | None = None,
        reason: str = "",
        spec: str | None = None,
    ) -> ApprovalRecord:
        """Deny ``approval_id``."""
        decision = {"approved": False, "role": role, "by": by, "reason": reason, "edited": None}
        return await self._decide(approval_id, decision, spec)

    async def edit(
        self,
        approval_id: str,
        edited: dict[str, Any],
        *,
        role: str | None = None,
        by: str | None = None,
        reason: str = "",
        spec: str | None = None,
    ) -> ApprovalRecord:
        """Approve ``approval_id`` with ``edited``: the call's new arguments at tool hooks,
        the whole new event JSON elsewhere."""
        decision = {"approved": True, "role": role, "by": by, "reason": reason, "edited": edited}
        return await self._decide(approval_id, decision, spec)

    # -- claiming ------------------------------------------------------------------------

    async def claim(self, approval_id: str, *, hook: str, event: object, consumer: str) -> Verdict:
        """What the record ``approval_id`` says to the call at ``hook`` with ``event``, about to
        run (``consumer`` names it): approved → the record is used (once, whoever asks next
        is refused ``approval_replayed``); denied → closed; pending → unchanged."""
        _text("consumer", consumer)
        given = event_json(event)
        identity = content_identity(action_of(hook, given))
        if identity is None:
            raise ValueError(f"the action at {hook} is outside I-JSON: it cannot be bound")
        _check_id(approval_id)  # approval_unknown before a key is made of it
        for _ in range(MAX_TRIES):
            now = self.clock()
            record, version = await self._record(approval_id)
            if record is None:
                raise _unknown(approval_id)
            kind, claimed = claim(record, identity, self.spec, consumer, now)
            if claimed is record or await self._swap(
                record_key(approval_id), version, claimed.to_json(), self._life(claimed, now)
            ):
                event_now = _applied(hook, given, claimed) if kind == "approved" else given
                return Verdict(kind, claimed, event_now)
        raise self._contended()

    async def consult(
        self,
        *,
        hook: str,
        event: object,
        reason: str,
        code: str | None = None,
        approver_role: str | None = None,
        subject: str | None = None,
        filed_by: str,
        consumer: str,
    ) -> Verdict:
        """Ask again (a hook command, the MCP proxy, an adapter after a restart): the
        binding's current record decided → claimed; pending → pending; none, used, closed or
        expired → a new record filed, pending."""
        given = event_json(event)
        identity = content_identity(action_of(hook, given))
        if identity is None:
            raise ValueError(f"the action at {hook} is outside I-JSON: it cannot be bound")
        current, _, _ = await self._current(binding_of(identity, self.spec, subject))
        if current is not None:
            now = self.clock()
            status = status_at(current, now)
            if status in ("approved", "denied"):
                return await self.claim(current.id, hook=hook, event=given, consumer=consumer)
            if status == "pending":
                return Verdict("pending", current, given)
        filed = await self.file(
            hook=hook,
            event=given,
            reason=reason,
            code=code,
            approver_role=approver_role,
            subject=subject,
            filed_by=filed_by,
        )
        if filed.status == "approved":  # approved between our look and the filing
            return await self.claim(filed.id, hook=hook, event=given, consumer=consumer)
        return Verdict("pending", filed, given)
