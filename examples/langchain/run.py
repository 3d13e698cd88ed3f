"""A LangChain v1 agent with harnessweaver's bus in front of it, offline:

    pip install '.[langchain]'      # from a clone
    python examples/langchain/run.py

The model is LangChain's own fake chat model (``GenericFakeChatModel``, no network, no key)
answering with the SCRIPT below; everything else is real LangChain: ``create_agent``, its
tool node, LangGraph's interrupt and an ``InMemorySaver`` checkpointer. The harness's
middleware block a shell command, cap a refund (the call runs with the modified arguments)
and suspend a large refund for finance, which the script then approves with
``Command(resume=...)``. It prints what happened and the bus's trace (run, step, tool).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware

done: list[str] = []


@tool
def run_shell(command: str) -> str:
    """Run a shell command."""
    done.append(f"shell {command}")
    return "ok"


@tool
def refund_payment(order: int, amount_usd: float) -> str:
    """Refund an order."""
    done.append(f"refund {order} {amount_usd}")
    return f"refunded {amount_usd} USD for order {order}"


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def no_shell(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    if event.tool.name == "run_shell":
        return hw.Block(reason="shell commands are not allowed", code="policy")
    return None


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def refunds(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    amount = event.call.arguments.get("amount_usd", 0)
    if event.tool.name != "refund_payment" or not isinstance(amount, int | float):
        return None
    if amount > 1000:
        return hw.Suspend(reason="refunds over 1000 USD need approval", approver_role="finance")
    if amount > 100 and event.call.arguments.get("order") != 7:
        # small orders are refunded at most 100 USD without asking anyone
        return hw.Continue(modified=event.updated({"call.arguments.amount_usd": 100}))
    return None


class ScriptedChat(GenericFakeChatModel):
    """LangChain's fake chat model; the script ignores the tools create_agent binds."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:
        return self


def calls(*items: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": args, "id": f"call_{n}"}
            for n, (name, args) in enumerate(items, 1)
        ],
    )


SCRIPT: list[AIMessage | str] = [
    calls(("run_shell", {"command": "rm -rf /tmp/orders"})),
    calls(("refund_payment", {"order": 42, "amount_usd": 250})),
    calls(("refund_payment", {"order": 7, "amount_usd": 1500})),
    "Refunds done; the shell command was refused.",
]


def main() -> None:
    bus = hw.HookBus()
    bus.register(no_shell)
    bus.register(refunds)
    harness = hw.Harness.from_bus(bus, task="support")
    middleware = HarnessMiddleware(harness)
    agent = create_agent(
        ScriptedChat(messages=iter(SCRIPT)),
        [run_shell, refund_payment],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "support-1042"}}

    paused = agent.invoke({"messages": [{"role": "user", "content": "Clean up, refund"}]}, config)
    [waiting] = paused["__interrupt__"]
    print(f"suspended: {waiting.value['reason']} (for {waiting.value['approver_role']})")
    print(f"  call: {waiting.value['tool_call']['name']} {waiting.value['tool_call']['arguments']}")
    result = agent.invoke(Command(resume={"decision": "approve", "role": "finance"}), config)

    print("the model read:")
    for message in result["messages"]:
        if isinstance(message, ToolMessage):
            print(f"  {message.name}: {message.text}")
    print(f"answer: {result['messages'][-1].text}")
    print(f"tools that ran: {done}")
    print("trace (hook records):")
    for record in middleware.trace.records():
        if record["kind"] == "hook":
            where = f"step {record['step']}" if "step" in record else ""
            tool_ = record.get("tool", "")
            changed = " (modified)" if record["modified"] else ""
            line = f"{record['run']} {record['hook']:<12} {where:<7} {tool_:<15}"
            print(f"  {line} {record['outcome']}{changed}")


if __name__ == "__main__":
    main()
