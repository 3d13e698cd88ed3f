"""Record-by-record parity: one script, one harness, run twice, through harnessweaver's own
run loop (``hw.Harness.run`` / ``resume`` with a ``ScriptedProvider``) and through LangChain's
``create_agent`` with ``HarnessMiddleware`` (``GenericFakeChatModel`` answering the same tool
calls and the same final answer). The bus's trace records must be identical, every field (the
times, ``t_ns`` and ``duration_ns``, are left out: no test asserts wall-clock time), and so
must the events each middleware saw, but for the differences LangChain makes inherent, which
are named below and asserted, not skipped.

The LangChain side runs through ``invoke``, ``ainvoke``, ``stream`` (``values`` and
``updates``) and ``astream``: streaming gives the same records as invoking.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

import harnessweaver as hw
from harnessweaver.adapters.langchain import HarnessMiddleware

S = hw.ScriptedProvider
HOOKS = [
    "task.start",
    "step.start",
    "model.before",
    "model.after",
    "tool.before",
    "tool.after",
    "step.end",
    "task.end",
]
RUN = "thread-7"


@dataclass(frozen=True)
class EditArgs:
    """An approver's edit of the suspended tool call's arguments (I23): ``hw.Decision.edit`` of
    the pending event with these arguments in the run loop, ``{"decision": "edit", ...}`` for
    LangChain (each framework's own pending event, so each its own tool schema)."""

    arguments: dict[str, Any]
    role: str | None = None


Step = hw.Decision | EditArgs
Call = tuple[str, dict[str, Any], str]
Turn = list[Call] | str
"""One model turn of a script: tool calls (name, arguments, id), or the final answer."""


# --- the inherent differences, named -----------------------------------------------------------

STEP_START_HAS_NO_TOOLS = "step.start: LangChain gives the tools to the model call only"
"""The run loop's ``step.start`` event carries the step's tools; the adapter's carries none
(``docs/integrations/langchain.md``, "What cannot be expressed")."""

TOOL_SCHEMAS_ARE_THE_FRAMEWORKS = "tool schemas: each framework derives its own JSON Schema"
"""The tools are each framework's own (``@hw.tool`` and LangChain's ``@tool`` over the same
function): names and descriptions are equal, the JSON Schemas are each generator's (pydantic's
with titles and ``additionalProperties``, LangChain's without)."""


# --- one harness, built twice (each run gets its own middleware state) ------------------------


@dataclass
class Harness:
    """The bus of one run and what its middleware saw."""

    bus: hw.HookBus
    seen: list[dict[str, Any]] = field(default_factory=list)


def on(hooks: list[str], fail_mode: str = "closed") -> Callable[[Any], Any]:
    return hw.middleware(hooks=hooks, fail_mode=fail_mode)


Scenario = Callable[[list[dict[str, Any]]], list[Any]]


def refunds(seen: list[dict[str, Any]]) -> list[Any]:
    """A Block, a rewrite and a Suspend at tool.before."""

    @on(["tool.before"])
    async def no_shell(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.tool.name == "run_shell":
            return hw.Block(reason="shell commands are not allowed", code="policy")
        return None

    @on(["tool.before"])
    async def cap_order_1(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.arguments.get("order") == 1:
            return hw.Continue(modified=event.updated({"call.arguments.amount_usd": 100}))
        return None

    @on(["tool.before"])
    async def big_refunds_wait(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.arguments.get("amount_usd", 0) > 100:
            return hw.Suspend(reason="over 100 USD", approver_role="finance", code="approval")
        return None

    return [no_shell, cap_order_1, big_refunds_wait]


def after_hooks(seen: list[dict[str, Any]]) -> list[Any]:
    """A Suspend at tool.after, at model.after and at step.start; a Retry at tool.after."""
    retried: list[str] = []

    @on(["tool.after"])
    async def review_results(event: hw.ToolResultEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.id == "c1" and not retried:
            retried.append("c1")
            return hw.Retry(reason="flaky")
        if event.call.arguments.get("order") == 42:
            return hw.Suspend(reason="look at the result")
        return None

    @on(["model.after"])
    async def review_answer(event: hw.ModelResponseEvent, env: hw.Envelope) -> hw.Outcome | None:
        if not event.response.message.tool_calls:
            return hw.Suspend(reason="look at the answer", approver_role="lead")
        return None

    @on(["step.start"])
    async def review_step(event: hw.StepStartEvent, env: hw.Envelope) -> hw.Outcome | None:
        return hw.Suspend(reason="step 2 needs a look") if event.step == 2 else None

    return [review_results, review_answer, review_step]


def model_block(seen: list[dict[str, Any]]) -> list[Any]:
    """A Block at model.before in the second step."""

    @on(["model.before"])
    async def one_turn_only(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome | None:
        return hw.Block(reason="one turn only", code="policy") if event.step == 2 else None

    return [one_turn_only]


def escalation(seen: list[dict[str, Any]]) -> list[Any]:
    """An Escalate at tool.before, and a middleware that raises (fail mode open)."""

    @on(["tool.before"])
    async def fraud(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.arguments.get("order") == 13:
            return hw.Escalate(reason="unusual", to="fraud-team")
        return None

    @on(["tool.after"], fail_mode="open")
    async def broken(event: hw.ToolResultEvent, env: hw.Envelope) -> None:
        raise RuntimeError("a detail")

    return [fraud, broken]


def rewrites(seen: list[dict[str, Any]]) -> list[Any]:
    """Continue(modified) at task.start, tool.after and task.end; a Retry at model.after."""
    retried: list[int] = []

    @on(["task.start"])
    async def redact(event: hw.TaskStartEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Continue(modified=event.model_copy(update={"input": "[redacted] request"}))

    @on(["model.after"])
    async def once_more(event: hw.ModelResponseEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.step == 1 and not retried:
            retried.append(1)
            return hw.Retry(reason="try again")
        return None

    @on(["tool.after"])
    async def mask(event: hw.ToolResultEvent, env: hw.Envelope) -> hw.Outcome:
        return hw.Continue(modified=event.updated({"result.output": "[masked]"}))

    @on(["task.end"])
    async def sign(event: hw.TaskEndEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.output is None:
            return None
        return hw.Continue(modified=event.model_copy(update={"output": f"{event.output} (ok)"}))

    return [redact, once_more, mask, sign]


def at(hook: str, outcome: Callable[[Any], hw.Outcome | None]) -> Scenario:
    """A harness with one middleware at ``hook`` answering ``outcome(event)``."""

    def scenario(seen: list[dict[str, Any]]) -> list[Any]:
        async def rule(event: Any, env: hw.Envelope) -> hw.Outcome | None:
            return outcome(event)

        rule.__name__ = f"rule_at_{hook.replace('.', '_')}"  # one name per middleware (I2)
        return [on([hook])(rule)]

    return scenario


def closed_failure(seen: list[dict[str, Any]]) -> list[Any]:
    """A middleware that raises at tool.before, failing closed (a Block)."""

    @on(["tool.before"])
    async def broken(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
        raise RuntimeError("a detail")

    return [broken]


def retry_once(hook: str) -> Scenario:
    asked: list[int] = []

    def outcome(event: Any) -> hw.Outcome | None:
        asked.append(1)
        return hw.Retry(reason="again") if len(asked) == 1 else None

    return at(hook, outcome)


def harness(scenario: Scenario) -> Harness:
    h = Harness(hw.HookBus())

    @on(HOOKS, fail_mode="open")
    async def look(event: Any, env: hw.Envelope) -> None:
        h.seen.append({"hook": type(event).__name__, **event.model_dump(mode="json")})

    h.bus.register(look)
    for middleware in scenario(h.seen):
        h.bus.register(middleware)
    return h


# --- the same tools, in each framework ---------------------------------------------------------


def shell(command: str) -> str:
    """Run a shell command."""
    return "ok"


def refund(order: int, amount_usd: float) -> str:
    """Refund an order."""
    return f"refunded {amount_usd} USD for order {order}"


def hw_tools(ran: list[str]) -> list[Any]:
    @hw.tool(name="run_shell")
    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(f"shell {command}")
        return shell(command)

    @hw.tool(name="refund_payment")
    def refund_payment(order: int, amount_usd: float) -> str:
        """Refund an order."""
        ran.append(f"refund {order} {amount_usd}")
        return refund(order, amount_usd)

    return [run_shell, refund_payment]


def lc_tools(ran: list[str]) -> list[Any]:
    @tool
    def run_shell(command: str) -> str:
        """Run a shell command."""
        ran.append(f"shell {command}")
        return shell(command)

    @tool
    def refund_payment(order: int, amount_usd: float) -> str:
        """Refund an order."""
        ran.append(f"refund {order} {amount_usd}")
        return refund(order, amount_usd)

    return [run_shell, refund_payment]


# --- the two runners ---------------------------------------------------------------------------


@dataclass
class Outcome:
    records: list[dict[str, Any]]
    seen: list[dict[str, Any]]
    ran: list[str]
    pauses: int


def loop_run(scenario: Scenario, script: list[Turn], decisions: list[Step], text: str) -> Outcome:
    h = harness(scenario)
    ran: list[str] = []
    provider = S([as_response(n, turn) for n, turn in enumerate(script)])
    runner = hw.Harness.from_bus(h.bus, task="refund", provider=provider, tools=hw_tools(ran))
    ctx = hw.RunContext(envelope=hw.Envelope(run_id=RUN))
    result = runner.run_sync(text, ctx=ctx)
    pauses = 0
    for decision in decisions:
        assert result.exit_reason == "suspended" and result.pending is not None
        pauses += 1
        result = runner.resume_sync(result.state, as_decision(decision, result.pending), ctx=ctx)
    assert result.exit_reason != "suspended"
    return Outcome(ctx.trace.records(), h.seen, ran, pauses)


class Chat(GenericFakeChatModel):
    """LangChain's fake chat model; ``create_agent`` binds tools, which the script ignores."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Chat:  # type: ignore[override]
        return self


def usage(n: int) -> hw.Usage:
    """The usage of the script's ``n``-th response: each differs, so a miscount shows."""
    return hw.Usage(input_tokens=10 * (n + 1), output_tokens=n + 1)


def as_response(n: int, turn: Turn) -> hw.ModelResponse:
    if isinstance(turn, str):
        return S.text(turn, usage=usage(n))
    calls = (hw.ToolCall(id=i, name=name, arguments=a) for name, a, i in turn)
    return S.tool_calls(*calls, usage=usage(n))


def as_message(n: int, turn: Turn) -> AIMessage:
    used = usage(n)
    meta = {
        "input_tokens": used.input_tokens,
        "output_tokens": used.output_tokens,
        "total_tokens": used.input_tokens + used.output_tokens,
    }
    calls = [] if isinstance(turn, str) else [{"name": m, "args": a, "id": i} for m, a, i in turn]
    content = turn if isinstance(turn, str) else ""
    return AIMessage(content=content, tool_calls=calls, usage_metadata=meta)  # type: ignore[arg-type]


def as_decision(step: Step, pending: hw.PendingApproval) -> hw.Decision:
    if isinstance(step, hw.Decision):
        return step
    event = pending.event_model()
    assert isinstance(event, hw.ToolCallEvent)
    call = event.call.model_copy(update={"arguments": step.arguments})
    return hw.Decision.edit(event.model_copy(update={"call": call}), role=step.role)


def answer(decision: Step) -> dict[str, Any]:
    """The decision as the adapter reads it from ``Command(resume=...)``."""
    if isinstance(decision, EditArgs):
        return {"decision": "edit", "arguments": decision.arguments, "role": decision.role}
    kind = "approve" if decision.approved else "deny"
    return {"decision": kind, "reason": decision.reason, "role": decision.role}


def _interrupted(chunks: list[Any], mode: str) -> bool:
    if mode == "values":  # the last value holds the interrupt, as invoke's result does
        return "__interrupt__" in chunks[-1]
    return any("__interrupt__" in chunk for chunk in chunks)


def go(agent: Any, value: Any, config: Any, how: str) -> bool:
    """Run (or resume) the agent ``how``; whether it paused."""
    if how == "invoke":
        return "__interrupt__" in agent.invoke(value, config)
    if how == "ainvoke":
        return "__interrupt__" in asyncio.run(agent.ainvoke(value, config))
    if how.startswith("stream-"):
        mode = how.removeprefix("stream-")
        return _interrupted(list(agent.stream(value, config, stream_mode=mode)), mode)
    assert how == "astream-updates"

    async def collect() -> list[Any]:
        return [chunk async for chunk in agent.astream(value, config, stream_mode="updates")]

    return _interrupted(asyncio.run(collect()), "updates")


def lc_run(
    scenario: Scenario,
    script: list[Turn],
    decisions: list[Step],
    text: str,
    how: str,
) -> Outcome:
    h = harness(scenario)
    ran: list[str] = []
    middleware = HarnessMiddleware(h.bus, task="refund")
    agent = create_agent(
        Chat(messages=iter([as_message(n, turn) for n, turn in enumerate(script)])),
        lc_tools(ran),
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": RUN}}
    paused = go(agent, {"messages": [{"role": "user", "content": text}]}, config, how)
    pauses = 0
    for decision in decisions:
        assert paused
        pauses += 1
        paused = go(agent, Command(resume=answer(decision)), config, how)
    assert not paused
    assert (middleware._suspended, middleware._contexts) == ({}, {})  # nothing of it kept
    return Outcome(middleware.trace.records(), h.seen, ran, pauses)


# --- comparing ---------------------------------------------------------------------------------


def timeless(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("t_ns", "duration_ns")} for r in records]


def without_schemas(event: dict[str, Any]) -> dict[str, Any]:
    """``event`` with every tool's JSON Schema left out (TOOL_SCHEMAS_ARE_THE_FRAMEWORKS)."""
    event = json.loads(json.dumps(event))
    tools = [event["tool"]] if "tool" in event else []
    tools += event.get("tools", []) + event.get("request", {}).get("tools", [])
    for spec in tools:
        spec["parameters"] = None
    return event


def check_schemas(loop: Outcome, lc: Outcome) -> None:
    """TOOL_SCHEMAS_ARE_THE_FRAMEWORKS, asserted: each side's schema is its framework's."""
    mine = {t.spec.name: t.spec.parameters for t in hw_tools([])}
    theirs = {t.name: convert_to_openai_tool(t)["function"]["parameters"] for t in lc_tools([])}
    for outcome, schemas in ((loop, mine), (lc, theirs)):
        for event in outcome.seen:
            tools = [event["tool"]] if "tool" in event else []
            tools += event.get("tools", []) + event.get("request", {}).get("tools", [])
            for spec in tools:
                assert spec["parameters"] == schemas[spec["name"]]


def check_step_start(loop: Outcome, lc: Outcome) -> None:
    """STEP_START_HAS_NO_TOOLS, asserted, then left out of the comparison."""
    for outcome, has_tools in ((loop, True), (lc, False)):
        for event in outcome.seen:
            if event["hook"] == "StepStartEvent":
                assert bool(event["tools"]) is has_tools
                event["tools"] = []


HOWS = ["invoke", "ainvoke", "stream-values", "stream-updates", "astream-updates"]

SCRIPT: list[Turn] = [
    [("run_shell", {"command": "rm -rf /"}, "c1")],
    [("refund_payment", {"order": 1, "amount_usd": 250}, "c2")],
    [("refund_payment", {"order": 42, "amount_usd": 250}, "c3")],
    "Done.",
]
AFTER_SCRIPT: list[Turn] = [
    [("refund_payment", {"order": 7, "amount_usd": 5}, "c1")],
    [("refund_payment", {"order": 42, "amount_usd": 20}, "c2")],
    "Done.",
]
OK = hw.Decision.approve()

CASES: dict[str, tuple[Scenario, list[Turn], list[Step]]] = {
    "block-rewrite-suspend-approve": (refunds, SCRIPT, [hw.Decision.approve(role="finance")]),
    # I23: the edit passes the chain again; admitted (50 USD), it runs as edited
    "suspend-edit-admitted": (
        refunds,
        SCRIPT,
        [EditArgs({"order": 42, "amount_usd": 50}, "finance")],
    ),
    # the edit is still over 100 USD: the chain suspends it again, the approver approves it
    "suspend-edit-suspended-again-approve": (
        refunds,
        SCRIPT,
        [
            EditArgs({"order": 42, "amount_usd": 150}, "finance"),
            hw.Decision.approve(role="finance"),
        ],
    ),
    "block-rewrite-suspend-deny": (refunds, SCRIPT, [hw.Decision.deny("no", role="finance")]),
    "retry-and-suspend-after": (
        after_hooks,
        AFTER_SCRIPT,
        [OK, OK, hw.Decision.approve(role="lead")],
    ),
    "suspend-after-deny": (
        after_hooks,
        AFTER_SCRIPT,
        [OK, hw.Decision.deny("withheld"), hw.Decision.deny("no", role="lead")],
    ),
    "block-at-model-before": (model_block, SCRIPT, []),
    "block-at-task-start": (at("task.start", lambda e: hw.Block(reason="no")), SCRIPT, []),
    "suspend-at-task-start": (
        at("task.start", lambda e: hw.Suspend(reason="new task")),
        SCRIPT,
        [OK],
    ),
    "suspend-at-model-before-deny": (
        at("model.before", lambda e: hw.Suspend(reason="look") if e.step == 2 else None),
        SCRIPT,
        [hw.Decision.deny("not now")],
    ),
    "block-at-step-end": (
        at("step.end", lambda e: hw.Block(reason="stop", code="x") if e.step == 2 else None),
        SCRIPT,
        [],
    ),
    "retry-at-tool-before-and-step-start": (
        lambda seen: [*retry_once("tool.before")(seen), *retry_once("step.start")(seen)],
        SCRIPT[1:],
        [],
    ),
    "closed-failure": (closed_failure, SCRIPT, []),
    "rewrites-and-model-retry": (
        rewrites,
        [
            [("refund_payment", {"order": 3, "amount_usd": 5}, "c0")],
            [("refund_payment", {"order": 3, "amount_usd": 5}, "c1")],
            "Done.",
        ],
        [],
    ),
    "escalate-and-fail-open": (
        escalation,
        [
            [("refund_payment", {"order": 1, "amount_usd": 5}, "c1")],
            [("refund_payment", {"order": 13, "amount_usd": 5}, "c2")],
            "never",
        ],
        [],
    ),
}


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("case", list(CASES))
def test_the_adapter_gives_the_run_loops_records_and_events(case: str, how: str) -> None:
    scenario, script, decisions = CASES[case]
    loop = loop_run(scenario, script, decisions, "Refund the orders")
    lc = lc_run(scenario, script, decisions, "Refund the orders", how)
    assert lc.ran == loop.ran  # the same tools ran, with the same arguments, as often
    assert lc.pauses == loop.pauses
    # every record, every field, in order: emit, hook, run, step, tool, kind, middleware,
    # band, outcome, modified, code, failure...
    assert timeless(lc.records) == timeless(loop.records)
    assert {r["run"] for r in lc.records} == {RUN}
    # the events each middleware saw, but for the named differences (asserted)
    check_schemas(loop, lc)
    check_step_start(loop, lc)
    assert [without_schemas(e) for e in lc.seen] == [without_schemas(e) for e in loop.seen]


@pytest.mark.parametrize(
    ("case", "ran"),
    [
        ("suspend-edit-admitted", ["refund 1 100.0", "refund 42 50.0"]),
        ("suspend-edit-suspended-again-approve", ["refund 1 100.0", "refund 42 150.0"]),
    ],
)
def test_an_approved_edit_runs_as_edited_in_both(case: str, ran: list[str]) -> None:
    """What the parity cases with edits compare is the edited call running (the cap's 100 and
    the edit's amount, as the float arguments the tools take)."""
    scenario, script, decisions = CASES[case]
    loop = loop_run(scenario, script, decisions, "Refund the orders")
    lc = lc_run(scenario, script, decisions, "Refund the orders", "invoke")
    assert loop.ran == ran == lc.ran
