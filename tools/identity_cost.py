"""What content identity (I27) costs an emit, on the core selected by HARNESSWEAVER_CORE.

Times ``await bus.emit("tool.before", event, ctx)`` on a small tool call over N = 0 and 8
no-op middleware, on a bus without an identity scheme and on one with ``jcs-sha256``, in the
same process. Each figure is the median over rounds of the mean time per emit in a round;
the ratio on/off is what to quote (the machine is shared).

    HARNESSWEAVER_CORE=rust python tools/identity_cost.py
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

import harnessweaver as hw

EMITS = 20_000
ROUNDS = 5


def _bus(identity: Any, count: int) -> hw.HookBus:
    bus = hw.HookBus(identity=identity)
    for index in range(count):

        async def passes(event: hw.ToolCallEvent, env: hw.Envelope) -> None:
            return None

        bus.register(hw.middleware(hooks=["tool.before"], fail_mode="closed")(passes),
                     name=f"m{index}")  # fmt: skip
    return bus


async def _per_emit(bus: hw.HookBus, event: hw.ToolCallEvent) -> float:
    ctx = hw.RunContext(envelope=hw.Envelope(run_id="cost"), trace=hw.Trace(limit=1024))
    start = time.perf_counter()
    for _ in range(EMITS):
        await bus.emit("tool.before", event, ctx)
    return (time.perf_counter() - start) / EMITS * 1e6


async def main() -> None:
    call = hw.ToolCall(name="refund_payment", arguments={"order": 42, "amount_usd": 120})
    event = hw.ToolCallEvent(tool=hw.ToolSpec(name="refund_payment"), call=call)
    for count in (0, 8):
        off: list[float] = []
        on: list[float] = []
        for _ in range(ROUNDS):
            off.append(await _per_emit(_bus(None, count), event))
            on.append(await _per_emit(_bus("jcs-sha256", count), event))
        low, high = statistics.median(off), statistics.median(on)
        print(f"core {hw.CORE} N={count}: without {low:.2f} us, with {high:.2f} us per emit "
              f"(+{high - low:.2f} us, {high / low:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
