"""The spec-specific middleware of ``same.yaml``: a refusal that depends on the arguments and
a rewrite of them, so that both paths of ``tool.before`` are exercised by the spec's own code
as well as by built-ins."""

from __future__ import annotations

import harnessweaver as hw

__all__ = ["cap_limit", "no_rm", "plugin"]

LIMIT = 10


@hw.middleware(hooks=["tool.before"], fail_mode="closed", match={"tool": "shell"})
async def no_rm(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Block | None:
    """Refuses a shell command that removes files recursively."""
    command = str(event.call.arguments.get("command", ""))
    if "rm -rf" in command:
        return hw.Block("recursive removal is not allowed", code="dangerous_command")
    return None


@hw.middleware(hooks=["tool.before"], fail_mode="closed", match={"tool": "search"})
async def cap_limit(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Continue | None:
    """Caps a search's ``limit`` at :data:`LIMIT`."""
    limit = event.call.arguments.get("limit")
    if isinstance(limit, int) and limit > LIMIT:
        return hw.Continue(modified=event.updated({"call.arguments.limit": LIMIT}))
    return None


plugin = hw.Plugin(namespace="same", version="1.0.0", middleware=[no_rm, cap_limit])
