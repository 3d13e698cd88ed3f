"""A sequence of tool calls judged by a spec, read off each path as one list of decisions.

A decision is ``("continue",)``, ``("modify", what)`` (the new arguments at ``tool.before``,
the new output at ``tool.after``) or ``("block", reason, code)``; each call has a pair
(``tool.before``, ``tool.after``), the second ``None`` when the call was refused. The proxy's
are read from what the client receives and what the upstream records (``mcp_servers
--record``), the bus's from ``HookResult``s of emits shaped as the proxy's
(``harnessweaver.mcp.convert``: the tool as listed, ``step`` = the session's call count, the
result's ``{"content": [...]}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_servers
from mcp import Client
from proxy_procs import records

import harnessweaver as hw
from harnessweaver import spec as hw_spec

__all__ = [
    "REFUSED",
    "Call",
    "Decision",
    "Decisions",
    "normalised",
    "output",
    "refusal",
    "through_bus",
    "through_proxy",
]

Decision = tuple[Any, ...]
Decisions = list[tuple[Decision, Decision | None]]

REFUSED = "harnessweaver refused the call: "
_UNTIMED = ("run", "t_ns", "duration_ns")


@dataclass(frozen=True)
class Call:
    tool: str
    arguments: dict[str, Any]


def output(text: str) -> dict[str, Any]:
    """A one-text result as the proxy emits it at ``tool.after``."""
    return {"content": [{"type": "text", "text": text}]}


def normalised(trace: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records without run ids and times; checks that they name one run."""
    assert len({r["run"] for r in trace}) == 1, "one sequence is one run"
    return [{k: v for k, v in r.items() if k not in _UNTIMED} for r in trace]


def refusal(text: str) -> Decision:
    """``("block", reason, code)`` from the text of the proxy's refusal."""
    assert text.startswith(REFUSED), text
    reason, _, code = text[len(REFUSED) :].rpartition(" (code: ")
    return ("block", reason, code.removesuffix(")"))


async def through_bus(spec: Path, calls: tuple[Call, ...]) -> tuple[Decisions, list[Any]]:
    """The decisions and trace records of ``calls`` emitted in process, between a
    ``task.start`` and a ``task.end`` where the harness has a chain there (as the proxy does
    when a session starts and ends)."""
    harness = hw_spec.load(spec)
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="in-process"))
    if harness.bus.chain("task.start"):
        start = hw.TaskStartEvent(task="", input={"source": "mcp"})
        assert isinstance((await harness.bus.emit("task.start", start, ctx)).outcome, hw.Continue)
    decisions: Decisions = []
    for step, call in enumerate(calls, start=1):
        description, schema = mcp_servers.TOOLS[call.tool]
        tool = hw.ToolSpec(name=call.tool, description=description, parameters=schema)
        event = hw.ToolCallEvent(
            step=step,
            tool=tool,
            call=hw.ToolCall(id=f"mcp-{step}", name=call.tool, arguments=call.arguments),
        )
        before = await harness.bus.emit("tool.before", event, ctx)
        outcome = before.outcome
        if isinstance(outcome, hw.Block):
            decisions.append((("block", outcome.reason, outcome.code), None))
            continue
        assert isinstance(outcome, hw.Continue), outcome
        sent = dict(before.event.call.arguments)
        first: Decision = ("modify", sent) if outcome.modified is not None else ("continue",)
        given = output(mcp_servers.answer(call.tool, sent))
        failed = call.tool in mcp_servers.FAILING
        result = hw.ToolResultEvent(
            step=step,
            tool=tool,
            call=before.event.call,
            result=hw.ToolResult(output=given, is_error=failed),
        )
        after = await harness.bus.emit("tool.after", result, ctx)
        assert isinstance(after.outcome, hw.Continue), after.outcome
        changed = after.outcome.modified is not None
        second: Decision = ("modify", after.event.result.output) if changed else ("continue",)
        decisions.append((first, second))
    end = hw.TaskEndEvent(exit_reason="completed", steps=len(calls), output={})
    if harness.bus.chain("task.end"):
        await harness.bus.emit("task.end", end, ctx)
    return decisions, ctx.trace.records()


async def through_proxy(client: Client, record: Path, calls: tuple[Call, ...]) -> Decisions:
    """The decisions of ``calls`` made through a proxy in front of ``mcp_servers``."""
    decisions: Decisions = []
    for call in calls:
        seen = len(records(record))
        result = await client.call_tool(call.tool, call.arguments)
        texts = [c.text for c in result.content if c.type == "text"]
        got = records(record)[seen:]
        if result.is_error and not got:
            [text] = texts
            decisions.append((refusal(text), None))
            continue
        [received] = got
        assert received["tool"] == call.tool
        assert bool(result.is_error) == (call.tool in mcp_servers.FAILING)
        sent = received["arguments"]
        first: Decision = ("modify", sent) if sent != call.arguments else ("continue",)
        given = mcp_servers.answer(call.tool, sent)
        second: Decision = ("continue",) if texts == [given] else ("modify", output(*texts))
        decisions.append((first, second))
    return decisions
