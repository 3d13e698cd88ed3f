"""The refund desk's policies as the ``desk`` plugin: a new, stricter refund cap the team is
rolling out, and the org's frozen-account guard."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

import harnessweaver as hw


class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_usd: float


@hw.middleware(hooks=["tool.before"], fail_mode="closed", config=CapSettings)
class RefundCap:
    """Blocks a refund above ``max_usd``: the new policy."""

    def __init__(self, config: CapSettings) -> None:
        self.max_usd = config.max_usd

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        amount = event.call.arguments.get("amount_usd", 0)
        if isinstance(amount, int | float) and amount > self.max_usd:
            return hw.Block(reason=f"refunds above {self.max_usd:g} USD", code="refund_cap")
        return None


@hw.middleware(hooks=["tool.before"], fail_mode="closed")
async def frozen_accounts(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    """Blocks any call on a frozen account: the org's guarantee, always enforced."""
    if event.call.arguments.get("account") == "A-13":
        return hw.Block(reason="account A-13 is frozen", code="frozen")
    return None


plugin = hw.Plugin(namespace="desk", version="1.0.0", middleware=[RefundCap, frozen_accounts])
