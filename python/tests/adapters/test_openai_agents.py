"""The OpenAI Agents SDK adapter against the real SDK, offline: a scripted ``Model`` of the
SDK's own kind, a dummy API key, tracing export off. Each outcome at each hook point does what
docs/integrations/openai-agents.md says, and the trace holds run, step and tool (I21)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

agents = pytest.importorskip("agents")

from checkout import require_checkout  # noqa: E402

import harnessweaver as hw  # noqa: E402
from harnessweaver.adapters.openai_agents import (  # noqa: E402
    GuardedRun,
    HarnessStopped,
    OpenAIAgentsAdapter,
)
from harnessweaver.adapters.openai_agents.scripted import ScriptedModel, call, say  # noqa: E402


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No key, no export: the SDK insists on a key; nothing leaves the machine."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-dummy-offline")
    agents.set_tracing_disabled(True)
    yield


class Refunds:
    """A function tool that records what it really ran with."""

    def __init__(self) -> None:
        self.ran: list[int] = []

        @agents.function_tool
        def refund(amount: int) -> str:
            """Refund an amount in dollars."""
            self.ran.append(amount)
            return f"refunded {amount}"

        self.tool = refund


def at(hook: str, answer: Any, *, fail_mode: str = "closed", name: str = "policy") -> Any:
    @hw.middleware(hooks=[hook], fail_mode=fail_mode, name=name)
    async def mw(event: Any, env: hw.Envelope) -> hw.Outcome | None:
        return answer(event)  # type: ignore[no-any-return]

    return mw


def setup(
    *middleware: Any, turns: list[list[Any]], run_id: str = "oa-1"
) -> tuple[GuardedRun, Any, ScriptedModel, Refunds]:
    bus = hw.HookBus()
    for item in middleware:
        bus.register(item)
    refunds = Refunds()
    model = ScriptedModel(turns)
    adapter = OpenAIAgentsAdapter(bus)
    agent = adapter.guard(
        agents.Agent(name="support", instructions="Help.", model=model, tools=[refunds.tool])
    )
    return adapter.new_run(run_id=run_id), agent, model, refunds


def refund_turns(amount: int) -> list[list[Any]]:
    return [[call("refund", {"amount": amount}, call_id="c1")], [say("done")]]


def tool_output_seen(model: ScriptedModel) -> Any:
    """The tool output the model read on its last call."""
    outputs = [i for i in model.inputs[-1] if isinstance(i, dict) and "output" in i]
    return outputs[-1]["output"]


def hooks(run: GuardedRun) -> list[tuple[str, Any, Any, str]]:
    return [
        (r["hook"], r.get("step"), r.get("tool"), r["outcome"])
        for r in run.trace.records()
        if r["kind"] == "hook"
    ]


def test_a_blocked_call_never_runs_and_the_model_reads_the_refusal() -> None:
    policy = at("tool.before", lambda e: hw.Block("over the limit", code="limit"))
    run, agent, model, refunds = setup(policy, turns=refund_turns(500))
    result = asyncio.run(run.run(agent, "refund 500"))
    assert refunds.ran == []
    assert tool_output_seen(model) == "The harness refused this tool call: over the limit"
    assert result.final_output == "done"  # the run went on


def test_a_suspended_call_approved_on_the_run_state_runs_once() -> None:
    policy = at("tool.before", lambda e: hw.Suspend("needs a manager", approver_role="manager"))
    run, agent, model, refunds = setup(policy, turns=refund_turns(70))
    first = asyncio.run(run.run(agent, "refund 70"))
    assert [i.tool_name for i in first.interruptions] == ["refund"]
    assert refunds.ran == []
    state = first.to_state()
    state.approve(first.interruptions[0])
    resumed = asyncio.run(run.run(agent, state))
    assert refunds.ran == [70]
    assert resumed.final_output == "done"
    assert tool_output_seen(model) == "refunded 70"
    exits = [r for r in run.trace.records() if r["hook"] == "task.end" and r["kind"] == "hook"]
    assert len(exits) == 2  # one per segment, as the run loop does
    assert {r["run"] for r in run.trace.records()} == {"oa-1"}  # one run id across the resume


def test_an_approved_call_runs_as_the_chain_left_it() -> None:
    """As in the run loop, an approval admits the pending event: a rewrite by one middleware
    and a Suspend by another, approved, run the rewritten call."""
    cap = at(
        "tool.before",
        lambda e: hw.Continue(modified=e.updated({"call.arguments.amount": 60})),
        name="cap",
    )
    ask = at("tool.before", lambda e: hw.Suspend("needs a manager"), name="ask")
    run, agent, model, refunds = setup(cap, ask, turns=refund_turns(70))
    first = asyncio.run(run.run(agent, "refund 70"))
    state = first.to_state()
    state.approve(first.interruptions[0])
    asyncio.run(run.run(agent, state))
    assert refunds.ran == [60]
    assert tool_output_seen(model) == "refunded 60"


def test_a_suspended_call_rejected_on_the_run_state_never_runs() -> None:
    policy = at("tool.before", lambda e: hw.Suspend("needs a manager"))
    run, agent, model, refunds = setup(policy, turns=refund_turns(70))
    first = asyncio.run(run.run(agent, "refund 70"))
    state = first.to_state()
    state.reject(first.interruptions[0], rejection_message="The manager said no.")
    resumed = asyncio.run(run.run(agent, state))
    assert refunds.ran == []
    assert tool_output_seen(model) == "The manager said no."
    assert resumed.final_output == "done"
    assert "tool.after" not in [h for h, *_ in hooks(run)]


def test_a_rewritten_call_is_what_runs() -> None:
    policy = at(
        "tool.before", lambda e: hw.Continue(modified=e.updated({"call.arguments.amount": 50}))
    )
    run, agent, model, refunds = setup(policy, turns=refund_turns(500))
    asyncio.run(run.run(agent, "refund 500"))
    assert refunds.ran == [50]
    assert tool_output_seen(model) == "refunded 50"
    after = [r for r in run.trace.records() if r["hook"] == "tool.after"]
    assert after  # tool.after saw the call as it ran


def test_a_rewritten_result_is_what_the_model_reads() -> None:
    redact = at(
        "tool.after", lambda e: hw.Continue(modified=e.updated({"result.output": "[redacted]"}))
    )
    run, agent, model, refunds = setup(redact, turns=refund_turns(5))
    asyncio.run(run.run(agent, "refund 5"))
    assert refunds.ran == [5]
    assert tool_output_seen(model) == "[redacted]"


def test_a_blocked_result_is_withheld() -> None:
    withhold = at("tool.after", lambda e: hw.Block("contains card data"))
    run, agent, model, refunds = setup(withhold, turns=refund_turns(5))
    asyncio.run(run.run(agent, "refund 5"))
    assert refunds.ran == [5]
    assert tool_output_seen(model) == "The harness withheld this tool's result: contains card data"


def test_a_call_changed_into_another_tool_is_refused_not_run() -> None:
    swap = at("tool.before", lambda e: hw.Continue(modified=e.updated({"call.name": "other"})))
    run, agent, model, refunds = setup(swap, turns=refund_turns(5))
    asyncio.run(run.run(agent, "refund 5"))
    assert refunds.ran == []
    assert "beyond its arguments" in tool_output_seen(model)


def test_block_at_model_before_ends_the_run_with_the_reason() -> None:
    stop = at("model.before", lambda e: hw.Block("model calls are off", code="freeze"))
    run, agent, model, _refunds = setup(stop, turns=refund_turns(5))
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(run.run(agent, "refund 5"))
    assert (raised.value.hook, raised.value.outcome) == ("model.before", "block")
    assert (raised.value.reason, raised.value.code) == ("model calls are off", "freeze")
    assert model.inputs == []  # the model was never called
    end = [r for r in run.trace.records() if r["hook"] == "task.end"]
    assert end and end[-1]["outcome"] == "continue"


def test_a_rewritten_model_request_ends_the_run_rather_than_run_unchanged() -> None:
    rewrite = at(
        "model.before", lambda e: hw.Continue(modified=e.updated({"request.model": "other"}))
    )
    run, agent, model, _refunds = setup(rewrite, turns=refund_turns(5))
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(run.run(agent, "refund 5"))
    assert (raised.value.hook, raised.value.outcome) == ("model.before", "modified")
    assert model.inputs == []


def test_escalate_at_tool_before_ends_the_run() -> None:
    up = at("tool.before", lambda e: hw.Escalate("fraud suspected", to="security"))
    run, agent, _model, refunds = setup(up, turns=refund_turns(5))
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(run.run(agent, "refund 5"))
    assert (raised.value.hook, raised.value.outcome) == ("tool.before", "escalate")
    assert refunds.ran == []


def test_retry_at_tool_before_is_a_refusal() -> None:
    again = at("tool.before", lambda e: hw.Retry("rate limited"))
    run, agent, model, refunds = setup(again, turns=refund_turns(5))
    asyncio.run(run.run(agent, "refund 5"))
    assert refunds.ran == []
    assert tool_output_seen(model) == "The harness refused this tool call: rate limited"


def boom(event: Any) -> None:
    raise RuntimeError("secret detail")


def test_a_raising_fail_closed_middleware_blocks_the_call() -> None:
    run, agent, model, refunds = setup(at("tool.before", boom), turns=refund_turns(5))
    asyncio.run(run.run(agent, "refund 5"))
    assert refunds.ran == []
    assert tool_output_seen(model).startswith("The harness refused this tool call:")
    assert "secret detail" not in str(run.trace.records())  # R9: type names only


def test_a_raising_fail_open_middleware_lets_the_call_run() -> None:
    run, agent, _model, refunds = setup(
        at("tool.before", boom, fail_mode="open"), turns=refund_turns(5)
    )
    asyncio.run(run.run(agent, "refund 5"))
    assert refunds.ran == [5]


def test_the_trace_holds_run_step_and_tool_in_the_run_loops_order() -> None:
    run, agent, _model, _refunds = setup(turns=refund_turns(5), run_id="oa-trace")
    asyncio.run(run.run(agent, "refund 5"))
    assert hooks(run) == [
        ("task.start", None, None, "continue"),
        ("step.start", 1, None, "continue"),
        ("model.before", 1, None, "continue"),
        ("model.after", 1, None, "continue"),
        ("tool.before", 1, "refund", "continue"),
        ("tool.after", 1, "refund", "continue"),
        ("step.end", 1, None, "continue"),
        ("step.start", 2, None, "continue"),
        ("model.before", 2, None, "continue"),
        ("model.after", 2, None, "continue"),
        ("step.end", 2, None, "continue"),
        ("task.end", None, None, "continue"),
    ]
    assert {r["run"] for r in run.trace.records()} == {"oa-trace"}


def test_the_hook_points_match_harnessweavers_own_run_loop_for_the_same_script() -> None:
    """The same script through hw's run loop and through the SDK: the same hook points, steps
    and tools, in the same order, with a blocked call in it."""
    policy = at("tool.before", lambda e: hw.Block("no"))
    run, agent, _, _ = setup(policy, turns=refund_turns(5))
    asyncio.run(run.run(agent, "refund 5"))

    @hw.tool
    def refund(amount: int) -> str:
        """Refund an amount in dollars."""
        return f"refunded {amount}"

    bus = hw.HookBus()
    bus.register(at("tool.before", lambda e: hw.Block("no")))
    script = [hw.ScriptedProvider.tool_call("refund", {"amount": 5}), "done"]
    harness = hw.Harness.from_bus(
        bus, task="t", provider=hw.ScriptedProvider(script), tools=[refund]
    )
    ours = asyncio.run(harness.run("refund 5"))
    loop = [
        (r["hook"], r.get("step"), r.get("tool"), r["outcome"])
        for r in ours.trace.records()
        if r["kind"] == "hook"
    ]
    assert hooks(run) == loop


def test_an_always_approval_does_not_cover_a_later_suspended_call() -> None:
    """The SDK skips the approval policy for a tool approved with always_approve; a later call
    the harness suspends cannot be asked about any more, so it is refused, never run."""
    policy = at("tool.before", lambda e: hw.Suspend("needs a manager"))
    turns = [
        [call("refund", {"amount": 70}, call_id="c1")],
        [call("refund", {"amount": 80}, call_id="c2")],
        [say("done")],
    ]
    run, agent, model, refunds = setup(policy, turns=turns)
    first = asyncio.run(run.run(agent, "refund twice"))
    state = first.to_state()
    state.approve(first.interruptions[0], always_approve=True)
    resumed = asyncio.run(run.run(agent, state))
    assert refunds.ran == [70]
    assert "which the SDK could not ask for this call" in tool_output_seen(model)
    assert resumed.final_output == "done"


def test_a_tool_the_adapter_did_not_guard_is_stopped_by_the_run_hooks() -> None:
    """An unguarded tool has no refusal the adapter can give: a Block ends the run before
    the tool runs."""
    bus = hw.HookBus()
    bus.register(at("tool.before", lambda e: hw.Block("not this one")))
    refunds = Refunds()
    model = ScriptedModel(refund_turns(5))
    agent = agents.Agent(name="support", model=model, tools=[refunds.tool])  # not guarded
    run = OpenAIAgentsAdapter(bus).new_run()
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(run.run(agent, "refund 5"))
    assert (raised.value.hook, raised.value.reason) == ("tool.before", "not this one")
    assert refunds.ran == []
    ends = [r for r in run.trace.records() if r["hook"] == "task.end" and r["kind"] == "hook"]
    assert len(ends) == 1


def test_block_at_task_start_ends_the_run_before_the_model_is_called() -> None:
    run, agent, model, _refunds = setup(
        at("task.start", lambda e: hw.Block("closed today")), turns=refund_turns(5)
    )
    with pytest.raises(HarnessStopped) as raised:
        asyncio.run(run.run(agent, "refund 5"))
    assert raised.value.hook == "task.start"
    assert model.inputs == []
    assert [h for h, *_ in hooks(run)] == ["task.start", "task.end"]


def test_task_end_rewrites_or_withholds_the_output_as_the_run_loop_does() -> None:
    shout = at("task.end", lambda e: hw.Continue(modified=e.model_copy(update={"output": "DONE"})))
    run, agent, _model, _refunds = setup(shout, turns=refund_turns(5))
    assert asyncio.run(run.run(agent, "refund 5")).final_output == "DONE"
    withhold = at("task.end", lambda e: hw.Block("not for you"))
    run, agent, _model, _refunds = setup(withhold, turns=refund_turns(5))
    assert asyncio.run(run.run(agent, "refund 5")).final_output is None


def test_the_adapter_is_built_from_a_harness_too() -> None:
    bus = hw.HookBus()
    harness = hw.Harness.from_bus(bus, task="t")
    assert OpenAIAgentsAdapter(harness).bus is bus
    with pytest.raises(TypeError, match="harness"):
        OpenAIAgentsAdapter(object())


def test_a_guarded_tool_outside_a_guarded_run_does_not_run() -> None:
    _run, agent, _model, refunds = setup(turns=refund_turns(5))
    with pytest.raises(agents.exceptions.UserError, match="guarded by harnessweaver"):
        asyncio.run(agents.Runner.run(agent, "refund 5"))
    assert refunds.ran == []


def test_importing_harnessweaver_does_not_import_the_sdk() -> None:
    code = (
        "import sys, harnessweaver, harnessweaver.adapters; "
        "print('agents' in sys.modules, 'openai' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


def test_the_example_runs_offline_and_shows_each_outcome() -> None:
    root = require_checkout()
    done = subprocess.run(
        [sys.executable, str(root / "examples" / "openai_agents" / "run.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    out = done.stdout
    assert "blocked: refund(500) never ran; the model read: The harness refused" in out
    assert "suspended: refund(70) waits for approval" in out
    assert "approved: refund(70) ran" in out
    assert "rewritten: the model asked refund(13), refund(10) ran" in out
    assert "rejected: refund(90) never ran; the model read: The approver denied" in out
    assert "streamed: refund(30) ran;" in out and "final output 'All done.'" in out
    trace = re.search(r"tool\.before +continue \(modified\) +(.*)", out)
    assert trace is not None
    assert trace.group(1).split() == ["run=rewritten-13", "step=1", "tool=refund"]


def over_fifty(e: hw.ToolCallEvent) -> hw.Outcome | None:
    if e.call.arguments["amount"] > 50:
        return hw.Suspend("needs a manager", approver_role="manager")
    return None


def suspended_refund(*middleware: Any) -> tuple[GuardedRun, Any, ScriptedModel, Refunds, Any]:
    run, agent, model, refunds = setup(
        at("tool.before", over_fifty, name="ask"), *middleware, turns=refund_turns(70)
    )
    first = asyncio.run(run.run(agent, "refund 70"))
    assert refunds.ran == [] and first.interruptions
    return run, agent, model, refunds, first


def edited(run: GuardedRun, amount: int, **call: Any) -> hw.ToolCallEvent:
    """The event the chain left for the call ``c1``, with a new amount (an approver's edit)."""
    record = run.call("c1")
    assert record is not None
    event: hw.ToolCallEvent = record.before.event
    arguments = {**event.call.arguments, "amount": amount}
    return event.model_copy(
        update={"call": event.call.model_copy(update={"arguments": arguments, **call})}
    )


def test_an_hw_decision_edit_runs_the_edited_arguments_once_the_chain_admits_them() -> None:
    run, agent, model, refunds, first = suspended_refund()
    state = first.to_state()
    decision = hw.Decision.edit(edited(run, 40), role="manager")
    assert asyncio.run(run.decide(state, first.interruptions[0], decision)) is None
    resumed = asyncio.run(run.run(agent, state))
    assert refunds.ran == [40]  # the SDK approved the call; the wrapped tool ran the edit
    assert tool_output_seen(model) == "refunded 40"
    assert resumed.final_output == "done"
    asked = [r["outcome"] for r in run.trace.records() if r["kind"] == "hook"]
    assert asked.count("suspend") == 1  # the edited call passed the chain, which admitted it


def test_an_hw_decision_edit_the_chain_suspends_again_waits_for_a_second_decision() -> None:
    run, agent, _model, refunds, first = suspended_refund()
    state = first.to_state()
    item = first.interruptions[0]
    pending = asyncio.run(
        run.decide(state, item, hw.Decision.edit(edited(run, 60), role="manager"))
    )
    assert pending is not None and pending.call is not None
    assert pending.call.arguments == {"amount": 60}
    assert asyncio.run(run.decide(state, item, hw.Decision.approve(role="manager"))) is None
    asyncio.run(run.run(agent, state))
    assert refunds.ran == [60]


def test_an_hw_decision_edit_a_guard_blocks_is_refused_to_the_model() -> None:
    guard = at(
        "tool.before",
        lambda e: hw.Block("odd amounts are refused") if e.call.arguments["amount"] % 2 else None,
        name="even",
    )
    run, agent, model, refunds, first = suspended_refund(guard)
    state = first.to_state()
    decision = hw.Decision.edit(edited(run, 41), role="manager")
    asyncio.run(run.decide(state, first.interruptions[0], decision))
    asyncio.run(run.run(agent, state))
    assert refunds.ran == []
    assert tool_output_seen(model) == "The harness refused this tool call: odd amounts are refused"


@pytest.mark.parametrize(
    ("decision", "kind"),
    [
        (lambda run: hw.Decision.edit(edited(run, 40), role="intern"), "wrong_approver"),
        (
            lambda run: hw.Decision.edit(edited(run, 40, name="delete"), role="manager"),
            "contract_violation",
        ),
        (
            lambda run: hw.Decision.edit(hw.StepEndEvent(step=1), role="manager"),
            "wrong_event_type",
        ),
        (  # I27: the bus names no event (no identity scheme), so no echo can match
            lambda run: hw.Decision.approve(role="manager", identity="sha256:" + "0" * 64),
            "identity_mismatch",
        ),
    ],
    ids=["wrong-role", "contract-violation", "wrong-event-type", "identity-mismatch"],
)
def test_an_hw_decision_that_fails_a_check_is_refused_and_the_state_is_untouched(
    decision: Any, kind: str
) -> None:
    run, agent, _model, refunds, first = suspended_refund()
    state = first.to_state()
    with pytest.raises(hw.AgentError) as refused:
        asyncio.run(run.decide(state, first.interruptions[0], decision(run)))
    assert refused.value.kind == kind
    asyncio.run(run.decide(state, first.interruptions[0], hw.Decision.approve(role="manager")))
    asyncio.run(run.run(agent, state))
    assert refunds.ran == [70]  # the refused decision changed nothing; the approval ran it


def test_an_hw_decision_deny_rejects_with_the_run_loop_s_wording() -> None:
    run, agent, model, refunds, first = suspended_refund()
    state = first.to_state()
    asyncio.run(run.decide(state, first.interruptions[0], hw.Decision.deny("no", role="manager")))
    asyncio.run(run.run(agent, state))
    assert refunds.ran == []
    assert tool_output_seen(model) == "The approver denied this tool call: no"
