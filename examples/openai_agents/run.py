"""harnessweaver's bus in front of an OpenAI Agents SDK agent, offline: a blocked call, a
suspended call resumed through the SDK's RunState (approved, and rejected), a rewritten
call, and a streamed run.

    python examples/openai_agents/run.py

Needs ``pip install '.[openai-agents]'`` from a clone. The model is a ScriptedModel (an SDK
``Model`` answering from a script: no network, no key); the agent, its tools, the approvals
and the resume are the SDK's own. docs/integrations/openai-agents.md explains each mapping.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

os.environ.setdefault("OPENAI_API_KEY", "sk-offline-example")  # the SDK wants one; unused

import agents
from pydantic import BaseModel

import harnessweaver as hw
from harnessweaver.adapters.openai_agents import OpenAIAgentsAdapter, denial
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say

agents.set_tracing_disabled(True)  # nothing is exported anywhere

paid: list[int] = []


@agents.function_tool
def refund(amount: int) -> str:
    """Refund an amount in dollars to the customer's card."""
    paid.append(amount)
    return f"refunded ${amount}"


class RefundArgs(BaseModel):
    """The refund tool's parameters, as the policy reads them."""

    amount: int = 0


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def refund_policy(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    """Over $100 is refused; over $50 waits for a manager; refunds are paid in whole tens."""
    amount = event.call.arguments_as(RefundArgs).amount
    if amount > 100:
        return hw.Block(f"${amount} is over the $100 limit", code="refund_limit")
    if amount > 50:
        return hw.Suspend(f"${amount} needs a manager", approver_role="manager")
    if amount % 10:
        return hw.Continue(modified=event.updated({"call.arguments.amount": amount - amount % 10}))
    return None


def agent_for(adapter: OpenAIAgentsAdapter, amount: int) -> tuple[Any, ScriptedModel]:
    model = ScriptedModel([[call("refund", {"amount": amount})], [say("All done.")]])
    agent = agents.Agent(name="support", instructions="Help.", model=model, tools=[refund])
    return adapter.guard(agent), model


def model_read(model: ScriptedModel) -> str:
    return str([i["output"] for i in model.inputs[-1] if "output" in i][-1])


async def main() -> None:
    bus = hw.HookBus()
    bus.register(refund_policy)
    adapter = OpenAIAgentsAdapter(bus)  # or OpenAIAgentsAdapter(hw.load("harness.yaml"))

    agent, model = agent_for(adapter, 500)
    run = adapter.new_run(run_id="blocked-500")
    await run.run(agent, "Refund $500, please.")
    print(f"blocked: refund(500) never ran; the model read: {model_read(model)}")

    agent, model = agent_for(adapter, 70)
    run = adapter.new_run(run_id="suspended-70")
    result = await run.run(agent, "Refund $70, please.")
    pending = result.interruptions[0]
    print(f"suspended: refund(70) waits for approval ({pending.tool_name}); paid so far {paid}")
    state = result.to_state()
    state.approve(pending)  # the manager said yes; state.reject(pending) would refuse it
    result = await run.run(agent, state)
    print(f"approved: refund(70) ran; the model read: {model_read(model)}")

    agent, model = agent_for(adapter, 90)
    run = adapter.new_run(run_id="rejected-90")
    result = await run.run(agent, "Refund $90, please.")
    state = result.to_state()
    state.reject(result.interruptions[0], rejection_message=denial("not without a receipt"))
    await run.run(agent, state)
    print(f"rejected: refund(90) never ran; the model read: {model_read(model)}")

    agent, model = agent_for(adapter, 30)
    run = adapter.new_run(run_id="streamed-30")
    stream = await run.run_streamed(agent, "Refund $30, please.")  # Runner.run_streamed
    events = [event async for event in stream.stream_events()]
    print(
        f"streamed: refund({paid[-1]}) ran; {len(events)} stream events, "
        f"final output {stream.result.final_output!r}"
    )

    agent, model = agent_for(adapter, 13)
    run = adapter.new_run(run_id="rewritten-13")
    await run.run(agent, "Refund $13, please.")
    print(f"rewritten: the model asked refund(13), refund({paid[-1]}) ran")

    print("\nthe last run's trace (run, step, tool on every record):")
    for record in run.trace.records():
        if record["kind"] == "hook":
            where = " ".join(f"{k}={record[k]}" for k in ("run", "step", "tool") if k in record)
            modified = " (modified)" if record["modified"] else ""
            print(f"  {record['hook']:<13} {record['outcome']}{modified:<11} {where}")


if __name__ == "__main__":
    asyncio.run(main())
