"""The upstream of the proxy's load test: the SDK's ``MCPServer`` with one tool, ``echo``, that
returns its argument (so a result that went to the wrong call or session is seen).

    python load_upstream.py stdio    # serves on stdin/stdout
    python load_upstream.py http     # Streamable HTTP on 127.0.0.1, a free port, printed first
"""

from __future__ import annotations

import logging
import socket
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("load-upstream")


@server.tool()
def echo(text: str) -> str:
    """Returns its argument."""
    return text


def _serve_http() -> None:
    import uvicorn

    logging.getLogger("mcp").setLevel(logging.WARNING)  # a line per session otherwise

    # A socket of proto IPPROTO_TCP: asyncio sets TCP_NODELAY only on those, and without it
    # every JSON response waits 40 ms for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    print(sock.getsockname()[1], flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning", access_log=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    if sys.argv[1:] == ["stdio"]:
        server.run()
    elif sys.argv[1:] == ["http"]:
        _serve_http()
    else:
        raise SystemExit(f"usage: {sys.argv[0]} stdio|http")
