"""Failures: their kinds and names (I5), and what the fail mode makes of them (rulings 11-12)."""

from __future__ import annotations

import re
from typing import Any, Final

__all__ = [
    "CANCELLED",
    "CONTRACT_VIOLATION",
    "DEADLINE",
    "EXCEPTION",
    "INVALID_RETURN",
    "MAX_TYPE_NAME",
    "SKIPPED",
    "TIMEOUT",
    "UNNAMED_EXCEPTION",
    "WRONG_EVENT_TYPE",
    "closed_code",
    "closed_reason",
    "error_name",
    "exception_name",
    "is_type_name",
]

EXCEPTION: Final = "exception"
TIMEOUT: Final = "timeout"
INVALID_RETURN: Final = "invalid_return"
WRONG_EVENT_TYPE: Final = "wrong_event_type"
CONTRACT_VIOLATION: Final = "contract_violation"
CANCELLED: Final = "cancelled"  # the runtime's cancellation, not the caller's (I15)
DEADLINE: Final = "deadline"  # cut off by the chain deadline (I26)
SKIPPED: Final = "skipped"  # not called: the chain deadline had passed (I26)

_FIXED_NAMES: Final = {
    TIMEOUT: "MiddlewareTimeout",
    INVALID_RETURN: "InvalidReturn",
    WRONG_EVENT_TYPE: "WrongEventType",
    CONTRACT_VIOLATION: "ContractViolation",
    CANCELLED: "MiddlewareCancelled",
    DEADLINE: "ChainDeadline",
    SKIPPED: "ChainDeadline",
}


MAX_TYPE_NAME: Final = 128
"""The longest exception type name a failure record holds (I28); ASCII, so any count agrees."""
UNNAMED_EXCEPTION: Final = "UnnamedException"
"""The ``error`` of an exception whose type name is no type name within the bound (I28)."""
_TYPE_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
# The name a type holds, read past its metaclass: what CPython's PyType_GetName (and so the
# Rust binding) reads. A metaclass's `__name__` property, which may hold a secret or raise, is
# never consulted.
_OWN_NAME: Final[Any] = type.__dict__["__name__"].__get__


def is_type_name(text: str) -> bool:
    """Whether ``text`` is a type name (I5, I28): ASCII identifiers joined by dots, at most
    ``MAX_TYPE_NAME`` characters. Only ``str``'s own methods run on it, never a subclass's."""
    return (
        str.__len__(text) <= MAX_TYPE_NAME
        and str.isascii(text)
        and _TYPE_NAME.fullmatch(text) is not None
    )


def exception_name(exc: BaseException) -> str:
    """The ``error`` of an exception failure (I28): its type's own name when that is a type
    name, else ``UNNAMED_EXCEPTION``. Never raises, never reads a message (R9)."""
    name = _OWN_NAME(type(exc))  # a str, maybe a subclass: type.__name__ admits nothing else
    if is_type_name(name):
        return str.__str__(name)  # a plain str, whatever the subclass
    return UNNAMED_EXCEPTION


def error_name(kind: str, exc: BaseException | None = None) -> str:
    """The ``error`` of a failure record: the exception's type name (I28), never its message
    (R9)."""
    if kind == EXCEPTION and exc is not None:
        return exception_name(exc)
    return _FIXED_NAMES[kind]


def closed_code(kind: str) -> str:
    """A closed failure blocks with this code (ruling 11; I14 for a broken contract, I26)."""
    if kind == CONTRACT_VIOLATION:
        return "contract_violation"
    if kind in (DEADLINE, SKIPPED):
        return "chain_deadline"  # I26
    return "middleware_timeout" if kind == TIMEOUT else "middleware_error"


def closed_reason(name: str, kind: str) -> str:
    """The reason of a closed failure's Block (I6); it never holds an exception message."""
    return f"middleware {name} failed: {kind}"
