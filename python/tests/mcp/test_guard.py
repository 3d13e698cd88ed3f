"""``harnessweaver.mcp.guard``: the same decisions inside a server built with the SDK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inproc import approve, decline, spec_file, upstream_server
from mcp import Client
from mcp.server.lowlevel import Server

import harnessweaver as hw
from harnessweaver.mcp import guard

pytestmark = pytest.mark.anyio

ALLOW = "  - {use: harnessweaver.tool_allowlist, id: allow, allow: [echo, secret]}\n"


def text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_guarded_server_decides_as_the_proxy(tmp_path: Path, mode: str) -> None:
    calls: list[dict[str, Any]] = []
    server = guard(upstream_server(calls), spec_file(tmp_path, ALLOW))
    async with Client(server, mode=mode, elicitation_callback=approve) as client:  # type: ignore[arg-type]
        listed = [tool.name for tool in (await client.list_tools()).tools]
        blocked = await client.call_tool("echo", {"text": "rm -rf /"})
        quiet = await client.call_tool("echo", {"text": "quiet"})
        secret = await client.call_tool("secret", {})
        asked = await client.call_tool("echo", {"text": "ask"})
        shell = await client.call_tool("shell", {"command": "ls"})
    assert listed == ["echo", "secret"]
    assert blocked.is_error is True
    assert (
        text(blocked) == "harnessweaver refused the call: destructive command (code: destructive)"
    )
    assert text(quiet) == "echo: QUIET"
    assert (text(secret), secret.structured_content) == (
        "the key is [redacted]",
        {"result": "the key is [redacted]"},
    )
    assert (asked.is_error, text(asked)) == (False, "echo: ask")
    assert "(code: tool_not_allowed)" in text(shell)
    assert calls == [
        {"tool": "echo", "text": "QUIET"},
        {"tool": "secret"},
        {"tool": "echo", "text": "ask"},
    ]


async def test_a_declined_call_never_reaches_the_handler(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    server = guard(upstream_server(calls), hw.load(spec_file(tmp_path)))
    async with Client(server, elicitation_callback=decline) as client:  # type: ignore[arg-type]
        result = await client.call_tool("echo", {"text": "ask"})
    assert "(code: approval_declined)" in text(result)
    assert calls == []


async def test_a_low_level_server_is_guarded_too(tmp_path: Path) -> None:
    import mcp_types as types

    ran: list[str] = []

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {"text": {"type": "string"}}}
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema=schema)])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        ran.append(str((params.arguments or {}).get("text")))
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    server = guard(
        Server("low", on_list_tools=list_tools, on_call_tool=call_tool), spec_file(tmp_path)
    )
    async with Client(server) as client:
        blocked = await client.call_tool("echo", {"text": "rm -rf /"})
        done = await client.call_tool("echo", {"text": "quiet"})
    assert blocked.is_error is True
    assert text(done) == "done"
    assert ran == ["QUIET"]


def test_guard_refuses_what_is_not_a_server(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="guard takes an MCP SDK server"):
        guard(object(), spec_file(tmp_path))
    with pytest.raises(TypeError, match="guard takes a harness spec's path or a loaded Harness"):
        guard(upstream_server([]), 42)


async def test_each_answered_call_is_exported_as_spans(tmp_path: Path) -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from harnessweaver.agent.otel import OTelExporter

    spans = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    server = guard(upstream_server([]), spec_file(tmp_path), exporters=[OTelExporter(provider)])
    async with Client(server) as client:  # type: ignore[arg-type]
        await client.call_tool("echo", {"text": "rm -rf /"})
        await client.call_tool("echo", {"text": "hello"})
    finished = spans.get_finished_spans()
    runs = [span for span in finished if span.name == "harnessweaver.run"]
    assert [span.attributes["harnessweaver.exit_reason"] for span in runs] == [
        "tool_call",
        "tool_call",
    ]
    run_ids = {span.attributes["harnessweaver.run_id"] for span in runs}
    assert len(run_ids) == 1
    assert str(run_ids.pop()).startswith("stdio-")
    hooks = [span for span in finished if span.name == "hook tool.before"]
    assert [span.attributes.get("harnessweaver.outcome") for span in hooks] == [
        "block",
        "continue",
    ]
    assert [span.attributes.get("harnessweaver.code") for span in hooks] == ["destructive", None]


async def test_a_trace_path_is_written_per_call_and_closed_with_the_guard(tmp_path: Path) -> None:
    import gc

    trace = tmp_path / "trace.jsonl"
    server = guard(upstream_server([]), spec_file(tmp_path), trace=trace)
    async with Client(server) as client:  # type: ignore[arg-type]
        await client.call_tool("echo", {"text": "rm -rf /"})
        written = trace.read_text(encoding="utf-8")  # flushed when the call was answered
    assert '"outcome":"block"' in written
    del server, client
    gc.collect()  # the guard's file is closed with it: no ResourceWarning (an error here)
