"""Failures: their kinds and names (I5), and what the fail mode makes of them (rulings 11-12)."""

from __future__ import annotations

from typing import Final

__all__ = [
    "CANCELLED",
    "CONTRACT_VIOLATION",
    "DEADLINE",
    "EXCEPTION",
    "INVALID_RETURN",
    "SKIPPED",
    "TIMEOUT",
    "WRONG_EVENT_TYPE",
    "closed_code",
    "closed_reason",
    "error_name",
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


def error_name(kind: str, exc: BaseException | None = None) -> str:
    """The ``error`` of a failure record: the exception's type name, never its message (R9)."""
    if kind == EXCEPTION and exc is not None:
        return type(exc).__name__
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
