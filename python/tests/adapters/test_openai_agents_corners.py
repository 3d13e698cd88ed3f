"""The OpenAI Agents SDK adapter's corners: handoffs between guarded agents, and a suspended
run resumed from a serialised ``RunState`` by a fresh adapter (docs/integrations/
openai-agents.md). Streaming and several calls in one turn are in test_openai_agents_parity."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

agents = pytest.importorskip("agents")

import harnessweaver as hw  # noqa: E402
from harnessweaver.adapters.openai_agents import OpenAIAgentsAdapter  # noqa: E402
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say  # noqa: E402


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-offline")
    agents.set_tracing_disabled(True)
    yield


def refund_tool(ran: list[int]) -> Any:
    @agents.function_tool
    def refund(amount: int) -> str:
        """Refund an amount in dollars."""
        ran.append(amount)
        return f"refunded {amount}"

    return refund


def policy_bus(seen: list[tuple[Any, ...]] | None = None) -> hw.HookBus:
    """Over 100 blocked, over 50 suspended; every tool.before and model.after noted."""

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", name="refund_policy")
    async def refund_policy(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        amount = int(event.call.arguments.get("amount", 0))
        if seen is not None:
            seen.append(("tool.before", event.step, event.call.id, amount))
        if amount > 100:
            return hw.Block("over the limit")
        if amount > 50:
            return hw.Suspend("needs a manager")
        return None

    @hw.middleware(hooks=["model.after", "step.start"], fail_mode="open", name="watch")
    async def watch(event: Any, env: hw.Envelope) -> hw.Outcome | None:
        if seen is None:
            return None
        if isinstance(event, hw.StepStartEvent):
            seen.append(("step.start", event.step, [t.name for t in event.tools]))
        else:
            calls = [c.name for c in event.response.message.tool_calls]
            seen.append(("model.after", event.step, calls))
        return None

    bus = hw.HookBus()
    bus.register(refund_policy)
    bus.register(watch)
    return bus


def hook_records(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (r["emit"], r["hook"], r.get("step"), r.get("tool"), r["outcome"])
        for r in records
        if r["kind"] == "hook"
    ]


# --- handoffs -------------------------------------------------------------------------------


def triage_and_support(ran: list[int]) -> tuple[Any, ScriptedModel]:
    support_model = ScriptedModel(
        [
            [call("refund", {"amount": 500}, call_id="c1")],
            [call("refund", {"amount": 20})],
            [say("done")],
        ]
    )
    support = agents.Agent(
        name="support", instructions="Refunds.", model=support_model, tools=[refund_tool(ran)]
    )
    triage_model = ScriptedModel([[call("transfer_to_support", {}, call_id="h1")]])
    triage = agents.Agent(
        name="triage", instructions="Route.", model=triage_model, handoffs=[support]
    )
    return triage, support_model


def test_guarding_an_agent_guards_the_agents_it_hands_off_to() -> None:
    """``guard(triage)`` guards support's tools too: its blocked call is refused and the run
    goes on in support (before, support's unguarded tool ended the run instead)."""
    ran: list[int] = []
    seen: list[tuple[Any, ...]] = []
    triage, support_model = triage_and_support(ran)
    adapter = OpenAIAgentsAdapter(policy_bus(seen))
    run = adapter.new_run(run_id="handoff-1")
    result = asyncio.run(run.run(adapter.guard(triage), "refund 500 then 20"))
    assert result.final_output == "done"
    assert result.last_agent.name == "support"
    assert ran == [20]
    outputs = [
        i["output"] for i in support_model.inputs[1] if isinstance(i, dict) and "output" in i
    ]
    assert outputs == [
        '{"assistant": "support"}',  # the handoff's own output
        "The harness refused this tool call: over the limit",
    ]


def test_a_handoff_goes_on_in_the_same_run_with_the_steps_counted_on() -> None:
    """What the bus sees on a handoff: the model's ``transfer_to_<agent>`` call in
    ``model.after`` (and offered in ``step.start``'s tools), no ``tool.before`` for it (a
    handoff is not a function tool), ``step.end`` for the turn, then the next agent's
    turns as the next steps, all in the one run."""
    ran: list[int] = []
    seen: list[tuple[Any, ...]] = []
    triage, _ = triage_and_support(ran)
    adapter = OpenAIAgentsAdapter(policy_bus(seen))
    run = adapter.new_run(run_id="handoff-2")
    asyncio.run(run.run(adapter.guard(triage), "refund"))
    assert seen == [
        ("step.start", 1, ["transfer_to_support"]),
        ("model.after", 1, ["transfer_to_support"]),
        ("step.start", 2, ["refund"]),
        ("model.after", 2, ["refund"]),
        ("tool.before", 2, "c1", 500),
        ("step.start", 3, ["refund"]),
        ("model.after", 3, ["refund"]),
        ("tool.before", 3, "call_refund", 20),
        ("step.start", 4, ["refund"]),
        ("model.after", 4, []),
    ]
    assert [(h, step, tool) for _, h, step, tool, _ in hook_records(run.trace.records())] == [
        ("task.start", None, None),
        ("step.start", 1, None),
        ("model.before", 1, None),
        ("model.after", 1, None),
        ("step.end", 1, None),
        ("step.start", 2, None),
        ("model.before", 2, None),
        ("model.after", 2, None),
        ("tool.before", 2, "refund"),
        ("step.end", 2, None),
        ("step.start", 3, None),
        ("model.before", 3, None),
        ("model.after", 3, None),
        ("tool.before", 3, "refund"),
        ("tool.after", 3, "refund"),
        ("step.end", 3, None),
        ("step.start", 4, None),
        ("model.before", 4, None),
        ("model.after", 4, None),
        ("step.end", 4, None),
        ("task.end", None, None),
    ]
    assert {r["run"] for r in run.trace.records()} == {"handoff-2"}


def test_agents_that_hand_off_to_each_other_are_guarded_once_each() -> None:
    ran: list[int] = []
    support = agents.Agent(name="support", tools=[refund_tool(ran)])
    triage = agents.Agent(name="triage", handoffs=[support])
    support.handoffs = [triage]
    guarded = OpenAIAgentsAdapter(hw.HookBus()).guard(triage)
    (guarded_support,) = guarded.handoffs
    assert guarded_support is not support
    assert guarded_support.handoffs == [guarded]  # the cycle closes on the clones
    assert getattr(guarded_support.tools[0], "__harnessweaver_guarded__", False)
    assert triage.handoffs == [support] and support.handoffs == [triage]  # originals untouched


# --- a serialised RunState, resumed by a fresh adapter --------------------------------------


def cap_and_ask() -> hw.HookBus:
    """A rewrite (70 → 60) and a Suspend for the same call, as in the run loop's approval
    of a rewritten pending call."""

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", name="cap")
    async def cap(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.arguments["amount"] > 60:
            return hw.Continue(modified=event.updated({"call.arguments.amount": 60}))
        return None

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", name="ask")
    async def ask(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        return hw.Suspend("needs a manager") if event.call.id != "c3" else None

    bus = hw.HookBus()
    bus.register(cap)
    bus.register(ask)
    return bus


TURNS = [
    [
        call("refund", {"amount": 70}, call_id="c1"),
        call("refund", {"amount": 80}, call_id="c2"),
        call("refund", {"amount": 5}, call_id="c3"),
    ],
    [say("done")],
]


def agent_with(adapter: OpenAIAgentsAdapter, turns: list[list[Any]], ran: list[int]) -> Any:
    model = ScriptedModel(turns)
    agent = agents.Agent(
        name="support", instructions="Help.", model=model, tools=[refund_tool(ran)]
    )
    return adapter.guard(agent)


def first_segment() -> tuple[str, str, list[int]]:
    """Run until the SDK interrupts for c1 and c2; the state and the trace as JSON."""
    ran: list[int] = []
    adapter = OpenAIAgentsAdapter(cap_and_ask())
    run = adapter.new_run(run_id="restored-1")
    result = asyncio.run(run.run(agent_with(adapter, TURNS, ran), "refund three"))
    assert [i.tool_name for i in result.interruptions] == ["refund", "refund"]
    return result.to_state().to_string(), run.trace.to_jsonl(), ran


def test_a_restored_run_state_is_resumed_by_a_fresh_adapter_as_one_run() -> None:
    """In another process (here: a fresh bus, adapter, agent and GuardedRun; the state and the
    trace as JSON): no second ``task.start``, the step goes on (no step 1 again), the
    approved call runs as the chain leaves it, the rejected one never runs. The fresh
    adapter does not hold the chain's first answer, so it asks the chain again for the
    approved call (one more ``tool.before``; a Suspend there is the approval the state
    holds, a rewrite is applied again); the rejected call is not asked again."""
    state_json, trace_jsonl, ran_before = first_segment()
    assert ran_before == [5]  # c3, admitted, ran before the interruption
    ran: list[int] = []
    adapter = OpenAIAgentsAdapter(cap_and_ask())
    agent = agent_with(adapter, TURNS[1:], ran)
    state = asyncio.run(agents.RunState.from_string(agent, state_json))
    c1, c2 = state.get_interruptions()
    state.approve(c1)
    state.reject(c2, rejection_message="The manager said no.")
    trace = hw.Trace.from_jsonl(trace_jsonl)
    run = adapter.new_run(run_id="restored-1", trace=trace)
    result = asyncio.run(run.run(agent, state))
    assert result.final_output == "done"
    assert ran == [60]  # approved, as the chain left it
    records = hook_records(run.trace.records())
    first = [r for r in records if r[0] <= 9]
    assert [r[1] for r in first] == [
        "task.start",
        "step.start",
        "model.before",
        "model.after",
        "tool.before",
        "tool.before",
        "tool.before",
        "tool.after",
        "task.end",
    ]
    assert [r for r in records if r[0] > 9] == [
        (10, "tool.before", 1, "refund", "suspend"),  # c1 asked again: the approval answers
        (11, "tool.after", 1, "refund", "continue"),
        (12, "step.end", 1, None, "continue"),
        (13, "step.start", 2, None, "continue"),
        (14, "model.before", 2, None, "continue"),
        (15, "model.after", 2, None, "continue"),
        (16, "step.end", 2, None, "continue"),
        (17, "task.end", None, None, "continue"),
    ]
    assert {r["run"] for r in run.trace.records()} == {"restored-1"}


def test_a_fresh_run_decides_on_a_restored_state_edits_included() -> None:
    """``run.decide`` (and ``run.pending``, the approval with the event an edit starts from)
    in a ``GuardedRun`` that did not see the calls: the chain is asked again about each, as
    resuming would ask it, and its Suspend is what is decided (I23)."""
    state_json, trace_jsonl, _ = first_segment()
    ran: list[int] = []
    adapter = OpenAIAgentsAdapter(cap_and_ask())
    agent = agent_with(adapter, TURNS[1:], ran)
    state = asyncio.run(agents.RunState.from_string(agent, state_json))
    c1, c2 = state.get_interruptions()
    run = adapter.new_run(run_id="restored-1", trace=hw.Trace.from_jsonl(trace_jsonl))
    pending = asyncio.run(run.pending(state, c1))
    assert pending is not None and pending.call is not None
    assert pending.call.arguments == {"amount": 60}  # as the chain left it (cap: 70 -> 60)
    event = pending.event_model()
    assert isinstance(event, hw.ToolCallEvent)
    call = event.call.model_copy(update={"arguments": {"amount": 30}})
    again = asyncio.run(
        run.decide(state, c1, hw.Decision.edit(event.model_copy(update={"call": call})))
    )
    assert again is not None and again.call is not None  # "ask" suspends every call but c3
    assert again.call.arguments == {"amount": 30}
    assert asyncio.run(run.decide(state, c1, hw.Decision.approve())) is None
    assert asyncio.run(run.decide(state, c2, hw.Decision.deny("no"))) is None
    result = asyncio.run(run.run(agent, state))
    assert ran == [30] and result.final_output == "done"  # the edit ran; c2 never did
    assert [r for r in hook_records(run.trace.records()) if r[0] > 9] == [
        (10, "tool.before", 1, "refund", "suspend"),  # c1 asked again: the approval to decide
        (11, "tool.before", 1, "refund", "suspend"),  # the edit, asked: approved as is
        (12, "tool.before", 1, "refund", "suspend"),  # c2 asked again: denied
        (13, "tool.after", 1, "refund", "continue"),  # the edit ran, in step 1 still
        (14, "step.end", 1, None, "continue"),
        (15, "step.start", 2, None, "continue"),
        (16, "model.before", 2, None, "continue"),
        (17, "model.after", 2, None, "continue"),
        (18, "step.end", 2, None, "continue"),
        (19, "task.end", None, None, "continue"),
    ]


def test_a_fresh_run_cannot_decide_a_call_the_chain_no_longer_suspends() -> None:
    state_json, _, _ = first_segment()
    adapter = OpenAIAgentsAdapter(hw.HookBus())  # the policy is gone: nothing suspends
    agent = agent_with(adapter, TURNS[1:], [])
    state = asyncio.run(agents.RunState.from_string(agent, state_json))
    c1, _ = state.get_interruptions()
    run = adapter.new_run(run_id="restored-1")
    assert asyncio.run(run.pending(state, c1)) is None
    with pytest.raises(
        hw.AgentError, match=r"call 'c1': the chain does not suspend it \(it answers Continue\)"
    ) as refused:
        asyncio.run(run.decide(state, c1, hw.Decision.approve()))
    assert refused.value.kind == "no_pending_call"


def test_a_restored_state_does_not_approve_calls_it_holds_no_decision_for() -> None:
    """The fresh adapter takes a Suspend as approved only for the calls the state was
    interrupted for: a later call the chain suspends is refused, never run (as with
    ``always_approve``)."""
    turns = [
        [call("refund", {"amount": 70}, call_id="c1")],
        [call("refund", {"amount": 80}, call_id="c9")],
        [say("done")],
    ]
    ran: list[int] = []
    adapter = OpenAIAgentsAdapter(cap_and_ask())
    run = adapter.new_run(run_id="restored-2")
    first = asyncio.run(run.run(agent_with(adapter, turns, ran), "refund twice"))
    state_json = first.to_state().to_string()

    adapter = OpenAIAgentsAdapter(cap_and_ask())
    model = ScriptedModel(turns[1:])
    agent = adapter.guard(
        agents.Agent(name="support", instructions="Help.", model=model, tools=[refund_tool(ran)])
    )
    state = asyncio.run(agents.RunState.from_string(agent, state_json))
    state.approve(state.get_interruptions()[0], always_approve=True)
    result = asyncio.run(adapter.new_run(run_id="restored-2").run(agent, state))
    assert ran == [60]
    assert result.final_output == "done"
    outputs = [i["output"] for i in model.inputs[-1] if isinstance(i, dict) and "output" in i]
    assert "which the SDK could not ask for this call" in outputs[-1]


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000 + "]" * 100_000,  # past the JSON parser's own limit (RecursionError)
        '{"a": ' + "[" * 129 + "]" * 129 + "}",  # parsed, but past the depth the bus reads
    ],
    ids=["past-the-parser", "past-128"],
)
def test_arguments_nested_too_deeply_are_not_a_json_object(text: str) -> None:
    """The model's tool-call arguments come from outside: nested past 128 levels they are
    refused as "not a JSON object" (the same bound as the hook command's and the chat
    provider's), never a RecursionError out of the adapter (issue 28)."""
    from harnessweaver.adapters.openai_agents.convert import arguments_of

    assert arguments_of(text) is None
    assert arguments_of('{"a": ' + "[" * 127 + "]" * 127 + "}") == {"a": _nested(127)}


def _nested(depth: int) -> Any:
    """``depth`` arrays, one inside the other."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value
