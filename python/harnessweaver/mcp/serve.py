"""The proxy's two transports: stdio (one client, one session) and Streamable HTTP.

Both connect to the upstream first: a proxy whose upstream cannot be started or reached
serves nobody (exit status 2 with the reason). The trace sink, when asked for, is shared by
every session's run; each run's records name its run id, the MCP session's.
"""

from __future__ import annotations

import argparse
import logging
import sys
from contextlib import AsyncExitStack
from typing import Any

from mcp.server.lowlevel import NotificationOptions, Server

from .gate import Gate
from .proxy import Proxy
from .relay import Relay
from .upstream import Upstream, stdio_target

__all__ = ["serve_http", "serve_stdio"]

_log = logging.getLogger("harnessweaver.mcp")


async def serve_stdio(harness: Any, args: argparse.Namespace, argv: list[str]) -> None:
    """Serve one client on this process's stdin and stdout until it closes them."""
    from mcp.server.stdio import stdio_server

    async with _proxy(harness, args, stdio_target(argv)) as proxy:
        server = proxy.server(args.name)
        relay = proxy.relay
        original = server.middleware
        server.middleware = [*original, _remember(relay)]
        async with stdio_server() as (read, write):
            await server.run(read, write, _options(server, proxy))


async def serve_http(harness: Any, args: argparse.Namespace, host: str, port: int) -> None:
    """Serve Streamable HTTP at ``http://host:port/mcp`` until stopped."""
    import uvicorn

    async with _proxy(harness, args, args.upstream) as proxy:
        server = proxy.server(args.name)
        server.middleware = [*server.middleware, _remember(proxy.relay)]
        app = server.streamable_http_app(host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        print(f"harnessweaver mcp: serving http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        await uvicorn.Server(config).serve()


class _proxy:
    """The gate, the upstream connected and the proxy; on exit every run ends, the upstream
    is closed and the trace written."""

    def __init__(self, harness: Any, args: argparse.Namespace, target: Any) -> None:
        self.harness, self.args, self.target = harness, args, target
        self.stack = AsyncExitStack()

    async def __aenter__(self) -> Proxy:
        from .command import _Unavailable

        sink = self._sink()
        gate = Gate(self.harness, sink=sink, task=self.args.task)
        upstream = Upstream(self.target)
        relay = Relay()
        try:
            await upstream.connect(**relay.callbacks())
        except Exception as exc:
            _log.error("harnessweaver mcp: the upstream failed to start: %s", type(exc).__name__)
            if sink is not None:
                sink.close()
            raise _Unavailable(
                f"the upstream MCP server cannot be reached ({type(exc).__name__})"
            ) from None
        self.stack.push_async_callback(upstream.aclose)
        if sink is not None:
            self.stack.callback(sink.close)
        proxy = Proxy(gate, upstream, call_timeout=self.args.call_timeout)
        proxy.relay = relay
        self.stack.push_async_callback(proxy.close)
        return proxy

    async def __aexit__(self, *exc: object) -> None:
        await self.stack.aclose()

    def _sink(self) -> Any:
        if self.args.trace is None:
            return None
        from ..context import JsonlSink

        return JsonlSink(self.args.trace)


def _options(server: Server[Any], proxy: Proxy) -> Any:
    caps = proxy.upstream.capabilities
    changes = NotificationOptions(
        tools_changed=bool(caps.tools and caps.tools.list_changed),
        resources_changed=bool(caps.resources and caps.resources.list_changed),
        prompts_changed=bool(caps.prompts and caps.prompts.list_changed),
    )
    return server.create_initialization_options(changes)


def _remember(relay: Relay) -> Any:
    """Server middleware: the session of each request is where the upstream's requests to a
    client go while it is served (sampling, elicitation, roots)."""

    async def middleware(ctx: Any, call_next: Any) -> Any:
        if ctx.request_id is not None:
            relay.session = ctx.session
        return await call_next(ctx)

    return middleware
