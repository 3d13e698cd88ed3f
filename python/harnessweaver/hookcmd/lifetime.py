"""How long a session's guard state outlives its last event: ``--state-ttl`` or
``$HARNESSWEAVER_HOOK_STATE_TTL``.

Claude Code and Gemini CLI end every ``-p`` invocation with ``SessionEnd``, and ``--resume``
goes on under the same session id, so a session's end says nothing about whether it comes
back. Its state is kept until it has had no event for this long instead. The default is the
two agents' own default for keeping a session's transcript (Claude Code's
``cleanupPeriodDays``, Gemini CLI's ``sessionRetention.maxAge``: 30 days), so a session that
can still be resumed still has its counts.

This module imports nothing but ``os``: the command line reads it before anything is loaded.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Final

__all__ = ["DEFAULT_TTL", "MAX_TTL", "TTL_ENV", "LifetimeError", "parse_ttl", "ttl_from_env"]

TTL_ENV: Final = "HARNESSWEAVER_HOOK_STATE_TTL"
DEFAULT_TTL: Final = 30 * 86_400
"""Seconds: 30 days."""
MAX_TTL: Final = 3650 * 86_400
"""Ten years: as good as never, while a number still fits anything that reads it."""

_UNITS: Final = {"s": 1, "m": 60, "h": 3600, "d": 86_400}
_FORM: Final = (
    "expected a whole number of seconds, or of minutes, hours or days with the unit m, h or d "
    "(900, 12h, 30d), from 1 second to 3650 days"
)


class LifetimeError(ValueError):
    """A lifetime that is not one; the message names where it came from and the form."""


def parse_ttl(text: str) -> int:
    """``text`` (``900``, ``900s``, ``15m``, ``12h``, ``30d``) as seconds; ``ValueError``
    naming the expected form otherwise."""
    value = text.strip().lower()
    factor = _UNITS.get(value[-1:], 0)
    number = value[:-1] if factor else value
    if not (number.isascii() and number.isdigit()):
        raise ValueError(f"{text!r:.40}: {_FORM}")
    seconds = int(number) * (factor or 1)
    if not 1 <= seconds <= MAX_TTL:
        raise ValueError(f"{text!r:.40}: {_FORM}")
    return seconds


def ttl_from_env(environ: Mapping[str, str] | None = None) -> int:
    """The lifetime ``$HARNESSWEAVER_HOOK_STATE_TTL`` sets, else :data:`DEFAULT_TTL`;
    :class:`LifetimeError` naming the variable when it holds something else."""
    given = (os.environ if environ is None else environ).get(TTL_ENV, "")
    if not given.strip():
        return DEFAULT_TTL
    try:
        return parse_ttl(given)
    except ValueError as exc:
        raise LifetimeError(f"{TTL_ENV}={exc}") from None
