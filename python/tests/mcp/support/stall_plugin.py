"""A middleware that never answers for one call (``echo`` of the text ``stall``): the spec's
``timeout`` or ``deadlines:`` must cut it off and resolve it by its fail mode."""

from __future__ import annotations

import anyio

import harnessweaver as hw

__all__ = ["plugin", "stall"]


@hw.middleware(hooks=["tool.before"], fail_mode="closed", match={"tool": "echo"})
async def stall(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
    if event.call.arguments.get("text") == "stall":
        await anyio.sleep_forever()


plugin = hw.Plugin(namespace="stall", version="1.0.0", middleware=[stall])
