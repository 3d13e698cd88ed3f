"""The upstream MCP server, as the proxy's SDK client sees it: its connection, its tools.

The proxy talks to the upstream with the SDK's ``Client`` (stdio: the server command as a
child process; Streamable HTTP: its URL). A connection is owned by a task of its own (the
SDK's client is a task group, which must be left in the task that entered it), started by
``start`` in the proxy's task group and closed by ``aclose``.

On a 2026-07-28 connection each request says what its client can do (``_meta``): the proxy
passes on what its own client declared (``declared``), so the upstream refuses what that
client could not answer, as it would without the proxy.

The tool listing is kept (name -> ``Tool``) so each ``tools/call`` is emitted with the tool's
description and input schema; ``notifications/tools/list_changed`` drops it.
"""

from __future__ import annotations

import contextvars
import logging
import warnings
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

__all__ = ["Upstream", "declared", "quiet", "stdio_target"]

_log = logging.getLogger("harnessweaver.mcp")

Forward = Callable[[Any], Awaitable[None]]

declared: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "harnessweaver_mcp_declared", default=None
)
"""The ``_meta`` entries of the client request being passed on that the upstream must see as
they are (the client's capabilities and log level), set around each upstream call."""

_PASSED_META = (types.CLIENT_CAPABILITIES_META_KEY, types.LOG_LEVEL_META_KEY)


def stdio_target(argv: list[str]) -> StdioServerParameters:
    """The upstream server started as a child process from ``argv`` (command and arguments)."""
    if not argv:
        raise ValueError("no upstream server command after '--'")
    return StdioServerParameters(command=argv[0], args=list(argv[1:]))


MAX_MESSAGE = 64 * 1024 * 1024
"""The largest message the proxy reads, in bytes: one SSE event of a Streamable HTTP upstream,
one line of a stdio client (``pipes.py``). A result of 50 MB passes, a hostile peer cannot fill
memory (the SDK's client stops at 1 MiB by default, which would refuse a large result that
the client itself would have read)."""


def _transport(target: StdioServerParameters | Any) -> Any:
    if isinstance(target, str):
        from mcp.client.streamable_http import streamable_http_client

        return streamable_http_client(target, max_sse_event_size=MAX_MESSAGE)
    return target


def client_meta(meta: Mapping[str, Any] | None) -> dict[str, Any]:
    """What of a client request's ``_meta`` goes upstream with it (see ``declared``)."""
    if not meta:
        return {}
    return {key: meta[key] for key in _PASSED_META if key in meta}


class Upstream:
    """One connection to the upstream, speaking ``mode`` (the SDK's: ``"auto"`` or
    ``"legacy"``). ``forward`` receives its notifications; ``callbacks`` answer its requests
    to a client (sampling, elicitation, roots)."""

    def __init__(self, target: StdioServerParameters | str, mode: str = "auto") -> None:
        self.target = target
        self.mode = mode
        self.client: Client | None = None
        self.tools: dict[str, types.Tool] = {}
        self.listed = False
        self.forward: Forward | None = None
        self.failed = False  # the connection was lost: the proxy opens a new one
        self._stop = anyio.Event()
        self._done = anyio.Event()

    async def start(self, group: TaskGroup, **callbacks: Any) -> Client:
        """Connect, in a task of ``group`` that holds the connection until ``aclose``."""
        await group.start(self._own, callbacks)
        assert self.client is not None
        return self.client

    async def _own(self, callbacks: dict[str, Any], *, task_status: TaskStatus[None]) -> None:
        client = Client(
            _transport(self.target),
            mode=self.mode,
            message_handler=self._on_message,
            cache=None,
            **callbacks,
        )
        try:
            async with client:
                self.client = client
                _pass_declared(client)
                task_status.started()
                await self._stop.wait()
        finally:
            self._done.set()

    async def aclose(self) -> None:
        self._stop.set()
        if self.client is not None:
            await self._done.wait()

    @property
    def session(self) -> Client:
        if self.client is None:
            raise RuntimeError("the upstream is not connected")
        return self.client

    @property
    def capabilities(self) -> types.ServerCapabilities:
        return self.session.server_capabilities

    @property
    def modern(self) -> bool:
        return self.session.protocol_version in MODERN_PROTOCOL_VERSIONS

    async def list_tools(self, cursor: str | None) -> types.ListToolsResult:
        """One page of the upstream's tools; each one listed is remembered."""
        result = await self.session.list_tools(cursor=cursor)
        if cursor is None:
            self.tools = {}
        self.tools.update({tool.name: tool for tool in result.tools})
        self.listed = True
        return result

    async def tool(self, name: str) -> types.Tool | None:
        """The tool as the upstream lists it (listed first when nothing was yet)."""
        if not self.listed:
            cursor: str | None = None
            while True:
                page = await self.list_tools(cursor)
                cursor = page.next_cursor
                if not cursor:
                    break
        return self.tools.get(name)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            _log.warning("harnessweaver mcp: the upstream sent %s", type(message).__name__)
            return
        if isinstance(message, types.ToolListChangedNotification):
            self.listed = False  # asked again at the next call, or when the client lists
        if self.forward is not None:
            try:
                await self.forward(message)
            except Exception as exc:  # a client gone cannot stop the upstream's other news
                _log.debug("harnessweaver mcp: not forwarded: %s", type(exc).__name__)


def _pass_declared(client: Client) -> None:
    """Make each 2026-07-28 request carry what the proxy's client declared (``declared``),
    over what the SDK stamps for the proxy itself. The SDK stamps a request's ``_meta`` in
    one function of its session, set when the revision is agreed; it is wrapped here."""
    session = client.session
    stamp = getattr(session, "_stamp", None)
    if stamp is None or client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return

    def passed(data: dict[str, Any], opts: Any) -> None:
        stamp(data, opts)
        extra = declared.get()
        if extra:
            data.setdefault("params", {}).setdefault("_meta", {}).update(extra)

    session._stamp = passed


@contextmanager
def quiet() -> Iterator[None]:
    """A block in which the SDK's deprecation warnings for the methods the proxy passes on
    (logging, subscriptions: deprecated in 2026-07-28, still served to older clients) are
    not raised: the proxy forwards what its client asked for."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield
