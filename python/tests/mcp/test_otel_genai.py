"""The MCP guard's spans with the GenAI semantic conventions opted in: each answered call an
``invoke_agent`` span with its ``execute_tool`` inside, the decisions as events."""

from __future__ import annotations

from pathlib import Path

import pytest
from inproc import spec_file, upstream_server
from mcp import Client

from harnessweaver.mcp import guard

pytestmark = pytest.mark.anyio


async def test_each_answered_call_is_an_execute_tool_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from harnessweaver.agent.otel import OTelExporter

    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    spans = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    server = guard(upstream_server([]), spec_file(tmp_path), exporters=[OTelExporter(provider)])
    async with Client(server) as client:  # type: ignore[arg-type]
        await client.call_tool("echo", {"text": "rm -rf /"})
        await client.call_tool("echo", {"text": "hello"})
    finished = spans.get_finished_spans()
    by_id = {span.context.span_id: span for span in finished}

    def parent(span: object) -> str | None:
        up = getattr(span, "parent", None)
        return by_id[up.span_id].name if up is not None else None

    runs = [s for s in finished if s.name == "invoke_agent"]
    assert [s.attributes["harnessweaver.exit_reason"] for s in runs] == ["tool_call", "tool_call"]  # type: ignore[index]
    assert {s.attributes["gen_ai.conversation.id"] for s in runs} == {  # type: ignore[index]
        s.attributes["harnessweaver.run_id"]  # type: ignore[index]
        for s in runs
    }
    tools = [s for s in finished if s.name == "execute_tool echo"]
    assert [parent(s) for s in tools] == ["invoke_agent", "invoke_agent"]
    assert [s.attributes["gen_ai.tool.name"] for s in tools] == ["echo", "echo"]  # type: ignore[index]
    befores = [s for s in finished if s.name == "hook tool.before"]
    assert [parent(s) for s in befores] == ["execute_tool echo", "execute_tool echo"]
    blocked = [(e.name, (e.attributes or {}).get("harnessweaver.code")) for e in befores[0].events]
    assert ("harnessweaver.block", "destructive") in blocked
    assert not any(s.name.startswith(("harnessweaver.run", "middleware ")) for s in finished)
    exported = repr(
        [(dict(s.attributes or {}), [dict(e.attributes or {}) for e in s.events]) for s in finished]
    )
    assert "rm -rf" not in exported and "hello" not in exported
