"""The lines of a trajectory journal, as :func:`~harnessweaver.read_journal` returns them.

Each line is a model holding a whole state the run can be resumed from, whatever form the
file keeps it in (format 2 writes only what changed since the line before: see
``delta.py``). Four kinds:

- ``start``: the task was admitted (``task.start``); the state before the first step.
- ``step``: a completed step (admitted by ``step.end``): the state before it, the action
  (request sent, response received), the observation (tool messages), usage and wall time.
- ``decision``: ``resume`` applied an approver's decision; the state after it. ``approval``
  names the durable approval record the decision came from (or was recorded in), if any: a
  run recovered after this line does not claim it again.
- ``end``: a run (or a segment of it) stopped: the exit, the output and the state.

A line of any kind also holds the warnings middleware gave since the line before it (I24),
in the order given; the key is left out when there are none.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter

from ..events import Usage
from .state import Decision, Exit, RunState, RunWarning, StepRecord

__all__ = [
    "LINES",
    "DecisionLine",
    "EndLine",
    "JournalLine",
    "Line",
    "StartLine",
    "resumable_state",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StartLine(_Frozen):
    kind: Literal["start"] = "start"
    run_id: str
    state: RunState
    warnings: tuple[RunWarning, ...] = ()


class DecisionLine(_Frozen):
    kind: Literal["decision"] = "decision"
    run_id: str
    hook: str
    decision: Decision
    approval: str | None = None
    state: RunState
    warnings: tuple[RunWarning, ...] = ()


class EndLine(_Frozen):
    kind: Literal["end"] = "end"
    run_id: str
    exit: Exit
    output: JsonValue = None
    steps: int
    usage: Usage
    state: RunState
    warnings: tuple[RunWarning, ...] = ()


Line = StartLine | StepRecord | DecisionLine | EndLine
JournalLine = Annotated[Line, Field(discriminator="kind")]
LINES: TypeAdapter[Line] = TypeAdapter(JournalLine)
"""A line as format 1 wrote it: the model's own JSON."""


def resumable_state(line: Line) -> RunState:
    """The state a line leaves the run in (a step line: the state after that step)."""
    return line.after() if isinstance(line, StepRecord) else line.state
