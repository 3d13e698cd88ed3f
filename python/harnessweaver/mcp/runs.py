"""The runs of the MCP sessions a gate serves: one per session, ended when it goes.

The run id is the session's: a connection without session ids (stdio, or in process) is one
session, ``stdio-<32 hex digits>`` drawn when the proxy starts (two proxies' traces never share
a run id), a Streamable HTTP
``Mcp-Session-Id``; a stateless request (2026-07-28 over HTTP carries no session id) is a run
of its own, started and ended around it. At most ``MAX_RUNS`` are kept: past it the least
recently used ends (``task.end``), so sessions never closed cannot hold memory forever.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from typing import Any

from .gate import Gate, Run

__all__ = ["MAX_RUNS", "Runs", "session_key"]

MAX_RUNS = 4096


def session_key(ctx: Any, connection: str = "stdio") -> str | None:
    """The MCP session a request belongs to (``connection`` for one without HTTP); ``None``
    for a stateless HTTP request."""
    request = ctx.request
    if request is None:
        return connection
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return str(value) if value else None


class Runs:
    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.open: OrderedDict[str, Run] = OrderedDict()
        self.connection = f"stdio-{uuid.uuid4().hex}"

    async def of(self, ctx: Any) -> tuple[Run, bool]:
        """The run of the request's session, and whether it is this request's alone (to end
        when the request is answered)."""
        key = session_key(ctx, self.connection)
        if key is None:
            return await self.gate.open(f"mcp-request-{uuid.uuid4().hex}"), True
        run = self.open.get(key)
        if run is not None:
            self.open.move_to_end(key)
            return run, False
        run = await self.gate.open(key)
        self.open[key] = run
        while len(self.open) > MAX_RUNS:
            _, old = self.open.popitem(last=False)
            await self.gate.close(old)
        return run, False

    async def end(self, key: str) -> None:
        """The session ``key`` ended (a Streamable HTTP ``DELETE``): its run ends now."""
        run = self.open.pop(key, None)
        if run is not None:
            await self.gate.close(run)

    async def close(self) -> None:
        """Every run ends (``task.end``): the server is stopping."""
        while self.open:
            _, run = self.open.popitem(last=False)
            await self.gate.close(run)
