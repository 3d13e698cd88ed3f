"""The proxy's two transports: stdio (one client, one session) and Streamable HTTP.

Both connect to the upstream first: a proxy whose upstream cannot be started or reached
serves nobody (exit status 2 with the reason). The trace sink, when asked for, is shared by
every session's run; each run's records name its run id, the MCP session's.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.lowlevel import NotificationOptions, Server

from ..context import JsonlSink
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
        async with stdio_server() as (read, write):
            await server.run(read, write, _options(server, proxy))


async def serve_http(harness: Any, args: argparse.Namespace, host: str, port: int) -> None:
    """Serve Streamable HTTP at ``http://host:port/mcp`` until stopped."""
    import uvicorn

    async with _proxy(harness, args, args.upstream) as proxy:
        server = proxy.server(args.name)
        app = server.streamable_http_app(host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        print(f"harnessweaver mcp: serving http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        await uvicorn.Server(config).serve()


@asynccontextmanager
async def _proxy(harness: Any, args: argparse.Namespace, target: Any) -> AsyncIterator[Proxy]:
    """The gate, the upstream connected and the proxy; on exit every run ends, the upstream
    is closed and the trace written."""
    from .command import _Unavailable

    sink = None if args.trace is None else JsonlSink(args.trace)
    try:
        async with anyio.create_task_group() as group:
            upstream = Upstream(target)
            relay = Relay()
            try:
                await upstream.start(group, **relay.callbacks())
            except Exception as exc:
                kind = type(exc).__name__
                _log.error("harnessweaver mcp: the upstream failed to start: %s", kind)
                raise _Unavailable(f"the upstream MCP server cannot be reached ({kind})") from None
            gate = Gate(harness, sink=sink, task=args.task)
            proxy = Proxy(gate, upstream, group, relay, call_timeout=args.call_timeout)
            try:
                yield proxy
            finally:
                with anyio.CancelScope(shield=True):
                    await proxy.close()
    except BaseExceptionGroup as group_error:
        unavailable = group_error.subgroup(_Unavailable)
        if unavailable is not None:
            raise unavailable.exceptions[0] from None
        raise
    finally:
        if sink is not None:
            sink.close()


def _options(server: Server[Any], proxy: Proxy) -> Any:
    caps = proxy.upstream.capabilities
    changes = NotificationOptions(
        tools_changed=bool(caps.tools and caps.tools.list_changed),
        resources_changed=bool(caps.resources and caps.resources.list_changed),
        prompts_changed=bool(caps.prompts and caps.prompts.list_changed),
    )
    return server.create_initialization_options(changes)
