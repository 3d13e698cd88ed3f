"""The run loop: ``harness.run(task_input)`` drives the agent lifecycle through the bus.

A provider answers model requests (:class:`ModelProvider`; :class:`ScriptedProvider` for
tests and examples, :class:`OpenAIChatProvider` over HTTP), tools are typed functions
(:func:`tool`), every outcome of every hook point acts, budgets end runs, and a run that
stops can be resumed from its serialisable :class:`RunState` or from its journal. See
docs/agent.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import homes, loader

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

__all__ = [
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

__getattr__ = loader(
    __name__,
    homes(
        {
            ".budgets": ("Budgets",),
            ".errors": (
                "AgentError",
                "JournalError",
                "ProviderError",
                "ScriptExhaustedError",
            ),
            ".journal": (
                "read_journal",
                "recover",
            ),
            ".openai_chat": ("OpenAIChatProvider",),
            ".options": (
                "AgentChanges",
                "AgentOptions",
            ),
            ".provider": (
                "ModelProvider",
                "Pricing",
                "ScriptedProvider",
            ),
            ".exporter": ("TraceExporter",),
            ".result": ("RunResult",),
            ".state": (
                "Decision",
                "Exit",
                "PendingApproval",
                "RunState",
                "RunWarning",
                "StepRecord",
            ),
            ".tools": (
                "Tool",
                "tool",
            ),
        }
    ),
)
"""The run loop loads on first use: the spec loader needs its options, not its journal."""
