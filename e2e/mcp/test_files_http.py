"""An SDK-built file server (files_server.py, ``MCPServer`` over Streamable HTTP on 127.0.0.1)
behind ``harnessweaver mcp --spec harness.yaml --trace T --upstream URL --listen 127.0.0.1:P``,
driven by the SDK's ``Client`` over HTTP: the same refusals and redaction as over stdio
(files_case.py), the trace saying so."""

from __future__ import annotations

from pathlib import Path

import pytest
from files_case import Served, check_trace, exercise
from mcp import Client
from mcp_parts import HERE, free_port, harnessweaver, python_server, read_trace, serving

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
"""The client's handshake: auto negotiates 2026-07-28 (stateless), legacy 2025-11-25."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("mode", MODES)
async def test_http_file_server_guarded(tmp_path: Path, mode: str) -> None:
    served = Served.make(tmp_path)
    trace = tmp_path / "trace.jsonl"
    upstream_port, proxy_port = free_port(), free_port()
    proxy = [
        harnessweaver(), "mcp", "--spec", str(HERE / "harness.yaml"), "--trace", str(trace),
        "--upstream", f"http://127.0.0.1:{upstream_port}/mcp",
        "--listen", f"127.0.0.1:{proxy_port}",
    ]  # fmt: skip
    upstream = python_server("files_server.py", upstream_port)
    with (
        serving(upstream, upstream_port, cwd=served.root, log=tmp_path / "upstream.log"),
        serving(proxy, proxy_port, cwd=served.root, log=tmp_path / "proxy.log"),
    ):
        url = f"http://127.0.0.1:{proxy_port}/mcp"
        async with Client(url, mode=mode) as client:
            await exercise(client, served)
    records = read_trace(trace)
    check_trace(records)
    # The run is the MCP session: one for the whole stateful (2025-11-25) session; one per
    # request where the protocol is stateless (2026-07-28), so each call is a run of its own.
    runs = [r["run"] for r in records if r.get("kind") == "hook" and r["hook"] == "tool.before"]
    assert len(runs) == 5
    assert len(set(runs)) == (1 if mode == "legacy" else 5)
