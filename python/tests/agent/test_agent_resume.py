"""Suspend stops the run with what waits and who decides; resume goes on exactly there."""

from __future__ import annotations

from typing import Any

import pytest
from agent_support import (
    Counted,
    S,
    answering,
    harness,
    hooks_fired,
    last_tool_message,
    once,
    provider_of,
)

import harnessweaver as hw

pytestmark = pytest.mark.anyio

APPROVAL = hw.Suspend(reason="refunds need approval", approver_role="finance", code="approval")


def approval_at(hook: str) -> Any:
    return answering(hook, once(APPROVAL))


def round_trip(state: hw.RunState) -> hw.RunState:
    """The state as another process would get it back: through JSON."""
    return hw.RunState.model_validate_json(state.model_dump_json())


async def suspended_at_tool(*middleware: Any) -> tuple[hw.Harness, Counted, hw.RunResult]:
    lookup = Counted()
    h = harness(
        approval_at("tool.before"),
        *middleware,
        script=[S.tool_call("lookup", {"order": 5}), "done"],
        tools=[lookup.tool],
    )
    return h, lookup, await h.run("go")


async def test_suspend_stops_the_run_with_the_pending_call_and_the_approver() -> None:
    _, lookup, result = await suspended_at_tool()
    assert result.exit_reason == "suspended"
    assert lookup.calls == []
    pending = result.pending
    assert pending is not None
    assert (pending.hook, pending.approver_role, pending.reason, pending.code) == (
        "tool.before",
        "finance",
        "refunds need approval",
        "approval",
    )
    assert pending.call == hw.ToolCall(id="call_1_1", name="lookup", arguments={"order": 5})
    assert result.exit.approver_role == "finance"
    assert result.resumable
    assert hooks_fired(result.trace)[-1] == "task.end"  # every segment ends with task.end


async def test_approval_runs_the_call_without_asking_the_chain_again() -> None:
    second_guard = answering("tool.before", lambda event: None)
    h, lookup, result = await suspended_at_tool(second_guard)
    resumed = await h.resume(round_trip(result.state), hw.Decision.approve(role="finance"))
    assert resumed.exit_reason == "completed"
    assert lookup.calls == [5]  # ran once, after the approval
    assert len(second_guard.seen) == 1  # the chain is not asked again for that call
    assert resumed.output == "done"
    # the segment goes on from the call: tool.after comes first, no task.start again
    assert hooks_fired(resumed.trace)[:2] == ["tool.after", "step.end"]


async def test_approval_runs_the_call_as_the_chain_left_it() -> None:
    def redirect(event: hw.ToolCallEvent) -> hw.Outcome:
        call = event.call.model_copy(update={"arguments": {"order": 6}})
        return hw.Continue(modified=event.model_copy(update={"call": call}))

    lookup = Counted()
    h = harness(
        answering("tool.before", redirect),
        approval_at("tool.before"),
        script=[S.tool_call("lookup", {"order": 5}), "done"],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert result.pending is not None and result.pending.call is not None
    assert result.pending.call.arguments == {"order": 6}
    await h.resume(result.state, hw.Decision.approve(role="finance"))
    assert lookup.calls == [6]


async def test_denial_refuses_the_call_and_tells_the_model() -> None:
    h, lookup, result = await suspended_at_tool()
    resumed = await h.resume(result.state, hw.Decision.deny("not this week", role="finance"))
    assert lookup.calls == []
    assert last_tool_message(resumed).content == "The approver denied this tool call: not this week"
    assert resumed.exit_reason == "completed"


async def test_denial_outside_a_tool_hook_ends_the_run_denied() -> None:
    h = harness(approval_at("model.before"))
    result = await h.run("hi")
    resumed = await h.resume(result.state, hw.Decision.deny("no", role="finance"))
    assert provider_of(h).requests == []
    assert resumed.exit.model_dump(exclude_none=True) == {
        "exit_reason": "denied",
        "hook": "model.before",
        "reason": "no",
        "code": "approval",
        "approver_role": "finance",
    }
    assert not resumed.resumable


@pytest.mark.parametrize(
    "hook", ["task.start", "step.start", "model.before", "model.after", "tool.after", "step.end"]
)
async def test_a_suspended_run_resumes_to_the_same_end_from_any_hook_point(hook: str) -> None:
    lookup = Counted()
    h = harness(
        approval_at(hook),
        script=[S.tool_call("lookup", {"order": 5}), "done"],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert (result.exit_reason, result.exit.hook) == ("suspended", hook)
    resumed = await h.resume(round_trip(result.state), hw.Decision.approve(role="finance"))
    assert (resumed.exit_reason, resumed.output, resumed.steps) == ("completed", "done", 2)
    assert lookup.calls == [5]
    assert len(provider_of(h).requests) == 2  # no model call repeated, none skipped


async def test_a_decision_by_the_wrong_role_is_refused() -> None:
    h, lookup, result = await suspended_at_tool()
    with pytest.raises(hw.AgentError) as caught:
        await h.resume(result.state, hw.Decision.approve(role="intern"))
    assert caught.value.kind == "wrong_approver"
    assert str(caught.value) == (
        "decision by role 'intern': the run suspended at tool.before waits for approver role "
        "'finance' (resume)"
    )
    assert lookup.calls == []


async def test_a_suspended_run_needs_a_decision() -> None:
    h, _, result = await suspended_at_tool()
    with pytest.raises(hw.AgentError, match=r"is suspended at tool.before") as caught:
        await h.resume(result.state)
    assert caught.value.kind == "decision_required"


async def test_an_ended_run_cannot_be_resumed() -> None:
    h = harness()
    result = await h.run("hi")
    with pytest.raises(hw.AgentError, match=r"ended with exit reason 'completed'") as caught:
        await h.resume(result.state)
    assert caught.value.kind == "not_resumable"


async def test_a_running_state_takes_no_decision() -> None:
    h = harness(script=[])  # the model call fails: stopped, but waiting for no one
    result = await h.run("hi")
    assert result.exit_reason == "provider_error"
    with pytest.raises(hw.AgentError, match=r"is not waiting for one") as caught:
        await h.resume(result.state, hw.Decision.approve())
    assert caught.value.kind == "unexpected_decision"


async def test_a_provider_error_stops_the_run_and_resume_repeats_the_call() -> None:
    h = harness(script=[])
    result = await h.run("hi")
    assert result.exit.model_dump(exclude_none=True) == {
        "exit_reason": "provider_error",
        "error": "ScriptExhaustedError",  # the type only (R9)
    }
    assert result.resumable
    resumed = await h.with_agent(provider=hw.ScriptedProvider(["late answer"])).resume(result.state)
    assert (resumed.exit_reason, resumed.output) == ("completed", "late answer")


async def test_a_resumed_run_keeps_its_run_id() -> None:
    seen: list[str] = []

    @hw.middleware(hooks=["task.end"], fail_mode="open")
    async def who(event: hw.TaskEndEvent, env: hw.Envelope) -> None:
        seen.append(env.run_id)

    h, _, result = await suspended_at_tool(who)
    await h.resume(result.state, hw.Decision.approve(role="finance"))
    assert seen == [result.state.run_id] * 2
    other = hw.RunContext(envelope=hw.Envelope(run_id="someone-else"))
    with pytest.raises(hw.AgentError, match=r"ctx run_id 'someone-else'"):
        await h.resume(result.state, hw.Decision.approve(role="finance"), ctx=other)
