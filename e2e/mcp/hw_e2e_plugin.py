"""The middleware of the MCP end-to-end harness specs (plugin namespace ``e2e``).

- ``e2e.passthrough``: sees every tool call and result and lets it through unchanged; the
  conformance spec stacks it so the proxy runs a real chain on every call the kit makes.
- ``e2e.fs_guard``: the filesystem policy of ``harness.yaml``: a write outside ``allowed``
  and any move are refused (calls that overwrite or displace what a reviewer cannot undo).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict

import harnessweaver as hw

__all__ = ["FsGuard", "passthrough", "plugin"]

WRITES = frozenset({"write_file", "edit_file", "create_directory"})
"""The filesystem server's tools that change a file at their ``path`` argument."""
MOVES = frozenset({"move_file"})
"""The tools refused whatever their arguments."""


@hw.middleware(hooks=["tool.before", "tool.after"], fail_mode="open")
async def passthrough(event: Any, envelope: hw.Envelope) -> hw.Continue:
    return hw.Continue()


class FsGuardSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    allowed: str
    """The folder under which writes are allowed; a relative one is taken from the working
    folder of the process that loads the spec (the proxy, started in the served folder)."""


@hw.middleware(
    hooks=["tool.before"], fail_mode="closed", config=FsGuardSettings, sample={"allowed": "/tmp"}
)
class FsGuard:
    def __init__(self, config: FsGuardSettings) -> None:
        self.allowed = os.path.abspath(config.allowed)

    async def __call__(
        self, event: hw.ToolCallEvent, envelope: hw.Envelope
    ) -> hw.Continue | hw.Block:
        name = event.call.name
        if name in MOVES:
            return hw.Block(f"{name} is never allowed here", code="destructive_call")
        if name in WRITES:
            # Normalised the way the server resolves it: "scratch/../x" is outside scratch.
            path = os.path.abspath(str(event.call.arguments.get("path", "")))
            if os.path.commonpath([self.allowed, path]) != self.allowed:
                return hw.Block(f"{name} outside {self.allowed}", code="outside_sandbox")
        return hw.Continue()


plugin = hw.Plugin(namespace="e2e", version="1.0.0", middleware=[passthrough, FsGuard])
