"""The refund desk, end to end: load its harness, print the chains, send two refunds through.

    python examples/refunds/run.py

It works from any directory: it puts its own directory on sys.path (for the `app` package)
and finds the org profiles in ./org.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from app.middleware import AUDIT_LOG  # noqa: E402

import harnessweaver as hw  # noqa: E402

SATURDAY = "2026-11-28T10:00:00+00:00"
MONDAY = "2026-11-30T10:00:00+00:00"


def refund(amount_usd: int) -> hw.ToolCallEvent:
    arguments = {"order": 42, "amount_usd": amount_usd, "note": "card 4111 1111 1111 1111"}
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name="refund_payment"),
        call=hw.ToolCall(name="refund_payment", arguments=arguments),
    )


async def main() -> None:
    harness = hw.load(HERE / "harness.yaml", task="refund", org_profiles=[HERE / "org"])
    print(harness.render(), end="")
    for day, now, amount in (("Saturday", SATURDAY, 900), ("Monday", MONDAY, 120)):
        envelope = hw.Envelope(clock=hw.FixedClock(now), run_id=f"refund-{day.lower()}")
        ctx = hw.RunContext(envelope=envelope)
        result = await harness.bus.emit("tool.before", refund(amount), ctx)
        print(f"\n{day}, a refund of {amount} USD: {result.outcome.to_dict()}")
        print(f"arguments as the tool gets them: {result.event.call.arguments}")
        for record in ctx.trace:
            print({k: v for k, v in record.items() if k not in ("t_ns", "duration_ns")})
    print(f"\nthe audit tracer saw: {', '.join(AUDIT_LOG)}")


if __name__ == "__main__":
    anyio.run(main)
