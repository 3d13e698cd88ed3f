"""A harnessweaver bus as one AGENT-HOOKS interceptor of another host, tested with the SDK's
own reference emitter (``agent_hooks.InterceptionEmitter``, which Microsoft Agent
Framework's AGENT-HOOKS support builds on): contexts built by the SDK's
``AgentContextBuilder``, the bus's outcomes as verdicts, records by the SDK."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

agent_hooks = pytest.importorskip("agent_hooks")

import harnessweaver as hw  # noqa: E402
from harnessweaver.interop.agent_hooks import BusInterceptor  # noqa: E402

seen_tasks: list[tuple[str, Any]] = []


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def refund_rules(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    amount = event.call.arguments.get("amount", 0)
    if amount > 1000:
        return hw.Suspend("over 1000 needs finance", approver_role="finance", code="approval")
    if amount > 500:
        return hw.Continue(event.updated({"call.arguments.amount": 500}), warnings=["capped"])
    if event.tool.name == "shell":
        return hw.Block("no shell", code="no_shell")
    return None


@hw.middleware(hooks=["task.start", "task.end"], fail_mode="open")
async def sessions(event: Any, env: hw.Envelope) -> None:
    seen_tasks.append((env.run_id, type(event).__name__))


def emitter(**options: Any) -> tuple[Any, BusInterceptor]:
    bus = hw.HookBus()
    bus.register(refund_rules)
    bus.register(sessions)
    policy = BusInterceptor(bus, task="refunds")
    assert isinstance(policy, agent_hooks.Interceptor)
    return agent_hooks.InterceptionEmitter(**options).register(policy, name="harnessweaver"), policy


def builder(session: str = "s1") -> Any:
    return agent_hooks.AgentContextBuilder(agent_id="a", framework="maf", session_id=session)


def tool(b: Any, amount: float, name: str = "refund") -> dict[str, Any]:
    return b.pre_tool_call(call_id="c1", name=name, args={"order": 7, "amount": amount})


def emit(em: Any, context: dict[str, Any]) -> Any:
    return asyncio.run(em.emit_unchecked(context))


def test_the_buss_outcomes_become_verdicts() -> None:
    em, _ = emitter()
    b = builder()
    assert emit(em, tool(b, 80)).verdict.decision is agent_hooks.Decision.ALLOW
    denied = emit(em, tool(b, 80, name="shell")).verdict
    assert (denied.decision.value, denied.reason, denied.message) == (
        "deny",
        "no_shell",
        "no shell",
    )
    assert denied.approval is None
    lifted = emit(em, tool(b, 1500)).verdict  # no resolver on this host: the deny stands
    assert (lifted.decision.value, lifted.reason) == ("deny", "approval")


def test_a_modification_is_a_transform_the_host_applies() -> None:
    em, _ = emitter()
    context = tool(builder(), 900)
    record = emit(em, context)
    assert record.verdict.decision is agent_hooks.Decision.TRANSFORM
    assert [(w.reason, w.message) for w in record.verdict.warnings] == [("refund_rules", "capped")]
    assert context["tool_call"]["args"] == {"order": 7, "amount": 500}  # the host wrote it back
    assert record.input_identity != record.enforced_identity


def test_a_suspend_is_a_liftable_deny_for_the_hosts_resolver() -> None:
    class Finance:
        def resolve(self, request: Any) -> Any:
            ok = agent_hooks.ApprovalOutcome.APPROVE
            return agent_hooks.ApprovalResolution(ok, request.context_identity, agent_hooks.ALLOW)

    em, _ = emitter(resolver=Finance())
    record = emit(em, tool(builder(), 1500))
    assert (record.verdict.decision.value, record.resolved_by) == ("allow", "approval")


def test_sessions_get_run_contexts_of_their_own_and_end_at_shutdown() -> None:
    seen_tasks.clear()
    em, policy = emitter()
    one, two = builder("s1"), builder("s2")
    emit(em, one.agent_startup(tools_registered=["refund"]))
    emit(em, one.input(content="refund 7"))
    emit(em, two.input(content="refund 8"))
    emit(em, one.output(content="done"))
    emit(em, one.agent_shutdown(reason="completed"))  # task.end was emitted at output
    emit(em, two.agent_shutdown(reason="error"))  # no output: task.end now
    assert seen_tasks == [
        ("s1", "TaskStartEvent"),
        ("s2", "TaskStartEvent"),
        ("s1", "TaskEndEvent"),
        ("s2", "TaskEndEvent"),
    ]
    assert policy._sessions == {}


def test_a_spec_loaded_bus_runs_unchanged_as_an_interceptor(tmp_path: Path) -> None:
    (tmp_path / "harness.yaml").write_text(
        "middleware:\n  - {use: harnessweaver.tool_allowlist, id: tools, allow: [refund]}\n",
        encoding="utf-8",
    )
    harness = hw.load(tmp_path / "harness.yaml")
    em = agent_hooks.InterceptionEmitter().register(BusInterceptor(harness.bus), name="org")
    b = builder()
    assert emit(em, tool(b, 80)).verdict.decision is agent_hooks.Decision.ALLOW
    refused = emit(em, tool(b, 80, name="shell")).verdict
    assert refused.decision is agent_hooks.Decision.DENY and refused.reason


def test_what_the_contract_cannot_express_denies_and_sessions_are_bounded() -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def again(event: Any, env: hw.Envelope) -> hw.Outcome:
        return hw.Retry("try later", max_attempts=2)

    bus = hw.HookBus()
    bus.register(again)
    policy = BusInterceptor(bus, max_sessions=2)
    em = agent_hooks.InterceptionEmitter().register(policy)
    retried = emit(em, tool(builder("s1"), 80)).verdict  # no retry in the contract: a deny
    assert (retried.decision.value, retried.approval) == ("deny", None)
    for session in ("s2", "s3"):
        emit(em, tool(builder(session), 80))
    assert list(policy._sessions) == ["s2", "s3"]  # the oldest session's context let go
