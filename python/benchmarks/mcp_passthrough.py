"""The plugin of the proxy benchmarks (``plugins.local`` of their spec): ``benchmcp.passthrough``,
a middleware on ``tool.before`` and ``tool.after`` that lets everything through, so what is
timed is the bus and the proxy around it, not a policy."""

from __future__ import annotations

from typing import Any

import harnessweaver as hw

__all__ = ["plugin"]


@hw.middleware(hooks=["tool.before", "tool.after"], fail_mode="closed", timeout="2s")
async def passthrough(event: Any, env: hw.Envelope) -> None:
    return None


plugin = hw.Plugin(namespace="benchmcp", version="1.0.0", middleware=[passthrough])
