"""One process of a durable-approvals test: runs an agent (LangChain or the OpenAI Agents SDK)
under a spec whose state is a SQLite file, starts or resumes it, and prints what it saw as
JSON. The tests start it as a subprocess: "another process" is a real one.

    python approvals_worker.py langchain start|resume DIR [RESUME_JSON]
    python approvals_worker.py openai start|resume DIR

The refund tool appends a line to ``DIR/refunds.log`` for each run: the tests count them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

import harnessweaver as hw

THREAD = "order-42"


def _refund(folder: Path, order: int, amount_usd: float) -> str:
    with (folder / "refunds.log").open("a") as log:
        log.write(f"{order} {amount_usd}\n")
    return f"refunded {amount_usd} USD for order {order}"


def _saver(folder: Path) -> Any:
    """LangGraph's own InMemorySaver over its own PersistentDict files: a checkpointer that
    survives the process (SqliteSaver is not installed here)."""
    from langgraph.checkpoint.memory import InMemorySaver, PersistentDict

    numbers = itertools.count()

    def factory(*args: Any) -> PersistentDict:
        kept = PersistentDict(*args, filename=str(folder / f"checkpoints.{next(numbers)}"))
        if os.path.exists(kept.filename):
            kept.load()
        return kept

    return InMemorySaver(factory=factory)


def langchain(phase: str, folder: Path, resume: Any) -> dict[str, Any]:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool
    from langgraph.types import Command

    from harnessweaver.adapters.langchain import HarnessMiddleware

    class Chat(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Chat:  # type: ignore[override]
            return self

    @tool
    def refund_payment(order: int, amount_usd: float) -> str:
        """Refund an order."""
        return _refund(folder, order, amount_usd)

    call = AIMessage(
        content="",
        tool_calls=[
            {"name": "refund_payment", "args": {"order": 42, "amount_usd": 250}, "id": "call_1"}
        ],
    )
    script: list[Any] = [call, "Done."] if phase == "start" else ["Done."]
    harness = hw.load(folder / "harness.yaml")
    saver = _saver(folder)
    middleware = HarnessMiddleware(harness)
    agent = create_agent(
        Chat(messages=iter(script)),
        [refund_payment],
        middleware=[middleware],
        checkpointer=saver,
    )
    config: Any = {"configurable": {"thread_id": THREAD}}
    with saver:  # written to its files when the process is done with it
        if phase == "start":
            value: Any = {"messages": [{"role": "user", "content": "Refund order 42"}]}
        else:
            value = Command(resume=resume) if resume is not None else None
        result = agent.invoke(value, config)
    asyncio.run(harness.aclose())
    return {
        "interrupts": [i.value for i in result.get("__interrupt__", [])],
        "tools": [m.text for m in result["messages"] if isinstance(m, ToolMessage)],
        "last": result["messages"][-1].text,
    }


async def openai(phase: str, folder: Path) -> dict[str, Any]:
    from agents import Agent, RunState, function_tool

    from harnessweaver.adapters.openai_agents import OpenAIAgentsAdapter
    from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say

    @function_tool
    def refund_payment(order: int, amount_usd: float) -> str:
        """Refund an order."""
        return _refund(folder, order, amount_usd)

    harness = hw.load(folder / "harness.yaml")
    adapter = OpenAIAgentsAdapter(harness)
    script = [[call("refund_payment", {"order": 42, "amount_usd": 250}, "call_1")], [say("Done.")]]
    model = ScriptedModel(script if phase == "start" else script[1:])
    agent = adapter.guard(Agent(name="shop", tools=[refund_payment], model=model))
    run = adapter.new_run(run_id=THREAD)
    saved = folder / "run_state.json"
    try:
        if phase == "start":
            result = await run.run(agent, "Refund order 42")
        else:
            state = await RunState.from_string(agent, saved.read_text())
            result = await run.run(agent, state)
        if result.interruptions:
            saved.write_text(result.to_state().to_string())
        outputs = [
            str(item.output)
            for item in result.new_items
            if type(item).__name__ == "ToolCallOutputItem"
        ]
        return {
            "interruptions": [
                {
                    "tool": i.tool_name,
                    "arguments": json.loads(i.arguments or "{}"),
                    "approval": getattr(run.approval(i), "id", None),
                }
                for i in result.interruptions
            ],
            "tools": outputs,
            "last": result.final_output,
        }
    finally:
        await harness.aclose()


def main() -> None:
    framework, phase, where = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    resume = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
    if framework == "langchain":
        out = langchain(phase, where, resume)
    else:
        out = asyncio.run(openai(phase, where))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
