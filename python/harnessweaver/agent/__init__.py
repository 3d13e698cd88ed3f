"""The run loop: ``harness.run(task_input)`` drives the agent lifecycle through the bus.

A provider answers model requests (:class:`ModelProvider`; :class:`ScriptedProvider` for
tests and examples, :class:`OpenAIChatProvider` over HTTP), tools are typed functions
(:func:`tool`), every outcome of every hook point acts, budgets end runs, and a run that
stops can be resumed from its serialisable :class:`RunState` or from its journal. See
docs/agent.md.
"""

from __future__ import annotations

from .budgets import Budgets
from .errors import AgentError, JournalError, ProviderError, ScriptExhaustedError
from .journal import read_journal, recover
from .openai_chat import OpenAIChatProvider
from .options import AgentChanges, AgentOptions
from .provider import ModelProvider, Pricing, ScriptedProvider
from .records import TraceExporter
from .result import RunResult
from .state import Decision, Exit, PendingApproval, RunState, StepRecord
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
    "ScriptExhaustedError",
    "ScriptedProvider",
    "StepRecord",
    "Tool",
    "TraceExporter",
    "read_journal",
    "recover",
    "tool",
]
