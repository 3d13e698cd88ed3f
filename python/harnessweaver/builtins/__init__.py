"""The built-in middleware: the plugin of namespace ``harnessweaver``.

A harness spec uses them as ``harnessweaver.<name>`` without listing a plugin; the built-in
profiles (``profile://agent-guards``, ``profile://rag``, ``profile://safe-tools``) are made
of them.

| middleware | hook points | fail mode | does |
|---|---|---|---|
| ``tool_allowlist`` | tool.before | closed | blocks a tool not in ``allow`` |
| ``max_messages`` | model.before | closed | blocks a request with more than ``limit`` messages |
| ``redact_secrets`` | tool.before, model.before | open | replaces ``patterns`` by ``[redacted]`` |
| ``require_citations`` | model.after | open | retries an answer without a ``[n]`` citation |
| ``loop_guard`` | tool.before, model.before, task.end | closed | warns, then blocks, repeats |
| ``budget_guard`` | model.before, model.after, task.end | closed | warns at 70%, blocks at 100% |
| ``tool_failure_guard`` | tool.before, tool.after, task.end | closed | blocks a failing tool |
| ``redact_pii`` | model.before, tool.before, tool.after | closed | replaces emails, phones, cards |
| ``rate_limit`` | tool.before, model.before | closed | blocks or retries past its rate |
| ``tool_denylist`` | tool.before | closed | blocks a tool in ``deny`` |
| ``shell_guard`` | tool.before | closed | blocks a destructive shell command (``RULES``) |
| ``cedar`` | tool.before (tool.after, model.before) | closed | decides with Cedar policies (I38) |
| ``authzen`` | tool.before (tool.after, model.before) | closed | asks an AuthZEN point (I38) |

The stateful ones (``loop_guard``, ``budget_guard``, ``tool_failure_guard``, ``rate_limit``)
keep their state on a state view (``harnessweaver.state``): per run by default, or shared by a
``scope`` across workers.

``docs/builtins.md`` has their settings and behaviour in full.
"""

from __future__ import annotations

from .. import __version__
from ..plugin import Plugin
from ..policies.authzen import AuthZen
from ..policies.cedar import Cedar
from .budget import BudgetGuard
from .citations import RequireCitations
from .failures import ToolFailureGuard
from .loops import LoopGuard
from .messages import MaxMessages
from .pii import RedactPii
from .rates import RateLimit
from .redact import RedactSecrets
from .shell import ShellGuard
from .tools import ToolAllowlist, ToolDenylist

__all__ = [
    "AuthZen",
    "BudgetGuard",
    "Cedar",
    "LoopGuard",
    "MaxMessages",
    "RateLimit",
    "RedactPii",
    "RedactSecrets",
    "RequireCitations",
    "ShellGuard",
    "ToolAllowlist",
    "ToolDenylist",
    "ToolFailureGuard",
    "plugin",
]

plugin = Plugin(
    namespace="harnessweaver",
    version=__version__,
    middleware=[
        ToolAllowlist,
        MaxMessages,
        RedactSecrets,
        RequireCitations,
        LoopGuard,
        BudgetGuard,
        ToolFailureGuard,
        RedactPii,
        RateLimit,
        ToolDenylist,
        ShellGuard,
        Cedar,
        AuthZen,
    ],
)
"""The built-in plugin: its middleware are ``harnessweaver.tool_allowlist`` and so on."""
