"""The proxy's MCP server: every ``tools/call`` through the gate, everything else passed on.

The server is the SDK's low-level ``Server``, given one handler per method the upstream
serves (so the capabilities the client sees are the upstream's). ``tools/list`` hides the
tools the harness refuses whatever the arguments (``hidden``); ``tools/call`` goes through
the gate, the approval (``approval``) and the upstream; resources, prompts, completion and
logging are passed on unchanged, and so are the upstream's notifications.
"""

from __future__ import annotations

import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError

from .approval import Approvals
from .convert import refusal
from .gate import Admit, Ask, Gate, Refuse, Run
from .hidden import hidden
from .upstream import Upstream, quiet

__all__ = ["MAX_RUNS", "Proxy"]

_log = logging.getLogger("harnessweaver.mcp")

MAX_RUNS = 4096
"""Sessions whose runs the proxy keeps: past it, the least recently used one ends
(``task.end``). A Streamable HTTP session that is never closed cannot hold memory forever."""

Ctx = ServerRequestContext[Any, Any]
T = TypeVar("T")


class Proxy:
    """The gate and the upstream, served as one MCP server."""

    def __init__(self, gate: Gate, upstream: Upstream, *, call_timeout: float | None = None):
        self.gate = gate
        self.upstream = upstream
        self.call_timeout = call_timeout
        self.approvals = Approvals(gate)
        self.runs: OrderedDict[str, Run] = OrderedDict()
        self.clients: dict[int, Any] = {}  # the sessions to tell of the upstream's news
        self.relay: Any = None  # set by the transport (serve.py)

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
            self._resources(server)
        if caps.prompts is not None:
            self._prompts(server)
        if caps.completions is not None:
            server.add_request_handler(
                "completion/complete", types.CompleteRequestParams, self._complete
            )
        if caps.logging is not None:
            server.add_request_handler(
                "logging/setLevel", types.SetLevelRequestParams, self._set_level
            )
        # Approvals travel in the client's retry as ``requestState`` (2026-07-28): sealed by
        # the SDK with a key of this process, so a client can neither read nor forge one.
        security = RequestStateSecurity.ephemeral(ttl=600.0)
        server.middleware.append(RequestStateBoundary(security, default_audience=name))
        up.forward = self._forward
        return server

    def _resources(self, server: Server[Any]) -> None:
        up = self.upstream
        add = server.add_request_handler
        add("resources/list", types.PaginatedRequestParams, _page(up, "list_resources"))
        add(
            "resources/templates/list",
            types.PaginatedRequestParams,
            _page(up, "list_resource_templates"),
        )

        async def read(ctx: Ctx, params: types.ReadResourceRequestParams) -> Any:
            self._seen(ctx)
            return await _passed(up.session.read_resource(params.uri))

        add("resources/read", types.ReadResourceRequestParams, read)
        caps = up.capabilities.resources
        if caps is not None and caps.subscribe:

            async def subscribe(ctx: Ctx, params: types.SubscribeRequestParams) -> Any:
                self._seen(ctx)
                with quiet():
                    return await _passed(up.session.subscribe_resource(params.uri))

            async def unsubscribe(ctx: Ctx, params: types.UnsubscribeRequestParams) -> Any:
                with quiet():
                    return await _passed(up.session.unsubscribe_resource(params.uri))

            add("resources/subscribe", types.SubscribeRequestParams, subscribe)
            add("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)

    def _prompts(self, server: Server[Any]) -> None:
        up = self.upstream
        server.add_request_handler(
            "prompts/list", types.PaginatedRequestParams, _page(up, "list_prompts")
        )

        async def get(ctx: Ctx, params: types.GetPromptRequestParams) -> Any:
            self._seen(ctx)
            return await _passed(up.session.get_prompt(params.name, params.arguments))

        server.add_request_handler("prompts/get", types.GetPromptRequestParams, get)

    async def _complete(self, ctx: Ctx, params: types.CompleteRequestParams) -> Any:
        argument = {"name": params.argument.name, "value": params.argument.value}
        context = params.context.arguments if params.context is not None else None
        return await _passed(self.upstream.session.complete(params.ref, argument, context))

    async def _set_level(self, ctx: Ctx, params: types.SetLevelRequestParams) -> Any:
        with quiet():
            return await _passed(self.upstream.session.set_logging_level(params.level))

    # -- tools ---------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._seen(ctx)
        cursor = params.cursor if params is not None else None
        result = await _passed(self.upstream.list_tools(cursor))
        shown = [tool for tool in result.tools if not hidden(self.gate.harness, tool.name)]
        return result.model_copy(update={"tools": shown})

    async def _call_tool(
        self, ctx: Ctx, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        self._seen(ctx)
        run, once = await self._run(ctx)
        try:
            return await self._call(ctx, run, params)
        finally:
            if once:
                await self.gate.close(run)

    async def _call(
        self, ctx: Ctx, run: Run, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        name = params.name
        tool = await _passed(self.upstream.tool(name))
        resumed = self.approvals.resumed(ctx, params, tool, run.calls)
        if resumed is not None and not isinstance(resumed, Admit):
            return resumed
        for _attempt in range(self.gate.max_retries + 1):
            verdict = resumed or await self.gate.before(run, tool, name, params.arguments)
            resumed = None  # an approval admits the call once; a retry of its result asks again
            if isinstance(verdict, Ask):
                answer = await self.approvals.ask(ctx, params, verdict)
                if not isinstance(answer, Admit):
                    return answer
                verdict = answer
            if isinstance(verdict, Refuse):
                return verdict.result
            result = await self._upstream_call(ctx, name, verdict)
            after = await self.gate.after(run, verdict.event, result)
            if after is not None:
                return after
        why = "the result was refused on every retry"
        return refusal("retry_exhausted", why, "retry_exhausted")

    async def _upstream_call(self, ctx: Ctx, name: str, admitted: Admit) -> types.CallToolResult:
        progress = _progress(ctx)
        call = self.upstream.session.call_tool(name, admitted.arguments, progress_callback=progress)
        if self.call_timeout is None:
            return await _passed(call)
        with anyio.move_on_after(self.call_timeout) as scope:
            return await _passed(call)
        assert scope.cancelled_caught
        _log.warning("harnessweaver mcp: %r did not answer within %ss", name, self.call_timeout)
        text = f"the tool did not answer within {self.call_timeout} s"
        return refusal("block", text, "upstream_timeout")

    # -- sessions ------------------------------------------------------------------------

    async def _run(self, ctx: Ctx) -> tuple[Run, bool]:
        """The run of the request's session, and whether it is this request's alone (a
        stateless request: no session id)."""
        key = session_key(ctx)
        if key is None:
            return await self.gate.open(_request_run_id(ctx)), True
        run = self.runs.get(key)
        if run is None:
            run = await self.gate.open(key)
            self.runs[key] = run
            while len(self.runs) > MAX_RUNS:
                _, old = self.runs.popitem(last=False)
                await self.gate.close(old)
        else:
            self.runs.move_to_end(key)
        return run, False

    async def close(self) -> None:
        """Every run ends (``task.end``): the proxy is stopping."""
        while self.runs:
            _, run = self.runs.popitem(last=False)
            await self.gate.close(run)

    def _seen(self, ctx: Ctx) -> None:
        self.clients[id(ctx.session)] = ctx.session
        while len(self.clients) > MAX_RUNS:
            del self.clients[next(iter(self.clients))]

    async def _forward(self, message: types.ServerNotification) -> None:
        """The upstream's notification, to the clients that could want it."""
        for session in list(self.clients.values()):
            try:
                await session.send_notification(message)
            except Exception:
                self.clients.pop(id(session), None)


def session_key(ctx: Ctx) -> str | None:
    """The MCP session a request belongs to: stdio's one connection, Streamable HTTP's
    ``Mcp-Session-Id``; ``None`` for a stateless HTTP request (2026-07-28)."""
    request = ctx.request
    if request is None:
        return "stdio"
    headers = getattr(request, "headers", None)
    value = headers.get("mcp-session-id") if headers is not None else None
    return str(value) if value else None


def _request_run_id(ctx: Ctx) -> str:
    return f"mcp-request-{uuid.uuid4().hex}"


Handler = Callable[[Ctx, types.PaginatedRequestParams], Awaitable[Any]]


def _page(up: Upstream, method: str) -> Handler:
    async def handler(ctx: Ctx, params: types.PaginatedRequestParams) -> Any:
        return await _passed(getattr(up.session, method)(cursor=params.cursor))

    return handler


def _progress(ctx: Ctx) -> Any:
    """The upstream's progress, to the client, when the client's request asked for it."""
    meta: Any = ctx.meta
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    if token is None:
        return None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.send_progress_notification(
            token,
            progress,
            total,
            message,
            related_request_id=None if ctx.request_id is None else str(ctx.request_id),
        )

    return forward


async def _passed(call: Awaitable[T]) -> T:
    """The upstream's answer; its protocol error passed on as it is, a connection that
    failed as an error that says so (never a traceback, never a hang)."""
    try:
        return await call
    except MCPError:
        raise
    except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError) as e:
        exc = e
        _log.error("harnessweaver mcp: the upstream failed: %s", type(exc).__name__)
        raise MCPError(types.INTERNAL_ERROR, "the upstream MCP server is unavailable") from None
