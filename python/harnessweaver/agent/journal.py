"""The trajectory journal: JSON Lines, one line per completed step, written as the run goes.

Lines are of four kinds, each holding a state the run can be resumed from:

- ``start``: the task was admitted (``task.start``); the state before the first step.
- ``step``: a completed step (admitted by ``step.end``): the state before it, the action
  (request sent, response received), the observation (tool messages), usage and wall time.
- ``decision``: ``resume`` applied an approver's decision; the state after it.
- ``end``: a run (or a segment of it) stopped: the exit, the output and the state.

Every line is written whole and flushed. After a crash the journal is read up to its last
complete line (a torn last line, with no newline, is ignored) and :func:`recover` gives the
state to resume from; appending to the journal cuts a torn tail off first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, TypeAdapter, ValidationError

from ..events import Usage
from .errors import JournalError
from .state import Decision, Exit, RunState, StepRecord

__all__ = [
    "DecisionLine",
    "EndLine",
    "JournalLine",
    "JournalWriter",
    "StartLine",
    "cut_torn_tail",
    "read_journal",
    "recover",
]

_RULE = "journal"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class StartLine(_Frozen):
    kind: Literal["start"] = "start"
    run_id: str
    state: RunState


class DecisionLine(_Frozen):
    kind: Literal["decision"] = "decision"
    run_id: str
    hook: str
    decision: Decision
    state: RunState


class EndLine(_Frozen):
    kind: Literal["end"] = "end"
    run_id: str
    exit: Exit
    output: JsonValue = None
    steps: int
    usage: Usage
    state: RunState


JournalLine = Annotated[
    StartLine | StepRecord | DecisionLine | EndLine, Field(discriminator="kind")
]
_LINES: TypeAdapter[StartLine | StepRecord | DecisionLine | EndLine] = TypeAdapter(JournalLine)


def resumable_state(line: StartLine | StepRecord | DecisionLine | EndLine) -> RunState:
    """The state a line leaves the run in (a step line: the state after that step)."""
    return line.after() if isinstance(line, StepRecord) else line.state


def cut_torn_tail(path: Path) -> None:
    """Drop whatever follows the last newline: a line a crash left half written."""
    if not path.exists():
        return
    with open(path, "rb+") as handle:
        data = handle.read()
        whole = data.rfind(b"\n") + 1
        if whole < len(data):
            handle.truncate(whole)


class JournalWriter:
    """Appends lines to a journal, each flushed as soon as it is written."""

    __slots__ = ("_handle", "path")

    def __init__(self, path: str | os.PathLike[str], *, append: bool) -> None:
        self.path = Path(path)
        if append:
            cut_torn_tail(self.path)
        self._handle: IO[str] = open(self.path, "a" if append else "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, line: StartLine | StepRecord | DecisionLine | EndLine) -> None:
        self._handle.write(line.model_dump_json() + "\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def _unreadable(path: Path, number: int, exc: ValidationError) -> JournalError:
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(map(str, first["loc"])) or "(line)"
    return JournalError(
        "invalid_journal",
        _RULE,
        f"{path}: line {number} is not a journal line ({where}: {first['type']}); only a torn "
        f"last line, one without its newline, is skipped ({_RULE})",
    )


def read_journal(
    path: str | os.PathLike[str],
) -> tuple[StartLine | StepRecord | DecisionLine | EndLine, ...]:
    """Every complete line of a journal, in order. A last line without its newline (a crash
    while writing it) is ignored; any other line that does not parse is an error."""
    journal = Path(path)
    *complete, _torn = journal.read_text(encoding="utf-8").split("\n")
    lines = []
    for number, text in enumerate(complete, start=1):
        try:
            lines.append(_LINES.validate_json(text))
        except ValidationError as exc:
            raise _unreadable(journal, number, exc) from None
    return tuple(lines)


def recover(path: str | os.PathLike[str]) -> RunState | None:
    """The state to resume a run from, after its last complete journal line (``None`` for a
    journal with no complete line: nothing was admitted, start the run again).

    A state with ``pending`` set needs a decision; one whose ``phase`` is ``"ended"`` cannot
    be resumed; any other (a crash, ``provider_error``, a budget) resumes with no decision.
    A crash in the middle of a step resumes at the start of that step, so its tool calls may
    run again.
    """
    lines = read_journal(path)
    return resumable_state(lines[-1]) if lines else None
