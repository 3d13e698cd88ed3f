"""``harnessweaver.tool_failure_guard``: a tool that keeps failing is taken out of the run.

At ``tool.after`` the guard counts, per run and per tool, the results that are errors
(``result.is_error``): how many in a row (a success starts that count again) and how many in
all. Once a tool has failed ``max_consecutive`` times in a row, or ``max_total`` times in all,
every further call of it in the run is refused at ``tool.before``: ``Block``, code
``tool_failing``.

Why a ``Block`` and not an ``Escalate``: a broken tool is something an agent can route around
(another tool, another approach, or an answer with what it has), and a refused call tells the
model so, with the reason, while the run goes on. ``Escalate`` would end the run for a
failure the agent may not need to care about; a deployment that wants a person told can put
its own middleware on the ``tool_failing`` code. The refusal lasts for the rest of the run
(the tool does not run, so nothing could show that it works again): a circuit breaker that
stays open, since a run is short and retrying a dead dependency only burns steps.

The state is per run (``env.run_id``), at most ``MAX_TOOLS`` tools a run (the least recently
failing forgotten first), and dropped at ``task.end`` (see ``_runs``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from ..envelope import Envelope
from ..events import TaskEndEvent, ToolCallEvent, ToolResultEvent
from ..middleware import middleware
from ..outcomes import Block
from ._runs import RunStates

__all__ = ["MAX_TOOLS", "ToolFailureGuard", "ToolFailureSettings"]

MAX_TOOLS: Final = 256
"""How many tools' failures one run's state keeps at most."""


class ToolFailureSettings(BaseModel):
    """``max_consecutive`` failures in a row and/or ``max_total`` failures (at least one;
    ``null`` turns one off)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_consecutive: int | None = Field(default=3, ge=1)
    max_total: int | None = Field(default=None, ge=1)

    @field_validator("max_total")
    @classmethod
    def _not_below_consecutive(cls, max_total: int | None, info: ValidationInfo) -> int | None:
        consecutive = info.data.get("max_consecutive")
        if max_total is not None and consecutive is not None and max_total < consecutive:
            raise ValueError(
                f"max_total ({max_total}) must be at least max_consecutive ({consecutive}), "
                "or max_consecutive could never be reached"
            )
        return max_total

    @model_validator(mode="after")
    def _has_a_limit(self) -> Self:
        if self.max_consecutive is None and self.max_total is None:
            raise ValueError("give max_consecutive, max_total or both: the guard needs a limit")
        return self


@dataclass(slots=True)
class _Failures:
    """One tool's failures in one run."""

    consecutive: int = 0
    total: int = 0

    def dump(self) -> list[int]:
        """``[consecutive, total]`` (see ``_runs``)."""
        return [self.consecutive, self.total]

    def restore(self, data: Any) -> None:
        """Take a :meth:`dump`."""
        try:
            self.consecutive, self.total = (int(value) for value in data)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"not a tool_failure_guard state: {type(exc).__name__}") from None


@middleware(
    hooks=["tool.before", "tool.after", "task.end"],
    fail_mode="closed",
    config=ToolFailureSettings,
    sample={"max_consecutive": 3, "max_total": 5},
)
class ToolFailureGuard:
    """Refuses (``Block``, ``tool_failing``) the calls of a tool that has failed too often in
    the run."""

    def __init__(self, config: ToolFailureSettings) -> None:
        self.max_consecutive = config.max_consecutive
        self.max_total = config.max_total
        self.runs: RunStates[RunStates[_Failures]] = RunStates(
            lambda: RunStates(_Failures, limit=MAX_TOOLS)
        )

    async def __call__(
        self, event: ToolCallEvent | ToolResultEvent | TaskEndEvent, env: Envelope
    ) -> Block | None:
        if isinstance(event, ToolResultEvent):
            self._count(event, env.run_id)
            return None
        if isinstance(event, ToolCallEvent):
            return self._check(event, env.run_id)
        self.runs.end(env.run_id, event)
        return None

    def _count(self, event: ToolResultEvent, run_id: str) -> None:
        name = event.tool.name
        if event.result.is_error:
            failures = self.runs[run_id][name]
            failures.consecutive += 1
            failures.total += 1
            return
        tools = self.runs.peek(run_id)  # a success only ends a streak; it starts no state
        found = None if tools is None else tools.peek(name)
        if found is not None:
            found.consecutive = 0

    def _check(self, event: ToolCallEvent, run_id: str) -> Block | None:
        tools = self.runs.peek(run_id)
        failures = None if tools is None else tools.peek(event.tool.name)
        if failures is None:
            return None
        name = event.tool.name
        if self.max_consecutive is not None and failures.consecutive >= self.max_consecutive:
            why = f"failed {failures.consecutive} times in a row"
        elif self.max_total is not None and failures.total >= self.max_total:
            why = f"failed {failures.total} times in this run"
        else:
            return None
        return Block(
            reason=f"tool {name!r} {why}; it is not called again in this run",
            code="tool_failing",
        )
