"""Cedar's answers as outcomes (I38), on the bus of the selected core (``HARNESSWEAVER_CORE``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import harnessweaver as hw
from harnessweaver.policies import CedarEvaluationError, CedarRequestError
from harnessweaver.policies.cedar import Cedar, CedarPolicySet, CedarSettings, PolicySource

pytest.importorskip("cedarpy")

POLICIES = """
@id("search-ok")
permit(principal, action == Action::"tool.before", resource == Tool::"search");

@id("small-refunds")
permit(principal is User, action == Action::"tool.before", resource == Tool::"refund")
  when { context.arguments.amount <= 100 };

@id("big-refunds") @requireApproval("finance")
permit(principal is User, action == Action::"tool.before", resource == Tool::"refund")
  when { context.arguments.amount > 100 };

@escalate("security")
permit(principal, action == Action::"tool.before", resource == Tool::"deploy");

@id("deploy-ask") @escalate
permit(principal == User::"ops", action == Action::"tool.before", resource == Tool::"deploy");

@id("no-anonymous-refunds")
forbid(principal == Agent::"anonymous", action, resource == Tool::"refund");

@id("no-drop")
forbid(principal, action, resource == Tool::"drop");

@id("also-no-drop")
forbid(principal, action, resource) when { context has tool && context.tool == "drop" };

@id("errs")
permit(principal, action, resource == Tool::"fragile") when { context.arguments.missing == 1 };

permit(principal, action, resource == Tool::"fragile") when { context.hook == "tool.before" };
"""


def engine(**settings: Any) -> CedarPolicySet:
    return CedarPolicySet.compile([PolicySource("p.cedar", POLICIES)], **settings)


def call(name: str, **arguments: Any) -> hw.ToolCallEvent:
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name=name), call=hw.ToolCall(name=name, arguments=arguments)
    )


def decide(name: str, attributes: dict[str, Any] | None = None, **arguments: Any) -> Any:
    given = {"user": "bob"} if attributes is None else attributes
    return engine().decide("tool.before", call(name, **arguments), given)


def test_a_permit_continues_unmodified() -> None:
    assert decide("search") == hw.Continue()
    assert decide("refund", amount=50) == hw.Continue()


def test_an_annotated_permit_suspends_with_its_ids_and_approver_role() -> None:
    assert decide("refund", amount=500) == hw.Suspend(
        reason="approval required by Cedar policy big-refunds",
        approver_role="finance",
        code="cedar:big-refunds",
    )


def test_several_annotated_permits_are_named_sorted_and_the_first_gives_the_role() -> None:
    outcome = decide("deploy", {"user": "ops"})
    # ids sorted by code point: "deploy-ask" < "policy3"; deploy-ask's @escalate has no value
    assert outcome == hw.Suspend(
        reason="approval required by Cedar policy deploy-ask, policy3",
        approver_role=None,
        code="cedar:deploy-ask,policy3",
    )
    assert decide("deploy") == hw.Suspend(
        reason="approval required by Cedar policy policy3",
        approver_role="security",
        code="cedar:policy3",
    )


def test_forbids_block_with_every_determining_id() -> None:
    assert decide("drop") == hw.Block(
        reason="forbidden by Cedar policy also-no-drop, no-drop", code="cedar:also-no-drop,no-drop"
    )
    assert decide("refund", {}, amount=5) == hw.Block(
        reason="forbidden by Cedar policy no-anonymous-refunds", code="cedar:no-anonymous-refunds"
    )


def test_no_permit_blocks_or_continues_as_no_decision_says() -> None:
    assert decide("other") == hw.Block(
        reason="no Cedar policy permits this request", code="cedar:no_permit"
    )
    lenient = engine(no_decision="continue")
    assert lenient.decide("tool.before", call("other"), {}) == hw.Continue()
    # a forbid still blocks
    assert lenient.decide("tool.before", call("drop"), {}).kind == "block"


def test_an_erroring_policy_fails_or_is_skipped_as_on_error_says() -> None:
    with pytest.raises(CedarEvaluationError) as caught:
        decide("fragile")
    assert caught.value.policies == ("errs",)
    skipping = engine(on_error="skip")
    assert skipping.decide("tool.before", call("fragile"), {}) == hw.Continue()


def test_codes_and_reasons_are_cut_to_the_i28_bounds() -> None:
    text = "\n".join(
        f'@id("{"x" * 60}{i:03}") forbid(principal, action, resource);' for i in range(80)
    )
    outcome = CedarPolicySet.compile([PolicySource("p", text)]).decide("tool.before", call("t"), {})
    assert isinstance(outcome, hw.Block)
    assert outcome.code is not None and len(outcome.code) == 128
    assert outcome.code.startswith("cedar:" + "x" * 60 + "000,")
    assert len("forbidden by Cedar policy ") + 80 * 63 + 79 * 2 > 4096
    assert len(outcome.reason) == 4096


def test_the_arguments_never_appear_in_an_outcome() -> None:
    secret = "sk-live-0123456789"
    outcome = decide("refund", {"user": "bob"}, amount=500, note=secret)
    assert secret not in repr(outcome)


def test_the_namespace_types_the_request() -> None:
    text = 'permit(principal is Acme::User, action == Acme::Action::"tool.before", resource);'
    ns = CedarPolicySet.compile([PolicySource("p", text)], namespace="Acme")
    assert ns.decide("tool.before", call("t"), {"user": "u"}) == hw.Continue()
    assert ns.decide("tool.before", call("t"), {"agent": "a"}).kind == "block"


def test_entities_take_part_in_the_decision() -> None:
    text = 'permit(principal in Group::"admins", action, resource);'
    entities = (
        '[{"uid": {"type": "User", "id": "ann"}, "attrs": {}, '
        '"parents": [{"type": "Group", "id": "admins"}]}]'
    )
    with_groups = CedarPolicySet.compile(
        [PolicySource("p", text)], entities=PolicySource("e.json", entities)
    )
    assert with_groups.decide("tool.before", call("t"), {"user": "ann"}) == hw.Continue()
    assert with_groups.decide("tool.before", call("t"), {"user": "bob"}).kind == "block"


def test_model_before_and_tool_after_are_decided() -> None:
    text = """
    permit(principal, action == Action::"model.before", resource == Model::"small")
      when { context.messages < 3 && context.tools.contains("search") };
    forbid(principal, action == Action::"tool.after", resource) when { context.is_error };
    permit(principal, action == Action::"tool.after", resource);
    """
    policies = CedarPolicySet.compile([PolicySource("p", text)])
    request = hw.ModelRequestEvent(
        request=hw.ModelRequest(model="small", tools=(hw.ToolSpec(name="search"),))
    )
    assert policies.decide("model.before", request, {}) == hw.Continue()
    failed = hw.ToolResultEvent(
        tool=hw.ToolSpec(name="t"), call=hw.ToolCall(name="t"), result=hw.ToolResult(is_error=True)
    )
    assert policies.decide("tool.after", failed, {}).kind == "block"


# On the bus: a failure of the policy middleware goes to its fail mode.


def bus_with(fail_mode: str, tmp_path: Path, hooks: list[str] | None = None) -> hw.HookBus:
    (tmp_path / "p.cedar").write_text(POLICIES, "utf-8")
    settings = CedarSettings.model_validate({"policies": str(tmp_path / "p.cedar")})
    bus = hw.HookBus()
    bus.register(Cedar(settings), name="policy", fail_mode=fail_mode, hooks=hooks)
    return bus


def context(attributes: dict[str, Any]) -> hw.RunContext:
    return hw.RunContext(envelope=hw.Envelope(attributes=attributes))


@pytest.mark.anyio
async def test_on_the_bus_outcomes_come_through(tmp_path: Path) -> None:
    bus = bus_with("closed", tmp_path)
    ctx = context({"user": "bob"})
    assert (
        await bus.emit("tool.before", call("refund", amount=500), ctx)
    ).outcome.kind == "suspend"
    assert (await bus.emit("tool.before", call("search"), ctx)).outcome == hw.Continue()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("event", "error"),
    [(call("refund", amount=1.5), "CedarRequestError"), (call("fragile"), "CedarEvaluationError")],
)
async def test_failures_block_when_closed_and_continue_when_open(
    tmp_path: Path, event: hw.ToolCallEvent, error: str
) -> None:
    closed = await bus_with("closed", tmp_path).emit("tool.before", event, context({"user": "b"}))
    assert isinstance(closed.outcome, hw.Block) and closed.outcome.code == "middleware_error"
    opened_ctx = context({"user": "b"})
    opened = await bus_with("open", tmp_path).emit("tool.before", event, opened_ctx)
    assert opened.outcome.kind == "continue"
    failures = [r for r in opened_ctx.trace if r.get("failure")]
    assert [(r["failure"], r["error"]) for r in failures] == [("exception", error)]


def test_the_exception_types_are_named_as_the_contract_says() -> None:
    assert CedarRequestError.__name__ == "CedarRequestError"
    assert CedarEvaluationError.__name__ == "CedarEvaluationError"


def test_the_schema_s_action_groups_apply_without_an_entity_file() -> None:
    schema = (
        'entity User; entity Agent; entity Tool;\naction "all";\n'
        'action "tool.before" in ["all"] '
        "appliesTo { principal: [User, Agent], resource: [Tool] };\n"
    )
    text = 'permit(principal, action in Action::"all", resource);'
    grouped = CedarPolicySet.compile(
        [PolicySource("p", text)], schema=PolicySource("s.cedarschema", schema)
    )
    assert grouped.decide("tool.before", call("t"), {}) == hw.Continue()
    ungrouped = CedarPolicySet.compile([PolicySource("p", text)])
    assert ungrouped.decide("tool.before", call("t"), {}).kind == "block"
