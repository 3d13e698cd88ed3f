"""Every outcome acts: Block, Escalate and Retry at the hook points where they mean most."""

from __future__ import annotations

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


def always(outcome: hw.Outcome) -> object:
    return lambda event: outcome


async def test_block_at_tool_before_refuses_the_call_and_tells_the_model_why() -> None:
    lookup = Counted()
    guard = answering("tool.before", always(hw.Block(reason="orders are private", code="pii")))
    after = answering("tool.after", lambda event: None)
    h = harness(
        guard, after, script=[S.tool_call("lookup", {"order": 1}), "ok"], tools=[lookup.tool]
    )
    result = await h.run("go")
    assert lookup.calls == []  # the tool never ran
    assert after.seen == []  # no operation, so no tool.after
    refusal = last_tool_message(result)
    assert refusal.content == "The harness refused this tool call: orders are private"
    assert refusal.tool_call_id == "call_1_1"
    assert provider_of(h).requests[1].messages[-1] == refusal  # the model read it
    assert result.exit_reason == "completed"


async def test_block_at_model_before_ends_the_run_without_calling_the_model() -> None:
    ended = answering("task.end", lambda event: None)
    h = harness(answering("model.before", always(hw.Block("too long", code="too_long"))), ended)
    result = await h.run("hi")
    assert provider_of(h).requests == []
    assert result.exit.model_dump(exclude_none=True) == {
        "exit_reason": "blocked",
        "hook": "model.before",
        "reason": "too long",
        "code": "too_long",
    }
    assert result.output is None
    assert [e.exit_reason for e in ended.seen] == ["blocked"]
    # a step cut short emits no step.end; task.end reports it
    assert hooks_fired(result.trace) == ["task.start", "step.start", "model.before", "task.end"]
    assert not result.resumable


async def test_block_at_task_start_runs_no_step() -> None:
    h = harness(answering("task.start", always(hw.Block("not today"))))
    result = await h.run("hi")
    assert (result.exit_reason, result.steps) == ("blocked", 0)
    assert hooks_fired(result.trace) == ["task.start", "task.end"]


async def test_block_at_model_after_discards_the_response() -> None:
    h = harness(answering("model.after", always(hw.Block("unsafe answer"))), script=["bad"])
    result = await h.run("hi")
    assert result.exit_reason == "blocked"
    assert result.output is None
    assert all(m.content != "bad" for m in result.state.messages)


async def test_block_at_tool_after_withholds_the_result() -> None:
    lookup = Counted()
    h = harness(
        answering("tool.after", always(hw.Block("leaks an address"))),
        script=[S.tool_call("lookup", {"order": 1}), "ok"],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert lookup.calls == [1]
    assert last_tool_message(result).content == (
        "The harness withheld this tool's result: leaks an address"
    )


async def test_block_at_step_end_ends_the_run() -> None:
    h = harness(answering("step.end", always(hw.Block("enough"))))
    result = await h.run("hi")
    assert (result.exit_reason, result.exit.hook) == ("blocked", "step.end")


async def test_block_at_task_end_withholds_the_output() -> None:
    h = harness(answering("task.end", always(hw.Block("unverified"))), script=["answer"])
    result = await h.run("hi")
    assert result.exit_reason == "completed"  # the run did complete
    assert result.output is None
    assert result.end_outcome == hw.Block("unverified")


async def test_escalate_ends_the_run_escalated_with_its_target() -> None:
    lookup = Counted()
    h = harness(
        answering("tool.before", always(hw.Escalate("fraud?", to="security"))),
        script=[S.tool_call("lookup", {"order": 1})],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert lookup.calls == []
    assert (result.exit_reason, result.exit.to, result.exit.hook) == (
        "escalated",
        "security",
        "tool.before",
    )
    assert not result.resumable


async def test_retry_at_model_after_calls_the_model_again() -> None:
    retry = answering("model.after", once(hw.Retry("cite your sources")))
    h = harness(retry, script=["no citation", "answer [1]"])
    result = await h.run("hi")
    assert result.output == "answer [1]"
    assert len(provider_of(h).requests) == 2
    # each attempt passes the whole onion again: model.before sees the retry too
    assert hooks_fired(result.trace).count("model.before") == 2
    assert result.state.messages[-1].content == "answer [1]"


async def test_retries_end_the_run_when_the_bound_is_reached() -> None:
    h = harness(
        answering("model.after", always(hw.Retry("still wrong", code="bad_answer"))),
        script=["a", "b", "c"],
        max_retries=2,
    )
    result = await h.run("hi")
    assert len(provider_of(h).requests) == 3  # the first call and two retries
    assert result.exit.model_dump(exclude_none=True) == {
        "exit_reason": "retry_exhausted",
        "hook": "model.after",
        "reason": "still wrong",
        "code": "bad_answer",
    }


async def test_a_retrys_max_attempts_lowers_the_bound() -> None:
    h = harness(
        answering("model.after", always(hw.Retry("again", max_attempts=2))),
        script=["a", "b", "c"],
        max_retries=5,
    )
    result = await h.run("hi")
    assert len(provider_of(h).requests) == 2
    assert result.exit_reason == "retry_exhausted"


async def test_retry_at_tool_after_runs_the_tool_again() -> None:
    lookup = Counted()
    h = harness(
        answering("tool.after", once(hw.Retry("flaky"))),
        script=[S.tool_call("lookup", {"order": 3}), "ok"],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert lookup.calls == [3, 3]
    assert hooks_fired(result.trace).count("tool.before") == 2
    assert [m.role for m in result.state.messages].count("tool") == 1  # one answer per call


async def test_retry_at_tool_before_asks_the_chain_again_after_the_delay() -> None:
    waited: list[float] = []

    async def no_sleep(seconds: float) -> None:
        waited.append(seconds)

    lookup = Counted()
    gate = answering("tool.before", once(hw.Retry("rate limited", delay="250ms")))
    h = harness(
        gate,
        script=[S.tool_call("lookup", {"order": 3}), "ok"],
        tools=[lookup.tool],
        sleep=no_sleep,
    )
    await h.run("go")
    assert waited == [0.25]
    assert len(gate.seen) == 2
    assert lookup.calls == [3]


async def test_retry_counts_start_over_for_each_operation() -> None:
    lookup = Counted()
    h = harness(
        answering("tool.after", once(hw.Retry("flaky"))),
        answering("model.after", once(hw.Retry("again"))),
        script=["x", S.tool_call("lookup", {"order": 1}), "ok"],
        tools=[lookup.tool],
        max_retries=1,
    )
    result = await h.run("go")
    assert result.exit_reason == "completed"  # one retry of the model call, one of the tool


async def test_a_closed_middleware_failure_blocks_like_a_block() -> None:
    def crash(event: object) -> None:
        raise ValueError("secret detail")

    h = harness(answering("model.before", crash))
    result = await h.run("hi")
    assert result.exit_reason == "blocked"
    assert result.exit.code == "middleware_error"
    assert "secret detail" not in result.state.model_dump_json()
