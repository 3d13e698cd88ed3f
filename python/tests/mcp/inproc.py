"""The proxy in this process, for tests of what it decides: an upstream built with the SDK's
``MCPServer``, the proxy's ``Proxy`` in front of it (its upstream client connected in
process), and the SDK's ``Client`` connected to the proxy's server in process. Real SDK
sessions end to end, without a process or a socket: the transports have tests of their own
(``test_proxy_stdio.py``, and e2e/mcp).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import Client
from mcp.server.mcpserver import MCPServer

from harnessweaver.mcp.gate import Gate
from harnessweaver.mcp.proxy import Proxy
from harnessweaver.mcp.relay import Relay
from harnessweaver.mcp.upstream import Upstream
from harnessweaver.spec import load

__all__ = ["PLUGIN", "approve", "decline", "proxied", "spec_file", "upstream_server"]

PLUGIN = """
import harnessweaver as hw

@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def policy(event, env):
    text = event.call.arguments.get("text", "")
    if text == "rm -rf /":
        return hw.Block(reason="destructive command", code="destructive")
    if text.startswith("ask"):
        return hw.Suspend(reason="a person must approve", code="needs_approval")
    if text == "retry":
        return hw.Retry(reason="try again")
    if text == "quiet":
        new = event.call.model_copy(update={"arguments": {"text": "QUIET"}})
        return hw.Continue(modified=event.model_copy(update={"call": new}))
    return None

@hw.middleware(hooks=["tool.after"], fail_mode="closed")
async def redact(event, env):
    output = json.dumps(event.result.model_dump(mode="json")["output"])
    if "sk-" not in output:
        return None
    clean = json.loads(re.sub(r"sk-[A-Za-z0-9]+", "[redacted]", output))
    result = event.result.model_copy(update={"output": clean})
    return hw.Continue(modified=event.model_copy(update={"result": result}))

plugin = hw.Plugin(namespace="t", version="1", middleware=[policy, redact])
"""


def spec_file(folder: Path, extra: str = "", *, more: str = "") -> Path:
    """A spec with the test policy (``PLUGIN``, plus ``more`` middleware source) and
    ``extra`` middleware items. The plugin module is named after the folder: a module name
    imported once is not imported again in this process."""
    module = f"tplug_{abs(hash(str(folder)))}"
    source = "import json, re\n" + PLUGIN + more
    if more:
        source += "\nplugin = hw.Plugin(namespace='t', version='1', middleware=MIDDLEWARE)\n"
    (folder / f"{module}.py").write_text(source, encoding="utf-8")
    spec = folder / "harness.yaml"
    spec.write_text(
        f"plugins: {{local: [{module}]}}\nmiddleware:\n"
        "  - {use: t.policy, id: policy}\n  - {use: t.redact, id: redact}\n" + extra,
        encoding="utf-8",
    )
    return spec


def upstream_server(calls: list[dict[str, Any]]) -> MCPServer:
    """Tools that record each call as it arrives (so "never called" is checkable)."""
    server = MCPServer("upstream")

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        calls.append({"tool": "echo", "text": text})
        return f"echo: {text}"

    @server.tool()
    def secret() -> str:
        """Reveal an API key."""
        calls.append({"tool": "secret"})
        return "the key is sk-live1234"

    @server.tool()
    def shell(command: str) -> str:
        """Run a command."""
        calls.append({"tool": "shell", "command": command})
        return "ran"

    return server


async def approve(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approve": True})


async def decline(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="decline")


@asynccontextmanager
async def proxied(
    spec: Path,
    upstream: MCPServer,
    *,
    mode: str = "auto",
    trace: Path | None = None,
    **client: Any,
) -> AsyncIterator[Client]:
    """The SDK's client, connected in process to the proxy fronting ``upstream``."""
    from harnessweaver.context import JsonlSink

    sink = None if trace is None else JsonlSink(trace)
    async with anyio.create_task_group() as group:
        relay = Relay()
        up = Upstream(upstream)  # type: ignore[arg-type]  # the SDK's client takes a server
        await up.start(group, **relay.callbacks())
        proxy = Proxy(Gate(load(spec), sink=sink), up, group, relay)
        try:
            async with Client(proxy.server(), mode=mode, **client) as connected:  # type: ignore[arg-type]
                yield connected
        finally:
            await proxy.close()
            if sink is not None:
                sink.close()


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
