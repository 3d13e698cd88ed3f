"""The proxy's MCP server: every ``tools/call`` through the gate, everything else passed on.

The server is the SDK's low-level ``Server``, given one handler per method the upstream
serves (so the capabilities the client sees are the upstream's). ``tools/list`` hides the
tools the harness refuses whatever the arguments (``hidden``); ``tools/call`` goes through
``call.through``; resources, prompts, completion and logging are passed on unchanged, and
so are the upstream's notifications and its requests to the client (``relay``).

Each request goes upstream in its client's protocol revision: a 2025-11-25 client behind an
upstream that speaks 2026-07-28 gets a handshake connection of its own (opened at its first
request), so what only that revision has (``logging/setLevel``, resource subscriptions,
requests to the client during a call) reaches the upstream as the client asked it.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from anyio.abc import TaskGroup
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .call import Answer, through
from .convert import refusal
from .gate import Admit, Gate
from .hidden import hidden
from .relay import Relay
from .runs import Runs
from .upstream import Upstream, client_meta, declared, quiet

__all__ = ["Proxy"]

_log = logging.getLogger("harnessweaver.mcp")

Ctx = ServerRequestContext[Any, Any]
T = TypeVar("T")


class Proxy:
    """The gate and the upstream, served as one MCP server."""

    def __init__(
        self,
        gate: Gate,
        upstream: Upstream,
        group: TaskGroup,
        relay: Relay,
        *,
        call_timeout: float | None = None,
    ) -> None:
        self.gate = gate
        self.upstream = upstream  # the first connection (its revision: the SDK's choice)
        self.group = group
        self.relay = relay
        self.call_timeout = call_timeout
        self.runs = Runs(gate)
        self.legacy: Upstream | None = None
        self.telemetry: Any = None  # --otel's provider, closed with the proxy (serve.py)
        self._opening = anyio.Lock()

    # -- the server ----------------------------------------------------------------------

    def server(self, name: str = "harnessweaver-mcp") -> Server[Any]:
        up = self.upstream
        caps = up.capabilities
        info = up.session.server_info
        server: Server[Any] = Server(
            name,
            version=info.version if info is not None else "",
            instructions=up.session.instructions,
            on_list_tools=self._list_tools if caps.tools is not None else None,
            on_call_tool=self._call_tool if caps.tools is not None else None,
        )
        if caps.resources is not None:
            self._resources(server, subscribe=bool(caps.resources.subscribe) or up.modern)
        if caps.prompts is not None:
            self._prompts(server)
        if caps.completions is not None:
            server.add_request_handler(
                "completion/complete", types.CompleteRequestParams, self._complete
            )
        if caps.logging is not None or up.modern:  # 2026-07-28 lists no logging: older clients
            server.add_request_handler(
                "logging/setLevel", types.SetLevelRequestParams, self._set_level
            )
        # Approvals travel in the client's retry as ``requestState`` (2026-07-28): sealed by
        # the SDK with a key of this process, so a client can neither read nor forge one.
        security = RequestStateSecurity.ephemeral(ttl=600.0)
        server.middleware.append(RequestStateBoundary(security, default_audience=name))
        server.middleware.append(self.relay.middleware)
        up.forward = self.relay.notify
        return server

    async def _for(self, ctx: Ctx) -> Upstream:
        """The connection that speaks the request's revision."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or not self.upstream.modern:
            return self.upstream
        async with self._opening:
            if self.legacy is None:
                legacy = Upstream(self.upstream.target, mode="legacy")
                legacy.forward = self.relay.notify
                await _passed(legacy.start(self.group, **self.relay.callbacks()))
                self.legacy = legacy
        return self.legacy

    async def close(self) -> None:
        """Every run ends (``task.end``), then the connections close."""
        await self.runs.close()
        for up in (self.legacy, self.upstream):
            if up is not None:
                await up.aclose()

    def _resources(self, server: Server[Any], *, subscribe: bool) -> None:
        add = server.add_request_handler
        add("resources/list", types.PaginatedRequestParams, self._page("list_resources"))
        add(
            "resources/templates/list",
            types.PaginatedRequestParams,
            self._page("list_resource_templates"),
        )

        async def read(ctx: Ctx, params: types.ReadResourceRequestParams) -> Any:
            up = await self._for(ctx)
            session = up.session.session  # the tool's own input requests pass, as for a call
            read = session.read_resource(
                params.uri,
                input_responses=params.input_responses,
                request_state=params.request_state,
                allow_input_required=up.modern,
            )
            return await self._upstream(ctx, read)

        add("resources/read", types.ReadResourceRequestParams, read)
        if not subscribe:
            return

        async def subscribe_to(ctx: Ctx, params: types.SubscribeRequestParams) -> Any:
            up = await self._for(ctx)
            with quiet():
                return await self._upstream(ctx, up.session.subscribe_resource(params.uri))

        async def unsubscribe(ctx: Ctx, params: types.UnsubscribeRequestParams) -> Any:
            up = await self._for(ctx)
            with quiet():
                return await self._upstream(ctx, up.session.unsubscribe_resource(params.uri))

        add("resources/subscribe", types.SubscribeRequestParams, subscribe_to)
        add("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)

    def _prompts(self, server: Server[Any]) -> None:
        server.add_request_handler(
            "prompts/list", types.PaginatedRequestParams, self._page("list_prompts")
        )

        async def get(ctx: Ctx, params: types.GetPromptRequestParams) -> Any:
            up = await self._for(ctx)
            got = up.session.session.get_prompt(
                params.name,
                params.arguments,
                input_responses=params.input_responses,
                request_state=params.request_state,
                allow_input_required=up.modern,
            )
            return await self._upstream(ctx, got)

        server.add_request_handler("prompts/get", types.GetPromptRequestParams, get)

    def _page(self, method: str) -> Callable[[Ctx, types.PaginatedRequestParams], Awaitable[Any]]:
        async def handler(ctx: Ctx, params: types.PaginatedRequestParams) -> Any:
            up = await self._for(ctx)
            return await self._upstream(ctx, getattr(up.session, method)(cursor=params.cursor))

        return handler

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> Any:
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        up = await self._for(ctx)
        return await self._upstream(ctx, up.session.complete(params.ref, argument, context))

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> Any:
        up = await self._for(ctx)
        if up.modern:  # the 2026-07-28 upstream hears the level on each request instead
            return types.EmptyResult()
        with quiet():
            return await self._upstream(ctx, up.session.set_logging_level(params.level))

    # -- tools ---------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        up = await self._for(ctx)
        cursor = params.cursor if params is not None else None
        result = await self._upstream(ctx, up.list_tools(cursor))
        shown = [tool for tool in result.tools if not hidden(self.gate.harness, tool.name)]
        return result.model_copy(update={"tools": shown})

    async def _call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> Answer:
        up = await self._for(ctx)
        tool = await self._upstream(ctx, up.tool(params.name))

        async def invoke(admitted: Admit) -> Answer:
            return await self._tool_call(ctx, up, params.name, admitted)

        return await through(self.gate, self.runs, ctx, params, tool, invoke)

    async def _tool_call(self, ctx: Ctx, up: Upstream, name: str, admitted: Admit) -> Answer:
        call = up.session.session.call_tool(
            name,
            admitted.arguments,
            progress_callback=self.relay.progress(ctx),
            input_responses=admitted.responses,
            request_state=admitted.state,
            allow_input_required=True,
        )
        if self.call_timeout is None:
            return await self._upstream(ctx, call)
        with anyio.move_on_after(self.call_timeout) as scope:
            return await self._upstream(ctx, call)
        assert scope.cancelled_caught
        _log.warning("harnessweaver mcp: %r did not answer within %ss", name, self.call_timeout)
        text = f"the tool did not answer within {self.call_timeout} s"
        return refusal("block", text, "upstream_timeout")

    async def _upstream(self, ctx: Ctx, call: Awaitable[T]) -> T:
        """The upstream's answer to what ``ctx`` asked, with the client's declarations."""
        token = declared.set(client_meta(ctx.meta))
        try:
            return await _passed(call)
        finally:
            declared.reset(token)


async def _passed(call: Awaitable[T]) -> T:
    """The upstream's answer; its protocol error passed on as it is, a connection that
    failed as an error that says so (never a traceback, never a hang)."""
    try:
        return await call
    except MCPError:
        raise
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as e:
        _log.error("harnessweaver mcp: the upstream failed: %s", type(e).__name__)
        raise MCPError(types.INTERNAL_ERROR, "the upstream MCP server is unavailable") from None
