"""The envelope every middleware receives beside the event: clock and run identity."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "Envelope", "FixedClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """A wall clock. Inject one into the envelope to make time-dependent middleware testable."""

    def now(self) -> datetime:
        """The current time, timezone-aware."""
        ...

    def is_weekend(self) -> bool:
        """Whether ``now()`` falls on a Saturday or Sunday (in ``now()``'s own timezone)."""
        ...


class _WeekendMixin:
    __slots__ = ()

    def now(self) -> datetime:  # pragma: no cover - overridden
        raise NotImplementedError

    def is_weekend(self) -> bool:
        return self.now().weekday() >= 5


class SystemClock(_WeekendMixin):
    """The real clock, in UTC unless a timezone is given."""

    __slots__ = ("_tz",)

    def __init__(self, tz: object = UTC) -> None:
        from datetime import tzinfo

        if not isinstance(tz, tzinfo):
            raise TypeError(f"SystemClock tz must be a datetime.tzinfo, got {tz!r}")
        self._tz = tz

    def now(self) -> datetime:
        return datetime.now(self._tz)

    def __repr__(self) -> str:
        return f"SystemClock({self._tz!r})"


class FixedClock(_WeekendMixin):
    """A clock stopped at one instant (tests, examples, conformance cases)."""

    __slots__ = ("_at",)

    def __init__(self, at: datetime | str) -> None:
        moment = datetime.fromisoformat(at) if isinstance(at, str) else at
        if not isinstance(moment, datetime) or moment.tzinfo is None:
            raise ValueError(f"FixedClock needs a timezone-aware datetime, got {at!r}")
        self._at = moment

    def now(self) -> datetime:
        return self._at

    def __repr__(self) -> str:
        return f"FixedClock({self._at.isoformat()!r})"


def _new_run_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class Envelope:
    """What a middleware may know about the run besides the event.

    ``clock`` is injectable so ``env.clock.is_weekend()`` can be tested; ``run_id`` names the
    run; ``attributes`` carries read-only facts the harness chooses to share (tenant, user...).
    """

    clock: Clock = field(default_factory=SystemClock)
    run_id: str = field(default_factory=_new_run_id)
    attributes: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.clock, Clock):
            raise TypeError(f"Envelope clock must have now() and is_weekend(), got {self.clock!r}")
        if not isinstance(self.run_id, str):
            # Every trace record names its run (I21): as text.
            raise TypeError(f"Envelope run_id must be a string, got {self.run_id!r} (I21)")
        object.__setattr__(self, "attributes", MappingProxyType(dict(self.attributes)))
