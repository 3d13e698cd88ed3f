"""The LangChain v1 adapter against the real ``langchain`` package, offline: LangChain's own
fake chat model (``GenericFakeChatModel``) answers with scripted ``AIMessage``s carrying tool
calls; the tools are real LangChain tools; suspensions go through LangGraph's interrupt and
``InMemorySaver``. Every test runs through ``invoke`` and ``ainvoke``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import harnessweaver as hw
from harnessweaver.adapters.langchain import DEFAULT_MAX_RETRIES, HarnessMiddleware


class ScriptedChat(GenericFakeChatModel):
    """LangChain's fake chat model; ``create_agent`` binds tools, which the script ignores."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:  # type: ignore[override]
        return self


def call(name: str, args: dict[str, Any], id: str = "call_1") -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": id}])


class Shop:
    def __init__(self) -> None:
        self.refunds: list[tuple[int, float]] = []

        @tool
        def refund_payment(order: int, amount_usd: float) -> str:
            """Refund an order."""
            self.refunds.append((order, amount_usd))
            return f"refunded {amount_usd} USD for order {order}"

        self.refund_payment = refund_payment


MODES = ["sync", "async"]


class Agent:
    """One agent over a scripted model, a shop and a bus; ``run`` and ``resume`` by mode."""

    def __init__(
        self, mode: str, bus: hw.HookBus, script: list[AIMessage | str], **kw: Any
    ) -> None:
        self.mode = mode
        self.shop = Shop()
        self.model = ScriptedChat(messages=iter(script))
        self.middleware = HarnessMiddleware(bus, **kw)
        self.agent = create_agent(
            self.model,
            [self.shop.refund_payment],
            middleware=[self.middleware],
            checkpointer=InMemorySaver(),
        )
        self.config: Any = {"configurable": {"thread_id": "thread-7"}}

    def _go(self, value: Any) -> dict[str, Any]:
        if self.mode == "sync":
            return self.agent.invoke(value, self.config)  # type: ignore[no-any-return]
        return asyncio.run(self.agent.ainvoke(value, self.config))  # type: ignore[no-any-return]

    def run(self, text: str) -> dict[str, Any]:
        return self._go({"messages": [{"role": "user", "content": text}]})

    def resume(self, decision: Any) -> dict[str, Any]:
        return self._go(Command(resume=decision))

    def records(self) -> list[dict[str, Any]]:
        return self.middleware.trace.records()


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def last_text(result: dict[str, Any]) -> str:
    last: BaseMessage = result["messages"][-1]
    return last.text


def on(hooks: list[str], fn: Callable[..., Any], fail_mode: str = "closed") -> Any:
    return hw.middleware(hooks=hooks, fail_mode=fail_mode)(fn)


REFUND = call("refund_payment", {"order": 42, "amount_usd": 250})


async def big_refunds_wait(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    if event.call.arguments.get("amount_usd", 0) > 100:
        return hw.Suspend(reason="refunds over 100 USD need approval", approver_role="finance")
    return None


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def test_a_blocked_tool_call_never_runs_and_the_model_reads_why(mode: str) -> None:
    async def no_refunds(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Block(reason="refunds are closed today", code="policy")

    bus = hw.HookBus()
    bus.register(on(["tool.before"], no_refunds))
    a = Agent(mode, bus, [REFUND, "I could not refund it."])
    result = a.run("Refund order 42")
    assert a.shop.refunds == []
    [refusal] = tool_messages(result)
    assert refusal.text == "The harness refused this tool call: refunds are closed today"
    assert refusal.tool_call_id == "call_1"
    assert last_text(result) == "I could not refund it."  # the run went on to the model


@pytest.mark.parametrize(
    ("decision", "refunds", "tool_text"),
    [
        (
            {"decision": "approve", "role": "finance"},
            [(42, 250.0)],
            "refunded 250.0 USD for order 42",
        ),
        (hw.Decision.approve(role="finance"), [(42, 250.0)], "refunded 250.0 USD for order 42"),
        (
            {"decision": "deny", "reason": "too much", "role": "finance"},
            [],
            "The approver denied this tool call: too much",
        ),
        (
            {"decision": "edit", "arguments": {"order": 42, "amount_usd": 90}, "role": "finance"},
            [(42, 90.0)],
            "refunded 90.0 USD for order 42",
        ),
        ("yes please", [], "The approver denied this tool call: the resume value (str) is not"),
    ],
    ids=["approve", "approve-hw-decision", "deny", "edit", "unreadable-is-denied"],
)
def test_a_suspended_call_waits_in_the_checkpointer_and_resumes_with_the_decision(
    mode: str, decision: Any, refunds: list[tuple[int, float]], tool_text: str
) -> None:
    asked: list[dict[str, Any]] = []

    async def suspend_big(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        asked.append(dict(event.call.arguments))
        return await big_refunds_wait(event, env)

    bus = hw.HookBus()
    bus.register(on(["tool.before"], suspend_big))
    a = Agent(mode, bus, [REFUND, "Done."])
    paused = a.run("Refund order 42, 250 USD")
    assert a.shop.refunds == []
    [interrupt] = paused["__interrupt__"]
    assert interrupt.value["reason"] == "refunds over 100 USD need approval"
    assert interrupt.value["approver_role"] == "finance"
    assert interrupt.value["tool_call"]["arguments"] == {"order": 42, "amount_usd": 250}
    assert interrupt.value["run_id"] == "thread-7"
    state = a.agent.get_state(a.config)
    assert state.interrupts and state.interrupts[0].id == interrupt.id  # kept by the saver

    done = a.resume(decision)
    assert a.shop.refunds == refunds
    [answer] = tool_messages(done)
    assert answer.text.startswith(tool_text)
    assert last_text(done) == "Done."
    # the chain was not asked again for the call it suspended; an edit was asked once more
    edited = [{"order": 42, "amount_usd": 90}] if refunds == [(42, 90.0)] else []
    assert asked == [{"order": 42, "amount_usd": 250}, *edited]
    # nothing of the finished run is kept: neither its suspensions nor its context
    assert (a.middleware._suspended, a.middleware._contexts) == ({}, {})


def test_a_decision_by_the_wrong_role_is_refused_and_the_call_waits_again(mode: str) -> None:
    bus = hw.HookBus()
    bus.register(on(["tool.before"], big_refunds_wait))
    a = Agent(mode, bus, [REFUND, "Done."])
    a.run("Refund order 42, 250 USD")
    again = a.resume({"decision": "approve", "role": "intern"})
    assert a.shop.refunds == []
    [waiting] = again["__interrupt__"]
    assert waiting.value["refused"] == (
        "the decision by role 'intern' was refused: this call waits for 'finance'"
    )
    anonymous = a.resume({"decision": "approve"})  # naming no role is not finance either
    assert a.shop.refunds == []
    [waiting] = anonymous["__interrupt__"]
    assert waiting.value["refused"] == (
        "the decision naming no role was refused: this call waits for 'finance'"
    )
    done = a.resume({"decision": "approve", "role": "finance"})  # still waiting for finance
    assert a.shop.refunds == [(42, 250.0)]
    assert last_text(done) == "Done."


@pytest.mark.parametrize("answer", ["approve", "deny"])
def test_a_suspended_model_call_is_resumed_or_ends_the_run_denied(mode: str, answer: str) -> None:
    ended: list[str] = []

    async def ask_first(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome | None:
        return hw.Suspend(reason="first call needs a look") if event.step == 1 else None

    async def end(event: hw.TaskEndEvent, env: hw.Envelope) -> None:
        ended.append(event.exit_reason)

    bus = hw.HookBus()
    bus.register(on(["model.before"], ask_first))
    bus.register(on(["task.end"], end))
    a = Agent(mode, bus, ["hello"])
    paused = a.run("hi")
    assert paused["__interrupt__"][0].value["hook"] == "model.before"
    done = a.resume({"decision": answer, "reason": "not today"})
    # as in the run loop, each segment ends with its own task.end: the pause, then the end
    if answer == "approve":
        assert (last_text(done), ended) == ("hello", ["suspended", "completed"])
    else:
        assert last_text(done) == "The approver denied model.before: not today"
        assert ended == ["suspended", "denied"]


def test_a_rewritten_call_runs_with_the_modified_arguments(mode: str) -> None:
    async def cap(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Continue(modified=event.updated({"call.arguments.amount_usd": 100}))

    bus = hw.HookBus()
    bus.register(on(["tool.before"], cap))
    a = Agent(mode, bus, [REFUND, "Refunded 100."])
    result = a.run("Refund order 42, 250 USD")
    assert a.shop.refunds == [(42, 100.0)]
    [answer] = tool_messages(result)
    assert answer.text == "refunded 100.0 USD for order 42"
    assert answer.tool_call_id == "call_1"


def test_a_modified_tool_result_and_model_response_are_what_goes_on(mode: str) -> None:
    async def redact(event: hw.ToolResultEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Continue(modified=event.updated({"result.output": "[redacted]"}))

    async def shout(event: hw.ModelResponseEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.response.message.tool_calls:
            return None
        text = event.response.message.content.upper()
        return hw.Continue(modified=event.updated({"response.message.content": text}))

    bus = hw.HookBus()
    bus.register(on(["tool.after"], redact))
    bus.register(on(["model.after"], shout))
    a = Agent(mode, bus, [call("refund_payment", {"order": 1, "amount_usd": 5}), "done"])
    result = a.run("Refund order 1")
    assert a.shop.refunds == [(1, 5.0)]
    assert tool_messages(result)[0].text == "[redacted]"
    assert last_text(result) == "DONE"


def test_a_modified_model_request_is_what_the_model_receives(mode: str) -> None:
    seen: list[list[str]] = []

    class Recording(ScriptedChat):
        def _generate(self, messages: list[BaseMessage], *args: Any, **kw: Any) -> Any:
            seen.append([m.text for m in messages])
            return super()._generate(messages, *args, **kw)

    async def prefix(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Continue(modified=event.updated({"request.messages.0.content": "(checked) hi"}))

    bus = hw.HookBus()
    bus.register(on(["model.before"], prefix))
    a = Agent(mode, bus, ["hello"])
    a.model = Recording(messages=iter(["hello"]))
    a.agent = create_agent(a.model, [], middleware=[a.middleware], checkpointer=InMemorySaver())
    result = a.run("hi")
    assert seen == [["(checked) hi"]]
    assert last_text(result) == "hello"


def test_block_at_model_before_ends_the_run_with_the_reason(mode: str) -> None:
    ended: list[str] = []

    async def closed(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Block(reason="the model is off limits", code="policy")

    async def end(event: hw.TaskEndEvent, env: hw.Envelope) -> None:
        ended.append(event.exit_reason)

    bus = hw.HookBus()
    bus.register(on(["model.before"], closed))
    bus.register(on(["task.end"], end))
    a = Agent(mode, bus, [REFUND])
    result = a.run("Refund order 42")
    assert last_text(result) == "The harness blocked model.before: the model is off limits"
    assert a.shop.refunds == []
    assert ended == ["blocked"]
    assert next(a.model.messages) == REFUND  # the model was never called


@pytest.mark.parametrize("fail_mode", ["closed", "open"])
def test_a_middleware_that_raises_follows_its_fail_mode(mode: str, fail_mode: str) -> None:
    async def broken(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
        raise RuntimeError("secret detail that must not reach the trace")

    bus = hw.HookBus()
    bus.register(on(["tool.before"], broken, fail_mode=fail_mode))
    a = Agent(mode, bus, [REFUND, "after"])
    result = a.run("Refund order 42")
    [answer] = tool_messages(result)
    if fail_mode == "closed":
        assert a.shop.refunds == []
        assert answer.text.startswith("The harness refused this tool call:")
    else:
        assert a.shop.refunds == [(42, 250.0)]
        assert answer.text == "refunded 250.0 USD for order 42"
    assert "secret detail" not in repr(a.records())


def test_retry_repeats_the_tool_within_the_bound_then_blocks(mode: str) -> None:
    async def again(event: hw.ToolResultEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Retry(reason="flaky")

    bus = hw.HookBus()
    bus.register(on(["tool.after"], again))
    a = Agent(mode, bus, [REFUND, "gave up"])
    result = a.run("Refund order 42")
    assert len(a.shop.refunds) == DEFAULT_MAX_RETRIES + 1
    assert (
        tool_messages(result)[0].text
        == "The harness withheld this tool's result: out of retries: flaky"
    )


def test_escalate_at_a_tool_refuses_the_call_and_ends_the_run(mode: str) -> None:
    async def up(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Escalate(reason="unusual", to="fraud-team")

    ended: list[str] = []

    async def end(event: hw.TaskEndEvent, env: hw.Envelope) -> None:
        ended.append(event.exit_reason)

    bus = hw.HookBus()
    bus.register(on(["tool.before"], up))
    bus.register(on(["task.end"], end))
    a = Agent(mode, bus, [REFUND, "never asked"])
    result = a.run("Refund order 42")
    assert a.shop.refunds == []
    assert (
        tool_messages(result)[0].text
        == "The harness escalated this tool call to fraud-team: unusual"
    )
    assert ended == ["escalated"]
    assert next(a.model.messages) == "never asked"  # no model turn after the escalation


def test_the_trace_records_carry_the_run_the_step_and_the_tool(mode: str) -> None:
    bus = hw.HookBus()
    bus.register(on(["tool.before"], big_refunds_wait))
    a = Agent(
        mode, bus, [call("refund_payment", {"order": 1, "amount_usd": 5}, "c1"), REFUND, "Done."]
    )
    a.run("Refund orders 1 and 42")
    a.resume({"decision": "approve", "role": "finance"})
    records = a.records()
    hooks = [(r["hook"], r.get("step"), r.get("tool")) for r in records if r["kind"] != "outcome"]
    assert hooks == [
        ("task.start", None, None),
        ("step.start", 1, None),
        ("model.before", 1, None),
        ("model.after", 1, None),
        ("tool.before", 1, "refund_payment"),
        ("tool.after", 1, "refund_payment"),
        ("step.end", 1, None),
        ("step.start", 2, None),
        ("model.before", 2, None),
        ("model.after", 2, None),
        ("tool.before", 2, "refund_payment"),  # suspended; not asked again on resume
        ("task.end", None, None),  # the paused segment ends, as in the run loop
        ("tool.after", 2, "refund_payment"),
        ("step.end", 2, None),
        ("step.start", 3, None),
        ("model.before", 3, None),
        ("model.after", 3, None),
        ("step.end", 3, None),
        ("task.end", None, None),
    ]
    assert {r["run"] for r in records} == {"thread-7"}
    [suspended] = [r for r in records if r["kind"] == "outcome" and r["outcome"] == "suspend"]
    assert (suspended["middleware"], suspended["step"]) == ("big_refunds_wait", 2)
    assert (suspended["run"], suspended["tool"]) == ("thread-7", "refund_payment")


def test_without_a_thread_each_run_has_its_own_id(mode: str) -> None:
    bus = hw.HookBus()
    shop = Shop()
    middleware = HarnessMiddleware(bus)
    agent = create_agent(
        ScriptedChat(messages=iter(["a", "b"])), [shop.refund_payment], middleware=[middleware]
    )
    for text in ("one", "two"):
        if mode == "sync":
            agent.invoke({"messages": [{"role": "user", "content": text}]})
        else:
            asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": text}]}))
    runs = [r["run"] for r in middleware.trace.records() if r["hook"] == "task.start"]
    assert len(runs) == 2 and runs[0] != runs[1]


def test_a_harness_gives_its_bus_task_and_retry_bound() -> None:
    bus = hw.HookBus()
    harness = hw.Harness.from_bus(bus, task="refund", max_retries=5)
    middleware = HarnessMiddleware(harness)
    assert (middleware.bus, middleware.task, middleware.max_retries) == (bus, "refund", 5)
    with pytest.raises(TypeError, match=r"harness \(with \.bus\) or an hw\.HookBus, got int"):
        HarnessMiddleware(3)


def test_importing_harnessweaver_does_not_import_langchain() -> None:
    code = "import sys, harnessweaver; print('langchain' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_task_start_redacts_the_input_and_a_block_there_ends_the_run(mode: str) -> None:
    seen: list[str] = []

    async def redact(event: hw.TaskStartEvent, env: hw.Envelope) -> hw.Outcome:
        if event.input == "forbidden":
            return hw.Block(reason="not this task")
        return hw.Continue(modified=event.model_copy(update={"input": "card [redacted]"}))

    async def look(event: hw.ModelRequestEvent, env: hw.Envelope) -> None:
        seen.append(event.request.messages[-1].content)

    bus = hw.HookBus()
    bus.register(on(["task.start"], redact))
    bus.register(on(["model.before"], look))
    a = Agent(mode, bus, ["ok", "never"])
    result = a.run("card 4111 1111 1111 1111")
    assert seen == ["card [redacted]"]
    assert result["messages"][0].text == "card [redacted]"  # the state keeps the redaction
    a.config = {"configurable": {"thread_id": "thread-8"}}
    blocked = a.run("forbidden")
    assert last_text(blocked) == "The harness blocked task.start: not this task"
    assert seen == ["card [redacted]"]  # no model call
    assert next(a.model.messages) == "never"


def test_a_block_at_task_end_withholds_the_output(mode: str) -> None:
    async def withhold(event: hw.TaskEndEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Block(reason="output review failed")

    bus = hw.HookBus()
    bus.register(on(["task.end"], withhold))
    a = Agent(mode, bus, ["the secret answer"])
    result = a.run("hi")
    assert last_text(result) == "The harness withheld the output: output review failed"
    assert "the secret answer" not in [m.text for m in result["messages"]]


def test_an_edit_the_chain_suspends_again_waits_for_a_second_decision(mode: str) -> None:
    bus = hw.HookBus()
    bus.register(on(["tool.before"], big_refunds_wait))
    a = Agent(mode, bus, [REFUND, "Done."])
    a.run("Refund order 42, 250 USD")
    edit = {"decision": "edit", "arguments": {"order": 42, "amount_usd": 150}, "role": "finance"}
    again = a.resume(edit)
    [waiting] = again["__interrupt__"]
    assert waiting.value["tool_call"]["arguments"] == {"order": 42, "amount_usd": 150}
    assert a.shop.refunds == []
    done = a.resume({"decision": "approve", "role": "finance"})
    assert a.shop.refunds == [(42, 150.0)]
    assert last_text(done) == "Done."
    suspends = [r for r in a.records() if r["kind"] == "hook" and r["outcome"] == "suspend"]
    assert len(suspends) == 2  # the original call, then the edited one: each asked once


def _edited_refund(value: dict[str, Any], amount: float, **call: Any) -> hw.ToolCallEvent:
    """The interrupt's event with a new amount (and ``call`` changes): an approver's edit."""
    event = hw.ToolCallEvent.model_validate(value["event"])
    arguments = {**event.call.arguments, "amount_usd": amount}
    return event.model_copy(
        update={"call": event.call.model_copy(update={"arguments": arguments, **call})}
    )


def test_an_hw_decision_edit_runs_the_edited_call_once_the_chain_admits_it(mode: str) -> None:
    asked: list[float] = []

    async def suspend_big(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        asked.append(event.call.arguments["amount_usd"])
        return await big_refunds_wait(event, env)

    bus = hw.HookBus()
    bus.register(on(["tool.before"], suspend_big))
    a = Agent(mode, bus, [REFUND, "Done."])
    [interrupt] = a.run("Refund order 42, 250 USD")["__interrupt__"]
    done = a.resume(hw.Decision.edit(_edited_refund(interrupt.value, 80), role="finance"))
    assert a.shop.refunds == [(42, 80.0)]
    assert asked == [250, 80]  # the edited call passed the chain before it ran
    assert last_text(done) == "Done."


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (
            lambda value: hw.ModelRequestEvent(
                step=1, request=hw.ModelRequest(model="m", messages=())
            ),
            "edited event of type 'ModelRequestEvent' at tool.before",
        ),
        (
            lambda value: _edited_refund(value, 80, name="delete_account"),
            "breaks hook contract tool.before/tool_unchanged",
        ),
    ],
    ids=["wrong-event-type", "contract-violation"],
)
def test_an_hw_decision_edit_that_fails_a_check_is_refused_and_the_call_waits_again(
    mode: str, edit: Any, why: str
) -> None:
    bus = hw.HookBus()
    bus.register(on(["tool.before"], big_refunds_wait))
    a = Agent(mode, bus, [REFUND, "Done."])
    [interrupt] = a.run("Refund order 42, 250 USD")["__interrupt__"]
    again = a.resume(hw.Decision.edit(edit(interrupt.value), role="finance"))
    assert a.shop.refunds == []  # nothing ran: not a denial either, the call waits
    [waiting] = again["__interrupt__"]
    assert waiting.value["refused"].startswith("the edit was refused: ")
    assert why in waiting.value["refused"]
    done = a.resume({"decision": "approve", "role": "finance"})
    assert a.shop.refunds == [(42, 250.0)]
    assert last_text(done) == "Done."
