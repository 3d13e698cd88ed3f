"""Chain deadlines (I26): a time budget for a whole chain, per hook point and per emit.

Written like a timeout (ruling 15); an emit's own deadline may also be zero, a budget
already spent. A bad value is ``invalid_deadline``, naming the value and the hook point.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from ..errors import HarnessweaverError
from .catalogue import HOOKS, hook_error
from .duration import parse_duration_ns
from .error import shown, value_error

__all__ = ["SKIP", "deadline_ns", "deadlines_of", "turn"]

_ZERO_TEXT: Final = re.compile(r"(0+(?:\.0+)?|\.0+)(ms|s|m)")
_HOOK_NAMES: Final = frozenset(name for name, _ in HOOKS)
SKIP: Final = -1
"""What ``turn`` says of a middleware whose turn comes after the deadline."""


def _invalid(hook: str, value: object, phase: str) -> HarnessweaverError:
    return value_error(phase, "invalid_deadline", f"deadline of {hook}", shown(value))


def deadline_ns(value: object, hook: str, *, emit: bool, phase: str) -> int:
    """Nanoseconds of a deadline for ``hook``; ``emit``: an emit's own (zero allowed)."""
    if emit:
        if isinstance(value, str) and _ZERO_TEXT.fullmatch(value):
            return 0
        if type(value) in (int, float) and value == 0:
            return 0
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _invalid(hook, value, phase)
    try:
        return parse_duration_ns(value, phase)
    except HarnessweaverError:
        raise _invalid(hook, value, phase) from None


def deadlines_of(value: object) -> dict[str, int]:
    """A bus's deadlines per hook point (``{hook: deadline}``), only those that have one."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _invalid("the bus", value, "register")
    out: dict[str, int] = {}
    for hook, deadline in value.items():
        if not isinstance(hook, str) or hook not in _HOOK_NAMES:
            raise hook_error("register", hook)
        if deadline is not None:
            out[hook] = deadline_ns(deadline, hook, emit=False, phase="register")
    return out


def turn(deadline: int, t0: int, timeout_ns: int | None) -> int:
    """I26 for a middleware starting at ``t0``: ``SKIP`` when the deadline has passed; else
    the nanoseconds after which it is cut off (its time left, less than its own timeout), or
    0 when its own timeout ends no later than the deadline."""
    if t0 >= deadline:
        return SKIP
    left = deadline - t0
    if timeout_ns is not None and timeout_ns <= left:
        return 0
    return left
