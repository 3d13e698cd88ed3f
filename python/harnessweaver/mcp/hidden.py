"""Which tools ``tools/list`` does not show: those the harness refuses whatever the arguments.

A model offered a tool it can never call wastes turns on it. A tool is refused whatever its
arguments when an enforced ``harnessweaver.tool_allowlist`` that applies to it (its matcher
matches the name, I22) does not list it, or an enforced ``harnessweaver.tool_denylist`` that
applies to it lists it. An audited list (I25) refuses nothing, so it hides nothing; a guard
that decides on the arguments hides nothing either (the call is still asked, and refused
then).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

__all__ = ["hidden", "visible"]

_ALLOWLIST = "harnessweaver.tool_allowlist"
_DENYLIST = "harnessweaver.tool_denylist"


def hidden(harness: Any, tool: str) -> bool:
    """Whether ``tool`` is refused at ``tool.before`` by a rule that reads its name alone."""
    if getattr(harness, "mode", None) == "audit":
        return False
    chain = harness.bus.chain_for("tool.before", tool)
    applies = {decl.name for decl in chain if decl.mode != "audit"}
    for entry in getattr(harness, "entries", ()):
        if entry.name not in applies or entry.settings is None:
            continue
        if entry.use == _ALLOWLIST:
            allow = entry.settings.get("allow")
            if isinstance(allow, list | tuple) and tool not in allow:
                return True
        elif entry.use == _DENYLIST:
            deny = entry.settings.get("deny")
            if isinstance(deny, list | tuple) and tool in deny:
                return True
    return False


def visible(harness: Any, listed: types.ListToolsResult) -> types.ListToolsResult:
    """``listed`` without the tools ``hidden`` says the harness refuses by name."""
    shown = [tool for tool in listed.tools if not hidden(harness, tool.name)]
    return listed.model_copy(update={"tools": shown})
