"""AGENT-HOOKS interceptors as harnessweaver middleware, against the real SDK
(``agent-hooks-sdk``): interceptors of its ``Interceptor`` protocol answering with its own
``Verdict`` constructors, run by harnessweaver's run loop with a scripted provider. Every
context they are given validates against the SDK's context schema."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

agent_hooks = pytest.importorskip("agent_hooks")

import harnessweaver as hw  # noqa: E402
from harnessweaver.interop.agent_hooks import interceptor_middleware  # noqa: E402

pytestmark = pytest.mark.anyio

S = hw.ScriptedProvider


def _schemas() -> list[dict[str, Any]]:
    """The SDK's JSON Schemas (they refer to each other by ``$id``)."""
    folder = resources.files("agent_hooks").joinpath("schema")
    found = [folder.joinpath(name) for name in ("agent-context.schema.json",)]
    found += [f for f in folder.iterdir() if f.name.endswith(".schema.json")]
    found += [f for f in folder.joinpath("agent-context").iterdir() if f.name.endswith(".json")]
    return [json.loads(f.read_text(encoding="utf-8")) for f in found]


SCHEMAS = _schemas()
REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in SCHEMAS)
VALID = jsonschema.Draft202012Validator(SCHEMAS[0], registry=REGISTRY)


class Scripted:
    """An interceptor answering ``answers[point]`` (a verdict, or a function of the context),
    allow elsewhere; it keeps every context it was given."""

    def __init__(self, **answers: Any) -> None:
        self.answers = answers
        self.seen: list[dict[str, Any]] = []

    async def intercept(self, context: dict[str, Any], /) -> Any:
        self.seen.append(context)
        answer = self.answers.get(context["interception_point"], agent_hooks.ALLOW)
        return answer(context) if callable(answer) else answer


class Refunds:
    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

        @hw.tool
        def refund(order: int, amount: float) -> dict[str, object]:
            """Refund an order."""
            self.calls.append({"order": order, "amount": amount})
            return {"refunded": amount}

        self.tool = refund


def harness(interceptor: Any, refunds: Refunds, **declared: Any) -> hw.Harness:
    bus = hw.HookBus()
    bus.register(interceptor_middleware(interceptor, name="policy", fail_mode="closed", **declared))
    script = [S.tool_call("refund", {"order": 7, "amount": 250.0}), "refund made"]
    return hw.Harness.from_bus(bus, task="refunds", provider=S(script), tools=[refunds.tool])


def points(interceptor: Scripted) -> list[str]:
    return [context["interception_point"] for context in interceptor.seen]


async def test_the_eight_points_come_in_order_with_valid_contexts() -> None:
    policy, refunds = Scripted(), Refunds()
    assert isinstance(policy, agent_hooks.Interceptor)
    result = await harness(policy, refunds).run("refund order 7")
    assert (result.exit_reason, result.output) == ("completed", "refund made")
    assert points(policy) == [
        "agent_startup", "input", "pre_model_call", "post_model_call", "pre_tool_call",
        "post_tool_call", "pre_model_call", "post_model_call", "output", "agent_shutdown",
    ]  # fmt: skip
    for context in policy.seen:
        VALID.validate(context)
    # the schema is really applied: an empty call id is not valid
    assert not VALID.is_valid({**policy.seen[4], "tool_call": {"id": "", "name": "r", "args": {}}})
    assert [c["sequence"] for c in policy.seen] == sorted({c["sequence"] for c in policy.seen})
    assert {c["session"]["id"] for c in policy.seen} == {result.state.run_id}
    tool_call = policy.seen[4]
    assert tool_call["target"] == {"order": 7, "amount": 250.0} == tool_call["tool_call"]["args"]
    assert policy.seen[5]["tool_result"] == {"value": {"refunded": 250.0}, "is_error": False}
    assert policy.seen[8]["output"] == {"content": "refund made"}
    assert policy.seen[9]["summary"] == {"reason": "completed"}


async def test_a_deny_blocks_the_tool_with_its_reason_as_the_code() -> None:
    deny = agent_hooks.Verdict.deny(reason="policy:refund_limit", message="over the limit")
    policy, refunds = Scripted(pre_tool_call=deny), Refunds()
    result = await harness(policy, refunds).run("refund order 7")
    assert refunds.calls == []
    assert "post_tool_call" not in points(policy)
    blocked = [
        r for r in result.trace if r.get("middleware") == "policy" and r["outcome"] == "block"
    ]
    assert [(r["hook"], r["code"]) for r in blocked] == [("tool.before", "policy:refund_limit")]


async def test_a_transform_is_what_the_tool_runs_with() -> None:
    halve = agent_hooks.Verdict(
        decision=agent_hooks.Decision.TRANSFORM,
        transform=agent_hooks.Transform("$target.amount", 100),
    )
    policy, refunds = Scripted(pre_tool_call=halve), Refunds()
    result = await harness(policy, refunds).run("refund order 7")
    assert result.exit_reason == "completed"
    assert refunds.calls == [{"order": 7, "amount": 100}]
    assert policy.seen[5]["tool_call"]["args"] == {"order": 7, "amount": 100}


async def test_warnings_reach_the_result() -> None:
    warn = agent_hooks.Verdict.warn(reason="policy:large", message="a large refund")
    policy, refunds = Scripted(pre_tool_call=warn), Refunds()
    result = await harness(policy, refunds).run("refund order 7")
    assert refunds.calls == [{"order": 7, "amount": 250.0}]
    assert result.warnings == (
        hw.RunWarning(hook="tool.before", middleware="policy", text="policy:large: a large refund"),
    )


async def test_a_liftable_deny_suspends_and_an_approval_runs_the_tool() -> None:
    ask = agent_hooks.Verdict.escalate(reason="policy:approval", message="needs finance")
    asked: list[int] = []

    def once(context: dict[str, Any]) -> Any:
        asked.append(1)
        return ask if len(asked) == 1 else agent_hooks.ALLOW

    policy, refunds = Scripted(pre_tool_call=once), Refunds()
    h = harness(policy, refunds)
    first = await h.run("refund order 7")
    assert first.exit_reason == "suspended" and refunds.calls == []
    assert first.pending is not None and first.pending.code == "policy:approval"
    resumed = await h.resume(first.state, hw.Decision.approve(role="finance"))
    assert resumed.exit_reason == "completed"
    assert refunds.calls == [{"order": 7, "amount": 250.0}]


async def test_a_liftable_deny_at_output_withholds_it() -> None:
    """task.end has nothing left to suspend: the safer answer, a Block."""
    ask = agent_hooks.Verdict.escalate(reason="policy:review", message="review the answer")
    policy, refunds = Scripted(output=ask), Refunds()
    result = await harness(policy, refunds).run("refund order 7")
    assert result.output is None
    assert result.end_outcome == hw.Block("review the answer", code="policy:review")
    assert "agent_shutdown" not in points(policy)  # the first deny answers


@pytest.mark.parametrize(
    "answer",
    [
        lambda context: 1 / 0,  # raises
        {"decision": "transform"},  # a transform without its body
        "allow",  # not a verdict
        lambda context: agent_hooks.Verdict(  # a path outside $target
            decision=agent_hooks.Decision.TRANSFORM, transform=agent_hooks.Transform("$.x", 1)
        ),
    ],
    ids=["raises", "malformed", "not-a-verdict", "bad-path"],
)
async def test_a_failing_interceptor_fails_closed(answer: Any) -> None:
    policy, refunds = Scripted(pre_tool_call=answer), Refunds()
    result = await harness(policy, refunds).run("refund order 7")
    assert refunds.calls == []
    failed = [r for r in result.trace if r["kind"] == "failure"]
    assert [(r["hook"], r["middleware"], r["fail_mode"]) for r in failed] == [
        ("tool.before", "policy", "closed")
    ]


async def test_a_transform_at_startup_is_refused() -> None:
    rename = agent_hooks.Verdict(
        decision=agent_hooks.Decision.TRANSFORM, transform=agent_hooks.Transform("$target.x", 1)
    )
    policy, refunds = Scripted(agent_startup=rename), Refunds()
    result = await harness(policy, refunds).run("refund order 7")
    assert result.exit_reason == "blocked"
    assert [r["failure"] for r in result.trace if r["kind"] == "failure"] == ["exception"]


async def test_changing_its_context_changes_nothing() -> None:
    def scribble(context: dict[str, Any]) -> Any:
        context["tool_call"]["args"]["amount"] = 0
        context["target"].clear()
        return agent_hooks.ALLOW

    policy, refunds = Scripted(pre_tool_call=scribble), Refunds()
    await harness(policy, refunds).run("refund order 7")
    assert refunds.calls == [{"order": 7, "amount": 250.0}]


async def test_at_chooses_the_points_and_audit_is_evaluate_only() -> None:
    deny = agent_hooks.Verdict.deny(reason="policy:no", message="no")
    policy, refunds = Scripted(pre_tool_call=deny), Refunds()
    result = await harness(policy, refunds, at=["pre_tool_call"], mode="audit").run("refund")
    assert points(policy) == ["pre_tool_call"]
    assert refunds.calls == [{"order": 7, "amount": 250.0}]  # audited: it would have blocked
    record = next(r for r in result.trace if r.get("middleware") == "policy")
    assert (record["outcome"], record["audit"]) == ("block", True)


def test_unknown_points_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"unknown interception points \['pre_tool'\]"):
        interceptor_middleware(Scripted(), name="p", fail_mode="closed", at=["pre_tool"])
