"""Warnings on answers (I24): the API, the result, the trace, on both cores."""

from __future__ import annotations

import pickle
from typing import Any

import anyio
import pytest
from conftest import tool_call, untimed
from hypothesis import given
from hypothesis import strategies as st

import harnessweaver as hw

pytestmark = pytest.mark.anyio

EMOJI = "\U0001f600"  # one code point, two UTF-16 units


def bus_answering(*answers: tuple[str, Any], fail_mode: str = "closed") -> hw.HookBus:
    bus = hw.HookBus()
    for name, answer in answers:

        async def body(event: Any, env: hw.Envelope, answer: Any = answer, name: str = name) -> Any:
            if name == "suspends":
                await anyio.sleep(0)  # answered after suspending: the slow path
            return answer

        declared = hw.middleware(name=name, hooks=["tool.before"], fail_mode=fail_mode)(body)
        bus.register(declared)
    return bus


def test_every_outcome_takes_warnings_and_holds_them_as_given() -> None:
    given_list = ["a", "b"]
    assert hw.Continue(warnings=given_list).warnings is given_list
    assert hw.Block("no", warnings=("x",)).warnings == ("x",)
    assert hw.Suspend("w", warnings=["s"]).warnings == ["s"]
    assert hw.Escalate("e", warnings=["e"]).warnings == ["e"]
    assert hw.Retry("r", warnings=["r"]).warnings == ["r"]
    # Judged when the bus takes the answer, not when built: a hostile value never raises here.
    assert hw.Continue(warnings=5).warnings == 5  # type: ignore[arg-type]
    for outcome in (hw.Continue(), hw.Block("n"), hw.Continue(warnings=None)):
        assert outcome.warnings == ()


def test_warnings_take_part_in_equality_repr_and_pickling() -> None:
    warned = hw.Block("no", code="c", warnings=["w"])
    assert warned != hw.Block("no", code="c")
    assert warned == hw.Block("no", code="c", warnings=["w"])
    assert repr(warned) == "Block(reason='no', code='c', warnings=['w'])"
    assert repr(hw.Block("no")) == "Block(reason='no', code=None)"
    assert pickle.loads(pickle.dumps(warned)) == warned
    assert hash(warned) == hash(hw.Block("no", code="c"))
    note = hw.HookWarning("guard", "careful")
    assert note == hw.HookWarning(middleware="guard", text="careful")
    assert repr(note) == "HookWarning(middleware='guard', text='careful')"
    copy = pickle.loads(pickle.dumps(note))
    assert copy == note and hash(copy) == hash(note)
    with pytest.raises(AttributeError):
        note.text = "x"  # type: ignore[misc]
    with pytest.raises(TypeError, match=r"HookWarning\.text must be a str"):
        hw.HookWarning("guard", 5)  # type: ignore[arg-type]


async def test_the_result_holds_them_in_run_order(ctx: hw.RunContext) -> None:
    bus = bus_answering(
        ("first", hw.Continue(warnings=["one", "two"])),
        ("suspends", hw.Retry("later", warnings=("three",))),
    )
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.warnings == (
        hw.HookWarning("first", "one"),
        hw.HookWarning("first", "two"),
        hw.HookWarning("suspends", "three"),
    )
    assert isinstance(result.warnings, tuple)
    records = untimed(ctx.trace)
    assert [r.get("warnings") for r in records] == [["one", "two"], ["three"], None]


async def test_a_result_without_warnings_has_the_empty_tuple(ctx: hw.RunContext) -> None:
    bus = bus_answering(("quiet", None), ("plain", hw.Continue()))
    first = await bus.emit("tool.before", tool_call(), ctx)
    second = await bus.emit("tool.before", tool_call(), ctx)
    assert first.warnings == () and first.warnings is second.warnings
    assert all("warnings" not in r for r in ctx.trace)


async def test_bounds_count_code_points(ctx: hw.RunContext) -> None:
    texts = ["", EMOJI * 300, "x" * 256, *(f"w{i}" for i in range(10))]
    bus = bus_answering(("chatty", hw.Continue(warnings=texts)))
    result = await bus.emit("tool.before", tool_call(), ctx)
    kept = [w.text for w in result.warnings]
    assert kept == [EMOJI * 255 + "\u2026", "x" * 256, *(f"w{i}" for i in range(6))]


@pytest.mark.parametrize(
    "bad",
    ["text", 5, {"a": "b"}, {"a"}, ["ok", 1], ["ok", "\udcff"], [*"abcdefgh", None]],
    ids=repr,
)
async def test_invalid_warnings_are_an_invalid_return(ctx: hw.RunContext, bad: Any) -> None:
    bus = bus_answering(("sloppy", hw.Continue(warnings=bad)))
    result = await bus.emit("tool.before", tool_call(), ctx)
    reason = "middleware sloppy failed: invalid_return"
    assert result.outcome == hw.Block(reason, "middleware_error")
    assert result.warnings == ()
    record = untimed(ctx.trace)[0]
    assert record["failure"] == "invalid_return" and "warnings" not in record


async def test_a_trace_with_warnings_round_trips(ctx: hw.RunContext) -> None:
    bus = bus_answering(("advisor", hw.Continue(warnings=['watch "this"', EMOJI])))
    await bus.emit("tool.before", tool_call(), ctx)
    text = ctx.trace.to_jsonl()
    assert '"warnings":["watch \\"this\\"","' + EMOJI + '"]' in text
    assert hw.Trace.from_jsonl(text).to_jsonl() == text


@pytest.mark.parametrize(
    "extra",
    [
        ',"warnings":[]',
        ',"warnings":[""]',
        ',"warnings":[1]',
        ',"warnings":"a"',
        ',"warnings":["' + "x" * 257 + '"]',
        ',"warnings":[' + ",".join(['"a"'] * 9) + "]",
    ],
)
def test_a_reader_refuses_warnings_out_of_bounds(extra: str) -> None:
    line = (
        '{"emit":1,"hook":"tool.before","kind":"outcome","middleware":"m","band":"app",'
        '"outcome":"continue","modified":false' + extra + "}\n"
    )
    with pytest.raises(hw.HarnessweaverError) as caught:
        hw.Trace.from_jsonl(line)
    assert caught.value.kind == "invalid_trace"


def test_only_outcome_records_have_warnings() -> None:
    line = '{"emit":1,"hook":"tool.before","kind":"hook","outcome":"continue","modified":false,'
    with pytest.raises(hw.HarnessweaverError):
        hw.Trace.from_jsonl(line + '"warnings":["a"]}\n')


@given(st.lists(st.text(max_size=300), max_size=12))
def test_kept_warnings_are_bounded(texts: list[str]) -> None:
    ctx = hw.RunContext()
    bus = bus_answering(("chatty", hw.Continue(warnings=texts)))
    valid = all(not any(0xD800 <= ord(c) <= 0xDFFF for c in t) for t in texts)
    result = anyio.run(bus.emit, "tool.before", tool_call(), ctx)
    if not valid:
        assert result.warnings == ()
        return
    expected = [t if len(t) <= 256 else t[:255] + "\u2026" for t in texts if t][:8]
    assert [w.text for w in result.warnings] == expected
