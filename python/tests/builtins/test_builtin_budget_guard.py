"""``harnessweaver.budget_guard``: warns the model at ``warn_at`` of a budget, refuses model
requests at 100%."""

from __future__ import annotations

import re
from typing import Any

import pytest
from builtins_support import bus_with, records, request, response, run, task_end, user

import harnessweaver as hw
from harnessweaver.builtins import BudgetGuard
from harnessweaver.builtins._notes import NOTE_PREFIX

pytestmark = pytest.mark.anyio


async def spend(bus: hw.HookBus, ctx: hw.RunContext, **usage: Any) -> None:
    outcome = (await bus.emit("model.after", response(**usage), ctx)).outcome
    assert outcome == hw.Continue()  # counting never changes the response


async def ask(bus: hw.HookBus, ctx: hw.RunContext) -> hw.HookResult:
    return await bus.emit("model.before", request(user("next")), ctx)


async def test_a_fresh_run_goes_out_untouched() -> None:
    bus, ctx = bus_with(BudgetGuard, max_tokens=1000), run()
    result = await ask(bus, ctx)
    assert result.outcome == hw.Continue() and result.event == request(user("next"))


async def test_input_and_output_tokens_count_and_100_percent_blocks() -> None:
    bus, ctx = bus_with(BudgetGuard, max_tokens=1000, warn_at=None), run()
    await spend(bus, ctx, input_tokens=600, output_tokens=399)
    assert (await ask(bus, ctx)).outcome == hw.Continue()  # 999 of 1000
    await spend(bus, ctx, output_tokens=1)
    assert (await ask(bus, ctx)).outcome == hw.Block(
        reason="the run has spent 1,000 tokens of its 1,000 tokens budget",
        code="budget_exceeded",
    )


async def test_the_warning_is_a_note_to_the_model_given_once_per_limit() -> None:
    bus, ctx = bus_with(BudgetGuard, max_tokens=1000), run()
    await spend(bus, ctx, input_tokens=699)
    assert (await ask(bus, ctx)).outcome == hw.Continue()  # 69.9%: below warn_at 0.7
    await spend(bus, ctx, output_tokens=51)
    warned = await ask(bus, ctx)
    assert warned.outcome.kind == "continue" and warned.outcome.modified is not None
    assert [m.content for m in warned.event.request.messages] == [
        f"next\n\n{NOTE_PREFIX} this run has spent 750 tokens of its 1,000 tokens budget (75%); "
        "model requests stop at 100%, so finish the task soon."
    ]
    await spend(bus, ctx, output_tokens=100)
    assert (await ask(bus, ctx)).outcome == hw.Continue()  # warned already
    assert [r["modified"] for r in records(ctx, "budget_guard") if r["hook"] == "model.before"] == [
        False,
        True,
        False,
    ]


async def test_a_cost_budget_warns_and_blocks_on_its_own() -> None:
    bus, ctx = bus_with(BudgetGuard, max_tokens=10_000, max_cost_usd=0.01, warn_at=0.5), run()
    await spend(bus, ctx, input_tokens=10, cost_usd=0.006)
    warned = await ask(bus, ctx)
    assert "$0.0060 of its $0.0100 budget (60%)" in warned.event.request.messages[-1].content
    assert "tokens" not in warned.event.request.messages[-1].content  # 10 tokens: no warning
    await spend(bus, ctx, input_tokens=10, cost_usd=0.005)
    assert (await ask(bus, ctx)).outcome == hw.Block(
        reason="the run has spent $0.0110 of its $0.0100 budget", code="budget_exceeded"
    )


async def test_when_both_limits_are_crossed_the_block_wins() -> None:
    # no warning is marked as given when the request is refused anyway
    bus, ctx = bus_with(BudgetGuard, max_tokens=100, max_cost_usd=1.0), run()
    await spend(bus, ctx, input_tokens=80, cost_usd=1.0)
    assert (await ask(bus, ctx)).outcome.kind == "block"


async def test_the_note_follows_a_tool_message_as_a_user_message() -> None:
    bus, ctx = bus_with(BudgetGuard, max_tokens=10), run()
    await spend(bus, ctx, input_tokens=8)
    tool_answer = hw.Message(role="tool", content="42", tool_call_id="c1")
    result = await bus.emit("model.before", request(user("sum?"), tool_answer), ctx)
    assert [m.role for m in result.event.request.messages] == ["user", "tool", "user"]
    assert result.event.request.messages[-1].content.startswith(NOTE_PREFIX)


async def test_each_run_has_its_own_budget_until_its_task_ends() -> None:
    bus = bus_with(BudgetGuard, max_tokens=10, warn_at=None)
    one, two = run("one"), run("two")
    await spend(bus, one, input_tokens=10)
    assert (await ask(bus, two)).outcome == hw.Continue()
    await bus.emit("task.end", task_end("suspended"), one)  # resumed later: still spent
    assert (await ask(bus, one)).outcome.kind == "block"
    await bus.emit("task.end", task_end("completed"), one)
    assert (await ask(bus, one)).outcome == hw.Continue()


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({}, "(settings): Value error, give max_tokens, max_cost_usd or both"),
        ({"max_tokens": 0}, "max_tokens: Input should be greater than 0"),
        ({"max_cost_usd": -1}, "max_cost_usd: Input should be greater than 0"),
        ({"max_cost_usd": "inf"}, "max_cost_usd: Input should be a finite number"),
        ({"max_tokens": 9, "warn_at": 1}, "warn_at: Input should be less than 1"),
        ({"max_tokens": 9, "warn_at": "soon"}, "warn_at: Input should be a valid number"),
        ({"max_tokens": 9, "max_usd": 1}, "max_usd: Extra inputs are not permitted"),
    ],
)
def test_settings_are_checked(values: dict[str, Any], message: str) -> None:
    with pytest.raises(hw.RegistrationError, match=re.escape(message)):
        bus_with(BudgetGuard, **values)
