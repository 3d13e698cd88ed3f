"""Approvals that edit (I23): an edited event is checked like a modification (event type, hook
contracts), the chain is asked again with it, and what it admits runs; a failed check refuses
the decision and the run stays suspended. The edit is journaled, so a recovered run replays it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_support import (
    Counted,
    S,
    answering,
    harness,
    hooks_fired,
    last_tool_message,
    once,
    provider_of,
)

import harnessweaver as hw
from harnessweaver.agent.journal import DecisionLine

pytestmark = pytest.mark.anyio

ROLE = "finance"


def over_five(event: hw.ToolCallEvent) -> hw.Outcome | None:
    """Orders above 5 need finance's approval."""
    if event.call.arguments["order"] > 5:
        return hw.Suspend(reason="big order", approver_role=ROLE, code="approval")
    return None


def round_trip(state: hw.RunState) -> hw.RunState:
    return hw.RunState.model_validate_json(state.model_dump_json())


def edited_call(pending: hw.PendingApproval, **arguments: Any) -> hw.ToolCallEvent:
    event = pending.event_model()
    assert isinstance(event, hw.ToolCallEvent)
    call = event.call.model_copy(update={"arguments": arguments})
    return event.model_copy(update={"call": call})


async def suspended(
    *middleware: Any, journal: Path | None = None
) -> tuple[hw.Harness, Counted, hw.RunResult, Any]:
    gate = answering("tool.before", over_five)
    lookup = Counted()
    options: dict[str, Any] = {} if journal is None else {"journal": journal}
    h = harness(
        gate,
        *middleware,
        script=[S.tool_call("lookup", {"order": 9}), "done"],
        tools=[lookup.tool],
        **options,
    )
    result = await h.run("go")
    assert result.exit_reason == "suspended" and result.pending is not None
    return h, lookup, result, gate


async def test_an_approved_edit_runs_the_edited_call() -> None:
    h, lookup, result, gate = await suspended()
    assert result.pending is not None
    decision = hw.Decision.edit(edited_call(result.pending, order=3), role=ROLE)
    resumed = await h.resume(round_trip(result.state), decision)
    assert lookup.calls == [3]  # the edited call ran, the original never did
    assert resumed.exit_reason == "completed"
    assert last_tool_message(resumed).content == '{"order": 3, "status": "shipped"}'
    # the chain was asked again with the edited call: the guard saw what ran
    assert [event.call.arguments for event in gate.seen] == [{"order": 9}, {"order": 3}]
    assert hooks_fired(resumed.trace)[:3] == ["tool.before", "tool.after", "step.end"]


async def test_an_edit_the_chain_suspends_again_asks_again_about_the_edited_call() -> None:
    h, lookup, result, _ = await suspended()
    assert result.pending is not None
    decision = hw.Decision.edit(edited_call(result.pending, order=7), role=ROLE)
    again = await h.resume(result.state, decision)
    assert lookup.calls == []
    assert again.exit_reason == "suspended" and again.pending is not None
    assert again.pending.call is not None and again.pending.call.arguments == {"order": 7}
    done = await h.resume(again.state, hw.Decision.approve(role=ROLE))
    assert lookup.calls == [7] and done.exit_reason == "completed"


async def test_a_retry_of_an_edited_call_asks_again_about_the_edited_call() -> None:
    # A Retry at tool.before re-asks the chain with the event it was asked with: after an
    # edit, that is the edited call, not the model's original (which would suspend again).
    busy = [hw.Retry(reason="busy")]

    def busy_once_at_three(event: hw.ToolCallEvent) -> hw.Outcome | None:
        return busy.pop() if busy and event.call.arguments["order"] == 3 else None

    h, lookup, result, gate = await suspended(answering("tool.before", busy_once_at_three))
    assert result.pending is not None
    decision = hw.Decision.edit(edited_call(result.pending, order=3), role=ROLE)
    resumed = await h.resume(result.state, decision)
    assert resumed.exit_reason == "completed" and lookup.calls == [3]
    assert [event.call.arguments for event in gate.seen] == [
        {"order": 9},
        {"order": 3},
        {"order": 3},
    ]
    assert busy == []  # the retry was answered


async def test_a_retry_of_an_edited_result_repeats_the_operation() -> None:
    # At tool.after a Retry repeats the operation (the call runs again): the edit was of the
    # old result, so the new result goes through the chain as any result does.
    lookup = Counted()
    answers = [APPROVAL, hw.Retry(reason="again")]
    h = harness(
        answering("tool.after", lambda event: answers.pop(0) if answers else None),
        script=[S.tool_call("lookup", {"order": 5}), "done"],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert result.pending is not None
    event = result.pending.event_model()
    assert isinstance(event, hw.ToolResultEvent)
    output = event.result.model_copy(update={"output": "withheld"})
    resumed = await h.resume(
        result.state, hw.Decision.edit(event.model_copy(update={"result": output}), role=ROLE)
    )
    assert lookup.calls == [5, 5] and resumed.exit_reason == "completed"
    assert last_tool_message(resumed).content == '{"order": 5, "status": "shipped"}'


async def test_an_edit_a_guard_blocks_is_refused_to_the_model() -> None:
    def no_order_one(event: hw.ToolCallEvent) -> hw.Outcome | None:
        if event.call.arguments["order"] == 1:
            return hw.Block(reason="order 1 is frozen")
        return None

    h, lookup, result, _ = await suspended(answering("tool.before", no_order_one))
    assert result.pending is not None
    decision = hw.Decision.edit(edited_call(result.pending, order=1), role=ROLE)
    resumed = await h.resume(result.state, decision)
    assert lookup.calls == []  # the approver cannot edit past a guard
    assert last_tool_message(resumed).content == (
        "The harness refused this tool call: order 1 is frozen"
    )


async def test_an_edit_of_the_wrong_event_type_is_refused_and_the_run_stays_suspended() -> None:
    h, lookup, result, gate = await suspended()
    wrong = hw.ModelRequestEvent(step=1, request=hw.ModelRequest(model="m", messages=()))
    with pytest.raises(hw.AgentError) as refused:
        await h.resume(result.state, hw.Decision.edit(wrong, role=ROLE))
    assert (refused.value.kind, refused.value.rule) == ("wrong_event_type", "I23")
    assert "ModelRequestEvent" in str(refused.value) and "ToolCallEvent" in str(refused.value)
    assert lookup.calls == [] and len(gate.seen) == 1  # nothing ran, the chain was not asked
    # the same state still takes a valid decision
    assert result.pending is not None
    done = await h.resume(result.state, hw.Decision.approve(role=ROLE))
    assert lookup.calls == [9] and done.exit_reason == "completed"


def test_an_edit_that_is_no_event_is_refused_when_made() -> None:
    with pytest.raises(TypeError, match="I23"):
        hw.Decision.edit({"call": {}})  # type: ignore[arg-type]


async def test_an_edit_given_as_invalid_json_is_refused_naming_the_field() -> None:
    h, lookup, result, _ = await suspended()
    decision = hw.Decision(
        approved=True, role=ROLE, edited_type="ToolCallEvent", edited={"step": 1, "call": 5}
    )
    with pytest.raises(hw.AgentError) as refused:
        await h.resume(result.state, decision)
    assert (refused.value.kind, refused.value.rule) == ("invalid_edit", "I23")
    assert "call: model_type" in str(refused.value)
    assert lookup.calls == []


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ({"name": "refund"}, "tool.before/tool_unchanged"),
        ({"id": "call_other"}, "tool.before/call_id_unchanged"),
    ],
)
async def test_an_edit_breaking_a_hook_contract_is_refused_naming_the_rule(
    change: dict[str, str], rule: str
) -> None:
    h, lookup, result, gate = await suspended()  # a bus with no contract mode: checked anyway
    assert result.pending is not None
    event = edited_call(result.pending, order=3)
    event = event.model_copy(update={"call": event.call.model_copy(update=change)})
    with pytest.raises(hw.AgentError) as refused:
        await h.resume(result.state, hw.Decision.edit(event, role=ROLE))
    assert (refused.value.kind, refused.value.rule) == ("contract_violation", "I23")
    assert rule in str(refused.value)
    assert lookup.calls == [] and len(gate.seen) == 1


async def test_an_edit_by_the_wrong_role_is_refused() -> None:
    h, lookup, result, _ = await suspended()
    assert result.pending is not None
    decision = hw.Decision.edit(edited_call(result.pending, order=3), role="support")
    with pytest.raises(hw.AgentError) as refused:
        await h.resume(result.state, decision)
    assert refused.value.kind == "wrong_approver"
    assert lookup.calls == []


def test_an_edit_is_an_approval_holding_the_whole_event() -> None:
    with pytest.raises(ValueError, match="approved must be true"):
        hw.Decision(approved=False, edited_type="ToolCallEvent", edited={})
    with pytest.raises(ValueError, match="both edited_type and edited"):
        hw.Decision(approved=True, edited_type="ToolCallEvent")


async def test_an_edit_survives_json_and_the_state_it_leads_to_too() -> None:
    h, lookup, result, _ = await suspended()
    assert result.pending is not None
    decision = hw.Decision.edit(edited_call(result.pending, order=4), role=ROLE, reason="cap")
    back = hw.Decision.model_validate_json(decision.model_dump_json())
    assert back == decision and back.is_edit
    resumed = await h.resume(round_trip(result.state), back)
    assert lookup.calls == [4] and resumed.exit_reason == "completed"


async def test_the_edit_is_journaled_and_a_recovered_run_replays_the_edited_call(
    tmp_path: Path,
) -> None:
    journal = tmp_path / "run.jsonl"
    h, lookup, result, gate = await suspended(journal=journal)
    assert result.pending is not None
    decision = hw.Decision.edit(edited_call(result.pending, order=2), role=ROLE)
    await h.resume(result.state, decision)
    lines = hw.read_journal(journal)
    decided = next(line for line in lines if line.kind == "decision")
    assert isinstance(decided, DecisionLine)
    assert decided.decision == decision  # the edited event is in the journal
    assert decided.state.phase == "run_tool"
    assert decided.state.in_step().call is not None
    assert decided.state.in_step().call.arguments == {"order": 2}
    # a crash right after the decision line: the recovered run runs the edited call
    text = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    journal.write_text("".join(text[: lines.index(decided) + 1]), encoding="utf-8")
    state = hw.recover(journal)
    assert state is not None and state.pending is None and state.phase == "run_tool"
    asked = len(gate.seen)
    again = hw.ScriptedProvider(["done"])
    resumed = await h.with_agent(provider=again).resume(state)
    assert lookup.calls == [2, 2]  # once before the crash, once again after it: the edit
    assert len(gate.seen) == asked  # the chain is not asked again: it admitted the edit
    assert resumed.exit_reason == "completed"


APPROVAL = hw.Suspend(reason="check it", approver_role=ROLE)


async def test_an_edit_of_the_request_is_what_the_model_is_sent() -> None:
    h = harness(answering("model.before", once(APPROVAL)))
    result = await h.run("my card is 4111 1111 1111 1111")
    assert result.pending is not None
    event = result.pending.event_model()
    assert isinstance(event, hw.ModelRequestEvent)
    redacted = hw.Message(role="user", content="my card is [redacted]")
    request = event.request.model_copy(update={"messages": (redacted,)})  # the trailing user
    edit = hw.Decision.edit(event.model_copy(update={"request": request}), role=ROLE)
    resumed = await h.resume(round_trip(result.state), edit)
    assert resumed.exit_reason == "completed"
    assert [r.messages for r in provider_of(h).requests] == [(redacted,)]


async def test_an_edit_rewriting_history_is_refused_naming_the_rule() -> None:
    h = harness(answering("model.before", once(APPROVAL)), system="Be brief.")
    result = await h.run("hi")
    assert result.pending is not None
    event = result.pending.event_model()
    assert isinstance(event, hw.ModelRequestEvent)
    request = event.request.model_copy(update={"messages": event.request.messages[1:]})
    with pytest.raises(hw.AgentError) as refused:
        await h.resume(
            result.state, hw.Decision.edit(event.model_copy(update={"request": request}), role=ROLE)
        )
    assert refused.value.kind == "contract_violation"
    assert "model.before/system_first" in str(refused.value)
    assert provider_of(h).requests == []


async def test_an_edit_of_a_tool_result_is_what_the_model_reads() -> None:
    lookup = Counted()
    h = harness(
        answering("tool.after", once(APPROVAL)),
        script=[S.tool_call("lookup", {"order": 5}), "done"],
        tools=[lookup.tool],
    )
    result = await h.run("go")
    assert result.pending is not None and result.pending.hook == "tool.after"
    event = result.pending.event_model()
    assert isinstance(event, hw.ToolResultEvent)
    output = event.result.model_copy(update={"output": "shipped (details withheld)"})
    edit = hw.Decision.edit(event.model_copy(update={"result": output}), role=ROLE)
    resumed = await h.resume(result.state, edit)
    assert lookup.calls == [5]  # the tool ran once, before the pause
    assert last_tool_message(resumed).content == "shipped (details withheld)"
