"""The five outcomes a middleware can answer with, and the combined result of an emit.

Returning ``None`` means ``Continue()``. Severity, most severe first (rule 3):
``Block > Suspend > Escalate > Retry > Continue(modified) > Continue``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from ._select import core

if TYPE_CHECKING:
    from ._pycore.outcomes import (
        Block,
        Continue,
        Escalate,
        HookResult,
        HookWarning,
        Retry,
        Suspend,
    )
else:
    Continue = core.Continue
    Block = core.Block
    Suspend = core.Suspend
    Escalate = core.Escalate
    Retry = core.Retry
    HookResult = core.HookResult
    HookWarning = core.HookWarning

__all__ = [
    "Block",
    "Continue",
    "Escalate",
    "HookResult",
    "HookWarning",
    "Outcome",
    "Retry",
    "Suspend",
]

Outcome: TypeAlias = Continue | Block | Suspend | Escalate | Retry
"""Any outcome (for annotations: ``-> hw.Outcome | None``)."""
