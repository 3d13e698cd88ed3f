"""The lifecycle: every hook point at its moment, and Continue(modified) is what runs."""

from __future__ import annotations

from typing import Any

import pytest
from agent_support import Counted, S, answering, harness, hooks_fired, provider_of

import harnessweaver as hw

pytestmark = pytest.mark.anyio


def modify(**update: Any) -> Any:
    """An answer that returns the event with ``update`` applied."""
    return lambda event: hw.Continue(modified=event.model_copy(update=update))


async def test_a_run_emits_every_hook_point_at_its_moment() -> None:
    lookup = Counted()
    h = harness(script=[S.tool_call("lookup", {"order": 7}), "shipped"], tools=[lookup.tool])
    result = await h.run("where is order 7?")
    assert result.exit_reason == "completed"
    assert result.output == "shipped"
    assert result.steps == 2
    assert lookup.calls == [7]
    assert hooks_fired(result.trace) == [
        "task.start",
        *("step.start", "model.before", "model.after", "tool.before", "tool.after", "step.end"),
        *("step.start", "model.before", "model.after", "step.end"),
        "task.end",
    ]


async def test_the_conversation_pairs_every_call_with_its_result() -> None:
    lookup = Counted()
    h = harness(
        script=[S.tool_call("lookup", {"order": 7}), "shipped"],
        tools=[lookup.tool],
        system="be brief",
    )
    result = await h.run("where is order 7?")
    roles = [m.role for m in result.state.messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    call = result.state.messages[2].tool_calls[0]
    assert call.id == "call_1_1"  # the loop names calls the model left unnamed
    reply = result.state.messages[3]
    assert (reply.tool_call_id, reply.name) == ("call_1_1", "lookup")
    assert reply.content == '{"order": 7, "status": "shipped"}'


async def test_task_end_carries_the_exit_reason_output_steps_and_usage() -> None:
    seen = answering("task.end", lambda event: None)
    usage = hw.Usage(input_tokens=10, output_tokens=5, cost_usd=0.5)
    h = harness(seen, script=[S.text("ok", usage=usage)])
    await h.run("hi")
    assert seen.seen == [
        hw.TaskEndEvent(output="ok", exit_reason="completed", steps=1, usage=usage)
    ]


async def test_a_modified_task_input_is_what_the_model_reads() -> None:
    h = harness(answering("task.start", modify(input="[redacted]")))
    await h.run("my card is 4111")
    sent = provider_of(h).requests[0]
    assert sent.messages[-1].content == "[redacted]"


async def test_modified_step_messages_and_tools_are_what_the_step_uses() -> None:
    lookup = Counted()
    trimmed = answering(
        "step.start",
        lambda event: hw.Continue(
            modified=event.model_copy(update={"messages": event.messages[-1:], "tools": ()})
        ),
    )
    h = harness(trimmed, tools=[lookup.tool], system="long system prompt")
    await h.run("hi")
    sent = provider_of(h).requests[0]
    assert [m.role for m in sent.messages] == ["user"]
    assert sent.tools == ()


async def test_a_modified_request_is_what_the_provider_receives() -> None:
    def shorten(event: hw.ModelRequestEvent) -> hw.Outcome:
        request = event.request.model_copy(update={"model": "small"})
        return hw.Continue(modified=event.model_copy(update={"request": request}))

    h = harness(answering("model.before", shorten))
    result = await h.run("hi")
    assert provider_of(h).requests[0].model == "small"
    # the journaled history is what was really sent
    assert result.state.messages[0].content == "hi"


async def test_a_modified_response_is_what_the_run_uses() -> None:
    def reword(event: hw.ModelResponseEvent) -> hw.Outcome:
        message = event.response.message.model_copy(update={"content": "reworded"})
        response = event.response.model_copy(update={"message": message})
        return hw.Continue(modified=event.model_copy(update={"response": response}))

    h = harness(answering("model.after", reword), script=["original"])
    result = await h.run("hi")
    assert result.output == "reworded"


async def test_a_modified_call_is_the_call_that_runs() -> None:
    lookup = Counted()

    def other_order(event: hw.ToolCallEvent) -> hw.Outcome:
        call = event.call.model_copy(update={"arguments": {"order": 9}})
        return hw.Continue(modified=event.model_copy(update={"call": call}))

    h = harness(
        answering("tool.before", other_order),
        script=[S.tool_call("lookup", {"order": 1}), "done"],
        tools=[lookup.tool],
    )
    await h.run("go")
    assert lookup.calls == [9]


async def test_a_modified_result_is_what_the_model_reads() -> None:
    lookup = Counted()

    def hide(event: hw.ToolResultEvent) -> hw.Outcome:
        return hw.Continue(modified=event.model_copy(update={"result": hw.ToolResult(output="-")}))

    h = harness(
        answering("tool.after", hide),
        script=[S.tool_call("lookup", {"order": 1}), "done"],
        tools=[lookup.tool],
    )
    await h.run("go")
    assert provider_of(h).requests[1].messages[-1].content == "-"


async def test_a_modified_task_end_output_is_the_reported_output() -> None:
    h = harness(answering("task.end", modify(output="[redacted]")), script=["secret answer"])
    result = await h.run("hi")
    assert result.output == "[redacted]"


async def test_a_call_of_a_tool_not_offered_gets_an_error_result_through_both_tool_hooks() -> None:
    before = answering("tool.before", lambda event: None)
    after = answering("tool.after", lambda event: None)
    h = harness(before, after, script=[S.tool_call("rm_rf", {"path": "/"}), "ok"])
    result = await h.run("go")
    assert [e.call.name for e in before.seen] == ["rm_rf"]
    assert after.seen[0].result == hw.ToolResult(
        output="unknown tool 'rm_rf': the tools offered are none", is_error=True
    )
    assert result.exit_reason == "completed"


async def test_several_calls_in_one_response_run_in_order() -> None:
    lookup = Counted()
    both = S.tool_calls(
        hw.ToolCall(id="a", name="lookup", arguments={"order": 1}),
        hw.ToolCall(id="b", name="lookup", arguments={"order": 2}),
    )
    h = harness(script=[both, "done"], tools=[lookup.tool])
    result = await h.run("go")
    assert lookup.calls == [1, 2]
    assert [m.tool_call_id for m in result.state.messages if m.role == "tool"] == ["a", "b"]


async def test_a_run_without_a_provider_is_refused_before_anything_runs() -> None:
    h = hw.Harness.from_bus(hw.HookBus())
    with pytest.raises(hw.AgentError, match=r"provider None: a run calls a model") as caught:
        await h.run("hi")
    assert caught.value.kind == "no_provider"


async def test_a_failure_of_the_harness_itself_still_emits_task_end_then_raises(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harnessweaver.agent import phases

    async def broken(*args: object) -> hw.ToolResult:
        raise RuntimeError("plumbing")

    monkeypatch.setattr(phases, "_invoke", broken)  # a bug in the loop, not a tool failure
    ended = answering("task.end", lambda event: None)
    lookup = Counted()
    h = harness(ended, script=[S.tool_call("lookup", {"order": 1})], tools=[lookup.tool])
    with pytest.raises(RuntimeError, match="plumbing"):
        await h.run("go")
    assert [(e.exit_reason, e.steps) for e in ended.seen] == [("error", 0)]


async def test_a_provider_answering_something_else_is_a_provider_error() -> None:
    class Wrong:
        async def complete(self, request: hw.ModelRequest) -> hw.ModelResponse:
            return "not a response"  # type: ignore[return-value]

    h = harness().with_agent(provider=Wrong())
    result = await h.run("hi")
    assert result.exit.model_dump(exclude_none=True) == {
        "exit_reason": "provider_error",
        "error": "ProviderError",
    }


async def test_a_call_a_middleware_adds_gets_an_id_too() -> None:
    lookup = Counted()

    def add_call(event: hw.ModelResponseEvent) -> hw.Outcome:
        extra = hw.ToolCall(name="lookup", arguments={"order": 2})
        message = event.response.message
        message = message.model_copy(update={"tool_calls": (*message.tool_calls, extra)})
        response = event.response.model_copy(update={"message": message})
        return hw.Continue(modified=event.model_copy(update={"response": response}))

    h = harness(
        answering("model.after", lambda e: add_call(e) if e.step == 1 else None),
        script=[S.tool_call("lookup", {"order": 1}, id="mine"), "done"],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert lookup.calls == [1, 2]
    replies = [m.tool_call_id for m in result.state.messages if m.role == "tool"]
    assert replies == ["mine", "call_1_2"]
