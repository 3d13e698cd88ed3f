"""The upstream MCP server, as the proxy's SDK client sees it: its connection, its tools.

The proxy talks to the upstream with the SDK's ``Client`` (stdio: the server command as a
child process; Streamable HTTP: its URL), whatever protocol revision the two agree on. The
tool listing is kept (name -> ``Tool``) so each ``tools/call`` is emitted with the tool's
description and input schema; ``notifications/tools/list_changed`` drops it, and tells the
proxy's clients.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPDeprecationWarning

__all__ = ["Upstream", "quiet", "stdio_target"]

_log = logging.getLogger("harnessweaver.mcp")

Forward = Callable[[types.ServerNotification], Awaitable[None]]


def stdio_target(argv: list[str]) -> StdioServerParameters:
    """The upstream server started as a child process from ``argv`` (command and arguments)."""
    if not argv:
        raise ValueError("no upstream server command after '--'")
    return StdioServerParameters(command=argv[0], args=list(argv[1:]))


class Upstream:
    """One connection to the upstream, opened by ``connect`` and closed by ``aclose``.

    ``forward`` receives the upstream's notifications (progress, logging, list changes) for
    the proxy to pass on; ``callbacks`` are the client's answers to the upstream's requests
    (sampling, elicitation, roots), which the proxy asks its own client."""

    def __init__(self, target: StdioServerParameters | str) -> None:
        self.target = target
        self.client: Client | None = None
        self.tools: dict[str, types.Tool] = {}
        self.listed = False
        self.forward: Forward | None = None
        self._stack = AsyncExitStack()

    async def connect(self, **callbacks: Any) -> Client:
        client = Client(
            self.target,
            message_handler=self._on_message,
            cache=None,
            **callbacks,
        )
        self.client = await self._stack.enter_async_context(client)
        return self.client

    async def aclose(self) -> None:
        await self._stack.aclose()

    @property
    def session(self) -> Client:
        if self.client is None:
            raise RuntimeError("the upstream is not connected")
        return self.client

    @property
    def capabilities(self) -> types.ServerCapabilities:
        return self.session.server_capabilities

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


@contextmanager
def quiet() -> Iterator[None]:
    """A block in which the SDK's deprecation warnings for the methods the proxy passes on
    (logging, subscriptions: deprecated in 2026-07-28, still served to older clients) are
    not raised: the proxy forwards what its client asked for."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        yield
