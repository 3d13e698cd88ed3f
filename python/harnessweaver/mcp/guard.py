"""``guard(server, spec)``: a harness spec on every tool call of an MCP server built with the SDK.

For teams that run their own MCP servers: the same gate as the proxy, in the server's process,
through the SDK's own middleware seam (``Server.middleware``, which ``MCPServer`` shares).
``tools/call`` goes through ``tool.before``, a person's approval where asked, the server's
handler and ``tool.after``; ``tools/list`` hides the tools the harness refuses by name.
Everything else reaches the server untouched.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from os import PathLike
from typing import IO, Any, TypeVar

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity

from .call import through
from .convert import refusal
from .gate import Admit, Gate
from .hidden import visible
from .runs import Runs

__all__ = ["Guard", "guard"]

S = TypeVar("S")
Ctx = ServerRequestContext[Any, Any]


def guard(
    server: S,
    spec: str | PathLike[str] | Any,
    *,
    task: str | None = None,
    env: str | None = None,
    trace: str | PathLike[str] | IO[str] | None = None,
    exporters: Sequence[Any] = (),
) -> S:
    """Put the harness of ``spec`` (a path to a harness spec, or a loaded ``Harness``) in front
    of every tool of ``server`` (an ``MCPServer`` or a low-level ``Server``), in place; returns
    ``server``. ``trace`` writes the bus's trace as JSON Lines to that file (closed when the
    guard is collected) or text stream (left open); ``exporters``
    (``hw.TraceExporter``, e.g. ``OTelExporter``) get each call's records when it is answered."""
    harness = _harness(spec, task, env)
    sink = None
    if trace is not None:
        from ..context import JsonlSink

        sink = JsonlSink(trace)
    chain = getattr(server, "middleware", None)
    if not isinstance(chain, list):
        raise TypeError(f"guard takes an MCP SDK server (MCPServer or Server), got {server!r}")
    if not any(isinstance(item, RequestStateBoundary) for item in chain):
        # A low-level server seals no requestState: approvals (2026-07-28) need it sealed.
        name = getattr(server, "name", None)
        chain.append(RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience=name))
    middleware = Guard(Gate(harness, sink=sink, task=task, exporters=exporters))
    if sink is not None:
        weakref.finalize(middleware, sink.close)  # a path's file: the guard's for its life
    chain.append(middleware)
    return server


class Guard:
    """The server middleware ``guard`` adds."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.runs = Runs(gate)

    async def __call__(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        if ctx.method == "tools/list":
            return self._shown(await call_next(ctx))
        if ctx.method != "tools/call":
            return await call_next(ctx)
        try:
            params = types.CallToolRequestParams.model_validate(ctx.params or {}, by_alias=True)
        except ValueError:
            return await call_next(ctx)  # the SDK answers the malformed request itself
        tool = await self._tool(ctx, call_next, params.name)

        async def invoke(admitted: Admit) -> types.CallToolResult:
            sent = {**(ctx.params or {}), "arguments": admitted.arguments}
            sent.pop("inputResponses", None)  # answered here: not the handler's to read
            sent.pop("requestState", None)
            answer = await call_next(dataclasses.replace(ctx, params=sent))
            return _result(answer)

        return await through(self.gate, self.runs, ctx, params, tool, invoke)

    async def _tool(self, ctx: Ctx, call_next: CallNext, name: str) -> types.Tool | None:
        """The tool as the server lists it (its description and input schema)."""
        try:
            listed = await call_next(dataclasses.replace(ctx, method="tools/list", params={}))
            tools = types.ListToolsResult.model_validate(_plain(listed), by_alias=True).tools
        except Exception:  # a server that cannot list still has its calls guarded, by name
            return None
        return next((tool for tool in tools if tool.name == name), None)

    def _shown(self, listed: HandlerResult) -> HandlerResult:
        try:
            result = types.ListToolsResult.model_validate(_plain(listed), by_alias=True)
        except Exception:
            return listed
        return visible(self.gate.harness, result)


def _plain(value: HandlerResult) -> Any:
    if isinstance(value, types.Result):
        return value.model_dump(by_alias=True, mode="json", exclude_none=True)
    return value


def _result(answer: HandlerResult) -> types.CallToolResult:
    """The handler's answer as a ``CallToolResult``; anything else (an input request of the
    tool's own) cannot be guarded at ``tool.after``, so it is refused rather than passed."""
    try:
        return types.CallToolResult.model_validate(_plain(answer), by_alias=True)
    except Exception:
        why = "the tool answered with something other than a tool result"
        return refusal("block", why, "unguardable_result")


def _harness(spec: Any, task: str | None, env: str | None) -> Any:
    if isinstance(spec, str | PathLike):
        from ..spec import load

        return load(spec, task=task, env=env)
    if not hasattr(spec, "bus"):
        raise TypeError(f"guard takes a harness spec's path or a loaded Harness, got {spec!r}")
    return spec
