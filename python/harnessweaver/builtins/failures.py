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

The counts are one record on the guard's state view (``_state``), at most ``MAX_TOOLS`` tools
(the least recently failing forgotten first): by default the run's (``scope: run``, dropped at
a final ``task.end``), or a session's, user's, task's, app's or the org's, shared by every
worker on the store; the reasons then say ``for this user``, ``in this org``...
"""

from __future__ import annotations

from typing import Any, Final, Self

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ..envelope import Envelope
from ..events import TaskEndEvent, ToolCallEvent, ToolResultEvent
from ..middleware import middleware
from ..outcomes import Block
from ..state import StateUnavailable, StateView
from ._state import Guard, StateSettings, duration, final, unavailable, update, where

__all__ = ["MAX_TOOLS", "RECORD", "ToolFailureGuard", "ToolFailureSettings"]

MAX_TOOLS: Final = 256
"""How many tools' failures one record keeps at most (the least recently failing dropped)."""
RECORD: Final = "failures"
"""The record's name: ``[[tool, consecutive, total], ...]``, least recently failing first."""


class ToolFailureSettings(StateSettings):
    """``max_consecutive`` failures in a row and/or ``max_total`` failures (at least one;
    ``null`` turns one off); ``scope`` and ``lifetime`` of the record."""

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


def _failures(value: Any) -> list[list[Any]]:
    """The record's ``[tool, consecutive, total]`` entries, least recently failing first; a
    record that is not one starts again (empty)."""
    if not isinstance(value, list):
        return []
    return [
        list(entry)
        for entry in value
        if isinstance(entry, list)
        and len(entry) == 3
        and isinstance(entry[0], str)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in entry[1:])
    ]


@middleware(
    hooks=["tool.before", "tool.after", "task.end"],
    fail_mode="closed",
    config=ToolFailureSettings,
    sample={"max_consecutive": 3, "max_total": 5},
    state=True,
)
class ToolFailureGuard(Guard):
    """Refuses (``Block``, ``tool_failing``) the calls of a tool that has failed too often in
    the run (or the guard's ``scope``)."""

    def __init__(self, config: ToolFailureSettings) -> None:
        self.max_consecutive = config.max_consecutive
        self.max_total = config.max_total
        self.scope = config.scope
        self.life = duration(config.lifetime)

    async def __call__(
        self, event: ToolCallEvent | ToolResultEvent | TaskEndEvent, env: Envelope
    ) -> Block | None:
        view = self.state
        try:
            if isinstance(event, ToolResultEvent):
                await self._count(view, event, env)
                return None
            if isinstance(event, ToolCallEvent):
                return await self._check(view, event, env)
            if self.scope == "run" and final(event):
                await view.delete(view.key("run", env, RECORD))
            return None
        except StateUnavailable as exc:
            return unavailable(view, exc)

    async def _count(self, view: StateView, event: ToolResultEvent, env: Envelope) -> None:
        name, failed = event.tool.name, event.result.is_error

        def count(value: Any) -> tuple[Any, None]:
            tools = _failures(value)
            found = next((entry for entry in tools if entry[0] == name), None)
            if not failed:  # a success only ends a streak; it starts no state
                if found is None or found[1] == 0:
                    return None, None
                found[1] = 0
                return tools, None
            if found is None:
                found = [name, 0, 0]
            else:
                tools.remove(found)
            found[1] += 1
            found[2] += 1
            tools.append(found)  # the most recently failing last
            return tools[-MAX_TOOLS:], None

        await update(view, view.key(self.scope, env, RECORD), count, life=self.life)

    async def _check(self, view: StateView, event: ToolCallEvent, env: Envelope) -> Block | None:
        name = event.tool.name
        record = await view.read(view.key(self.scope, env, RECORD))
        found = next((entry for entry in _failures(record.value) if entry[0] == name), None)
        if found is None:
            return None
        _, consecutive, total = found
        if self.max_consecutive is not None and consecutive >= self.max_consecutive:
            why = f"failed {consecutive} times in a row"
        elif self.max_total is not None and total >= self.max_total:
            why = f"failed {total} times {where(self.scope)}"
        else:
            return None
        return Block(
            reason=f"tool {name!r} {why}; it is not called again {where(self.scope)}",
            code="tool_failing",
        )
