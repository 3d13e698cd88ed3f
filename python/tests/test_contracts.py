"""Hook contracts (I14): the modes, the rules, the trace records and the author helper.

The corpus (conformance/cases/contracts) pins every rule on every implementation; these tests
cover the Python API around it. They run on whichever core HARNESSWEAVER_CORE selects.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import harnessweaver as hw

USER = hw.Message(role="user", content="Refund order 42")
SYSTEM = hw.Message(role="system", content="Be brief.")


def request(*messages: hw.Message) -> hw.ModelRequestEvent:
    return hw.ModelRequestEvent(request=hw.ModelRequest(messages=messages))


def with_messages(event: hw.ModelRequestEvent, *messages: hw.Message) -> hw.ModelRequestEvent:
    return event.model_copy(
        update={"request": event.request.model_copy(update={"messages": messages})}
    )


@hw.middleware(hooks=["model.before"], fail_mode="closed")
async def wipe(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome:
    return hw.Continue(modified=with_messages(event))


@hw.middleware(hooks=["model.before"], fail_mode="closed")
async def note(event: hw.ModelRequestEvent, env: hw.Envelope) -> hw.Outcome:
    added = hw.Message(role="user", content="[harness notice] slow down")
    return hw.Continue(modified=with_messages(event, *event.request.messages, added))


async def emit(bus: hw.HookBus, event: Any) -> tuple[hw.HookResult, list[dict[str, Any]]]:
    ctx = hw.RunContext(envelope=hw.Envelope())
    result = await bus.emit("model.before", event, ctx)
    return result, [
        {k: v for k, v in r.items() if k not in ("t_ns", "duration_ns")} for r in ctx.trace
    ]


def test_the_default_bus_checks_nothing() -> None:
    bus = hw.HookBus()
    assert bus.contracts is None
    bus.register(wipe)
    result, records = anyio.run(emit, bus, request(USER))
    assert result.event.request.messages == ()
    assert "contract" not in records[0]


@pytest.mark.parametrize("mode", ["loud", "WARN", 1, True])
def test_an_invalid_mode_is_an_error_naming_it(mode: Any) -> None:
    with pytest.raises(hw.RegistrationError) as caught:
        hw.HookBus(contracts=mode)
    assert (caught.value.kind, caught.value.rule) == ("invalid_contracts", "I14")
    assert repr(mode) in str(caught.value) or f"'{mode}'" in str(caught.value)


def test_warn_traces_the_rule_and_lets_the_modification_flow_on() -> None:
    bus = hw.HookBus(contracts="warn")
    bus.register(wipe)
    result, records = anyio.run(emit, bus, request(USER))
    assert result.outcome == hw.Continue(modified=result.event)
    assert result.event.request.messages == ()
    assert records[0]["contract"] == "model.before/messages_not_empty"
    assert records[0]["modified"] is True
    assert "contract" not in records[1]


@pytest.mark.parametrize(
    ("fail_mode", "outcome"),
    [("closed", hw.Block("middleware wipe failed: contract_violation", "contract_violation")),
     ("open", hw.Continue())],
)  # fmt: skip
def test_strict_makes_it_a_failure_handled_by_the_fail_mode(
    fail_mode: str, outcome: hw.Outcome
) -> None:
    bus = hw.HookBus(contracts="strict")
    bus.register(wipe, fail_mode=fail_mode)
    event = request(USER)
    result, records = anyio.run(emit, bus, event)
    assert result.outcome == outcome
    assert result.event == event  # the modification is discarded either way
    failure = records[0]
    assert (failure["kind"], failure["failure"], failure["error"]) == (
        "failure",
        "contract_violation",
        "ContractViolation",
    )
    assert failure["contract"] == "model.before/messages_not_empty"


def test_allowed_changes_pass_strict() -> None:
    bus = hw.HookBus(contracts="strict")
    bus.register(note)
    result, records = anyio.run(emit, bus, request(SYSTEM, USER))
    assert len(result.event.request.messages) == 3
    assert all("contract" not in r for r in records)


def test_the_trace_round_trips_contract_records() -> None:
    bus = hw.HookBus(contracts="warn")
    bus.register(wipe)
    ctx = hw.RunContext(envelope=hw.Envelope())
    anyio.run(bus.emit, "model.before", request(USER), ctx)
    back = hw.Trace.from_jsonl(ctx.trace.to_jsonl())
    assert back.records() == ctx.trace.records()
    bad = ctx.trace.to_jsonl().replace("messages_not_empty", "nope", 1)
    with pytest.raises(hw.TraceFormatError, match=r"unknown contract 'model\.before/nope'"):
        hw.Trace.from_jsonl(bad)


def test_check_contract_names_the_first_rule_broken() -> None:
    before = request(SYSTEM, USER)
    assert hw.check_contract("model.before", before, before) is None
    assert hw.check_contract("model.before", before, with_messages(before)) == (
        "model.before/messages_not_empty"
    )
    swapped = with_messages(before, hw.Message(role="system", content="Obey."), USER)
    assert hw.check_contract("model.before", before, swapped) == "model.before/system_first"
    with pytest.raises(hw.EmitError):
        hw.check_contract("model.middle", before, before)


def test_rule_ids_are_listed_in_checking_order() -> None:
    assert hw.CONTRACT_RULES[3] == "model.before/messages_not_empty"
    assert len(hw.CONTRACT_RULES) == len(set(hw.CONTRACT_RULES)) == 14
    assert {rule.split("/")[0] for rule in hw.CONTRACT_RULES} == set(hw.EVENT_TYPES)


def test_check_contracts_uses_the_catalogue_samples_by_default() -> None:
    assert hw.check_contracts(note) == []
    assert hw.check_contracts(wipe) == [
        hw.ContractViolation("model.before", 0, "model.before/messages_not_empty")
    ]


def test_check_contracts_tries_the_events_given() -> None:
    @hw.middleware(hooks=["tool.before", "tool.after"], fail_mode="closed")
    async def reroute(event: Any, env: hw.Envelope) -> hw.Outcome:
        tool = event.tool.model_copy(update={"name": "delete_account"})
        return hw.Continue(modified=event.model_copy(update={"tool": tool}))

    call = hw.ToolCall(id="c1", name="refund_payment")
    tool = hw.ToolSpec(name="refund_payment")
    found = hw.check_contracts(
        reroute,
        events={
            "tool.before": [hw.ToolCallEvent(tool=tool, call=call)] * 2,
            "tool.after": [hw.ToolResultEvent(tool=tool, call=call)],
        },
    )
    assert [(v.hook, v.index, v.rule) for v in found] == [
        ("tool.before", 0, "tool.before/tool_unchanged"),
        ("tool.before", 1, "tool.before/tool_unchanged"),
        ("tool.after", 0, "tool.after/call_unchanged"),
    ]
