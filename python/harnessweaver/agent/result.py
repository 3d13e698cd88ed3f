"""What ``harness.run`` and ``harness.resume`` return."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import JsonValue

from ..events import Usage
from .state import Exit, PendingApproval, RunState, RunWarning

if TYPE_CHECKING:
    from ..context import Trace
    from ..outcomes import Outcome

__all__ = ["RunResult"]


@dataclass(frozen=True, slots=True)
class RunResult:
    """How a run (or a segment of it) ended.

    ``state`` is serialisable and is what ``harness.resume`` takes back; ``trace`` is the bus
    trace of the run context; ``end_outcome`` is the combined outcome of ``task.end``;
    ``warnings`` are the warnings middleware gave in this segment, in order (I24), as the
    journal holds them.
    """

    exit: Exit
    output: JsonValue
    state: RunState
    trace: Trace
    end_outcome: Outcome
    warnings: tuple[RunWarning, ...] = ()

    @property
    def exit_reason(self) -> str:
        return self.exit.exit_reason

    @property
    def pending(self) -> PendingApproval | None:
        """What waits for a decision when ``exit_reason == "suspended"``."""
        return self.state.pending

    @property
    def approval(self) -> str | None:
        """The id of the approval record a suspended run filed (``AgentOptions.approvals``):
        decide it with ``harnessweaver approvals approve <id>`` or the ``Approvals`` API."""
        return self.exit.approval

    @property
    def usage(self) -> Usage:
        return self.state.usage

    @property
    def steps(self) -> int:
        return self.state.steps

    @property
    def resumable(self) -> bool:
        """Whether ``harness.resume(result.state, ...)`` may go on with this run."""
        return self.state.phase != "ended"
