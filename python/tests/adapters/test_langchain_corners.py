"""The LangChain adapter's corners: suspensions after an operation ran (the resumed node must
not redo it), several suspended calls in one model turn, a resume by a fresh agent over the
same checkpointer state, and what a step cut short leaves in the trace. Every test runs
through ``invoke`` and ``ainvoke``, on the core ``HARNESSWEAVER_CORE`` picks."""

from __future__ import annotations

import asyncio
import pickle
from collections import defaultdict
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from test_langchain import REFUND, Agent, ScriptedChat, Shop, call, last_text, on, tool_messages

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware


@pytest.fixture(params=["sync", "async"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def hooks(records: list[dict[str, Any]]) -> list[tuple[str, int | None, str]]:
    return [(r["hook"], r.get("step"), r["outcome"]) for r in records if r["kind"] == "hook"]


def test_a_suspended_tool_result_is_not_made_again_on_resume(mode: str) -> None:
    asked: list[str] = []

    async def look_first(event: hw.ToolResultEvent, env: hw.Envelope) -> hw.Outcome:
        asked.append(str(event.result.output))
        return hw.Suspend(reason="look at the result")

    bus = hw.HookBus()
    bus.register(on(["tool.after"], look_first))
    a = Agent(mode, bus, [REFUND, "Done."])
    paused = a.run("Refund order 42")
    assert paused["__interrupt__"][0].value["hook"] == "tool.after"
    assert a.shop.refunds == [(42, 250.0)]
    done = a.resume({"decision": "approve"})
    assert a.shop.refunds == [(42, 250.0)]  # the tool ran once, as in the run loop
    assert asked == ["refunded 250.0 USD for order 42"]  # the chain was asked once
    assert tool_messages(done)[0].text == "refunded 250.0 USD for order 42"
    assert last_text(done) == "Done."


def test_a_suspended_response_is_not_asked_of_the_model_again(mode: str) -> None:
    async def look(event: hw.ModelResponseEvent, env: hw.Envelope) -> hw.Outcome | None:
        return hw.Suspend(reason="look at the answer") if event.step == 1 else None

    bus = hw.HookBus()
    bus.register(on(["model.after"], look))
    a = Agent(mode, bus, ["first answer", "second answer"])
    a.run("hi")
    done = a.resume({"decision": "approve"})
    assert last_text(done) == "first answer"  # the model was called once
    assert next(a.model.messages) == "second answer"
    assert hooks(a.records()) == [
        ("task.start", None, "continue"),
        ("step.start", 1, "continue"),
        ("model.before", 1, "continue"),
        ("model.after", 1, "suspend"),
        ("task.end", None, "continue"),  # the paused segment's end
        ("step.end", 1, "continue"),
        ("task.end", None, "continue"),
    ]


def test_a_suspended_step_start_does_not_end_the_step_before_twice(mode: str) -> None:
    ends: list[int] = []

    async def look(event: hw.StepStartEvent, env: hw.Envelope) -> hw.Outcome | None:
        return hw.Suspend(reason="step 2") if event.step == 2 else None

    async def count(event: hw.StepEndEvent, env: hw.Envelope) -> None:
        ends.append(event.step)

    bus = hw.HookBus()
    bus.register(on(["step.start"], look))
    bus.register(on(["step.end"], count))
    a = Agent(mode, bus, [REFUND, "Done."])
    a.run("Refund order 42")
    done = a.resume({"decision": "approve"})
    assert last_text(done) == "Done."
    assert ends == [1, 2]


def test_a_step_cut_short_has_no_step_end_and_is_not_counted(mode: str) -> None:
    ended: list[tuple[str, int]] = []

    async def second_turn(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome | None:
        return hw.Block(reason="one turn only") if event.step == 2 else None

    async def end(event: hw.TaskEndEvent, env: hw.Envelope) -> None:
        ended.append((event.exit_reason, event.steps))

    bus = hw.HookBus()
    bus.register(on(["model.before"], second_turn))
    bus.register(on(["task.end"], end))
    a = Agent(mode, bus, [REFUND, "never"])
    a.run("Refund order 42")
    assert [h for h in hooks(a.records()) if h[0] == "step.end"] == [("step.end", 1, "continue")]
    assert ended == [("blocked", 1)]  # one step completed, as the run loop counts


def test_several_suspended_calls_of_one_turn_each_get_their_own_decision(mode: str) -> None:
    asked: list[str] = []

    async def big_wait(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        asked.append(event.call.id)
        if event.call.arguments["amount_usd"] > 100:
            return hw.Suspend(reason="over 100 USD", approver_role="finance")
        return None

    turn = AIMessage(
        content="",
        tool_calls=[
            {"name": "refund_payment", "args": {"order": 1, "amount_usd": 5}, "id": "small"},
            {"name": "refund_payment", "args": {"order": 42, "amount_usd": 250}, "id": "big"},
            {"name": "refund_payment", "args": {"order": 43, "amount_usd": 300}, "id": "bigger"},
        ],
    )
    bus = hw.HookBus()
    bus.register(on(["tool.before"], big_wait))
    a = Agent(mode, bus, [turn, "Done."])
    paused = a.run("Refund three orders")
    assert a.shop.refunds == [(1, 5.0)]
    waiting = {i.value["tool_call"]["id"]: i for i in paused["__interrupt__"]}
    assert sorted(waiting) == ["big", "bigger"]
    decisions = {
        waiting["big"].id: {"decision": "approve", "role": "finance"},
        waiting["bigger"].id: {"decision": "deny", "reason": "too much", "role": "finance"},
    }
    done = a.resume(decisions)
    assert a.shop.refunds == [(1, 5.0), (42, 250.0)]
    answers = {m.tool_call_id: m.text for m in tool_messages(done)}
    assert answers == {
        "small": "refunded 5.0 USD for order 1",
        "big": "refunded 250.0 USD for order 42",
        "bigger": "The approver denied this tool call: too much",
    }
    assert sorted(asked) == ["big", "bigger", "small"]  # each call asked once
    assert last_text(done) == "Done."
    suspends = [r for r in a.records() if r["kind"] == "hook" and r["outcome"] == "suspend"]
    assert sorted(r["step"] for r in suspends) == [1, 1]
    # LangChain runs the calls of a turn together, so both wait at once: each paused call
    # ends the segment with its task.end (the run loop runs them one by one: a pause each)
    pauses = [r for r in a.records() if r["kind"] == "hook" and r["hook"] == "task.end"]
    assert len(pauses) == 3  # two pauses, then the end
    assert (a.middleware._suspended, a.middleware._contexts) == ({}, {})


def _copy(saver: InMemorySaver) -> InMemorySaver:
    """The saver's state through bytes, into a new saver: what another process would load."""
    state = pickle.dumps(
        (
            {t: {ns: dict(c) for ns, c in by_ns.items()} for t, by_ns in saver.storage.items()},
            dict(saver.writes),
            dict(saver.blobs),
        )
    )
    storage, writes, blobs = pickle.loads(state)
    fresh = InMemorySaver()
    for thread, by_ns in storage.items():
        fresh.storage[thread] = defaultdict(dict, by_ns)
    fresh.writes.update(writes)
    fresh.blobs.update(blobs)
    return fresh


def _fresh_agent(bus: hw.HookBus, shop: Shop, saver: InMemorySaver, script: list[Any]) -> Any:
    middleware = HarnessMiddleware(bus)
    agent = create_agent(
        ScriptedChat(messages=iter(script)),
        [shop.refund_payment],
        middleware=[middleware],
        checkpointer=saver,
    )
    return middleware, agent


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_a_fresh_agent_over_the_saved_state_applies_the_decision(mode: str, answer: str) -> None:
    asked: list[dict[str, Any]] = []

    async def big_wait(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        asked.append(dict(event.call.arguments))
        return hw.Suspend(reason="over 100 USD", approver_role="finance")

    bus = hw.HookBus()
    bus.register(on(["tool.before"], big_wait))
    config: Any = {"configurable": {"thread_id": "thread-9"}}
    shop, saver = Shop(), InMemorySaver()
    _, first = _fresh_agent(bus, shop, saver, [REFUND])
    go = (
        (lambda agent, value: agent.invoke(value, config))
        if mode == "sync"
        else (lambda agent, value: asyncio.run(agent.ainvoke(value, config)))
    )
    paused = go(first, {"messages": [{"role": "user", "content": "Refund order 42"}]})
    assert paused["__interrupt__"][0].value["run_id"] == "thread-9"
    # another process: a new middleware and agent, the checkpointer's state through bytes
    middleware, second = _fresh_agent(bus, shop, _copy(saver), ["Done."])
    done = go(second, Command(resume={"decision": answer, "role": "finance", "reason": "no"}))
    refunded = [(42, 250.0)] if answer == "approve" else []
    assert shop.refunds == refunded
    text = tool_messages(done)[0].text
    assert text == (
        "refunded 250.0 USD for order 42"
        if answer == "approve"
        else ("The approver denied this tool call: no")
    )
    assert last_text(done) == "Done."
    # The inherent difference, named: the new process has no memory of the paused node, so
    # LangGraph runs it again from its start and the chain is asked again for the same call
    # (its Suspend then receives the saved decision); the run loop would not ask again.
    assert asked == [{"order": 42, "amount_usd": 250}] * 2
    records = middleware.trace.records()
    assert {r["run"] for r in records} == {"thread-9"}  # the run keeps its id
    assert hooks(records)[:2] == [
        ("tool.before", 1, "suspend"),
        ("tool.after", 1, "continue") if answer == "approve" else ("step.end", 1, "continue"),
    ]


def test_a_denied_tool_result_is_answered_to_its_call(mode: str) -> None:
    async def look(event: hw.ToolResultEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Suspend(reason="look")

    bus = hw.HookBus()
    bus.register(on(["tool.after"], look))
    a = Agent(mode, bus, [call("refund_payment", {"order": 1, "amount_usd": 5}, "c9"), "ok"])
    a.run("Refund order 1")
    done = a.resume({"decision": "deny", "reason": "withheld"})
    [message] = tool_messages(done)
    assert message.tool_call_id == "c9"
    assert message.text == "The approver denied this tool call: withheld"
    assert a.shop.refunds == [(1, 5.0)]  # it ran once; the model reads the denial


def test_a_refused_decision_adds_no_record_as_the_run_loop_refuses_it(mode: str) -> None:
    async def wait(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Suspend(reason="over 100 USD", approver_role="finance")

    bus = hw.HookBus()
    bus.register(on(["tool.before"], wait))
    a = Agent(mode, bus, [REFUND, "Done."])
    a.run("Refund order 42")
    before = a.records()
    again = a.resume({"decision": "approve", "role": "intern"})
    assert "refused" in again["__interrupt__"][0].value
    assert a.records() == before  # the run loop raises wrong_approver and emits nothing
    a.resume({"decision": "approve", "role": "finance"})
    assert a.shop.refunds == [(42, 250.0)]
    ends = [r for r in a.records() if r["kind"] == "hook" and r["hook"] == "task.end"]
    assert len(ends) == 2  # the pause, then the end


def test_usage_counts_every_model_call_as_the_run_loop(mode: str) -> None:
    retried: list[int] = []
    seen: list[tuple[str, int, int]] = []

    async def once_more(event: hw.ModelResponseEvent, env: hw.Envelope) -> hw.Outcome | None:
        if not retried:
            retried.append(1)
            return hw.Retry(reason="again")
        return None

    async def count(event: hw.StepEndEvent | hw.TaskEndEvent, env: hw.Envelope) -> None:
        kind = "step" if isinstance(event, hw.StepEndEvent) else "task"
        seen.append((kind, event.usage.input_tokens, event.usage.output_tokens))

    def said(text: str, tokens: int) -> AIMessage:
        usage = {"input_tokens": tokens, "output_tokens": 1, "total_tokens": tokens + 1}
        return AIMessage(content=text, usage_metadata=usage)  # type: ignore[arg-type]

    bus = hw.HookBus()
    bus.register(on(["model.after"], once_more))
    bus.register(on(["step.end", "task.end"], count))
    a = Agent(mode, bus, [said("retried away", 100), said("kept", 10), said("next", 5)])
    assert last_text(a.run("hi")) == "kept"
    # as the run loop, which charges every model call: the retried one too
    assert seen == [("step", 110, 2), ("task", 110, 2)]
    assert last_text(a.run("and now?")) == "next"  # a new task on the same thread
    assert seen[2:] == [("step", 5, 1), ("task", 5, 1)]  # counts its own calls only
