"""harnessweaver as an AGENT-HOOKS host inside the agents its adapters guard: the host sits on
the bus a LangChain or OpenAI Agents adapter drives, so the contract's points are driven by
those frameworks' own loops (offline: their fake or scripted models) and every verdict is
honoured there. The run loop's own host is tested in test_agent_hooks_host.py and by the kit."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

agent_hooks = pytest.importorskip("agent_hooks")
agents = pytest.importorskip("agents")
pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

import harnessweaver as hw  # noqa: E402
from harnessweaver.adapters.langchain import HarnessMiddleware  # noqa: E402
from harnessweaver.adapters.openai_agents import OpenAIAgentsAdapter  # noqa: E402
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say  # noqa: E402
from harnessweaver.interop.agent_hooks import AgentHooksHost  # noqa: E402

agents.set_tracing_disabled(True)  # nothing is exported anywhere
DENY = agent_hooks.Verdict.deny(reason="ah:no_refunds", message="refunds are closed")


class NoRefunds:
    """An interceptor written for the contract: it denies every refund call."""

    def __init__(self) -> None:
        self.points: list[str] = []

    def intercept(self, context: dict[str, Any], /) -> Any:
        self.points.append(context["interception_point"])
        if context["interception_point"] == "pre_tool_call":
            return DENY
        return agent_hooks.ALLOW


def _host() -> tuple[AgentHooksHost, NoRefunds, hw.HookBus]:
    policy = NoRefunds()
    host = AgentHooksHost([policy], names=["no_refunds"])
    bus = hw.HookBus()
    bus.register(host.middleware())
    return host, policy, bus


def _denied_at_the_tool(host: AgentHooksHost) -> None:
    tool_records = [r for r in host.records if r["interception_point"] == "pre_tool_call"]
    assert [r["verdict"]["reason"] for r in tool_records] == ["ah:no_refunds"]
    assert tool_records[0]["verdicts"] == [
        {"index": 0, "decision": "deny", "reason": "ah:no_refunds", "name": "no_refunds"}
    ]


def test_the_host_guards_an_openai_agents_run() -> None:
    host, policy, bus = _host()
    ran: list[int] = []

    @agents.function_tool
    def refund(amount: int) -> str:
        """Refund an amount in dollars."""
        ran.append(amount)
        return f"refunded {amount}"

    model = ScriptedModel([[call("refund", {"amount": 40}, call_id="c1")], [say("done")]])
    adapter = OpenAIAgentsAdapter(bus)
    agent = adapter.guard(
        agents.Agent(name="desk", instructions="Help.", model=model, tools=[refund])
    )
    result = asyncio.run(adapter.new_run(run_id="oa-ah").run(agent, "refund 40"))
    assert ran == []  # the contract's deny is honoured by the SDK's own loop
    assert result.final_output == "done"
    assert "pre_tool_call" in policy.points and "pre_model_call" in policy.points
    _denied_at_the_tool(host)


class _Chat(GenericFakeChatModel):
    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> _Chat:
        return self


def test_the_host_guards_a_langchain_agent() -> None:
    host, policy, bus = _host()
    ran: list[float] = []

    @tool
    def refund_payment(order: int, amount_usd: float) -> str:
        """Refund an order."""
        ran.append(amount_usd)
        return "refunded"

    asked = AIMessage(
        content="",
        tool_calls=[
            {"name": "refund_payment", "args": {"order": 42, "amount_usd": 40}, "id": "c1"}
        ],
    )
    model = _Chat(messages=iter([asked, "I could not refund it."]))
    graph = create_agent(model, [refund_payment], middleware=[HarnessMiddleware(bus)])
    result = graph.invoke({"messages": [{"role": "user", "content": "Refund order 42"}]})
    assert ran == []
    [refusal] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert refusal.text.startswith("The harness refused this tool call:")
    assert "pre_tool_call" in policy.points
    _denied_at_the_tool(host)
