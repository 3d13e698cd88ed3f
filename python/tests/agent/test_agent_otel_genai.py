"""The GenAI semantic-convention spans of ``OTelExporter`` (opt-in), on real runs."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from agent_support import Counted, S, answering, harness, once
from checkout import require_checkout
from opentelemetry import trace as otel
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)

import harnessweaver as hw
from harnessweaver.agent.otel import EVENTS, OTelExporter, gen_ai_opted_in

pytestmark = pytest.mark.anyio

OPT_IN = "OTEL_SEMCONV_STABILITY_OPT_IN"


def tracer() -> tuple[TracerProvider, InMemorySpanExporter]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def flaky_guard(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
    raise ValueError("a message that must not be exported")


@hw.middleware(hooks=["model.after"], fail_mode="closed")
async def noter(event: Any, env: hw.Envelope) -> hw.Continue:
    return hw.Continue(None, warnings=["a warning text that must not be exported"])


def parent_of(span: ReadableSpan, spans: list[ReadableSpan]) -> str | None:
    if span.parent is None:
        return None
    return next(s.name for s in spans if s.context.span_id == span.parent.span_id)


async def blocked_run(exporter: OTelExporter) -> hw.RunResult:
    lookup = Counted()
    h = harness(
        flaky_guard,
        noter,
        answering("tool.before", once(hw.Block("order 1 is private", code="denied"))),
        script=[S.tool_call("lookup", {"order": 1}), S.tool_call("lookup", {"order": 2}), "done"],
        tools=[lookup.tool],
        exporters=[exporter],
    )
    return await h.run("go")


@pytest.mark.parametrize(
    ("value", "opted"),
    [
        ("gen_ai_latest_experimental", True),
        ("http, gen_ai_latest_experimental ,database", True),
        ("", False),
        ("http", False),
        ("gen_ai_latest_experimental_2", False),
        ("gen_ai", False),
    ],
)
def test_the_opt_in_is_one_item_of_the_comma_separated_list(value: str, opted: bool) -> None:
    assert gen_ai_opted_in({OPT_IN: value}) is opted


def test_the_environment_decides_when_the_constructor_does_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    provider, _ = tracer()
    monkeypatch.setenv(OPT_IN, "http,gen_ai_latest_experimental")
    assert OTelExporter(provider).gen_ai
    assert not OTelExporter(provider, gen_ai=False).gen_ai
    monkeypatch.setenv(OPT_IN, "http")
    assert not OTelExporter(provider).gen_ai
    assert OTelExporter(provider, gen_ai=True).gen_ai
    monkeypatch.delenv(OPT_IN)
    assert not OTelExporter(provider).gen_ai


async def test_without_the_opt_in_the_spans_are_the_harnessweaver_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(OPT_IN, "http")
    provider, memory = tracer()
    await blocked_run(OTelExporter(provider))
    names = {s.name for s in memory.get_finished_spans()}
    assert "harnessweaver.run" in names and "middleware flaky_guard" in names
    assert not any(n.startswith(("invoke_agent", "chat", "execute_tool")) for n in names)
    assert all(not s.events for s in memory.get_finished_spans())


async def test_a_run_becomes_invoke_agent_chat_and_execute_tool_spans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(OPT_IN, "gen_ai_latest_experimental")
    provider, memory = tracer()
    result = await blocked_run(
        OTelExporter(provider, agent_name="support", provider_name="openai", request_model="m-1")
    )
    spans = list(memory.get_finished_spans())
    tree = [(s.name, parent_of(s, spans)) for s in spans]
    assert tree == [
        ("hook task.start", "invoke_agent support"),
        ("hook step.start", "invoke_agent support"),
        ("hook model.before", "chat m-1"),
        ("hook model.after", "chat m-1"),
        ("chat m-1", "invoke_agent support"),
        ("hook tool.before", "execute_tool lookup"),
        ("execute_tool lookup", "invoke_agent support"),  # blocked: no tool.after
        ("hook step.end", "invoke_agent support"),
        ("hook step.start", "invoke_agent support"),
        ("hook model.before", "chat m-1"),
        ("hook model.after", "chat m-1"),
        ("chat m-1", "invoke_agent support"),
        ("hook tool.before", "execute_tool lookup"),
        ("hook tool.after", "execute_tool lookup"),
        ("execute_tool lookup", "invoke_agent support"),
        ("hook step.end", "invoke_agent support"),
        ("hook step.start", "invoke_agent support"),
        ("hook model.before", "chat m-1"),
        ("hook model.after", "chat m-1"),
        ("chat m-1", "invoke_agent support"),
        ("hook step.end", "invoke_agent support"),
        ("hook task.end", "invoke_agent support"),
        ("invoke_agent support", None),
    ]
    run_id = result.state.run_id
    agent = spans[-1]
    assert agent.kind == otel.SpanKind.INTERNAL
    assert dict(agent.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "m-1",
        "gen_ai.conversation.id": run_id,
        "gen_ai.agent.name": "support",
        "harnessweaver.run_id": run_id,
        "harnessweaver.exit_reason": "completed",
    }
    chat = spans[4]
    assert chat.kind == otel.SpanKind.CLIENT
    assert dict(chat.attributes or {}) == {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "m-1",
        "gen_ai.conversation.id": run_id,
        "harnessweaver.step": 1,
    }
    tool = spans[6]
    assert tool.kind == otel.SpanKind.INTERNAL
    assert dict(tool.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.provider.name": "openai",
        "gen_ai.conversation.id": run_id,
        "gen_ai.tool.name": "lookup",
        "harnessweaver.step": 1,
    }


async def test_each_decision_is_an_event_named_by_its_outcome_without_payload(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(OPT_IN, raising=False)
    provider, memory = tracer()
    await blocked_run(OTelExporter(provider, gen_ai=True))
    spans = list(memory.get_finished_spans())
    blocked = next(s for s in spans if s.name == "hook tool.before")
    assert dict(blocked.attributes or {})["harnessweaver.outcome"] == "block"
    events = [(e.name, dict(e.attributes or {})) for e in blocked.events]
    assert events == [
        (
            "harnessweaver.failure",
            {
                "harnessweaver.middleware": "flaky_guard",
                "harnessweaver.band": "app",
                "harnessweaver.outcome": "continue",
                "harnessweaver.failure": "exception",
                "harnessweaver.error": "ValueError",
                "harnessweaver.fail_mode": "open",
            },
        ),
        (
            "harnessweaver.block",
            {
                "harnessweaver.middleware": events[1][1]["harnessweaver.middleware"],
                "harnessweaver.band": "app",
                "harnessweaver.outcome": "block",
                "harnessweaver.code": "denied",
            },
        ),
    ]
    assert blocked.status.status_code == otel.StatusCode.ERROR
    assert blocked.status.description == "exception"
    noted = next(s for s in spans if s.name == "hook model.after")
    assert [e.name for e in noted.events] == ["harnessweaver.continue"]
    assert noted.status.status_code == otel.StatusCode.UNSET
    assert {e.name for s in spans for e in s.events} <= set(EVENTS)
    exported = repr(
        [(dict(s.attributes or {}), [(e.name, dict(e.attributes or {})) for e in s.events])]
        for s in spans
    )
    for payload in ("must not be exported", "warning text", "private", "order"):
        assert payload not in exported


def test_modify_and_the_other_outcomes_name_their_events() -> None:
    provider, memory = tracer()
    records: list[dict[str, Any]] = []
    for emit, (outcome, modified) in enumerate(
        [("continue", True), ("suspend", False), ("escalate", False), ("retry", False)], 1
    ):
        middleware = {"emit": emit, "hook": "step.end", "kind": "outcome", "middleware": "m"}
        answer = {"band": "policy", "outcome": outcome, "modified": modified}
        records.append(middleware | answer | {"audit": True, "warnings": ["a text"]})
        records.append({"emit": emit, "hook": "step.end", "kind": "hook"} | answer)
    OTelExporter(provider, gen_ai=True).export(records, run_id="r", exit_reason="suspended")
    spans = list(memory.get_finished_spans())
    assert [(s.name, [e.name for e in s.events]) for s in spans] == [
        ("hook step.end", ["harnessweaver.modify"]),
        ("hook step.end", ["harnessweaver.suspend"]),
        ("hook step.end", ["harnessweaver.escalate"]),
        ("hook step.end", ["harnessweaver.retry"]),
        ("invoke_agent", []),
    ]
    assert dict(spans[0].events[0].attributes or {}) == {
        "harnessweaver.middleware": "m",
        "harnessweaver.band": "policy",
        "harnessweaver.outcome": "continue",
        "harnessweaver.audit": True,
    }
    assert "gen_ai.agent.name" not in (spans[-1].attributes or {})


def test_calls_of_one_tool_in_one_step_pair_in_order() -> None:
    provider, memory = tracer()

    def hook(emit: int, name: str, tool: str) -> dict[str, Any]:
        return {"emit": emit, "hook": name, "step": 1, "tool": tool, "kind": "hook"} | {
            "outcome": "continue",
            "modified": False,
            "t_ns": emit * 10,
            "duration_ns": 1,
        }

    records = [
        hook(1, "tool.before", "a"),
        hook(2, "tool.before", "a"),
        hook(3, "tool.before", "b"),
        hook(4, "tool.after", "b"),
        hook(5, "tool.after", "a"),
        hook(6, "tool.after", "a"),
    ]
    OTelExporter(provider, gen_ai=True).export(records, run_id="r", exit_reason="completed")
    spans = list(memory.get_finished_spans())
    tools = [s for s in spans if s.name.startswith("execute_tool")]
    emits = [
        [
            dict(s.attributes or {})["harnessweaver.emit"]
            for s in spans
            if s.parent and s.parent.span_id == t.context.span_id
        ]
        for t in tools
    ]
    assert [t.name for t in tools] == ["execute_tool a", "execute_tool a", "execute_tool b"]
    assert emits == [[1, 5], [2, 6], [3, 4]]
    # the records' clock: from emit 1's start to emit 5's end
    assert tools[0].end_time - tools[0].start_time == 41  # type: ignore[operator]


def test_a_trace_without_tool_names_still_exports() -> None:
    # records of a trace written before I21 have no run, step or tool: it failed with KeyError
    provider, memory = tracer()
    records = [
        {"emit": 1, "hook": "tool.before", "kind": "hook", "outcome": "continue"},
        {"emit": 2, "hook": "tool.after", "kind": "hook", "outcome": "continue"},
    ]
    OTelExporter(provider, gen_ai=True).export(records, run_id="r", exit_reason="completed")
    spans = list(memory.get_finished_spans())
    assert [s.name for s in spans] == [
        "hook tool.before",
        "hook tool.after",
        "execute_tool",
        "invoke_agent",
    ]
    assert "gen_ai.tool.name" not in (spans[2].attributes or {})


def test_the_docs_list_every_event() -> None:

    page = require_checkout() / "docs" / "telemetry.md"
    listed = re.findall(r"^\| `(harnessweaver\.[a-z]+)` \|", page.read_text(encoding="utf-8"), re.M)
    assert listed == list(EVENTS)
