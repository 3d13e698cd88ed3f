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
from mcp_types import CONNECTION_CLOSED
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .call import Answer, Refused, through
from .convert import refusal
from .gate import Admit, Gate
from .hidden import visible
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
        telemetry: Any = None,
    ) -> None:
        self.gate = gate
        self.upstream = upstream  # the first connection (its revision: the SDK's choice)
        self.group = group
        self.relay = relay
        self.call_timeout = call_timeout
        self.runs = Runs(gate)
        self.legacy: Upstream | None = None
        self.telemetry = telemetry  # --otel's provider, closed with the proxy (serve.py)
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
            get_tool_input_schema=self._input_schema,
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

    def _input_schema(self, name: str) -> Any:
        """A tool's input schema as last listed, for the SDK's check of a 2026-07-28 call's
        ``Mcp-Param-*`` headers (``None``, not listed yet: it checks nothing, and the call is
        still asked of the chain). Without it the SDK lists the tools again for every call."""
        tool = self.upstream.tools.get(name)
        return None if tool is None else tool.input_schema

    async def _for(self, ctx: Ctx) -> Upstream:
        """The connection that speaks the request's revision; one that failed (the server
        crashed, or restarted and forgot its session) is opened again first."""
        own = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS and self.upstream.modern
        current = self.legacy if own else self.upstream
        if current is not None and not current.failed:
            return current
        async with self._opening:
            current = self.legacy if own else self.upstream
            if current is None or current.failed:
                mode = "legacy" if own else self.upstream.mode
                fresh = Upstream(self.upstream.target, mode=mode)
                fresh.forward = self.relay.notify
                await _passed(fresh.start(self.group, **self.relay.callbacks()))
                if current is not None:
                    _log.warning("harnessweaver mcp: the upstream was connected again")
                    self.group.start_soon(current.aclose)
                if own:
                    self.legacy = fresh
                else:
                    self.upstream = fresh
                current = fresh
        return current

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
            return await self._upstream(ctx, up, read)

        add("resources/read", types.ReadResourceRequestParams, read)
        if not subscribe:
            return

        async def subscribe_to(ctx: Ctx, params: types.SubscribeRequestParams) -> Any:
            up = await self._for(ctx)
            with quiet():
                return await self._upstream(ctx, up, up.session.subscribe_resource(params.uri))

        async def unsubscribe(ctx: Ctx, params: types.UnsubscribeRequestParams) -> Any:
            up = await self._for(ctx)
            with quiet():
                return await self._upstream(ctx, up, up.session.unsubscribe_resource(params.uri))

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
            return await self._upstream(ctx, up, got)

        server.add_request_handler("prompts/get", types.GetPromptRequestParams, get)

    def _page(self, method: str) -> Callable[[Ctx, types.PaginatedRequestParams], Awaitable[Any]]:
        async def handler(ctx: Ctx, params: types.PaginatedRequestParams) -> Any:
            up = await self._for(ctx)
            return await self._upstream(ctx, up, getattr(up.session, method)(cursor=params.cursor))

        return handler

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> Any:
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        up = await self._for(ctx)
        return await self._upstream(ctx, up, up.session.complete(params.ref, argument, context))

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> Any:
        up = await self._for(ctx)
        if up.modern:  # the 2026-07-28 upstream hears the level on each request instead
            return types.EmptyResult()
        with quiet():
            return await self._upstream(ctx, up, up.session.set_logging_level(params.level))

    # -- tools ---------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        up = await self._for(ctx)
        cursor = params.cursor if params is not None else None
        result = await self._upstream(ctx, up, up.list_tools(cursor))
        return visible(self.gate.harness, result)

    async def _call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> Answer:
        up = await self._for(ctx)
        tool = await self._upstream(ctx, up, up.tool(params.name))

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
            return await self._upstream(ctx, up, call)
        with anyio.move_on_after(self.call_timeout) as scope:
            return await self._upstream(ctx, up, call)
        assert scope.cancelled_caught
        _log.warning("harnessweaver mcp: %r did not answer within %ss", name, self.call_timeout)
        text = f"the tool did not answer within {self.call_timeout} s"
        raise Refused(refusal("block", text, "upstream_timeout"))

    async def _upstream(self, ctx: Ctx, up: Upstream, call: Awaitable[T]) -> T:
        """The upstream's answer to what ``ctx`` asked, with the client's declarations."""
        token = declared.set(client_meta(ctx.meta))
        try:
            return await _passed(call, up)
        finally:
            declared.reset(token)


_LOST = ((CONNECTION_CLOSED, None), (types.INVALID_REQUEST, "Session terminated"))
"""The SDK client's errors that mean the connection, not the request, failed: the server
went away (stdio: the process ended; HTTP: the stream ended), or forgot the session."""


async def _passed(call: Awaitable[T], up: Upstream | None = None) -> T:
    """The upstream's answer; its protocol error passed on as it is. A connection that
    failed is an error that says the upstream failed (never a traceback, never a hang, never
    the client's own connection blamed), and is opened again at the next request."""
    try:
        return await call
    except MCPError as exc:
        if not any(exc.code == code and text in (None, exc.message) for code, text in _LOST):
            raise
        cause = exc.message
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as e:
        cause = type(e).__name__
    _log.error("harnessweaver mcp: the upstream failed: %s", cause)
    if up is not None:
        up.failed = True
    message = f"the upstream MCP server is unavailable ({cause})"
    raise MCPError(types.INTERNAL_ERROR, message) from None
