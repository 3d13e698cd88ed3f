"""The hook-point catalogue (ruling 2): names and directions, in catalogue order."""

from __future__ import annotations

from ..errors import HarnessweaverError
from .error import shown, value_error

__all__ = ["HOOKS", "INBOUND", "OUTBOUND", "direction", "hook_error"]

INBOUND = "inbound"
OUTBOUND = "outbound"

HOOKS: tuple[tuple[str, str], ...] = (
    ("task.start", INBOUND),
    ("step.start", INBOUND),
    ("model.before", INBOUND),
    ("model.after", OUTBOUND),
    ("tool.before", INBOUND),
    ("tool.after", OUTBOUND),
    ("step.end", OUTBOUND),
    ("task.end", OUTBOUND),
)

_DIRECTIONS = dict(HOOKS)
ORDER = {name: i for i, (name, _) in enumerate(HOOKS)}


def direction(hook: str) -> str | None:
    """The direction of a catalogue hook point, or None for an unknown name."""
    return _DIRECTIONS.get(hook)


def hook_error(phase: str, hook: object) -> HarnessweaverError:
    """The error for a hook point that is not in the catalogue."""
    return value_error(phase, "unknown_hook", "hook", shown(hook))
