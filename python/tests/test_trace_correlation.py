"""Trace correlation (I21): every record of an emit names its run, and its step and tool where
they apply, taken from the run context and the event the caller emitted."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import tool_call

import harnessweaver as hw

STRIP = ("t_ns", "duration_ns")


def untimed(records: Any) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in STRIP} for r in records]


def correlation(record: dict[str, Any]) -> tuple[Any, Any, Any]:
    """(run, step, tool) of a record; `...` for an absent field (None could be a value)."""
    return (record.get("run", ...), record.get("step", ...), record.get("tool", ...))


def bus_with(*hooks: str, answer: Any = None, name: str = "watch", **options: Any) -> hw.HookBus:
    bus = hw.HookBus()

    async def watch(event: Any, env: hw.Envelope) -> Any:
        return answer(event) if callable(answer) else answer

    watch.__name__ = name
    bus.register(hw.middleware(hooks=list(hooks), fail_mode="open", **options)(watch))
    return bus


def context(run_id: str = "run-1", trace: hw.Trace | None = None) -> hw.RunContext:
    return hw.RunContext(envelope=hw.Envelope(run_id=run_id), trace=trace)


def emit(bus: hw.HookBus, hook: str, event: Any, ctx: Any, times: int = 1) -> None:
    async def go() -> None:
        for _ in range(times):
            await bus.emit(hook, event, ctx)

    anyio.run(go)


def test_tool_records_carry_run_step_and_tool_in_i21_key_order() -> None:
    ctx = context()
    event = hw.ToolCallEvent(
        step=4, tool=hw.ToolSpec(name="refund"), call=hw.ToolCall(name="refund")
    )
    emit(bus_with("tool.before", "tool.after"), "tool.before", event, ctx)
    records = ctx.trace.records()
    assert [r["kind"] for r in records] == ["outcome", "hook"]
    assert [correlation(r) for r in records] == [("run-1", 4, "refund")] * 2
    assert list(records[0])[:6] == ["emit", "hook", "run", "step", "tool", "kind"]
    line = json.loads(ctx.trace.to_jsonl().splitlines()[0])
    assert list(line)[:6] == ["emit", "hook", "run", "step", "tool", "kind"]
    assert (line["run"], line["step"], line["tool"]) == ("run-1", 4, "refund")
    result = hw.ToolResultEvent(step=5, tool=hw.ToolSpec(name="refund"), call=event.call)
    emit(bus_with("tool.after"), "tool.after", result, ctx)
    assert correlation(ctx.trace[-1]) == ("run-1", 5, "refund")


def test_step_hooks_carry_a_step_and_task_hooks_neither() -> None:
    ctx = context()
    bus = bus_with("task.start", "step.start", "step.end", "task.end")
    emit(bus, "task.start", hw.TaskStartEvent(task="t"), ctx)
    emit(bus, "step.start", hw.StepStartEvent(step=2), ctx)
    emit(bus, "step.end", hw.StepEndEvent(step=2), ctx)
    emit(bus, "task.end", hw.TaskEndEvent(), ctx)
    assert [(r["hook"], *correlation(r)) for r in ctx.trace.records()] == [
        ("task.start", "run-1", ..., ...),
        ("task.start", "run-1", ..., ...),
        ("step.start", "run-1", 2, ...),
        ("step.start", "run-1", 2, ...),
        ("step.end", "run-1", 2, ...),
        ("step.end", "run-1", 2, ...),
        ("task.end", "run-1", ..., ...),
        ("task.end", "run-1", ..., ...),
    ]


def test_the_step_is_the_callers_not_a_modifications() -> None:
    ctx = context()
    bus = bus_with(
        "tool.before",
        answer=lambda e: hw.Continue(modified=e.model_copy(update={"step": 9})),
    )
    event = tool_call().model_copy(update={"step": 3})
    emit(bus, "tool.before", event, ctx)
    records = ctx.trace.records()
    assert records[0]["modified"] is True
    assert [r["step"] for r in records] == [3, 3]


@pytest.mark.parametrize("step", [-1, -(2**63), 2**53, 2**64, 10**40, True, 1.0, "3", None])
def test_a_step_that_is_no_integer_from_0_to_2_53_minus_1_is_left_out(step: Any) -> None:
    ctx = context()
    # Built without validation: an event may hold anything (I21).
    event = hw.ToolCallEvent.model_construct(
        step=step, tool=hw.ToolSpec(name="t"), call=hw.ToolCall(name="t")
    )
    emit(bus_with("tool.before"), "tool.before", event, ctx)
    assert [correlation(r) for r in ctx.trace.records()] == [("run-1", ..., "t")] * 2
    assert '"step"' not in ctx.trace.to_jsonl()


def test_the_largest_step_is_kept() -> None:
    ctx = context()
    event = tool_call().model_copy(update={"step": 2**53 - 1})
    emit(bus_with("tool.before"), "tool.before", event, ctx)
    assert ctx.trace[0]["step"] == 2**53 - 1


def test_a_tool_name_that_is_no_string_is_left_out() -> None:
    ctx = context()
    tool = hw.ToolSpec.model_construct(name=5)
    event = hw.ToolCallEvent.model_construct(step=1, tool=tool, call=hw.ToolCall(name="t"))
    emit(bus_with("tool.before"), "tool.before", event, ctx)
    assert correlation(ctx.trace[0]) == ("run-1", 1, ...)


def test_lone_surrogates_are_written_as_replacement_characters() -> None:
    ctx = context("run\udcff")
    event = tool_call("look\ud800up\udc00")
    emit(bus_with("tool.before"), "tool.before", event, ctx)
    assert correlation(ctx.trace[0]) == ("run\ufffd", 0, "look\ufffdup\ufffd")
    line = json.loads(ctx.trace.to_jsonl().splitlines()[0])
    assert (line["run"], line["tool"]) == ("run\ufffd", "look\ufffdup\ufffd")
    # A surrogate pair of code points is two code points, each replaced.
    emit(bus_with("tool.before"), "tool.before", tool_call("\ud83d\ude00"), ctx)
    assert ctx.trace[-1]["tool"] == "\ufffd\ufffd"
    again = hw.Trace.from_jsonl(ctx.trace.to_jsonl())
    assert untimed(again) == untimed(ctx.trace)


def test_contexts_sharing_a_trace_each_name_their_own_run() -> None:
    trace = hw.Trace()
    first, second = context("first", trace), context("second", trace)
    bus = bus_with("tool.before")
    event = tool_call()
    emit(bus, "tool.before", event, first)
    emit(bus, "tool.before", event, second)  # the very same event object
    emit(bus, "tool.before", event, first)
    assert [r["run"] for r in trace.records()] == ["first"] * 2 + ["second"] * 2 + ["first"] * 2


def test_the_same_event_object_on_another_hook_point_or_a_new_event() -> None:
    ctx = context()
    bus = bus_with("step.start", "step.end")
    emit(bus, "step.start", hw.StepStartEvent(step=1), ctx)
    emit(bus, "step.end", hw.StepEndEvent(step=1), ctx)
    emit(bus, "step.start", hw.StepStartEvent(step=2), ctx)
    emit(bus, "step.start", hw.StepStartEvent(step=2), ctx)
    steps = [(r["hook"], r["step"]) for r in ctx.trace.records() if r["kind"] == "hook"]
    assert steps == [("step.start", 1), ("step.end", 1), ("step.start", 2), ("step.start", 2)]


def test_correlation_survives_the_limit_and_drain() -> None:
    trace = hw.Trace(limit=5)
    ctx = context(trace=trace)
    bus = bus_with("tool.before")
    for step in range(6):
        event = tool_call().model_copy(update={"step": step})
        emit(bus, "tool.before", event, ctx)
    # 12 records, the newest 5 kept: the hook record of step 3, then steps 4 and 5.
    assert [r["step"] for r in trace.records()] == [3, 4, 4, 5, 5]
    assert [r["step"] for r in trace] == [3, 4, 4, 5, 5]
    assert trace[0]["kind"] == "hook" and trace[0]["run"] == "run-1"
    drained = trace.drain()
    assert [correlation(r) for r in drained] == [
        ("run-1", s, "refund_payment") for s in (3, 4, 4, 5, 5)
    ]
    emit(bus, "tool.before", tool_call(), ctx)
    assert [r["step"] for r in trace.drain()] == [0, 0]


def test_a_callable_sink_gets_the_correlation_even_across_batches() -> None:
    batches: list[list[dict[str, Any]]] = []
    with hw.Trace(sink=batches.append, batch=3) as trace:
        ctx = context("sunk", trace)
        bus = bus_with("tool.before")
        for step in range(4):
            emit(bus, "tool.before", tool_call().model_copy(update={"step": step}), ctx)
    got = [r for batch in batches for r in batch]
    assert len(got) == 8 and len(trace) == 0
    assert [correlation(r) for r in got] == [
        ("sunk", s, "refund_payment") for s in (0, 0, 1, 1, 2, 2, 3, 3)
    ]
    assert any(len(batch) == 3 for batch in batches)


def test_a_jsonl_sink_and_a_round_trip_keep_the_correlation(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    reference = context("kept")
    bus = bus_with("tool.before", "step.start")
    with hw.Trace(sink=hw.JsonlSink(path), batch=3) as trace:
        sunk = context("kept", trace)
        for ctx in (reference, sunk):
            emit(bus, "step.start", hw.StepStartEvent(step=1), ctx)
            emit(bus, "tool.before", tool_call("a").model_copy(update={"step": 1}), ctx)
            emit(bus, "tool.before", tool_call("b").model_copy(update={"step": 1}), ctx)
    text = path.read_text(encoding="utf-8")
    lines = [json.loads(line) for line in text.splitlines()]
    assert untimed(lines) == untimed(reference.trace)
    assert [correlation(r) for r in lines[::2]] == [
        ("kept", 1, ...),
        ("kept", 1, "a"),
        ("kept", 1, "b"),
    ]
    again = hw.Trace.from_jsonl(text)
    assert again.to_jsonl() == text
    assert untimed(again) == untimed(reference.trace)
    assert again.records() == [json.loads(line) for line in text.splitlines()]


def test_a_trace_without_correlation_still_reads_and_bad_ones_are_refused() -> None:
    line = '{"emit":1,"hook":"task.end","kind":"hook","outcome":"continue","modified":false}'
    assert correlation(hw.Trace.from_jsonl(line)[0]) == (..., ..., ...)
    good = line.replace('"kind"', '"run":"r","step":3,"tool":"t","kind"')
    assert correlation(hw.Trace.from_jsonl(good)[0]) == ("r", 3, "t")
    for extra in ['"step":-1', '"step":1.5', '"step":true', '"step":"3"', '"run":5', '"tool":[]']:
        bad = line.replace('"kind"', extra + ',"kind"')
        field = extra.split(":")[0].strip('"')
        # The message names the field and the ruling.
        with pytest.raises(hw.TraceFormatError, match=rf"{field}\b.*I21"):
            hw.Trace.from_jsonl(bad)


@pytest.mark.parametrize("run_id", [5, None, b"run", ["run"]])
def test_an_envelope_run_id_must_be_a_string(run_id: Any) -> None:
    with pytest.raises(TypeError, match=re.escape(f"run_id must be a string, got {run_id!r}")):
        hw.Envelope(run_id=run_id)


def test_a_duck_typed_context_names_its_envelopes_run() -> None:
    class Ctx:
        def __init__(self, run_id: str, trace: hw.Trace) -> None:
            self.envelope = hw.Envelope(run_id=run_id)
            self.trace = trace

    trace = hw.Trace()
    bus = bus_with("tool.before")
    event = tool_call()
    emit(bus, "tool.before", event, Ctx("a", trace))
    emit(bus, "tool.before", event, Ctx("b", trace))
    assert [r["run"] for r in trace.records()] == ["a", "a", "b", "b"]


def test_a_duck_typed_envelope_without_a_text_run_id_is_a_type_error_naming_it() -> None:
    class Envelope:  # no hw.Envelope, so nothing checked its run_id when it was made
        run_id = 42

    class Ctx:
        envelope, trace = Envelope(), hw.Trace()

    with pytest.raises(TypeError, match=re.escape("run_id must be a string, got 42 (I21)")):
        emit(bus_with("tool.before"), "tool.before", tool_call(), Ctx())


@pytest.mark.anyio
async def test_records_of_a_middleware_that_suspends_carry_the_correlation() -> None:
    ctx = context("slow")
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="open", band="platform")
    async def waits(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(0)

    @hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="5s")
    async def timed(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(0)

    bus.register(waits)
    bus.register(timed)
    event = tool_call("slow_tool").model_copy(update={"step": 7})
    for _ in range(2):
        await bus.emit("tool.before", event, ctx)
    records = ctx.trace.records()
    assert [r.get("middleware") for r in records] == ["waits", "timed", None] * 2
    assert [correlation(r) for r in records] == [("slow", 7, "slow_tool")] * 6


@pytest.mark.anyio
async def test_concurrent_suspended_emits_keep_their_own_correlation() -> None:
    trace = hw.Trace()
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="open", timeout="5s")
    async def waits(event: Any, env: hw.Envelope) -> None:
        await anyio.sleep(0.01 * (3 - event.step))

    bus.register(waits)
    async with anyio.create_task_group() as group:
        for step in range(3):
            ctx = context(f"run-{step}", trace)
            event = tool_call(f"tool-{step}").model_copy(update={"step": step})
            group.start_soon(bus.emit, "tool.before", event, ctx)
    records = trace.records()
    assert len(records) == 6
    for record in records:
        step = record["step"]
        assert (record["run"], record["tool"]) == (f"run-{step}", f"tool-{step}")


@pytest.mark.parametrize("text", ['"run":"r\\ud800"', '"tool":"\\udcffx"'])
def test_a_lone_surrogate_escape_in_a_read_trace_is_refused(text: str) -> None:
    # No writer writes one (I21 writes U+FFFD in its place); the Rust core's JSON reader
    # refuses it, and so does the pure core's.
    head, tail = '{"emit":1,"hook":"tool.after",', ',"kind":"hook","outcome":"continue"}'
    line = head + text + tail.replace("}", ',"modified":false}')
    with pytest.raises(hw.TraceFormatError):
        hw.Trace.from_jsonl(line)
