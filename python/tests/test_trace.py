"""hw.Trace: records as dicts, JSON Lines out and back in, and strict reading (I8)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import run_unless_stuck, tool_call

import harnessweaver as hw
from harnessweaver import _pycore


def _cores() -> list[Any]:
    cores: list[Any] = [_pycore]
    try:
        from harnessweaver import _core
    except ImportError:  # pragma: no cover - a platform without the extension
        return cores
    return [*cores, _core]


def traced(emits: int = 2) -> hw.Trace:
    """A trace with outcome, failure and hook records, made by real emits."""
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="open", band="platform")
    async def broken(event: Any, env: hw.Envelope) -> None:
        raise KeyError("secret-key-material")

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def cap(event: Any, env: hw.Envelope) -> hw.Outcome:
        return hw.Block("capped", code="refund_cap")

    bus.register(broken)
    bus.register(cap)
    ctx = hw.RunContext()

    async def go() -> None:
        for _ in range(emits):
            await bus.emit("tool.before", tool_call(), ctx)

    anyio.run(go)
    return ctx.trace


def test_records_have_the_fields_of_i8() -> None:
    trace = traced(1)
    assert len(trace) == 3
    failure, outcome, hook = trace.records()
    assert {k: v for k, v in failure.items() if k not in ("t_ns", "duration_ns")} == {
        "emit": 1,
        "hook": "tool.before",
        "kind": "failure",
        "middleware": "broken",
        "band": "platform",
        "outcome": "continue",
        "modified": False,
        "failure": "exception",
        "error": "KeyError",
        "fail_mode": "open",
    }
    assert outcome["code"] == "refund_cap" and "fail_mode" not in outcome
    assert hook["kind"] == "hook" and "middleware" not in hook and hook["outcome"] == "block"
    assert all(
        isinstance(r["t_ns"], int) and r["duration_ns"] >= 0 for r in (failure, outcome, hook)
    )
    assert hook["duration_ns"] >= outcome["duration_ns"]


def test_iteration_and_indexing_give_the_same_dicts() -> None:
    trace = traced(2)
    assert list(trace) == trace.records() == [trace[i] for i in range(len(trace))]
    assert trace[-1] == trace.records()[-1]
    assert trace[-len(trace)] == trace[0]
    with pytest.raises(IndexError, match="trace index 6 out of range"):
        trace[len(trace)]
    with pytest.raises(IndexError, match="trace index -7 out of range"):
        trace[-len(trace) - 1]
    assert repr(trace) == "<Trace of 6 records, 2 emits>"


def test_json_lines_round_trip_through_a_path_and_a_file(tmp_path: Path) -> None:
    trace = traced(3)
    path = tmp_path / "trace.jsonl"
    trace.write_jsonl(path)
    assert path.read_text(encoding="utf-8") == trace.to_jsonl()
    assert hw.Trace.read_jsonl(path).records() == trace.records()
    buffer = io.StringIO()
    trace.write_jsonl(buffer)
    buffer.seek(0)
    again = hw.Trace.read_jsonl(buffer)
    assert again.records() == trace.records() and repr(again) == repr(trace)


def test_every_line_is_one_compact_object_in_the_i8_key_order() -> None:
    lines = traced(1).to_jsonl().splitlines()
    assert len(lines) == 3 and all(" " not in line for line in lines)
    assert list(json.loads(lines[0])) == [
        "emit",
        "hook",
        "kind",
        "middleware",
        "band",
        "outcome",
        "modified",
        "failure",
        "error",
        "fail_mode",
        "t_ns",
        "duration_ns",
    ]


def test_exception_messages_never_reach_the_trace() -> None:
    trace = traced(1)
    assert "secret-key-material" not in trace.to_jsonl()
    assert "secret-key-material" not in repr(trace.records())


@pytest.mark.parametrize("writer", _cores(), ids=lambda m: m.CORE)
@pytest.mark.parametrize("reader", _cores(), ids=lambda m: m.CORE)
def test_both_cores_read_each_others_traces(writer: Any, reader: Any) -> None:
    text = traced(2).to_jsonl()
    written = writer.Trace.from_jsonl(text).to_jsonl()
    assert written == text
    assert reader.Trace.from_jsonl(written).records() == writer.Trace.from_jsonl(text).records()


def test_a_long_trace_round_trips() -> None:
    trace = traced(2000)
    assert len(trace) == 6000
    again = hw.Trace.from_jsonl(trace.to_jsonl())
    assert again.records() == trace.records()


BASE = {
    "emit": 1,
    "hook": "tool.before",
    "kind": "outcome",
    "middleware": "a",
    "band": "app",
    "outcome": "continue",
    "modified": False,
}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"hook": "tool.befor"}, "unknown hook"),
        ({"kind": "note"}, "unknown kind"),
        ({"emit": 0}, "emit is an ordinal from 1"),
        ({"modified": True, "outcome": "block"}, "modified is true only for a continue"),
        ({"code": "x"}, "a continue has no code"),
        ({"band": None}, "needs band"),
        ({"fail_mode": "open"}, "has no fail_mode"),
        ({"reason": "why"}, "unknown field"),
        (
            {
                "kind": "failure",
                "failure": "timeout",
                "error": "MiddlewareTimeout",
                "fail_mode": "closed",
            },
            "recorded as block",
        ),
    ],
)
def test_reading_is_strict_and_names_the_line(change: dict[str, Any], problem: str) -> None:
    good = json.dumps(BASE)
    bad = json.dumps({k: v for k, v in {**BASE, **change}.items() if v is not None})
    with pytest.raises(hw.TraceFormatError) as caught:
        hw.Trace.from_jsonl(f"{good}\n\n{bad}\n")
    assert caught.value.kind == "invalid_trace" and caught.value.rule == "I8"
    assert "line 3" in str(caught.value) and problem in str(caught.value)


def test_a_line_that_is_not_json_is_reported() -> None:
    with pytest.raises(hw.TraceFormatError, match="invalid trace line 1"):
        hw.Trace.from_jsonl("{not json}\n")


@pytest.mark.parametrize("core", _cores(), ids=lambda c: str(c.CORE))
def test_a_trace_reports_the_memory_its_records_hold(core: Any) -> None:
    line = traced(1).to_jsonl().splitlines()[0]
    small = core.Trace.from_jsonl(line)
    big = core.Trace.from_jsonl("\n".join([line] * 20_000))
    assert len(big) == 20_000
    assert sys.getsizeof(core.Trace()) < sys.getsizeof(small) < sys.getsizeof(big)


def test_the_rust_core_keeps_a_record_in_32_bytes() -> None:
    core = _cores()[-1]
    if core.CORE != "rust":
        pytest.skip("no Rust extension on this platform")
    line = traced(1).to_jsonl().splitlines()[0]
    count = 200_000
    big = core.Trace.from_jsonl("\n".join([line] * count))
    held = sys.getsizeof(big) - sys.getsizeof(core.Trace())
    # 32 bytes a record, plus at most one chunk of 4096 records' room and the chunk list.
    assert held <= 32 * count + 32 * 4096 + 8 * 1024
    assert held >= 32 * count


@pytest.mark.parametrize("core", _cores(), ids=lambda c: str(c.CORE))
def test_a_trace_made_after_dropped_ones_holds_only_its_own_records(core: Any) -> None:
    # The Rust core keeps a dropped trace's storage for later traces (trace/spare.rs).
    line = traced(1).to_jsonl().splitlines()[0]
    for _ in range(3):
        old = core.Trace.from_jsonl("\n".join([line] * 9_000))
        assert len(old) == 9_000
        del old
    text = traced(2).to_jsonl()
    new = core.Trace.from_jsonl(text)
    assert [r["emit"] for r in new.records()] == [1, 1, 1, 2, 2, 2]
    assert new.to_jsonl() == text


# A collection set off while `records()` builds its dicts runs a finalizer that emits into the
# same trace, in a child process: it deadlocks should the trace still hold its lock while it
# makes Python objects. (CPython 3.11
# collects on the allocation that crosses the threshold, so the finalizer runs inside
# `records()`; from 3.12 on collections wait for the interpreter's next check, after it.)
FINALIZER_EMITS = """
import gc
import harnessweaver as hw

bus = hw.HookBus()

@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def noop(event, env):
    return None

bus.register(noop)
ctx = hw.RunContext()
event = hw.ToolCallEvent(tool=hw.ToolSpec(name="t"), call=hw.ToolCall(name="t", arguments={}))

def emit():
    step = bus.emit("tool.before", event, ctx)
    try:
        step.send(None)
    except StopIteration:
        return
    raise AssertionError("a no-op chain suspended")

class Garbage:
    def __init__(self):
        self.me = self  # a cycle: only the collector frees it

    def __del__(self):
        emit()

for _ in range(50):
    emit()
records = ctx.trace.records
gc.disable()
garbage = [Garbage() for _ in range(20)]
del garbage
gc.set_threshold(1)
gc.enable()
got = records()  # the first dict it makes sets off the collection
gc.collect()
assert len(got) >= 100, len(got)
print(len(ctx.trace))
"""


def test_a_finalizer_may_emit_into_a_trace_being_read() -> None:
    stuck = "records() deadlocked: a finalizer it set off could not emit into the trace"
    done = run_unless_stuck(FINALIZER_EMITS, stuck)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(2 * (50 + 20))]
