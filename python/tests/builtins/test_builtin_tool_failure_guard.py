"""``harnessweaver.tool_failure_guard``: a tool that keeps failing is refused for the rest of
the run."""

from __future__ import annotations

import re
from typing import Any

import pytest
from builtins_support import bus_with, call, result, run, task_end

import harnessweaver as hw
from harnessweaver.builtins import ToolFailureGuard

pytestmark = pytest.mark.anyio


async def results(bus: hw.HookBus, ctx: hw.RunContext, *errors: bool, tool: str = "search") -> None:
    for error in errors:
        outcome = (await bus.emit("tool.after", result(tool, error=error), ctx)).outcome
        assert outcome == hw.Continue()  # counting never changes a result


async def check(bus: hw.HookBus, ctx: hw.RunContext, tool: str = "search") -> hw.Outcome:
    return (await bus.emit("tool.before", call(tool), ctx)).outcome


async def test_three_failures_in_a_row_take_the_tool_out_of_the_run() -> None:
    bus, ctx = bus_with(ToolFailureGuard), run()
    await results(bus, ctx, True, True)
    assert await check(bus, ctx) == hw.Continue()
    await results(bus, ctx, True)
    assert await check(bus, ctx) == hw.Block(
        reason="tool 'search' failed 3 times in a row; it is not called again in this run",
        code="tool_failing",
    )
    assert await check(bus, ctx, "fetch") == hw.Continue()  # other tools are not affected


async def test_a_success_ends_the_streak() -> None:
    bus, ctx = bus_with(ToolFailureGuard, max_consecutive=2), run()
    await results(bus, ctx, True, False, True, False, True)
    assert await check(bus, ctx) == hw.Continue()


async def test_max_total_counts_failures_that_are_not_in_a_row() -> None:
    bus, ctx = bus_with(ToolFailureGuard, max_consecutive=None, max_total=3), run()
    await results(bus, ctx, True, False, True, False)
    assert await check(bus, ctx) == hw.Continue()
    await results(bus, ctx, True)
    assert await check(bus, ctx) == hw.Block(
        reason="tool 'search' failed 3 times in this run; it is not called again in this run",
        code="tool_failing",
    )


async def test_runs_are_counted_apart_and_forgotten_at_task_end() -> None:
    bus = bus_with(ToolFailureGuard, max_consecutive=1)
    one, two = run("one"), run("two")
    await results(bus, one, True)
    assert (await check(bus, one)).kind == "block"
    assert await check(bus, two) == hw.Continue()
    await bus.emit("task.end", task_end("suspended"), one)
    assert (await check(bus, one)).kind == "block"  # a suspended run goes on as it was
    await bus.emit("task.end", task_end("escalated"), one)
    assert await check(bus, one) == hw.Continue()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"max_consecutive": None}, "(settings): Value error, give max_consecutive, max_total"),
        ({"max_consecutive": 0}, "max_consecutive: Input should be greater than or equal to 1"),
        ({"max_total": 2}, "max_total: Value error, max_total (2) must be at least max_consec"),
        ({"max_total": 1.5}, "max_total: Input should be a valid integer"),
        ({"threshold": 3}, "threshold: Extra inputs are not permitted"),
    ],
)
def test_settings_are_checked(values: dict[str, Any], message: str) -> None:
    with pytest.raises(hw.RegistrationError, match=re.escape(message)):
        bus_with(ToolFailureGuard, **values)
