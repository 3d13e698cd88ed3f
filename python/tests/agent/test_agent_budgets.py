"""Budgets end a run with a clear exit reason; a larger budget resumes it."""

from __future__ import annotations

import pytest
from agent_support import Counted, ManualClock, S, harness, provider_of

import harnessweaver as hw

pytestmark = pytest.mark.anyio


def looping(n: int, usage: hw.Usage | None = None) -> list[hw.ModelResponse | str]:
    """A model that asks for a tool ``n`` times, then answers."""
    return [*(S.tool_call("lookup", {"order": i}, usage=usage) for i in range(n)), "done"]


async def test_the_step_budget_stops_before_the_step_past_it() -> None:
    lookup = Counted()
    h = harness(script=looping(5), tools=[lookup.tool], budgets=hw.Budgets(max_steps=2))
    result = await h.run("go")
    assert result.exit.model_dump(exclude_none=True) == {
        "exit_reason": "budget_steps",
        "reason": "the run used 2 steps; its budget is 2",
    }
    assert (result.steps, lookup.calls) == (2, [0, 1])


async def test_the_token_budget_counts_input_and_output() -> None:
    usage = hw.Usage(input_tokens=60, output_tokens=40)
    lookup = Counted()
    h = harness(script=looping(5, usage), tools=[lookup.tool], budgets=hw.Budgets(max_tokens=250))
    result = await h.run("go")
    assert result.exit_reason == "budget_tokens"
    assert result.usage.input_tokens + result.usage.output_tokens == 300
    assert len(provider_of(h).requests) == 3


async def test_the_cost_budget() -> None:
    usage = hw.Usage(cost_usd=0.4)
    lookup = Counted()
    budgets = hw.Budgets(max_cost_usd=1.0)
    h = harness(script=looping(5, usage), tools=[lookup.tool], budgets=budgets)
    result = await h.run("go")
    assert result.exit_reason == "budget_cost"
    assert result.usage.cost_usd == pytest.approx(1.2)


async def test_the_time_budget_runs_on_the_injected_clock() -> None:
    clock = ManualClock()

    @hw.tool
    def slow(order: int) -> str:
        clock.advance(30)  # the tool "takes" 30 seconds
        return "ok"

    script = [S.tool_call("slow", {"order": i}) for i in range(5)]
    h = harness(script=script, tools=[slow], clock=clock, budgets=hw.Budgets(max_seconds=60))
    result = await h.run("go")
    assert result.exit.model_dump(exclude_none=True) == {
        "exit_reason": "budget_time",
        "reason": "the run used 60 seconds; its budget is 60",
    }
    assert result.state.elapsed_s == 60


async def test_time_waiting_for_a_decision_does_not_count() -> None:
    clock = ManualClock()
    approval = hw.Suspend("check", approver_role="ops")

    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def ask_once(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        return approval if event.call.id == "call_1_1" else None

    lookup = Counted()
    h = harness(
        ask_once,
        script=looping(1),
        tools=[lookup.tool],
        clock=clock,
        budgets=hw.Budgets(max_seconds=10),
    )
    clock.advance(4)
    result = await h.run("go")
    clock.advance(3600)  # an hour before anyone approves
    resumed = await h.resume(result.state, hw.Decision.approve(role="ops"))
    assert resumed.exit_reason == "completed"
    assert resumed.state.elapsed_s == 0


async def test_a_larger_budget_resumes_a_run_its_budget_stopped() -> None:
    lookup = Counted()
    h = harness(script=looping(3), tools=[lookup.tool], budgets=hw.Budgets(max_steps=1))
    result = await h.run("go")
    assert result.exit_reason == "budget_steps" and result.resumable
    resumed = await h.with_agent(budgets=hw.Budgets(max_steps=10)).resume(result.state)
    assert (resumed.exit_reason, resumed.steps, lookup.calls) == ("completed", 4, [0, 1, 2])


@pytest.mark.parametrize(
    ("field", "value"),
    [("max_steps", 0), ("max_steps", 1.5), ("max_tokens", True), ("max_seconds", -1)],
)
def test_a_bad_budget_names_the_value(field: str, value: object) -> None:
    with pytest.raises(hw.AgentError, match=rf"invalid {field} {value!r}: a budget is") as caught:
        hw.Budgets(**{field: value})  # type: ignore[arg-type]
    assert (caught.value.kind, caught.value.rule) == ("invalid_budget", "budgets")


def test_the_step_budget_is_on_by_default() -> None:
    assert hw.Budgets().max_steps == 25
