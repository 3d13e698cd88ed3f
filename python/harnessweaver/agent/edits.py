"""Checking an approver's edited event before it replaces the pending one (ruling I23).

An edit is checked like a middleware's ``Continue(modified)``: the hook point's event type,
then the hook contracts (I14) against the pending event, with the active core, whatever the
bus's contract mode (an approver has no fail mode to resolve a violation with). A failed
check refuses the decision: :func:`checked_edit` raises an :class:`AgentError` naming the
rule, before anything runs or is journaled, so the run stays suspended as it was.
Messages name types, fields, error codes and rule ids, never a value (R9).
"""

from __future__ import annotations

from pydantic import ValidationError

from ..events import EVENT_TYPES, Event
from .errors import AgentError
from .state import Decision

__all__ = ["checked_edit", "checked_identity"]

_RULE = "I23"


def _invalid(hook: str, type_name: str, exc: ValidationError) -> AgentError:
    problems = "; ".join(
        f"{'.'.join(map(str, error['loc'])) or '(event)'}: {error['type']}"
        for error in exc.errors(include_url=False, include_input=False)
    )
    return AgentError(
        "invalid_edit",
        _RULE,
        f"edited {type_name} at {hook} is not a valid {type_name}: {problems}; the decision "
        f"is refused and the run stays suspended ({_RULE})",
    )


def checked_edit(hook: str, pending: Event, decision: Decision) -> Event:
    """The edited event of ``decision``, typed, once it passes the checks of I23 as the
    replacement of ``pending`` (the event the chain left at ``hook``); otherwise an
    :class:`AgentError` (``wrong_event_type``, ``invalid_edit``, ``contract_violation``)."""
    assert decision.edited is not None
    kind = EVENT_TYPES[hook]
    if decision.edited_type != kind.__name__:
        raise AgentError(
            "wrong_event_type",
            _RULE,
            f"edited event of type {decision.edited_type!r} at {hook}: an edit at {hook} is a "
            f"{kind.__name__}, the hook point's event type; the decision is refused and the run "
            f"stays suspended ({_RULE})",
        )
    try:
        edited = kind.model_validate(decision.edited)
    except ValidationError as exc:
        raise _invalid(hook, kind.__name__, exc) from None
    from ..contracts import check_contract  # the active core's rules, as the bus checks them

    broken = check_contract(hook, pending, edited)
    if broken is not None:
        raise AgentError(
            "contract_violation",
            _RULE,
            f"edited {kind.__name__} at {hook} breaks hook contract {broken} (I14): an edit "
            f"may change only what a middleware's modification may; the decision is refused "
            f"and the run stays suspended ({_RULE})",
        )
    return edited


def checked_identity(decision: Decision, identity: str | None, waiting: str) -> None:
    """Refuse ``decision`` when it names an event (I27) other than ``identity``, the one that
    waits (``waiting`` says where, for the message); a decision naming none is not checked."""
    if decision.identity is not None and decision.identity != identity:
        raise AgentError(
            "identity_mismatch",
            "I27",
            f"decision about event {decision.identity!r}: {waiting} waits for a decision about "
            f"event {identity!r} (I27)",
        )
