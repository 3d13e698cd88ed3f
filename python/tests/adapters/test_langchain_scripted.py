"""The scripted chat model the LangChain page shows (``ScriptedChatModel``), and what a
``Suspend`` does without a checkpointer, inside real LangChain/LangGraph (issue 32)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware, ScriptedChatModel

REFUND = AIMessage(
    content="",
    tool_calls=[{"name": "refund_payment", "args": {"order": 7, "amount_usd": 250}, "id": "c1"}],
)


def refunds() -> tuple[Any, list[int]]:
    ran: list[int] = []

    @tool
    def refund_payment(order: int, amount_usd: float) -> str:
        """Refund an order."""
        ran.append(order)
        return f"refunded order {order}"

    return refund_payment, ran


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def finance_approves(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    return hw.Suspend(reason="refunds need approval", approver_role="finance")


def test_langchains_fake_model_cannot_be_an_agents_model() -> None:
    """Why the docs show ``ScriptedChatModel``: ``create_agent`` binds tools to the model."""
    refund_payment, _ran = refunds()
    fake = GenericFakeChatModel(messages=iter([REFUND, AIMessage(content="Done.")]))
    with pytest.raises(NotImplementedError):
        create_agent(fake, [refund_payment]).invoke(
            {"messages": [{"role": "user", "content": "Refund order 7"}]}
        )


def test_the_scripted_model_answers_an_agent_turn_by_turn() -> None:
    refund_payment, ran = refunds()
    model = ScriptedChatModel(script=[REFUND, "Done."])
    agent = create_agent(model, [refund_payment], middleware=[HarnessMiddleware(hw.HookBus())])
    result = agent.invoke({"messages": [{"role": "user", "content": "Refund order 7"}]})
    assert ran == [7]
    assert result["messages"][-1].content == "Done."
    assert model.tools == ["refund_payment"]
    assert [type(m) for m in model.inputs[1]] == [HumanMessage, AIMessage, ToolMessage]
    assert model.script == []


def test_the_scripted_model_fails_past_its_script() -> None:
    model = ScriptedChatModel(script=["only one"])
    agent = create_agent(model, [])
    agent.invoke({"messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(RuntimeError, match="no answer left"):
        agent.invoke({"messages": [{"role": "user", "content": "again"}]})


def test_a_suspend_without_a_checkpointer_stops_the_call_and_cannot_be_resumed() -> None:
    refund_payment, ran = refunds()
    bus = hw.HookBus()
    bus.register(finance_approves)
    middleware = HarnessMiddleware(bus)
    model = ScriptedChatModel(script=[REFUND, "Done."])
    agent = create_agent(model, [refund_payment], middleware=[middleware])  # no checkpointer
    result = agent.invoke({"messages": [{"role": "user", "content": "Refund order 7"}]})
    [pause] = result["__interrupt__"]
    assert pause.value["approver_role"] == "finance"
    assert ran == []  # the call waits: it did not run
    ends = [r for r in middleware.trace.records() if r["hook"] == "task.end"]
    assert ends and ends[-1]["kind"] == "hook"
    # LangGraph keeps nothing to resume: the decision cannot be given, and nothing runs
    with pytest.raises(RuntimeError, match="without checkpointer"):
        agent.invoke(Command(resume={"decision": "approve", "role": "finance"}))
    assert ran == []
