"""The pure-Python reference core. It behaves exactly like the Rust core (``harnessweaver._core``)
and passes the same corpus; ``HARNESSWEAVER_CORE=python`` selects it.

Its names load on first use (PEP 562): the spec loader and the Rust core's users read a few of
its modules (the hook catalogue, the layers) without paying for the whole walk."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import homes, loader

if TYPE_CHECKING:
    from .context import RunContext
    from .contracts import CONTRACT_RULES, check_contract
    from .declaration import MISSING, Declaration, declare, snake_case
    from .duration import parse_duration
    from .layer import declare_in
    from .outcomes import Block, Continue, Escalate, HookResult, HookWarning, Retry, Suspend
    from .registry import Registry
    from .trace import Trace
    from .walk import Walk as Pending

__all__ = [
    "CONTRACT_RULES",
    "MISSING",
    "Block",
    "Continue",
    "Declaration",
    "Escalate",
    "HookResult",
    "HookWarning",
    "Pending",
    "Registry",
    "Retry",
    "RunContext",
    "Suspend",
    "Trace",
    "check_contract",
    "content_identity",
    "declare",
    "declare_in",
    "parse_duration",
    "snake_case",
]

CORE = "python"

__getattr__ = loader(
    __name__,
    homes(
        {
            ".context": ("RunContext",),
            ".contracts": ("CONTRACT_RULES", "check_contract"),
            ".declaration": ("MISSING", "Declaration", "declare", "snake_case"),
            ".duration": ("parse_duration",),
            ".identity": ("content_identity",),
            ".layer": ("declare_in",),
            ".outcomes": (
                "Block",
                "Continue",
                "Escalate",
                "HookResult",
                "HookWarning",
                "Retry",
                "Suspend",
            ),
            ".registry": ("Registry",),
            ".trace": ("Trace",),
            ".walk": ("Pending",),
        }
    ),
    {"Pending": "Walk"},
)
