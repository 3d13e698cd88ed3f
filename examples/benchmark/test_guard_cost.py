"""What the refund guard costs on every tool call: the bus around it, against the same
middleware awaited in a plain loop (its floor), paired round by round.

    pytest examples/benchmark --benchmark-json=bench.json
"""

from __future__ import annotations

import harnessweaver as hw
from harnessweaver.testing import EmitBenchmarkFixture

RATIO_BUDGET = 20.0
"""The most the bus may add, as a multiple of the floor: measured on our machines (about 1.3
to 4, by core) with headroom for a noisy CI runner. A ratio, never a time: both sides of it
are timed in the same round, so a slower machine moves them together."""


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def refund_cap(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    """Refunds over 500 USD are blocked."""
    amount = event.call.arguments.get("amount_usd")
    if isinstance(amount, int | float) and amount > 500:
        return hw.Block(reason="over the refund cap", code="refund_cap")
    return None


@hw.middleware(hooks=["tool.before"], fail_mode="open")
async def audit(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
    """Notes every call (here: nothing, to keep the example short)."""


def refund(amount_usd: int) -> hw.ToolCallEvent:
    call = hw.ToolCall(name="refund_payment", arguments={"order": 42, "amount_usd": amount_usd})
    return hw.ToolCallEvent(step=1, tool=hw.ToolSpec(name="refund_payment"), call=call)


def test_refund_guard_cost(emit_benchmark: EmitBenchmarkFixture) -> None:
    bus = hw.HookBus()
    bus.register(refund_cap)
    bus.register(audit)

    result = emit_benchmark(bus, "tool.before", refund(120))

    # What ran: both middleware, and the refund went through (a timed Block would be a
    # different, shorter chain: check the outcome before reading the time).
    assert result.middleware == ("refund_cap", "audit")
    assert isinstance(result.last.outcome, hw.Continue)
    # The budget holds for timed runs: under --benchmark-disable the batch runs once, cold.
    if result.timed:
        assert result.ratio < RATIO_BUDGET, f"the bus costs {result.ratio:.1f}x its middleware"
