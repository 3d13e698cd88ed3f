"""What the stateful built-ins share: their ``scope`` and ``lifetime`` settings, durations,
exactly-once hold ids and the read → compute → swap loop of a record.

Every stateful built-in keeps its state on its :class:`~harnessweaver.state.StateView` (it is
declared ``state=True``): counters for what is charged (``budget_guard``, ``rate_limit``),
records for what is remembered (``loop_guard``, ``tool_failure_guard``). The key of each is
``view.key(scope, env, name)``: the layer and item that declared the guard, the scope, the
scope's subject (the run id, the envelope's ``session``/``user``/``app`` attribute, the task, or
``-`` for the org) and the name. Python and TypeScript write the same keys and the same JSON,
so a Node worker and a Python worker share one count (``docs/builtins.md``, "Shared state").

A store that cannot answer raises :class:`~harnessweaver.state.StateUnavailable`; each guard
turns it into its fail mode with :func:`unavailable`: closed → ``Block(code=
"state_unavailable")``, open → raised again, so the bus records the failure and the chain goes
on. Never a silent allow.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Callable
from typing import Annotated, Any, Final, Literal, TypeAlias, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from ..envelope import Envelope
from ..events import Event, TaskEndEvent
from ..identity import content_identity
from ..outcomes import Block
from ..state import Record, Stateful, StateUnavailable, StateView
from ._runs import FINAL_EXIT_REASONS

__all__ = [
    "MAX_SWAPS",
    "RESERVE_TTL",
    "Duration",
    "Guard",
    "Scope",
    "StateSettings",
    "charge_id",
    "duration",
    "final",
    "unavailable",
    "update",
    "where",
    "written",
]

T = TypeVar("T")

Scope: TypeAlias = Literal["run", "session", "user", "task", "app", "org"]

MAX_SWAPS: Final = 16
"""How many times a record's read → compute → swap is tried before the store counts as
unavailable (another worker won every race)."""
RESERVE_TTL: Final = 600.0
"""Seconds a reservation made at ``model.before`` is held when ``model.after`` never comes."""
DEFAULT_LIFETIME: Final = "30d"

_UNITS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PATTERN: Final = r"^([0-9]+(\.[0-9]+)?|\.[0-9]+)(ms|s|m|h|d)$"
_TEXT = re.compile(_PATTERN)

Duration: TypeAlias = (
    Annotated[str, StringConstraints(pattern=_PATTERN)]
    | Annotated[float, Field(gt=0, allow_inf_nan=False)]
)
"""A duration setting as its JSON Schema says it: a text with a unit or a number of seconds
(:func:`duration` also refuses a text that comes to 0, such as ``0s``)."""

_WHERE: Final = {
    "run": "in this run",
    "session": "in this session",
    "user": "for this user",
    "task": "in this task",
    "app": "in this app",
    "org": "in this org",
}


class Guard(Stateful):
    """A stateful built-in: :class:`~harnessweaver.state.Stateful`, its view attached by the
    spec loader (or a private in-memory one)."""


def duration(value: object) -> float:
    """Seconds of a state duration: a positive finite number of seconds, or a text such as
    ``250ms``, ``30s``, ``1m``, ``12h``, ``30d``; ``ValueError`` otherwise."""
    if isinstance(value, str):
        match = _TEXT.match(value)
        if match is None:
            raise ValueError(
                f"{value!r} is not a duration: a number of seconds or a number with a unit "
                "ms, s, m, h or d (30s, 1m, 12h, 30d)"
            )
        seconds = float(match[1]) * _UNITS[match[3]]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        raise ValueError(f"{value!r} is not a duration")
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"{value!r} is not a positive duration")
    return seconds


def written(value: str | float) -> str:
    """A duration setting as a reason shows it: as written, or a number of seconds as
    ``90s`` (``1.5s``)."""
    if isinstance(value, str):
        return value
    return f"{int(value)}s" if float(value).is_integer() else f"{value}s"


def where(scope: str) -> str:
    """``in this run``, ``for this user``…: a reason's words for the scope."""
    return _WHERE[scope]


class StateSettings(BaseModel):
    """The settings every stateful built-in has: whose state it is and how long it lasts."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    scope: Scope = "run"
    lifetime: Duration = Field(default=DEFAULT_LIFETIME)

    @field_validator("lifetime")
    @classmethod
    def _a_duration(cls, lifetime: Duration) -> Duration:
        duration(lifetime)
        return lifetime


def charge_id(env: Envelope, event: Event, *, once: bool = True) -> str:
    """The hold id of a charge: ``{run_id}/{step}/{content identity}`` (I27), so the same event
    emitted again (a Retry, a redelivered job, a resumed step) is never charged twice; an event
    without an identity (outside I-JSON), or any event when not ``once``, gets a fresh id:
    charged every time it is seen, never lost."""
    identity = content_identity(event) if once else None
    step = getattr(event, "step", 0)
    return f"{env.run_id}/{step}/{identity if identity is not None else uuid.uuid4().hex}"


def final(event: TaskEndEvent) -> bool:
    """Whether the run is over for good, so its run-scope state is dropped (see ``_runs``)."""
    return event.exit_reason in FINAL_EXIT_REASONS


def unavailable(view: StateView, exc: StateUnavailable) -> Block:
    """The fail mode of a stateful built-in whose store cannot answer: closed → its Block
    (``state_unavailable``), open → the failure raised again for the bus to record."""
    if view.fail_mode == "closed":
        return view.unavailable(exc)
    raise exc


async def update(
    view: StateView,
    key: str,
    change: Callable[[Any], tuple[Any, T]],
    *,
    life: float | None,
    first: Record | None = None,
) -> T:
    """Read record ``key`` (or take ``first``, just read), compute ``change(value) -> (new
    value or None: no write, answer)``, swap it in; on a lost swap read again and start over,
    up to :data:`MAX_SWAPS` times."""
    for _ in range(MAX_SWAPS):
        record = first if first is not None else await view.read(key)
        first = None
        value, answer = change(record.value)
        if value is None or await view.swap(key, record.version, value, life=life):
            return answer
    raise StateUnavailable(view.backend, "swap", "lost every race")
