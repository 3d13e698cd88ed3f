"""The pure-Python reference core. It behaves exactly like the Rust core (``harnessweaver._core``)
and passes the same corpus; ``HARNESSWEAVER_CORE=python`` selects it."""

from .context import RunContext
from .contracts import CONTRACT_RULES, check_contract
from .declaration import MISSING, Declaration, declare, snake_case
from .duration import parse_duration
from .layer import declare_in
from .outcomes import Block, Continue, Escalate, HookResult, Retry, Suspend
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
    "Pending",
    "Registry",
    "Retry",
    "RunContext",
    "Suspend",
    "Trace",
    "check_contract",
    "declare",
    "declare_in",
    "parse_duration",
    "snake_case",
]

CORE = "python"
