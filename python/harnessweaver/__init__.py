"""harnessweaver: the hook bus that AI-agent harnesses run unchanged.

When a hook point fires (``tool.before``, ``model.after``, ...) the bus runs every middleware
attached to it in a predictable order (four bands, onion direction), combines their answers
(most severe wins), enforces each middleware's timeout and fail mode, and records a trace.
``hw.load("harness.yaml", task=...)`` assembles a bus from a harness spec.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

from ._pycore import layer as _layers
from ._select import CORE
from ._select import core as _core_module
from .bus import HookBus
from .context import RunContext, Trace
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
    from .spec import Harness, HarnessEntry, Problem, Provenance, SpecError, load

Declaration = _core_module.Declaration
parse_duration = _core_module.parse_duration
declare_in = _core_module.declare_in
LAYERS = MappingProxyType(dict(_layers.LAYERS))
"""Every harness-spec layer and the band it gives its middleware (I13)."""

__version__ = "0.1.0"

_SPEC_NAMES = frozenset({"Harness", "HarnessEntry", "Problem", "Provenance", "SpecError", "load"})


def __getattr__(name: str) -> object:
    """``hw.load`` and the harness-spec types are imported on first use, so importing
    harnessweaver for the bus alone does not load the YAML machinery."""
    if name in _SPEC_NAMES:
        from . import spec

        value = getattr(spec, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CORE",
    "EVENT_TYPES",
    "LAYERS",
    "Block",
    "Clock",
    "Continue",
    "Declaration",
    "DeclarationError",
    "EmitError",
    "Envelope",
    "Escalate",
    "Event",
    "FixedClock",
    "Harness",
    "HarnessEntry",
    "HarnessweaverError",
    "HookBus",
    "HookResult",
    "Message",
    "Middleware",
    "MiddlewareSpec",
    "ModelRequest",
    "ModelRequestEvent",
    "ModelResponse",
    "ModelResponseEvent",
    "Outcome",
    "Plugin",
    "Problem",
    "Provenance",
    "RegistrationError",
    "Retry",
    "RunContext",
    "SpecError",
    "StepEndEvent",
    "StepStartEvent",
    "Suspend",
    "SystemClock",
    "TaskEndEvent",
    "TaskStartEvent",
    "ToolCall",
    "ToolCallEvent",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "Trace",
    "TraceFormatError",
    "Usage",
    "__version__",
    "declare_in",
    "load",
    "middleware",
    "parse_duration",
]
