"""The upstream MCP server of the proxy benchmarks: one tool, ``echo``, that returns its
argument, built with the SDK's own ``MCPServer``. What it does is as cheap as a tool can be, so
the figures are the transports' and the proxy's.

    python mcp_upstream.py stdio     # serves on stdin/stdout
    python mcp_upstream.py http      # Streamable HTTP on 127.0.0.1, a free port, printed first
"""

from __future__ import annotations

import logging
import socket
import sys

from mcp.server.mcpserver import MCPServer

__all__ = ["make_server"]


def make_server() -> MCPServer:
    """A new server (``guard`` wraps a server in place: a guarded and a bare one need two)."""
    server = MCPServer("bench-upstream")

    @server.tool()
    def echo(text: str) -> str:
        """Returns its argument."""
        return text

    return server


def _serve_http() -> None:
    import uvicorn

    logging.getLogger("mcp").setLevel(logging.WARNING)  # a line per session otherwise

    # proto=IPPROTO_TCP, not socket.socket()'s 0: asyncio sets TCP_NODELAY only on sockets that
    # say they are TCP, and without it a JSON response (headers, then body) waits for the
    # client's delayed ACK, 40 ms a call (docs/performance.md, "MCP proxy").
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    print(sock.getsockname()[1], flush=True)
    app = make_server().streamable_http_app()
    config = uvicorn.Config(app, log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["stdio"]:
        make_server().run()
    elif sys.argv[1:] == ["http"]:
        _serve_http()
    else:
        raise SystemExit(f"usage: {sys.argv[0]} stdio|http")
