"""harnessweaver: the hook bus that AI-agent harnesses run unchanged.

When a hook point fires (``tool.before``, ``model.after``, ...) the bus runs every middleware
attached to it in a predictable order (four bands, onion direction), combines their answers
(most severe wins), enforces each middleware's timeout and fail mode, and records a trace.
``hw.load("harness.yaml", task=...)`` assembles a bus from a harness spec.
"""

from __future__ import annotations

import logging as _logging
from types import MappingProxyType
from typing import TYPE_CHECKING

from ._pycore import layer as _layers
from ._select import CORE
from ._select import core as _core_module
from .bus import HookBus
from .context import JsonlSink, RunContext, Trace
from .contracts import CONTRACT_RULES, ContractViolation, check_contract, check_contracts
from .envelope import Clock, Envelope, FixedClock, SystemClock
from .errors import (
    DeclarationError,
    EmitError,
    HarnessweaverError,
    RegistrationError,
    TraceFormatError,
)
from .events import (
    EVENT_TYPES,
    Event,
    Message,
    ModelRequest,
    ModelRequestEvent,
    ModelResponse,
    ModelResponseEvent,
    StepEndEvent,
    StepStartEvent,
    TaskEndEvent,
    TaskStartEvent,
    ToolCall,
    ToolCallEvent,
    ToolResult,
    ToolResultEvent,
    ToolSpec,
    Usage,
)
from .middleware import Middleware, MiddlewareSpec, middleware
from .outcomes import Block, Continue, Escalate, HookResult, Outcome, Retry, Suspend
from .plugin import Plugin

if TYPE_CHECKING:
    from .agent import (
        AgentChanges,
        AgentError,
        AgentOptions,
        Budgets,
        Decision,
        Exit,
        JournalError,
        ModelProvider,
        OpenAIChatProvider,
        PendingApproval,
        Pricing,
        ProviderError,
        RunResult,
        RunState,
        ScriptedProvider,
        ScriptExhaustedError,
        StepRecord,
        Tool,
        TraceExporter,
        read_journal,
        recover,
        tool,
    )
    from .spec import Harness, HarnessEntry, Problem, Provenance, SpecError, load

Declaration = _core_module.Declaration
parse_duration = _core_module.parse_duration
declare_in = _core_module.declare_in
LAYERS = MappingProxyType(dict(_layers.LAYERS))
"""Every harness-spec layer and the band it gives its middleware (I13)."""

# Libraries stay silent unless the application configures logging: without this handler,
# Python's last-resort handler would print our warnings to stderr (docs/logging.md).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

if TYPE_CHECKING:
    __version__: str
    """The installed distribution's version, read from its metadata on first use. It is set
    in one place, the Cargo workspace's ``version`` (docs/packaging.md, "One version")."""

_SPEC_NAMES = frozenset({"Harness", "HarnessEntry", "Problem", "Provenance", "SpecError", "load"})
_AGENT_NAMES = frozenset(
    {
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
    }
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("harnessweaver")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> object:
    """``hw.load`` and the harness-spec types are imported on first use, so importing
    harnessweaver for the bus alone does not load the YAML machinery; ``__version__`` too."""
    if name == "__version__":
        globals()[name] = value = _version()
        return value
    if name in _SPEC_NAMES:
        from . import spec

        value = getattr(spec, name)
        globals()[name] = value
        return value
    if name in _AGENT_NAMES:  # the run loop, like the spec machinery, loads on first use
        from . import agent

        value = getattr(agent, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CONTRACT_RULES",
    "CORE",
    "EVENT_TYPES",
    "LAYERS",
    "AgentChanges",
    "AgentError",
    "AgentOptions",
    "Block",
    "Budgets",
    "Clock",
    "Continue",
    "ContractViolation",
    "Decision",
    "Declaration",
    "DeclarationError",
    "EmitError",
    "Envelope",
    "Escalate",
    "Event",
    "Exit",
    "FixedClock",
    "Harness",
    "HarnessEntry",
    "HarnessweaverError",
    "HookBus",
    "HookResult",
    "JournalError",
    "JsonlSink",
    "Message",
    "Middleware",
    "MiddlewareSpec",
    "ModelProvider",
    "ModelRequest",
    "ModelRequestEvent",
    "ModelResponse",
    "ModelResponseEvent",
    "OpenAIChatProvider",
    "Outcome",
    "PendingApproval",
    "Plugin",
    "Pricing",
    "Problem",
    "Provenance",
    "ProviderError",
    "RegistrationError",
    "Retry",
    "RunContext",
    "RunResult",
    "RunState",
    "ScriptExhaustedError",
    "ScriptedProvider",
    "SpecError",
    "StepEndEvent",
    "StepRecord",
    "StepStartEvent",
    "Suspend",
    "SystemClock",
    "TaskEndEvent",
    "TaskStartEvent",
    "Tool",
    "ToolCall",
    "ToolCallEvent",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "Trace",
    "TraceExporter",
    "TraceFormatError",
    "Usage",
    "__version__",
    "check_contract",
    "check_contracts",
    "declare_in",
    "load",
    "middleware",
    "parse_duration",
    "read_journal",
    "recover",
    "tool",
]
