"""Rolling out a policy: the same harness audited, then enforced.

    python examples/rollout/run.py

A refund of 350 USD goes through the harness twice: with the spec's `mode: audit` the new
cap only records the Block it would have made, and the refund goes ahead; with `--env prod`
(`mode: enforce`) the cap blocks it. The org's baseline guard is enforced in both.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harnessweaver as hw  # noqa: E402


def refund(amount_usd: int, account: str = "A-7") -> hw.ToolCallEvent:
    arguments = {"account": account, "amount_usd": amount_usd}
    return hw.ToolCallEvent(
        tool=hw.ToolSpec(name="refund_payment"),
        call=hw.ToolCall(name="refund_payment", arguments=arguments),
    )


async def rollout(env: str | None) -> tuple[hw.HookResult, list[dict[str, Any]]]:
    """One refund through the harness loaded with ``env``: its result and trace records."""
    harness = hw.load(HERE / "harness.yaml", env=env, org_profiles=[HERE / "org"])
    ctx = hw.RunContext(envelope=hw.Envelope(run_id=f"rollout-{env or 'audit'}"))
    result = await harness.bus.emit("tool.before", refund(350), ctx)
    records = [{k: v for k, v in r.items() if k not in ("t_ns", "duration_ns")} for r in ctx.trace]
    return result, records


async def main() -> None:
    for env in (None, "prod"):
        result, records = await rollout(env)
        print(f"env {env or 'none'}: a refund of 350 USD -> {result.outcome.to_dict()}")
        for record in records:
            if record["kind"] != "hook":
                audit = "  (audit: would have)" if record.get("audit") else ""
                print(f"  {record['middleware']}: {record['outcome']}{audit}")


if __name__ == "__main__":
    anyio.run(main)
