"""hw.Trace: records as dicts, JSON Lines out and back in, and strict reading (I8)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from checkout import CORPUS
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
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="traced"))

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
        "run": "traced",
        "step": 0,
        "tool": "refund_payment",
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
        "run",
        "step",
        "tool",
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


# --- Bounded traces (I20) and 64-bit ordinals (I19): issue 13 ---------------------------------

MAX_EMIT = 2**53 - 1
BOUNDS = CORPUS / "cases" / "trace" / "reads" / "ordinal-bounds.json"


def _bus_with_one_middleware() -> hw.HookBus:
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def guard(event: Any, env: hw.Envelope) -> None:
        return None

    bus.register(guard)
    return bus


def _emit_into(ctx: Any, count: int, every: int = 0, each: Any = None, hook: str = "tool.before"):
    """``count`` emits on ``hook`` into ``ctx``; ``each(i)`` after every ``every``-th."""
    bus = _bus_with_one_middleware()
    event = tool_call() if hook == "tool.before" else None

    async def go() -> None:
        emit = bus.emit
        for i in range(1, count + 1):
            if event is None:
                await emit(hook, hw.TaskStartEvent(task="t"), ctx)
            else:
                await emit(hook, event, ctx)
            if every and i % every == 0:
                each(i)

    anyio.run(go)


@pytest.mark.parametrize("core", _cores(), ids=lambda c: str(c.CORE))
def test_ordinals_at_their_boundaries_i19(core: Any) -> None:
    """The shared reads of conformance/cases/trace/reads/ordinal-bounds.json (TypeScript carries
    them out too). The bus runs the selected core, so the emits are made on that one's traces
    (the session runs this file under each core); the other core's reads are checked."""
    reads = json.loads(BOUNDS.read_text(encoding="utf-8"))["reads"]
    assert len(reads) == 6
    for read in reads:
        if "error" in read["then"]:
            with pytest.raises(hw.TraceFormatError) as caught:
                core.Trace.from_jsonl(read["jsonl"])
            assert caught.value.kind == read["then"]["error"], read["id"]
            assert caught.value.rule == "I8"
            emit = json.loads(read["jsonl"])["emit"]
            if emit < 2**64:  # serde_json reads a larger number as a float, and says so
                assert f"invalid emit {emit}" in str(caught.value)
            continue
        trace = core.Trace.from_jsonl(read["jsonl"])
        expected = read["then"]["emits"]
        read_back = len(expected) - read["emits"]
        assert [r["emit"] for r in trace.records()] == expected[:read_back], read["id"]
        assert trace.emits == expected[read_back - 1]
        if core.CORE == hw.CORE:
            _emit_into(core.RunContext(trace=trace), read["emits"], hook="task.start")
            assert [r["emit"] for r in trace.records()] == expected, read["id"]
            assert trace.emits == expected[-1]
        back = core.Trace.from_jsonl(trace.to_jsonl())
        assert back.records() == trace.records()


NESTING = CORPUS / "cases" / "trace" / "reads" / "nesting.json"


def _nested_line(line: dict[str, Any]) -> str:
    """A read's JSON Lines text, as nesting.json's description says it is built."""
    depth = line["depth"]
    return f"{line['before']}{line['open'] * depth}{line['inner']}{line['close'] * depth}" + (
        f"{line['after']}\n"
    )


@pytest.mark.parametrize("core", _cores(), ids=lambda c: str(c.CORE))
def test_nesting_in_a_trace_line_i33(core: Any) -> None:
    """The shared reads of conformance/cases/trace/reads/nesting.json (TypeScript carries them
    out too): however deep a line nests, reading it is invalid_trace, never a RecursionError."""
    reads = json.loads(NESTING.read_text(encoding="utf-8"))["reads"]
    assert len(reads) == 11
    for read in reads:
        text = _nested_line(read["line"])
        if "error" in read["then"]:
            with pytest.raises(hw.TraceFormatError) as caught:
                core.Trace.from_jsonl(text)
            assert caught.value.kind == read["then"]["error"], read["id"]
            assert caught.value.rule == "I8"
            continue
        assert len(core.Trace.from_jsonl(text).records()) == read["then"]["records"], read["id"]


def test_ordinals_past_u32_are_not_reused_through_the_bus() -> None:
    line = json.dumps({**BASE, "kind": "hook", "emit": 2**32 - 1}, separators=(",", ":"))
    line = line.replace(',"middleware":"a","band":"app"', "")
    trace = hw.Trace.from_jsonl(line + "\n")
    ctx = hw.RunContext(trace=trace)
    _emit_into(ctx, 2)
    assert [r["emit"] for r in trace.records()][1:] == [2**32, 2**32, 2**32 + 1, 2**32 + 1]
    again = hw.Trace.from_jsonl(trace.to_jsonl())
    assert again.emits == 2**32 + 1


@pytest.mark.parametrize("core", _cores(), ids=lambda c: str(c.CORE))
def test_a_trace_keeps_the_newest_records_up_to_its_limit_i20(
    core: Any, caplog: pytest.LogCaptureFixture
) -> None:
    assert core.Trace().limit == 2**20
    assert core.Trace(limit=None).limit is None
    for bad in (0, -1):
        with pytest.raises(ValueError, match="limit"):
            core.Trace(limit=bad)
    with pytest.raises(ValueError, match="batch"):
        core.Trace(batch=0)
    with pytest.raises(ValueError, match="limit"):
        core.Trace.from_jsonl("", limit=0)
    with pytest.raises(TypeError, match="sink"):
        core.Trace(sink=42)
    line = traced(1).to_jsonl().splitlines()[0]
    text = "\n".join(line.replace('"emit":1', f'"emit":{i}') for i in range(1, 11))
    with caplog.at_level("WARNING"):
        trace = core.Trace.from_jsonl(text, limit=4)
        assert len(trace) == 4 and trace.dropped == 6
        assert [r["emit"] for r in trace.records()] == [7, 8, 9, 10]
        assert [r["emit"] for r in trace] == [7, 8, 9, 10] and trace[0]["emit"] == 7
        assert trace.to_jsonl().splitlines()[0] == line.replace('"emit":1', '"emit":7')
    warnings = [r for r in caplog.records if "dropped its oldest records" in r.getMessage()]
    assert len(warnings) == 1
    assert warnings[0].name == "harnessweaver.trace"  # one logger for both cores
    drained = trace.drain()
    assert [r["emit"] for r in drained] == [7, 8, 9, 10] and len(trace) == 0
    assert trace.emits == 10 and trace.dropped == 6


def test_emits_past_the_limit_keep_the_newest_and_warn_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    trace = hw.Trace(limit=5)
    ctx = hw.RunContext(trace=trace)
    with caplog.at_level("WARNING"):
        _emit_into(ctx, 40)
        assert len(trace) == 5 and trace.dropped == 75
        # Each emit writes the middleware's record, then the hook record.
        assert [(r["emit"], r["kind"]) for r in trace.records()] == [
            (38, "hook"),
            (39, "outcome"),
            (39, "hook"),
            (40, "outcome"),
            (40, "hook"),
        ]
    warnings = [r for r in caplog.records if "dropped its oldest records" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelname == "WARNING"


def test_drain_hands_back_and_frees_what_was_recorded() -> None:
    """200,000 emits through one context, drained as they go: the trace holds at most the
    records of one round, its memory stays bounded, and every record comes out once, in order,
    with ordinals running on."""
    trace = hw.Trace()
    ctx = hw.RunContext(trace=trace)
    emits: list[int] = []
    held: list[int] = []
    sizes: list[int] = []

    def drain(_: int) -> None:
        held.append(len(trace))
        sizes.append(sys.getsizeof(trace))
        emits.extend(r["emit"] for r in trace.drain())
        assert len(trace) == 0

    _emit_into(ctx, 200_000, every=10_000, each=drain)
    assert held == [20_000] * 20
    assert emits == [i for i in range(1, 200_001) for _ in (0, 1)]
    assert trace.dropped == 0 and trace.emits == 200_000
    # Bounded: what one round's 20,000 records take, never growing with the emits made.
    assert max(sizes) <= 2 * sizes[0] and max(sizes) < 20_000 * 400


def test_a_sink_takes_every_record_and_the_trace_stays_bounded() -> None:
    batches: list[int] = []
    emits: list[int] = []

    def sink(records: list[dict[str, Any]]) -> None:
        batches.append(len(records))
        emits.extend(r["emit"] for r in records)

    trace = hw.Trace(sink=sink, batch=1000)
    ctx = hw.RunContext(trace=trace)
    held: list[int] = []
    sizes: list[int] = []

    def sample(_: int) -> None:
        held.append(len(trace))
        sizes.append(sys.getsizeof(trace))

    _emit_into(ctx, 200_000, every=997, each=sample)
    assert max(held) <= 1000 + 2  # a batch, and the records of the emit that started after it
    # Unbounded, the 400,000 records would take 12.8 MB in the Rust core, some 60 MB pure.
    assert max(sizes) < 1_500_000
    left = len(trace)
    assert left and trace.flush() == left and trace.flush() == 0
    assert len(trace) == 0 and trace.dropped == 0
    assert set(batches[:-1]) == {1000}
    assert emits == [i for i in range(1, 200_001) for _ in (0, 1)]


def test_a_jsonl_sink_writes_to_a_stream_and_only_closes_its_own_files(tmp_path: Path) -> None:
    text = traced(3).to_jsonl()
    records = hw.Trace.from_jsonl(text).records()
    stream = io.StringIO()
    sink = hw.JsonlSink(stream)
    sink(records)
    sink.write_text(text)
    sink.close()
    assert stream.getvalue() == text + text and not stream.closed
    with hw.JsonlSink(tmp_path / "a.jsonl") as owned:
        owned(records)
    with hw.JsonlSink(tmp_path / "a.jsonl", append=True) as owned:
        owned(records)
    assert (tmp_path / "a.jsonl").read_text(encoding="utf-8") == text + text
    with pytest.raises(TypeError, match="JsonlSink"):
        hw.JsonlSink(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_a_jsonl_sink_gets_what_the_trace_would_hold(tmp_path: Path, batch: int) -> None:
    path = tmp_path / "trace.jsonl"
    reference = hw.Trace()
    envelope = hw.Envelope(run_id="sunk")  # one run id, so both traces name the same (I21)
    _emit_into(hw.RunContext(envelope=envelope, trace=reference), 25)
    with hw.Trace(sink=hw.JsonlSink(path), batch=batch) as trace:
        _emit_into(hw.RunContext(envelope=envelope, trace=trace), 25)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 50 and len(trace) == 0
    strip = ("t_ns", "duration_ns")
    got = [{k: v for k, v in json.loads(line).items() if k not in strip} for line in lines]
    want = [{k: v for k, v in r.items() if k not in strip} for r in reference.records()]
    assert got == want


def test_a_failing_sink_is_logged_by_type_and_its_records_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def sink(records: list[dict[str, Any]]) -> None:
        raise RuntimeError("secret-sink-detail")

    trace = hw.Trace(sink=sink, batch=4)
    with caplog.at_level("WARNING"):
        _emit_into(hw.RunContext(trace=trace), 10)
    assert trace.dropped >= 4
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "RuntimeError" in logged and "secret-sink-detail" not in logged
    with pytest.raises(RuntimeError):
        trace.flush()
    assert len(trace) == 0 and trace.dropped == 20


class _SecretName(type):
    @property
    def __name__(cls) -> str:  # type: ignore[override]
        return "secret-sink-name"


@pytest.mark.parametrize("own_name", ["SinkDown", "sink down\nsecret"], ids=["kept", "unnamed"])
def test_a_failing_sink_is_logged_by_its_types_own_bounded_name_i28(
    caplog: pytest.LogCaptureFixture, own_name: str
) -> None:
    """A sink's exception is named as a failure record names one (I28): the type's own name,
    never a metaclass's `__name__`, and `UnnamedException` for a name that is no type name."""
    error = _SecretName(own_name, (Exception,), {})

    def sink(records: list[dict[str, Any]]) -> None:
        raise error("secret-sink-detail")

    trace = hw.Trace(sink=sink, batch=4)
    with caplog.at_level("WARNING"):
        _emit_into(hw.RunContext(trace=trace), 10)
    logged = " ".join(r.getMessage() for r in caplog.records)
    expected = "SinkDown" if own_name == "SinkDown" else "UnnamedException"
    assert f"sink failed ({expected})" in logged
    assert "secret" not in logged


def test_without_a_sink_flush_hands_nothing_on() -> None:
    trace = hw.Trace()
    _emit_into(hw.RunContext(trace=trace), 3)
    assert trace.flush() == 0 and len(trace) == 6
    trace.close()
    assert len(trace) == 6


# --- Type names and codes as a reader takes them back (I28): issue 28 -------------------------

NAMES = CORPUS / "cases" / "trace" / "reads" / "names.json"


@pytest.mark.parametrize("core", _cores(), ids=lambda c: str(c.CORE))
def test_reader_takes_back_only_bounded_names_and_codes_i28(core: Any) -> None:
    """The shared reads of conformance/cases/trace/reads/names.json (TypeScript carries them
    out too): an error that is no type name, a code past 128 characters, is `invalid_trace`."""
    reads = json.loads(NAMES.read_text(encoding="utf-8"))["reads"]
    assert len(reads) == 16
    for read in reads:
        if "error" in read["then"]:
            with pytest.raises(hw.TraceFormatError) as caught:
                core.Trace.from_jsonl(read["jsonl"])
            assert caught.value.kind == read["then"]["error"], read["id"]
            assert "(I28)" in str(caught.value), read["id"]
            continue
        trace = core.Trace.from_jsonl(read["jsonl"])
        assert len(trace.records()) == read["then"]["records"], read["id"]
        record = {k: v for k, v in trace.records()[0].items() if k not in ("t_ns", "duration_ns")}
        assert record == json.loads(read["jsonl"]), read["id"]


@pytest.mark.anyio
async def test_texts_holding_unicode_line_breaks_read_back() -> None:
    """A record's texts may hold U+0085, U+2028, U+2029 and \\x1c-\\x1e, which JSON leaves
    unescaped: a JSON Lines reader ends lines at "\\n" only, so the trace reads back whole on
    both cores (the pure core split at every Unicode line boundary: invalid_trace)."""
    odd = "a\x85b\u2028c\u2029d\x1ce\x1df\x1eg"
    bus = hw.HookBus()

    @hw.middleware(hooks=["tool.before"], fail_mode="open")
    async def blocks(event: Any, env: hw.Envelope) -> hw.Block:
        return hw.Block("no", code=odd)

    bus.register(blocks)
    ctx = hw.RunContext()
    await bus.emit("tool.before", tool_call(odd), ctx)
    text = ctx.trace.to_jsonl()
    for core in _cores():  # the other core's reader too: a trace is any implementation's
        back = core.Trace.from_jsonl(text)
        assert [r["code"] for r in back if r["kind"] == "outcome"] == [odd]
        assert [r["tool"] for r in back] == [odd, odd]
