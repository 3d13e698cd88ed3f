"""What a harness needs to run an agent: provider, tools, budgets, records. One frozen
options object, set with ``harness.with_agent(...)``."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import anyio

from .budgets import Budgets
from .errors import AgentError
from .exporter import TraceExporter
from .provider import ModelProvider
from .tools import DEFAULT_OUTPUT_LIMIT, Tool, toolbox

if TYPE_CHECKING:
    from ..approvals import Approvals

__all__ = ["AgentChanges", "AgentOptions"]

_RULE = "agent-options"


def _bad(name: str, value: object, rule: str) -> AgentError:
    return AgentError("invalid_option", _RULE, f"invalid {name} {value!r}: {rule} ({_RULE})")


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """How ``harness.run`` drives the lifecycle.

    ``clock`` is a monotonic clock in seconds (wall-time budgets; inject one in tests) and
    ``sleep`` waits out a ``Retry``'s delay. ``journal`` is the path of the JSON Lines
    trajectory journal; the bus trace is written beside it (``trace_path``). ``approvals``:
    where a suspended run files its approval record and a resumed one claims it
    (``harness.with_agent(approvals=harness.approvals)``; ``None``: no record is filed).
    """

    provider: ModelProvider | None = None
    tools: Sequence[Tool[Any, Any]] = ()
    system: str | None = None
    model: str = ""
    budgets: Budgets = field(default_factory=Budgets)
    max_retries: int = 2
    """Retries of one operation (a model call, a tool call, a lifecycle hook) that ``Retry``
    outcomes may ask for; a ``Retry`` with ``max_attempts`` may lower it, never raise it."""
    max_tool_output: int = DEFAULT_OUTPUT_LIMIT
    """Characters of a tool's output the model receives; longer outputs are truncated."""
    journal: str | os.PathLike[str] | None = None
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep
    exporters: Sequence[TraceExporter] = ()
    approvals: Approvals | None = None

    def __post_init__(self) -> None:
        setter = object.__setattr__  # normalise once, so the frozen object is what was checked
        setter(self, "tools", tuple(toolbox(self.tools).values()))
        setter(self, "exporters", tuple(self.exporters))
        if self.provider is not None and not isinstance(self.provider, ModelProvider):
            raise _bad("provider", self.provider, "a provider has async complete(request)")
        if not isinstance(self.budgets, Budgets):
            raise _bad("budgets", self.budgets, "budgets are an hw.Budgets")
        retries = self.max_retries
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise _bad("max_retries", retries, "a retry bound is a whole number >= 0")
        limit = self.max_tool_output
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise _bad("max_tool_output", limit, "an output limit is a whole number > 0")
        if self.journal is not None and not isinstance(self.journal, str | os.PathLike):
            raise _bad("journal", self.journal, "a journal is a path")
        if self.approvals is not None:
            from ..approvals import Approvals

            if not isinstance(self.approvals, Approvals):
                raise _bad("approvals", self.approvals, "approvals are an hw Approvals book")

    @property
    def journal_path(self) -> Path | None:
        return None if self.journal is None else Path(self.journal)

    @property
    def trace_path(self) -> Path | None:
        """Where the bus trace is written: beside the journal, ``run.jsonl`` →
        ``run.trace.jsonl``."""
        path = self.journal_path
        return None if path is None else path.with_suffix(".trace.jsonl")

    def tool(self, name: str) -> Tool[Any, Any] | None:
        for item in self.tools:
            if item.name == name:
                return item
        return None


class AgentChanges(TypedDict, total=False):
    """The keyword arguments of ``harness.with_agent(...)``: any field of AgentOptions."""

    provider: ModelProvider | None
    tools: Sequence[Tool[Any, Any]]
    system: str | None
    model: str
    budgets: Budgets
    max_retries: int
    max_tool_output: int
    journal: str | os.PathLike[str] | None
    clock: Callable[[], float]
    sleep: Callable[[float], Awaitable[None]]
    exporters: Sequence[TraceExporter]
    approvals: Approvals | None
