"""The approval record (schema version 1): what is bound, by whom it is decided, once used.

An approval binds one *action* (a tool call's name and arguments, a tool result, or a whole
event) to one spec version and one subject. Its identity is the action's content identity
(I27), so a decision made in one process is checked against the call another process is about
to run, and a changed argument, spec or subject never inherits it. The record is JSON in the
state store; :class:`ApprovalRecord` is its checked, immutable form.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from ..identity import content_identity

if TYPE_CHECKING:
    from ..spec.loader import Harness

__all__ = [
    "KEEP",
    "REFUSALS",
    "STATUSES",
    "ApprovalDecision",
    "ApprovalRecord",
    "ApprovalRefused",
    "ApprovalUse",
    "Status",
    "action_of",
    "binding_of",
    "event_json",
    "spec_identity",
]

KEEP: Final = 7 * 24 * 3600.0
"""Seconds a record outlives its expiry: decided and used records stay for audit, and so a
replayed claim is refused as ``approval_replayed`` rather than met by a missing record."""

Status = Literal["pending", "approved", "denied", "used", "closed"]
STATUSES: Final[tuple[str, ...]] = ("pending", "approved", "denied", "used", "closed")
"""The statuses a record holds; :func:`~harnessweaver.approvals.status_at` adds ``expired``."""

REFUSALS: Final = (
    "approval_unknown",
    "approval_replayed",
    "approval_decided",
    "approval_expired",
    "approval_spec_changed",
    "approval_mismatch",
    "approval_wrong_role",
    "approval_invalid_edit",
    "approvals_full",
)
"""The codes an :class:`ApprovalRefused` carries."""


class ApprovalRefused(Exception):
    """An approval rule refused: ``code`` (one of :data:`REFUSALS`), ``approval`` (the
    record's id, or None). The message names the id, the rule and the values that differ
    (identities, roles, times), never an argument value."""

    code: str
    approval: str | None

    def __init__(self, code: str, message: str, approval_id: str | None = None) -> None:
        if code not in REFUSALS:
            raise ValueError(f"unknown approval refusal code {code!r}")
        self.code = code
        self.approval = approval_id
        super().__init__(message)

    def __reduce__(self) -> tuple[type[ApprovalRefused], tuple[str, str, str | None]]:
        return (type(self), (self.code, str(self), self.approval))


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ApprovalDecision(_Frozen):
    """An approver's decision as the record keeps it. ``edited``: the new arguments (tool
    hooks) or the whole new event JSON (other hooks); None when nothing was edited."""

    approved: bool
    role: str | None = None
    by: str | None = None
    reason: str = ""
    at: float
    edited: dict[str, JsonValue] | None = None


class ApprovalUse(_Frozen):
    """Who claimed the record (``by``, the consumer token) and when."""

    at: float
    by: str


class ApprovalRecord(_Frozen):
    """One approval, as stored under ``hw1/approvals/record/<id>`` (docs/approvals.md)."""

    v: Literal[1] = 1
    id: str
    binding: str
    identity: str
    action: dict[str, JsonValue]
    spec: str
    subject: str | None = None
    hook: str
    tool: str | None = None
    reason: str = ""
    code: str | None = None
    approver_role: str | None = None
    filed_by: str
    filed_at: float
    expires_at: float
    status: Status = "pending"
    decision: ApprovalDecision | None = None
    used: ApprovalUse | None = None

    def to_json(self) -> dict[str, JsonValue]:
        """The record's JSON form (what the store holds and the notifier posts)."""
        dumped: dict[str, JsonValue] = self.model_dump(mode="json")
        return dumped


def event_json(event: object) -> dict[str, Any]:
    """An event model or its JSON object, as a JSON object (a ``TypeError`` otherwise)."""
    if hasattr(event, "model_dump") and not isinstance(event, type):
        event = event.model_dump(mode="json")
    if not isinstance(event, Mapping):
        raise TypeError(
            f"an event is an event model or its JSON object, got {type(event).__name__}"
        )
    return dict(event)


def action_of(hook: str, event: object) -> dict[str, Any]:
    """What an approval at ``hook`` binds (docs/approvals.md): at ``tool.before``
    ``{"hook","tool","arguments"}`` (the call's name and arguments, never its id, which changes
    when an agent calls again); at ``tool.after`` also ``"result"``; at any other hook point
    ``{"hook","event"}``, the event's JSON form."""
    if not isinstance(hook, str) or not hook:
        raise ValueError("an approval's hook is a hook point name such as 'tool.before'")
    event = event_json(event)
    if hook not in ("tool.before", "tool.after"):
        return {"hook": hook, "event": event}
    call = event.get("call")
    if not isinstance(call, Mapping) or not isinstance(call.get("name"), str):
        raise ValueError(f"an event at {hook} holds its call: an object with a name")
    arguments = call.get("arguments", {})
    action: dict[str, Any] = {"hook": hook, "tool": call["name"], "arguments": arguments}
    if hook == "tool.after":
        action["result"] = event.get("result")
    return action


def binding_of(identity: str, spec: str, subject: str | None) -> str:
    """The binding: one action, under one spec version, for one subject."""
    binding = content_identity({"identity": identity, "spec": spec, "subject": subject})
    if binding is None:  # every part is plain text: only a lone surrogate gets here
        raise ValueError("an approval's spec and subject are text with a UTF-8 form")
    return binding


def _plain_json(value: object) -> Any:
    return json.loads(json.dumps(value, default=str))


def spec_identity(harness: Harness) -> str:
    """The identity of a loaded harness's spec version: its task, its env and every entry's
    name, ``use`` and settings in order (I27 content identity). A harness built in code (no
    spec) is ``"code"``: an approval filed there is bound to no spec version."""
    if harness.spec is None:
        return "code"
    value = {
        "task": harness.task,
        "env": harness.env,
        "entries": [
            {"name": entry.name, "use": entry.use, "settings": _plain_json(dict(entry.settings))}
            for entry in harness.entries
        ],
    }
    identity = content_identity(_plain_json(value))
    if identity is None:
        raise ValueError("the spec's settings are outside I-JSON: it has no identity")
    return identity
