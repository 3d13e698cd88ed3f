"""One segment of a run: from ``run()`` or ``resume()`` until the run stops again.

A segment is what every phase of the loop needs (the bus, the options, the run context and
the records) plus the segment's clock; a phase that stops the run returns :class:`Stopped`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .state import Exit, RunState

if TYPE_CHECKING:
    from ..bus import HookBus
    from ..context import RunContext
    from ..outcomes import HookResult
    from .options import AgentOptions
    from .records import Recorder

__all__ = ["Segment", "Stopped", "ended"]


@dataclass(frozen=True, slots=True)
class Segment:
    bus: HookBus
    options: AgentOptions
    ctx: RunContext
    recorder: Recorder
    started_at: float
    """``options.clock()`` when the segment started."""
    base_elapsed: float
    """Wall time the run had spent running before this segment."""

    def elapsed(self) -> float:
        """Wall time the run has spent running, this segment included."""
        return self.base_elapsed + (self.options.clock() - self.started_at)

    async def emit(self, hook: str, event: Any) -> HookResult:
        result = await self.bus.emit(hook, event, self.ctx)
        if result.warnings:  # journaled with the next line, and on the run's result (I24)
            self.recorder.warned(hook, result.warnings)
        return result


@dataclass(frozen=True, slots=True)
class Stopped:
    """The run stops here: the state to report (and maybe resume) and why.

    ``exception`` is set only for a failure of the harness itself (not of a tool, a provider
    or a middleware, which all have their own exits): it is raised once task.end has run.
    """

    state: RunState
    exit: Exit
    exception: Exception | None = None


def ended(state: RunState) -> RunState:
    """``state``, marked as a run that cannot be resumed."""
    return state.model_copy(update={"phase": "ended"})
