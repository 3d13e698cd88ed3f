"""An emit's correlation (I21) is its own even when the events and contexts before it are
reused: the cores keep the last one to spare work, and must never hand it to another emit."""

from __future__ import annotations

import anyio

import harnessweaver as hw


def tool_call(step: int, tool: str) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(step=step, tool=hw.ToolSpec(name=tool), call=hw.ToolCall(name=tool))


def test_each_emit_names_its_own_event_and_run_when_events_repeat() -> None:
    bus = hw.HookBus()
    first, second = tool_call(1, "search"), tool_call(2, "shell")
    a = hw.RunContext(envelope=hw.Envelope(run_id="a"))
    b = hw.RunContext(envelope=hw.Envelope(run_id="b"), trace=a.trace)  # one trace, two runs

    async def main() -> None:
        for event, ctx in ((first, a), (first, a), (second, a), (first, a), (first, b)):
            await bus.emit("tool.before", event, ctx)
        await bus.emit("step.start", hw.StepStartEvent(step=2), b)
        await bus.emit("tool.after", hw.ToolResultEvent(**dict(first)), a)

    anyio.run(main)
    seen = [(r["run"], r["hook"], r.get("step"), r.get("tool")) for r in a.trace]
    assert seen == [
        ("a", "tool.before", 1, "search"),
        ("a", "tool.before", 1, "search"),
        ("a", "tool.before", 2, "shell"),
        ("a", "tool.before", 1, "search"),
        ("b", "tool.before", 1, "search"),
        ("b", "step.start", 2, None),
        ("a", "tool.after", 1, "search"),
    ]
