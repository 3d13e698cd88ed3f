"""What the upstream sends its client, relayed to the proxy's client.

An upstream server may ask its client to sample the model, elicit from the user or list its
roots, and sends notifications (progress, log messages, list changes). The proxy is that
client: it asks its own client the same thing and passes the notifications on. A request or
a notification made while a client request is being served goes with that request (on its
response stream, over Streamable HTTP); with several in flight, the most recent one. Outside
any request, a notification goes to the sessions the proxy has served.

A client that cannot answer gets its refusal passed back to the upstream as ``ErrorData``.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any

import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.message import ServerMessageMetadata

__all__ = ["MAX_SESSIONS", "Relay"]

_log = logging.getLogger("harnessweaver.mcp")

MAX_SESSIONS = 4096
"""Sessions remembered for notifications made outside any request (oldest forgotten)."""

Ctx = ServerRequestContext[Any, Any]

_serving: contextvars.ContextVar[Ctx | None] = contextvars.ContextVar(
    "harnessweaver_mcp_serving", default=None
)


class Relay:
    """The upstream client's callbacks and message handler, and the server middleware that
    says which client request is being served."""

    def __init__(self) -> None:
        self.inflight: dict[int, Ctx] = {}
        self.sessions: dict[int, Any] = {}

    async def middleware(self, ctx: Ctx, call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None:
            return await call_next(ctx)
        key = id(ctx)
        self.inflight[key] = ctx
        self._remember(ctx.session)
        token = _serving.set(ctx)
        try:
            return await call_next(ctx)
        finally:
            _serving.reset(token)
            self.inflight.pop(key, None)

    def callbacks(self) -> dict[str, Any]:
        return {
            "sampling_callback": self.sample,
            "elicitation_callback": self.elicit,
            "list_roots_callback": self.roots,
        }

    def _current(self) -> Ctx | None:
        ctx = _serving.get()
        if ctx is not None:
            return ctx
        return next(reversed(self.inflight.values()), None)

    # -- requests to the client ----------------------------------------------------------

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        return await self._ask(types.CreateMessageRequest(params=params), types.CreateMessageResult)

    async def elicit(self, context: Any, params: Any) -> Any:
        return await self._ask(types.ElicitRequest(params=params), types.ElicitResult)

    async def roots(self, context: Any) -> Any:
        return await self._ask(types.ListRootsRequest(), types.ListRootsResult)

    async def _ask(self, request: Any, result_type: type[Any]) -> Any:
        ctx = self._current()
        if ctx is None:
            return types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"{request.method}: no client request is being served to ask on",
            )
        related = ServerMessageMetadata(related_request_id=ctx.request_id)
        try:
            return await ctx.session.send_request(request, result_type, metadata=related)
        except Exception as exc:  # the client refused or failed: the upstream hears so
            kind = type(exc).__name__
            _log.info("harnessweaver mcp: %s relayed, failed: %s", request.method, kind)
            error = getattr(exc, "error", None)
            if isinstance(error, types.ErrorData):
                return error
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"{request.method} failed")

    # -- notifications -------------------------------------------------------------------

    def progress(self, ctx: Ctx) -> Any:
        """The upstream's progress on a call, to the client, when its request asked for it."""
        meta: Any = ctx.meta
        token = None
        if isinstance(meta, dict):  # the SDK's typed dict, or the wire's spelling
            token = meta.get("progress_token", meta.get("progressToken"))
        if token is None:
            return None
        related = None if ctx.request_id is None else str(ctx.request_id)

        async def forward(progress: float, total: float | None, message: str | None) -> None:
            await ctx.session.send_progress_notification(
                token, progress, total, message, related_request_id=related
            )

        return forward

    async def notify(self, message: Any) -> None:
        """An upstream notification, with the request being served, else to every session."""
        if isinstance(message, types.ProgressNotification):
            return  # progress is relayed per call, under the client's own token
        ctx = self._current()
        if ctx is not None:
            await ctx.session.send_notification(message, related_request_id=ctx.request_id)
            return
        for key, session in list(self.sessions.items()):
            try:
                await session.send_notification(message)
            except Exception:  # a session gone: forgotten
                self.sessions.pop(key, None)

    def _remember(self, session: Any) -> None:
        self.sessions[id(session)] = session
        while len(self.sessions) > MAX_SESSIONS:
            del self.sessions[next(iter(self.sessions))]
