"""Durations (ruling 15): a positive number of seconds, or a string with a unit."""

from __future__ import annotations

import math
import re
from decimal import Decimal

from ..errors import HarnessweaverError
from .error import shown, value_error

__all__ = ["duration_error", "parse_duration", "parse_duration_ns"]

_TEXT = re.compile(r"([0-9]+(?:\.[0-9]+)?|\.[0-9]+)(ms|s|m)")
_NANOS = {"ms": Decimal(1_000_000), "s": Decimal(1_000_000_000), "m": Decimal(60_000_000_000)}
_MAX_NS = 2**64 - 1
# Said of a text timeout whose nanoseconds do not fit in 64 bits (as the Rust core says it).
_TOO_LONG = (
    "it is longer than the longest timeout, 18446744073709551615 nanoseconds (about 584 years)"
)


def duration_error(
    value: object, phase: str = "declare", detail: str | None = None
) -> HarnessweaverError:
    return value_error(phase, "invalid_duration", "timeout", shown(value), detail)


def parse_duration_ns(value: object, phase: str = "declare") -> int:
    """Nanoseconds of a timeout; raises the ruling-15 error for anything else."""
    if isinstance(value, str):
        match = _TEXT.fullmatch(value)
        if match is None:
            raise duration_error(value, phase)
        # Half-up to the nanosecond, the same as the Rust core's exact decimal parse.
        ns = int((Decimal(match[1]) * _NANOS[match[2]]).to_integral_value("ROUND_HALF_UP"))
        if ns > _MAX_NS:
            raise duration_error(value, phase, _TOO_LONG)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        # Only an int or a float is a number of seconds (I17): a Decimal or a Fraction is not.
        try:
            nanos = float(value) * 1e9
        except OverflowError:  # an int too large for a float (10**400)
            raise duration_error(value, phase) from None
        if not nanos > 0 or nanos >= 2.0**64:  # NaN, infinities, 1e300: out of range
            raise duration_error(value, phase)
        ns = math.floor(nanos + 0.5)
    else:
        raise duration_error(value, phase)
    if ns <= 0 or ns > _MAX_NS:
        raise duration_error(value, phase)
    return ns


def parse_duration(value: object) -> float:
    """Seconds of a timeout (``"250ms"`` → 0.25); raises ``DeclarationError`` otherwise."""
    return parse_duration_ns(value) / 1e9
