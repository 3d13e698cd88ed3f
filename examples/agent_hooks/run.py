"""AGENT-HOOKS-0.1 and harnessweaver, both ways, offline (docs/interop-agent-hooks.md).

1. A refund policy written for the AGENT-HOOKS contract (``agent_hooks.Verdict``) as
   harnessweaver middleware: its liftable deny suspends the run for a harnessweaver decision.
2. The same policy in an AGENT-HOOKS host run by harnessweaver (``AgentHooksHost``), whose
   approval resolver lifts the deny in place, with that contract's records.
3. The other way round: ``harness.yaml`` loaded by harnessweaver, as one interceptor of an
   AGENT-HOOKS host (the SDK's own ``InterceptionEmitter``).

``pip install '.[agent-hooks]'`` (from a clone), then ``python examples/agent_hooks/run.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import anyio
from agent_hooks import (
    ALLOW,
    AgentContextBuilder,
    ApprovalOutcome,
    ApprovalResolution,
    InterceptionEmitter,
    Interceptor,
    Transform,
    Verdict,
)
from agent_hooks import Decision as Verdicts

import harnessweaver as hw
from harnessweaver.interop.agent_hooks import (
    AgentHooksHost,
    BusInterceptor,
    interceptor_middleware,
)

S = hw.ScriptedProvider


class RefundPolicy:
    """An AGENT-HOOKS interceptor: refunds over 1000 need approval, over 500 are capped at
    500, and every refund gets a warning."""

    def intercept(self, context: dict[str, Any], /) -> Verdict:
        if context["interception_point"] != "pre_tool_call":
            return ALLOW
        amount = context["tool_call"]["args"].get("amount", 0)
        if amount > 1000:
            return Verdict.escalate(reason="refunds:approval", message="over 1000 needs finance")
        if amount > 500:
            cap = Transform("$target.amount", 500)
            return Verdict(decision=Verdicts.TRANSFORM, transform=cap, message="capped at 500")
        return Verdict.warn(reason="refunds:audited", message="refunds are audited")


class Finance:
    """An AGENT-HOOKS approval resolver that approves, echoing the request's identity."""

    def resolve(self, request: Any) -> ApprovalResolution:
        print(f"  finance asked about {request.interception_point.value}: approved")
        return ApprovalResolution(ApprovalOutcome.APPROVE, request.context_identity, ALLOW)


ran: list[str] = []


@hw.tool
def refund(order: int, amount: float) -> str:
    """Refund an order."""
    ran.append(f"refund {order} {amount}")
    return f"refunded {amount} for order {order}"


def script() -> S:
    asked = ((1, 80), (2, 900), (3, 1500))
    calls = [S.tool_call("refund", {"order": n, "amount": a}) for n, a in asked]
    return S([*calls, "Refunds handled."])


async def main() -> None:
    print("1. the policy as harnessweaver middleware (a liftable deny suspends the run)")
    bus = hw.HookBus()
    bus.register(interceptor_middleware(RefundPolicy(), name="refund_policy", fail_mode="closed"))
    h = hw.Harness.from_bus(bus, task="refunds", provider=script(), tools=[refund])
    result = await h.run("refund orders 1, 2 and 3")
    print(f"  {result.exit_reason}: {result.pending.reason if result.pending else ''}")
    for warning in result.warnings:
        print(f"  warning from {warning.middleware} at {warning.hook}: {warning.text}")
    resumed = await h.resume(result.state, hw.Decision.approve(role="finance"))
    print(f"  resumed: {resumed.exit_reason}; tools that ran: {ran}")

    ran.clear()
    print("2. the policy in an AGENT-HOOKS host (its resolver lifts the deny in place)")
    host = AgentHooksHost([RefundPolicy()], names=["refund_policy"], approvals=Finance())
    bus = hw.HookBus()
    bus.register(host.middleware())
    h = hw.Harness.from_bus(bus, task="refunds", provider=script(), tools=[refund])
    result = await h.run("refund orders 1, 2 and 3")
    print(f"  {result.exit_reason}: {result.output}; tools that ran: {ran}")
    for record in host.records:
        if record["interception_point"] == "pre_tool_call":
            verdict = record["verdict"]["decision"]
            print(f"  record: pre_tool_call {verdict} (resolved by {record['resolved_by']})")

    print("3. harness.yaml as one interceptor of an AGENT-HOOKS host (the SDK's emitter)")
    org = hw.load(Path(__file__).with_name("harness.yaml"))
    # The SDK's Interceptor protocol spells only the synchronous form; its emitter awaits an
    # async interceptor such as BusInterceptor (AGENT-HOOKS-0.1 §6).
    interceptor = cast("Interceptor", BusInterceptor(org.bus))
    emitter = InterceptionEmitter().register(interceptor, name="org_harness")
    contexts = AgentContextBuilder(agent_id="desk", framework="another-host", session_id="s1")
    for name in ("refund", "run_shell"):
        asked = contexts.pre_tool_call(call_id=f"c-{name}", name=name, args={})
        emitted = await emitter.emit_unchecked(asked)
        answer = emitted.verdict
        print(f"  {name}: {answer.decision.value} {answer.reason or ''}".rstrip())


if __name__ == "__main__":
    anyio.run(main)
