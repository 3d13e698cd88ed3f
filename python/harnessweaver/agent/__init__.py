"""The run loop: ``harness.run(task_input)`` drives the agent lifecycle through the bus.

A provider answers model requests (:class:`ModelProvider`; :class:`ScriptedProvider` for
tests and examples, :class:`OpenAIChatProvider` over HTTP), tools are typed functions
(:func:`tool`), every outcome of every hook point acts, budgets end runs, and a run that
stops can be resumed from its serialisable :class:`RunState` or from its journal. See
docs/agent.md.

``harnessweaver`` re-exports every name of this package's ``__all__`` (``hw.Decision`` is
``hw.agent.Decision``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _lazy

if TYPE_CHECKING:
    from .budgets import Budgets
    from .errors import AgentError, JournalError, ProviderError, ScriptExhaustedError
    from .exporter import TraceExporter
    from .journal import read_journal, recover
    from .openai_chat import OpenAIChatProvider
    from .options import AgentChanges, AgentOptions
    from .provider import ModelProvider, Pricing, ScriptedProvider
    from .result import RunResult
    from .state import Decision, Exit, PendingApproval, RunState, RunWarning, StepRecord
    from .tools import Tool, tool

__all__: list[str] = [
    "AgentChanges",
    "AgentError",
    "AgentOptions",
    "Budgets",
    "Decision",
    "Exit",
    "JournalError",
    "ModelProvider",
    "OpenAIChatProvider",
    "PendingApproval",
    "Pricing",
    "ProviderError",
    "RunResult",
    "RunState",
    "RunWarning",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "StepRecord",
    "Tool",
    "TraceExporter",
    "read_journal",
    "recover",
    "tool",
]

_HOMES = {
    ".budgets": ("Budgets",),
    ".errors": ("AgentError", "JournalError", "ProviderError", "ScriptExhaustedError"),
    ".exporter": ("TraceExporter",),
    ".journal": ("read_journal", "recover"),
    ".openai_chat": ("OpenAIChatProvider",),
    ".options": ("AgentChanges", "AgentOptions"),
    ".provider": ("ModelProvider", "Pricing", "ScriptedProvider"),
    ".result": ("RunResult",),
    ".state": ("Decision", "Exit", "PendingApproval", "RunState", "RunWarning", "StepRecord"),
    ".tools": ("Tool", "tool"),
}
"""Where each name of ``__all__`` lives: the run loop loads on first use (the spec loader needs
its options, not its journal). ``tests/test_public_api.py`` holds this table, ``__all__`` and
the type checker's imports above together."""
__getattr__ = _lazy.loader(__name__, _lazy.homes(_HOMES))
__dir__ = _lazy.lister(__name__, __all__)
