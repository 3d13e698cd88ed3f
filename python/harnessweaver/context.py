"""The run context an emit is made in: the envelope middleware see, and the trace it writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._select import core

if TYPE_CHECKING:
    from ._pycore.context import RunContext
    from ._pycore.trace import Trace
else:
    RunContext = core.RunContext
    Trace = core.Trace

__all__ = ["RunContext", "Trace"]
