"""``harnessweaver.loop_guard``: repeated identical tool calls are warned about, then refused."""

from __future__ import annotations

import re
from typing import Any

import pytest
from builtins_support import bus_with, call, records, request, run, task_end, user
from hypothesis import given, settings
from hypothesis import strategies as st

import harnessweaver as hw
from harnessweaver.builtins import LoopGuard
from harnessweaver.builtins._notes import NOTE_PREFIX
from harnessweaver.builtins.loops import fingerprint

pytestmark = pytest.mark.anyio


async def outcomes(bus: hw.HookBus, ctx: hw.RunContext, *events: hw.ToolCallEvent) -> list[str]:
    return [(await bus.emit("tool.before", event, ctx)).outcome.kind for event in events]


async def test_the_fifth_identical_call_is_refused_with_a_stable_code() -> None:
    bus, ctx = bus_with(LoopGuard), run()
    kinds = await outcomes(bus, ctx, *[call(q="weather")] * 4)
    refused = await bus.emit("tool.before", call(q="weather"), ctx)
    assert kinds == ["continue"] * 4
    assert refused.outcome == hw.Block(
        reason="search was called with the same arguments 5 times within the last 20 tool "
        "calls; try something else",
        code="loop_detected",
    )


async def test_other_arguments_or_tools_are_other_calls() -> None:
    bus, ctx = bus_with(LoopGuard, warn_after=2, block_after=3, window=10), run()
    kinds = await outcomes(
        bus, ctx, call(q="a"), call(q="b"), call("fetch", q="a"), call(q="a"), call(q="a")
    )
    # only the third search for "a" reaches the limit of 3
    assert kinds == ["continue", "continue", "continue", "continue", "block"]


async def test_the_warning_reaches_the_model_once_at_its_next_request() -> None:
    bus, ctx = bus_with(LoopGuard, warn_after=2, block_after=4, window=10), run()
    await outcomes(bus, ctx, call(q="a"), call(q="a"))
    warned = await bus.emit("model.before", request(user("go on")), ctx)
    again = await bus.emit("model.before", request(user("go on")), ctx)
    assert warned.outcome.kind == "continue" and warned.outcome.modified is not None
    (message,) = warned.event.request.messages
    assert message.content == (
        f"go on\n\n{NOTE_PREFIX} you have called search with the same arguments 2 times in "
        "your last 10 tool calls; from 4 such calls on it will be refused, so try something else."
    )
    # told once: the next request goes out untouched, and the trace shows who changed what
    assert again.outcome == hw.Continue() and again.event.request.messages == (user("go on"),)
    assert [(r["hook"], r["modified"]) for r in records(ctx, "loop_guard")] == [
        ("tool.before", False),
        ("tool.before", False),
        ("model.before", True),
        ("model.before", False),
    ]


async def test_no_warning_without_warn_after() -> None:
    bus, ctx = bus_with(LoopGuard, warn_after=None, block_after=3), run()
    await outcomes(bus, ctx, call(q="a"), call(q="a"))
    assert (await bus.emit("model.before", request(user("hi")), ctx)).outcome == hw.Continue()
    assert await outcomes(bus, ctx, call(q="a")) == ["block"]


async def test_a_refused_call_is_not_warned_about_as_well() -> None:
    bus, ctx = bus_with(LoopGuard, warn_after=2, block_after=3), run()
    assert await outcomes(bus, ctx, *[call(q="a")] * 3) == ["continue", "continue", "block"]
    # the refusal told the model; a warning after it would only repeat it
    assert (await bus.emit("model.before", request(user("hi")), ctx)).outcome == hw.Continue()


async def test_the_count_is_over_a_sliding_window() -> None:
    bus, ctx = bus_with(LoopGuard, warn_after=2, block_after=3, window=4), run()
    kinds = await outcomes(
        bus, ctx, call(q="a"), call(q="a"), call(q="b"), call(q="c"), call(q="d"), call(q="a")
    )
    # by the last call the first two have left the window of 4, so it is the first again
    assert kinds == ["continue"] * 6


async def test_refused_calls_stay_refused_while_the_model_insists() -> None:
    bus, ctx = bus_with(LoopGuard, warn_after=None, block_after=2, window=3), run()
    assert await outcomes(bus, ctx, *[call(q="a")] * 4) == ["continue", "block", "block", "block"]


async def test_runs_are_counted_apart_and_forgotten_at_task_end() -> None:
    bus = bus_with(LoopGuard, warn_after=None, block_after=2)
    one, two = run("one"), run("two")
    assert await outcomes(bus, one, call(q="a")) == ["continue"]
    assert await outcomes(bus, two, call(q="a")) == ["continue"]  # another run, its own count
    await bus.emit("task.end", task_end(), one)
    assert await outcomes(bus, one, call(q="a")) == ["continue"]  # run one starts afresh
    assert await outcomes(bus, two, call(q="a")) == ["block"]


async def test_a_suspended_run_keeps_its_counts() -> None:
    bus, ctx = bus_with(LoopGuard, warn_after=None, block_after=2), run()
    await outcomes(bus, ctx, call(q="a"))
    await bus.emit("task.end", task_end("suspended"), ctx)  # resumed later, same run id
    assert await outcomes(bus, ctx, call(q="a")) == ["block"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"warn_after": 5, "block_after": 3}, "block_after: Value error, block_after (3) must be"),
        ({"window": 3}, "window: Value error, window (3) must be at least block_after (5)"),
        ({"block_after": 1}, "block_after: Input should be greater than or equal to 2"),
        ({"warn_after": "often"}, "warn_after: Input should be a valid integer"),
        ({"windows": 3}, "windows: Extra inputs are not permitted"),
    ],
)
def test_settings_are_checked(values: dict[str, Any], message: str) -> None:
    # each error names the key at fault and the rule it breaks
    with pytest.raises(hw.RegistrationError, match=re.escape(message)):
        bus_with(LoopGuard, **values)


def test_fingerprint_is_sha256_hex_of_tool_and_canonical_arguments() -> None:
    print_ = fingerprint("search", {"b": 1, "a": [1.0, {"y": None, "x": "é"}]})
    assert len(print_) == 64 and int(print_, 16) >= 0
    assert print_ == fingerprint("search", {"a": [1, {"x": "é", "y": None}], "b": 1.0})
    assert print_ != fingerprint("fetch", {"b": 1, "a": [1, {"y": None, "x": "é"}]})
    assert fingerprint("search", {"q": "1"}) != fingerprint("search", {"q": 1})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None, database=None)
@given(st.dictionaries(st.text(max_size=4), json_values, max_size=5), st.randoms())
def test_fingerprint_is_stable_under_key_order(arguments: dict[str, Any], rnd: Any) -> None:
    def shuffled(value: Any) -> Any:
        if isinstance(value, dict):
            keys = list(value)
            rnd.shuffle(keys)
            return {key: shuffled(value[key]) for key in keys}
        if isinstance(value, list):
            return [shuffled(item) for item in value]
        return value

    assert fingerprint("t", arguments) == fingerprint("t", shuffled(arguments))
