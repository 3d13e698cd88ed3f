"""The proxy's two transports: stdio (one client, one session) and Streamable HTTP.

Both connect to the upstream first: a proxy whose upstream cannot be started or reached
serves nobody (exit status 2 with the reason). The trace sink, when asked for, is shared by
every session's run; each run's records name its run id, the MCP session's.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.server.lowlevel import NotificationOptions, Server

from ..context import JsonlSink
from .gate import Gate
from .pipes import pipes
from .proxy import Proxy
from .relay import Relay
from .screen import Screened
from .telemetry import Telemetry
from .upstream import Upstream, stdio_target

__all__ = ["serve_http", "serve_stdio"]

_log = logging.getLogger("harnessweaver.mcp")


async def serve_stdio(harness: Any, args: argparse.Namespace, argv: list[str]) -> None:
    """Serve one client on this process's stdin and stdout until it closes them, or until
    SIGTERM or SIGINT (a client stopping its server sends them): either way every run ends
    (``task.end``) and the trace is written before the process exits."""
    from mcp.server.stdio import stdio_server

    async with _proxy(harness, args, stdio_target(argv)) as proxy:
        server = proxy.server(args.name)
        watching = anyio.CancelScope()
        proxy.group.start_soon(_stop_on_signal, proxy, watching)
        own = await pipes()
        screened = Screened(own)
        stdout = own  # None: the SDK's own stdout (a terminal or a file)
        async with stdio_server(stdin=screened, stdout=stdout) as (read, write):  # type: ignore[arg-type]
            screened.answer_on(write)
            await server.run(read, write, _options(server, proxy))
        watching.cancel()  # the client closed stdin: the runs end on the way out


async def serve_http(harness: Any, args: argparse.Namespace, host: str, port: int) -> None:
    """Serve Streamable HTTP at ``http://host:port/mcp`` until SIGTERM or SIGINT; then every
    run ends and the trace is written. A session the client ends (``DELETE``) ends its run."""
    import uvicorn

    async with _proxy(harness, args, args.upstream) as proxy:
        server = proxy.server(args.name)
        app = _ending_sessions(server.streamable_http_app(host=host), proxy)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        print(f"harnessweaver mcp: serving http://{host}:{port}/mcp", file=sys.stderr, flush=True)
        await _Uvicorn(config).serve()


class _Uvicorn:
    """uvicorn's server, told not to raise the signal that stopped it again once it has
    stopped (its default), which would end the process before the runs end."""

    def __new__(cls, config: Any) -> Any:
        import uvicorn

        class Server(uvicorn.Server):
            @contextmanager
            def capture_signals(self) -> Iterator[None]:
                if threading.current_thread() is not threading.main_thread():
                    yield
                    return
                stops = (signal.SIGINT, signal.SIGTERM)
                original = {sig: signal.signal(sig, self.handle_exit) for sig in stops}
                try:
                    yield
                finally:
                    for sig, handler in original.items():
                        signal.signal(sig, handler)

        return Server(config)


async def _stop_on_signal(proxy: Proxy, scope: anyio.CancelScope) -> None:
    """On SIGTERM or SIGINT, end every run, then the process. The SDK reads stdin in a worker
    thread that no cancellation reaches while the client keeps the pipe open, so the process
    exits itself once the runs have ended (each emit's trace is already flushed)."""
    with scope, anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for _ in signals:
            await _wind_down(proxy)
            os._exit(0)


async def _wind_down(proxy: Proxy) -> None:
    """Every run ends (``task.end``) and the connections close, then the trace file and the
    spans are written out: on the way out, and on a signal."""
    with anyio.CancelScope(shield=True):
        await proxy.close()
    _close_outputs(proxy.gate.sink, proxy.telemetry)


def _close_outputs(sink: JsonlSink | None, telemetry: Telemetry | None) -> None:
    if sink is not None:
        sink.close()
    if telemetry is not None:
        telemetry.close()


def _ending_sessions(app: Any, proxy: Proxy) -> Any:
    """The ASGI app, which also ends the run of a session its client ends (``DELETE`` with
    its ``Mcp-Session-Id``): the SDK's server sees no message for it."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        await app(scope, receive, send)
        if scope.get("type") == "http" and scope.get("method") == "DELETE":
            headers = dict(scope.get("headers") or ())
            key = headers.get(b"mcp-session-id")
            if key:
                await proxy.runs.end(key.decode("latin-1"))

    return wrapped


@asynccontextmanager
async def _proxy(harness: Any, args: argparse.Namespace, target: Any) -> AsyncIterator[Proxy]:
    """The gate, the upstream connected and the proxy; on exit every run ends, the upstream
    is closed and the trace written."""
    from .command import _Unavailable

    telemetry = None if args.otel is None else Telemetry(args.otel)
    sink = None if args.trace is None else JsonlSink(args.trace)
    proxy: Proxy | None = None
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
            exporters = () if telemetry is None else telemetry.exporters
            book, own = _approvals(harness, getattr(args, "state_file", None))
            gate = Gate(
                harness,
                sink=sink,
                task=args.task,
                exporters=exporters,
                approvals=book,
                subject=f"mcp:{args.name}",
            )
            proxy = Proxy(
                gate, upstream, group, relay, call_timeout=args.call_timeout, telemetry=telemetry
            )
            try:
                yield proxy
            finally:
                await _wind_down(proxy)
                if own is not None:  # the approvals' own store (no spec state:)
                    with anyio.CancelScope(shield=True):
                        await own.close()
    except BaseExceptionGroup as group_error:
        unavailable = group_error.subgroup(_Unavailable)
        if unavailable is not None:
            raise unavailable.exceptions[0] from None
        raise
    finally:
        if proxy is None:  # the upstream never started: nothing was written yet
            _close_outputs(sink, telemetry)


def _approvals(harness: Any, state_file: Path | None) -> tuple[Any, Any]:
    """The approvals book calls are filed in when the client cannot ask a person, and the
    store the proxy opened for it (``None``: the harness's own). The spec's ``state:`` when it
    names a shared backend; else an SQLite file (``--state-file``, else the hook command's
    state file), where ``harnessweaver approvals`` looks by default: a record in the proxy's
    memory could be decided by nobody."""
    from ..approvals import Approvals, spec_identity
    from ..hookcmd.approve import book_of

    book = book_of(harness)
    if harness.store.backend != "memory":
        return book, None
    from ..approvals.config import sqlite_store

    store = sqlite_store(state_file)
    own = Approvals(
        store, spec=spec_identity(harness), expires_after=book.expires_after, notify=book.notify
    )
    return own, store


def _options(server: Server[Any], proxy: Proxy) -> Any:
    caps = proxy.upstream.capabilities
    changes = NotificationOptions(
        tools_changed=bool(caps.tools and caps.tools.list_changed),
        resources_changed=bool(caps.resources and caps.resources.list_changed),
        prompts_changed=bool(caps.prompts and caps.prompts.list_changed),
    )
    return server.create_initialization_options(changes)
