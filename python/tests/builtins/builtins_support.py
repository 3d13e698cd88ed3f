"""Events, contexts and a bus for the built-in middleware's tests."""

from __future__ import annotations

from typing import Any

import harnessweaver as hw

CLOCK = hw.FixedClock("2026-11-30T12:00:00+00:00")


def run(run_id: str = "run-1") -> hw.RunContext:
    """A run's context: the guards key their state by the envelope's run id."""
    return hw.RunContext(envelope=hw.Envelope(clock=CLOCK, run_id=run_id))


def bus_with(middleware: object, **settings: Any) -> hw.HookBus:
    bus = hw.HookBus()
    bus.register(middleware, settings=settings or None)
    return bus


def call(name: str = "search", **arguments: Any) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name=name), call=hw.ToolCall(id="c1", name=name, arguments=arguments)
    )


def result(name: str = "search", output: Any = "ok", *, error: bool = False) -> hw.ToolResultEvent:
    return hw.ToolResultEvent(
        tool=hw.ToolSpec(name=name),
        call=hw.ToolCall(id="c1", name=name),
        result=hw.ToolResult(output=output, is_error=error),
    )


def request(*messages: hw.Message) -> hw.ModelRequestEvent:
    return hw.ModelRequestEvent(request=hw.ModelRequest(model="m", messages=messages))


def user(content: str) -> hw.Message:
    return hw.Message(role="user", content=content)


def response(
    input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0
) -> hw.ModelResponseEvent:
    usage = hw.Usage(input_tokens=input_tokens, output_tokens=output_tokens, cost_usd=cost_usd)
    message = hw.Message(role="assistant", content="working on it")
    return hw.ModelResponseEvent(response=hw.ModelResponse(message=message, usage=usage))


def task_end(exit_reason: str = "completed") -> hw.TaskEndEvent:
    return hw.TaskEndEvent(exit_reason=exit_reason)


def records(ctx: hw.RunContext, middleware: str) -> list[dict[str, Any]]:
    """The trace's outcome records of one middleware, without timings."""
    return [
        {k: v for k, v in r.items() if k not in ("t_ns", "duration_ns", "emit")}
        for r in ctx.trace
        if r.get("middleware") == middleware
    ]
