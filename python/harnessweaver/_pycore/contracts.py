"""Hook contracts (I14): what a middleware may change in an event (paired with ``contract.rs``).

A contract is checked only when a middleware answers ``Continue(modified=e)`` on a bus with a
contract mode: the event it received is compared with ``e`` over a small view (message roles
and fingerprints, a few fields as fingerprints). Rules are checked in table order; the first
one broken is the verdict. ``docs/contracts.md`` says why each rule exists.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ..errors import error_for
from .catalogue import ORDER, hook_error
from .text import whole_text

__all__ = ["CONTRACT_RULES", "check_contract", "contract_mode", "violation"]

Message = tuple[str, str]  # (role, fingerprint)
View = tuple[list[Message], list[str]]  # (messages, field fingerprints)

# hook point -> (the path of its message list or None, the paths of its fields)
_VIEWS: Final[dict[str, tuple[str | None, tuple[str, ...]]]] = {
    "task.start": (None, ("task",)),
    "step.start": ("messages", ()),
    "model.before": ("request.messages", ()),
    "model.after": (None, ("response.message.role", "response.usage")),
    "tool.before": (None, ("tool.name", "call.name", "call.id")),
    "tool.after": (None, ("tool.name", "call")),
    "step.end": (None, ("usage",)),
    "task.end": (None, ("usage",)),
}


def _not_empty(old: list[Message], new: list[Message]) -> bool:
    return bool(old) and not new


def _system_moved(old: list[Message], new: list[Message]) -> bool:
    def systems(messages: list[Message]) -> list[tuple[int, str]]:
        return [(i, text) for i, (role, text) in enumerate(messages) if role == "system"]

    return systems(old) != systems(new)


def _history_rewritten(old: list[Message], new: list[Message]) -> bool:
    trailing_user = bool(old) and old[-1][0] == "user"
    kept = len(old) - trailing_user
    if len(new) < len(old) or old[:kept] != new[:kept]:
        return True
    return trailing_user and new[kept][0] != "user"


def _too_many_added(old: list[Message], new: list[Message]) -> bool:
    grown = len(new) - len(old)
    return grown > 1 or (grown == 1 and new[-1][0] != "user")


Check = Callable[[list[Message], list[Message]], bool] | tuple[str, ...]

# (rule id, check): a function over the message lists, or the field paths that must not change.
# The order is the core's table order: rules are checked, and CONTRACT_RULES listed, in it.
_RULES: Final[tuple[tuple[str, Check], ...]] = (
    ("task.start/task_unchanged", ("task",)),
    ("step.start/messages_not_empty", _not_empty),
    ("step.start/system_first", _system_moved),
    ("model.before/messages_not_empty", _not_empty),
    ("model.before/system_first", _system_moved),
    ("model.before/history_unchanged", _history_rewritten),
    ("model.before/at_most_one_user_message_added", _too_many_added),
    ("model.after/role_unchanged", ("response.message.role",)),
    ("model.after/usage_unchanged", ("response.usage",)),
    ("tool.before/tool_unchanged", ("tool.name", "call.name")),
    ("tool.before/call_id_unchanged", ("call.id",)),
    ("tool.after/call_unchanged", ("tool.name", "call")),
    ("step.end/usage_unchanged", ("usage",)),
    ("task.end/usage_unchanged", ("usage",)),
)

CONTRACT_RULES: Final = tuple(rule for rule, _ in _RULES)
"""Every contract rule id, in checking order."""

_BY_HOOK: Final = {
    hook: tuple((rule, check) for rule, check in _RULES if rule.startswith(f"{hook}/"))
    for hook in ORDER
}

MODES: Final = ("warn", "strict")


def contract_mode(value: object) -> str | None:
    """A bus's contract mode: ``None``, ``"warn"`` or ``"strict"``; anything else is
    ``invalid_contracts`` naming the value (I14)."""
    if value is None or (isinstance(value, str) and value in MODES):
        return value
    shown = f"'{value}'" if isinstance(value, str) else repr(value)
    return _invalid(shown)


def _invalid(shown: str) -> str:
    raise error_for(
        "register",
        "invalid_contracts",
        "I14",
        f"invalid contracts mode {shown}: a contract mode is 'warn' or 'strict', or None to "
        "check no contracts (I14)",
    )


def _at(event: Any, path: str) -> Any:
    for name in path.split("."):
        event = getattr(event, name)
    return event


def _fingerprint(value: Any) -> str:
    """A value's canonical JSON (sorted keys): equal values, equal text. A ``str`` is its own
    fingerprint, unless it holds a lone surrogate: then its JSON (``\\ud800`` escapes), as in
    the Rust core, whose texts cannot hold one (I29)."""
    if type(value) is str and whole_text(value):
        return value
    return json.dumps(to_jsonable_python(value), sort_keys=True)


def _role(role: object) -> str:
    """A message's role as the rules compare it: its text when it is a ``str`` (read from its
    storage, never through a subclass's methods) holding no lone surrogate; anything else is
    no role (``""``), neither ``system`` nor ``user`` (I29)."""
    if issubclass(type(role), str) and whole_text(role):  # type: ignore[arg-type]
        return str.__str__(role)
    return ""


def _view(hook: str, event: Any) -> View:
    """What the rules of ``hook`` compare of ``event``. Reading an event may run a subclass's
    code (a property, ``__iter__``); what it raises propagates to the walk, which makes the
    answer an invalid return (I29)."""
    messages_path, fields = _VIEWS[hook]
    messages: list[Message] = []
    if messages_path is not None:
        messages = [(_role(m.role), _fingerprint(m)) for m in _at(event, messages_path)]
    return messages, [_fingerprint(_at(event, path)) for path in fields]


def _broken(check: Check, fields: Sequence[str], before: View, after: View) -> bool:
    if isinstance(check, tuple):
        return any(before[1][fields.index(p)] != after[1][fields.index(p)] for p in check)
    return check(before[0], after[0])


def violation(hook: str, before: Any, after: Any) -> str | None:
    """The first rule of ``hook`` that changing ``before`` into ``after`` breaks, if any."""
    fields = _VIEWS[hook][1]
    old, new = _view(hook, before), _view(hook, after)
    for rule, check in _BY_HOOK[hook]:
        if _broken(check, fields, old, new):
            return rule
    return None


def check_contract(hook: str, before: Any, after: Any) -> str | None:
    """The id of the first contract rule of ``hook`` that changing ``before`` into ``after``
    breaks, or ``None`` (I14). Both must be events of ``hook``."""
    if not isinstance(hook, str) or hook not in _VIEWS:
        raise hook_error("emit", hook)
    return violation(hook, before, after)
