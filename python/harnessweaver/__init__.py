"""harnessweaver: the hook bus that AI-agent harnesses run unchanged.

When a hook point fires (``tool.before``, ``model.after``, ...) the bus runs every middleware
attached to it in a predictable order (four bands, onion direction), combines their answers
(most severe wins), enforces each middleware's timeout and fail mode, and records a trace.

Three namespaces: ``hw`` holds the bus (``HookBus``, ``middleware``, the events, outcomes,
context, trace and errors); ``hw.agent`` the run loop (``harness.run``, providers, tools,
budgets, journals); ``hw.spec`` the harness-spec loader (``hw.spec.load("harness.yaml",
task=...)`` assembles a bus). The top level re-exports the names of ``hw.agent.__all__`` and
``hw.spec.__all__`` (``hw.load``, ``hw.Decision``), listed there only.
"""

from __future__ import annotations

import logging as _logging
import sys as _sys
from importlib import import_module as _import_module
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from . import agent, spec
    from .agent import *  # noqa: F403  (hw.agent.__all__, re-exported below)
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
    from .identity import content_identity
    from .middleware import Middleware, MiddlewareSpec, middleware
    from .outcomes import (
        Block,
        Continue,
        Escalate,
        HookResult,
        HookWarning,
        Outcome,
        Retry,
        Suspend,
    )
    from .plugin import Plugin
    from .spec import *  # noqa: F403  (hw.spec.__all__, re-exported below)

    LAYERS: Mapping[str, str]
    """Every harness-spec layer and the band it gives its middleware (I13)."""
    __version__: str
    """The installed distribution's version, read from its metadata on first use. It is set
    in one place, the Cargo workspace's ``version`` (docs/packaging.md, "One version")."""

from . import _lazy
from ._select import CORE
from ._select import core as _core_module

Declaration = _core_module.Declaration
parse_duration = _core_module.parse_duration
declare_in = _core_module.declare_in

# Libraries stay silent unless the application configures logging: without this handler,
# Python's last-resort handler would print our warnings to stderr (docs/logging.md).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

_HOMES: dict[str, tuple[str, ...]] = {
    ".bus": ("HookBus",),
    ".context": ("JsonlSink", "RunContext", "Trace"),
    ".contracts": ("CONTRACT_RULES", "ContractViolation", "check_contract", "check_contracts"),
    ".envelope": ("Clock", "Envelope", "FixedClock", "SystemClock"),
    ".identity": ("content_identity",),
    ".errors": (
        "DeclarationError",
        "EmitError",
        "HarnessweaverError",
        "RegistrationError",
        "TraceFormatError",
    ),
    ".events": (
        "EVENT_TYPES",
        "Event",
        "Message",
        "ModelRequest",
        "ModelRequestEvent",
        "ModelResponse",
        "ModelResponseEvent",
        "StepEndEvent",
        "StepStartEvent",
        "TaskEndEvent",
        "TaskStartEvent",
        "ToolCall",
        "ToolCallEvent",
        "ToolResult",
        "ToolResultEvent",
        "ToolSpec",
        "Usage",
    ),
    ".middleware": ("Middleware", "MiddlewareSpec", "middleware"),
    ".outcomes": (
        "Block",
        "Continue",
        "Escalate",
        "HookResult",
        "HookWarning",
        "Outcome",
        "Retry",
        "Suspend",
    ),
    ".plugin": ("Plugin",),
}
"""Where each name of the bus lives. Nothing is imported until it is first used: a hook command
started per tool call, or a program that only needs the bus, pays for what it touches."""
_HOME = _lazy.homes(_HOMES)
_public = _lazy.loader(__name__, _HOME)
_NAMESPACES = (".agent", ".spec")
"""The run loop and the spec loader, whose ``__all__`` this package re-exports: each is a
namespace that imports nothing until used, and is itself imported only when one of its names
(or this package's ``__all__``) is asked for."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("harnessweaver")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"


def _all() -> list[str]:
    """``__all__``: the bus's names, then those of ``hw.agent`` and ``hw.spec`` (which imports
    those two namespaces, not their modules)."""
    names = list(_BUS)
    for namespace in _NAMESPACES:
        names += _import_module(namespace, __name__).__all__
    return names


def _resolve(name: str) -> object:
    if name in _HOME:
        return _public(name)
    if name == "__all__":
        return _all()
    if name == "LAYERS":
        from types import MappingProxyType

        from ._pycore.layer import LAYERS

        return MappingProxyType(dict(LAYERS))
    if name == "__version__":
        return _version()
    for namespace in _NAMESPACES:  # ``hw.load``: a name of ``hw.spec.__all__``
        module = _import_module(namespace, __name__)
        if name in module.__all__:
            return getattr(module, name)
    try:  # ``hw.events`` and the like: a submodule, imported as ``import harnessweaver`` used to
        return _import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __getattr__(name: str) -> object:
    """A public name, imported on first use and kept (PEP 562)."""
    globals()[name] = value = _resolve(name)
    return value


class _Package(_ModuleType):
    """This package's module type. Importing a submodule sets it as an attribute of the
    package; ``harnessweaver.middleware`` is also the name of the decorator, which must stay
    ``hw.middleware`` whichever is imported first (as when this package imported it eagerly)."""

    def __setattr__(self, name: str, value: object) -> None:
        if name == "middleware" and isinstance(value, _ModuleType):
            value = value.middleware
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package


__all__ = [
    "CONTRACT_RULES",
    "CORE",
    "EVENT_TYPES",
    "LAYERS",
    "Block",
    "Clock",
    "Continue",
    "ContractViolation",
    "Declaration",
    "DeclarationError",
    "EmitError",
    "Envelope",
    "Escalate",
    "Event",
    "FixedClock",
    "HarnessweaverError",
    "HookBus",
    "HookResult",
    "HookWarning",
    "JsonlSink",
    "Message",
    "Middleware",
    "MiddlewareSpec",
    "ModelRequest",
    "ModelRequestEvent",
    "ModelResponse",
    "ModelResponseEvent",
    "Outcome",
    "Plugin",
    "RegistrationError",
    "Retry",
    "RunContext",
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
    "check_contract",
    "check_contracts",
    "content_identity",
    "declare_in",
    "middleware",
    "parse_duration",
]
_BUS = tuple(__all__)
if TYPE_CHECKING:  # what a type checker reads; at run time the same, completed on first use
    __all__ += agent.__all__  # the run loop, hw.agent
    __all__ += spec.__all__  # the harness-spec loader, hw.spec
else:
    del __all__  # so that the names of hw.agent and hw.spec are added when first asked for


def __dir__() -> list[str]:
    return sorted({*globals(), *_all()})
