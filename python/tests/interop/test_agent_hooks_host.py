"""harnessweaver as an AGENT-HOOKS host, past what the kit checks: the host among other
harnessweaver middleware, a liftable deny suspending the run for a harnessweaver decision,
evaluate-only as audit mode, and records that are valid and bounded."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

agent_hooks = pytest.importorskip("agent_hooks")

import harnessweaver as hw  # noqa: E402
from harnessweaver.interop.agent_hooks import AgentHooksHost  # noqa: E402

pytestmark = pytest.mark.anyio

S = hw.ScriptedProvider


def _record_validator() -> jsonschema.Draft202012Validator:
    folder = resources.files("agent_hooks").joinpath("schema")
    schemas = [json.loads(f.read_text()) for f in folder.iterdir() if f.name.endswith(".json")]
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)
    record = next(s for s in schemas if s["$id"].endswith("interception-record.schema.json"))
    return jsonschema.Draft202012Validator(record, registry=registry)


RECORD = _record_validator()


class Answering:
    def __init__(self, **answers: Any) -> None:
        self.answers = answers

    def intercept(self, context: dict[str, Any], /) -> Any:  # a sync interceptor
        answer = self.answers.get(context["interception_point"], agent_hooks.ALLOW)
        return answer() if callable(answer) else answer


def run(*middleware: Any, tools: list[Any] | None = None) -> hw.Harness:
    bus = hw.HookBus()
    for item in middleware:
        bus.register(item)
    script = [S.tool_call("refund", {"order": 7}), "done"]
    return hw.Harness.from_bus(bus, task="t", provider=S(script), tools=tools or [])


@hw.tool
def refund(order: int) -> str:
    """Refund an order."""
    return f"refunded {order}"


async def test_a_liftable_deny_suspends_for_a_harnessweaver_decision() -> None:
    asked = iter([agent_hooks.Verdict.escalate(reason="ah:approve", message="needs finance")])
    policy = Answering(pre_tool_call=lambda: next(asked, agent_hooks.ALLOW))
    host = AgentHooksHost([policy], names=["finance"])
    h = run(host.middleware(), tools=[refund])
    first = await h.run("refund 7")
    assert first.exit_reason == "suspended"
    assert first.pending is not None and first.pending.code == "ah:approve"
    resumed = await h.resume(first.state, hw.Decision.approve(role="finance"))
    assert (resumed.exit_reason, resumed.output) == ("completed", "done")
    assert "refunded 7" in [m.content for m in resumed.state.messages if m.role == "tool"]
    # approved as is, the call is not put to the interceptors again (I23): one record
    tool_records = [r for r in host.records if r["interception_point"] == "pre_tool_call"]
    assert [r["verdict"]["decision"] for r in tool_records] == ["deny"]
    assert tool_records[0]["verdicts"] == [
        {"index": 0, "decision": "deny", "reason": "ah:approve", "name": "finance"}
    ]
    for record in host.records:
        RECORD.validate(record)


async def test_the_host_sits_in_its_band_among_harnessweaver_middleware() -> None:
    """A baseline block comes first: the host is never asked about that tool call."""

    @hw.middleware(hooks=["tool.before"], fail_mode="closed", band="baseline")
    async def org_policy(event: Any, env: hw.Envelope) -> hw.Outcome:
        return hw.Block("not today", code="org")

    host = AgentHooksHost([Answering()])
    result = await run(org_policy, host.middleware(), tools=[refund]).run("refund 7")
    assert result.exit_reason == "completed"
    assert "pre_tool_call" not in [r["interception_point"] for r in host.records]
    assert "post_tool_call" not in [r["interception_point"] for r in host.records]


async def test_evaluate_only_records_the_deny_and_acts_on_nothing() -> None:
    deny = agent_hooks.Verdict.deny(reason="ah:no", message="no")
    host = AgentHooksHost([Answering(pre_tool_call=deny)], mode="evaluate_only")
    result = await run(host.middleware(), tools=[refund]).run("refund 7")
    assert result.exit_reason == "completed"
    assert "refunded 7" in [m.content for m in result.state.messages if m.role == "tool"]
    denied = [r for r in host.records if r["verdict"]["decision"] == "deny"]
    assert [(r["interception_point"], r["mode"]) for r in denied] == [
        ("pre_tool_call", "evaluate_only")
    ]
    audited = [r for r in result.trace if r.get("middleware") == "agent_hooks"]
    assert {r["audit"] for r in audited} == {True}


async def test_records_are_bounded() -> None:
    host = AgentHooksHost([Answering()], max_records=3)
    await run(host.middleware(), tools=[refund]).run("refund 7")
    assert [r["interception_point"] for r in host.records] == [
        "post_model_call",
        "output",
        "agent_shutdown",
    ]
    sequences = [r["sequence"] for r in host.records]
    assert sequences == sorted(sequences) and sequences[0] > 3


async def test_a_failing_interceptor_is_the_contracts_deny_not_a_bus_failure() -> None:
    def boom() -> Any:
        raise KeyError("sk-secret-1")

    host = AgentHooksHost([Answering(pre_tool_call=boom)])
    result = await run(host.middleware(), tools=[refund]).run("refund 7")
    record = next(r for r in host.records if r["interception_point"] == "pre_tool_call")
    assert record["verdict"] == {
        "decision": "deny",
        "reason": "host_error:interceptor_failed",
        "message": "KeyError",
    }
    assert record["decided_by"] == 0
    assert not [r for r in result.trace if r["kind"] == "failure"]
    assert "sk-secret-1" not in json.dumps(list(host.records)) + result.trace.to_jsonl()


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="mode 'audit'"):
        AgentHooksHost([], mode="audit")
