"""OpenTelemetry spans from the bus trace (the `otel` extra; skipped where it is missing)."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk")

from agent_support import Counted, S, answering, harness, once
from opentelemetry import trace as otel
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

import harnessweaver as hw
from harnessweaver.agent.otel import OTelExporter

pytestmark = pytest.mark.anyio


def tracer() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def flaky_guard(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
    raise ValueError("a message that must not be exported")


async def test_a_run_becomes_spans_per_hook_point_and_per_middleware() -> None:
    provider, memory = tracer()
    lookup = Counted()
    h = harness(
        flaky_guard,
        script=[S.tool_call("lookup", {"order": 1}), "done"],
        tools=[lookup.tool],
        exporters=[OTelExporter(provider)],
    )
    result = await h.run("go")
    spans = {span.name: span for span in memory.get_finished_spans()}
    run = spans["harnessweaver.run"]
    assert run.attributes is not None
    assert run.attributes["harnessweaver.exit_reason"] == "completed"
    assert run.attributes["harnessweaver.run_id"] == result.state.run_id
    hook_spans = [s for s in memory.get_finished_spans() if s.name.startswith("hook ")]
    assert len(hook_spans) == len([r for r in result.trace if r["kind"] == "hook"])
    assert all(s.parent is not None and s.parent.span_id == run.context.span_id for s in hook_spans)
    guard = spans["middleware flaky_guard"]
    assert (
        guard.parent is not None
        and guard.parent.span_id == spans["hook tool.before"].context.span_id
    )
    assert dict(guard.attributes or {}) == {
        "harnessweaver.emit": 5,
        "harnessweaver.hook": "tool.before",
        "harnessweaver.step": 1,
        "harnessweaver.tool": "lookup",
        "harnessweaver.outcome": "continue",
        "harnessweaver.modified": False,
        "harnessweaver.middleware": "flaky_guard",
        "harnessweaver.band": "app",
        "harnessweaver.failure": "exception",
        "harnessweaver.error": "ValueError",
        "harnessweaver.fail_mode": "open",
    }
    assert guard.status.status_code == otel.StatusCode.ERROR
    exported = repr([dict(s.attributes or {}) for s in memory.get_finished_spans()])
    assert "must not be exported" not in exported


async def test_each_segment_is_exported_when_it_stops() -> None:
    provider, memory = tracer()
    h = harness(
        answering("step.end", once(hw.Suspend("look at it"))),
        exporters=[OTelExporter(provider)],
    )
    first = await h.run("hi")
    await h.resume(first.state, hw.Decision.approve())
    runs = [s for s in memory.get_finished_spans() if s.name == "harnessweaver.run"]
    assert [s.attributes["harnessweaver.exit_reason"] for s in runs] == [  # type: ignore[index]
        "suspended",
        "completed",
    ]


def test_the_global_tracer_provider_is_never_set() -> None:
    before = otel.get_tracer_provider()
    provider, memory = tracer()
    OTelExporter(provider).export(
        [
            {
                "emit": 1,
                "hook": "task.start",
                "kind": "hook",
                "outcome": "continue",
                "modified": False,
            }
        ],
        run_id="r",
        exit_reason="completed",
    )
    assert otel.get_tracer_provider() is before
    assert [s.name for s in memory.get_finished_spans()] == ["hook task.start", "harnessweaver.run"]
