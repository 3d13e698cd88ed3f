"""The run context an emit is made in (paired with the Rust core's ``context.rs``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._plain import LIVE, final, uncopyable
from ..envelope import Envelope
from .trace import Trace

__all__ = ["RunContext"]


@final("harnessweaver.RunContext")
@uncopyable("RunContext", LIVE)
@dataclass(frozen=True, slots=True)
class RunContext:
    """One run's context. ``trace=None`` starts a new, empty trace (``envelope=None`` a new
    envelope).

    Give concurrent runs separate contexts: each trace then holds only its own records
    (ruling 21).
    """

    envelope: Envelope = field(default_factory=Envelope)
    trace: Trace = None  # type: ignore[assignment]  # None means a new Trace

    def __post_init__(self) -> None:
        if self.envelope is None:  # as the Rust core reads it: a new envelope
            object.__setattr__(self, "envelope", Envelope())
        if not isinstance(self.envelope, Envelope):
            raise TypeError(f"RunContext envelope must be an hw.Envelope, got {self.envelope!r}")
        if self.trace is None:
            object.__setattr__(self, "trace", Trace())
        elif not isinstance(self.trace, Trace):
            raise TypeError(f"RunContext trace must be an hw.Trace, got {self.trace!r}")


RunContext.__module__ = "harnessweaver"
