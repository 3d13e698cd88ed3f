"""The reference filesystem server (``@modelcontextprotocol/server-filesystem``, pinned in
package.json) over stdio behind ``harnessweaver mcp --spec harness.yaml --trace T -- node ...``,
driven by the SDK's ``Client``: the refused writes and the move never reach the folder, the
secret never reaches the client, and the trace records both (files_case.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from files_case import Served, check_trace, exercise
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_parts import HERE, harnessweaver, node_modules_bin, read_trace

pytestmark = pytest.mark.anyio

MODES = ["auto", "legacy"]
"""The client's handshake: auto negotiates 2026-07-28 (stateless), legacy 2025-11-25."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("mode", MODES)
async def test_filesystem_server_guarded(tmp_path: Path, mode: str) -> None:
    served = Served.make(tmp_path)
    trace = tmp_path / "trace.jsonl"
    server = node_modules_bin("mcp-server-filesystem")
    args = [
        "mcp", "--spec", str(HERE / "harness.yaml"), "--trace", str(trace),
        "--", str(server), str(served.root),
    ]  # fmt: skip
    # The proxy runs in the served folder (harness.yaml's scratch/ is relative to it), with
    # this environment (the SDK's default passes on only a few variables).
    proxy = StdioServerParameters(
        command=harnessweaver(), args=args, cwd=served.root, env=dict(os.environ)
    )
    async with Client(proxy, mode=mode) as client:
        await exercise(client, served)
    records = read_trace(trace)
    check_trace(records)
    # Over stdio the proxy process serves one client: one run for all its calls.
    assert len({r["run"] for r in records}) == 1
