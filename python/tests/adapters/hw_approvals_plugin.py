"""The shop's approval rules, as a spec's local plugin (``plugins: {local: [...]}``), for the
durable-approvals tests of the adapters: the spec is loaded in several processes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

import harnessweaver as hw


class BigRefundsSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_auto_usd: float = Field(gt=0)


@hw.middleware(
    hooks=["tool.before"], fail_mode="closed", config=BigRefundsSettings, sample={"max_auto_usd": 1}
)
class BigRefunds:
    """Refunds over ``max_auto_usd`` wait for finance."""

    def __init__(self, config: BigRefundsSettings) -> None:
        self.max_auto_usd = config.max_auto_usd

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if float(event.call.arguments.get("amount_usd", 0)) <= self.max_auto_usd:
            return None
        return hw.Suspend(
            reason=f"refunds over {self.max_auto_usd:g} USD need approval",
            approver_role="finance",
            code="refund_approval",
        )


@hw.middleware(hooks=["tool.after"], fail_mode="closed")
async def look_at_result(event: hw.ToolResultEvent, env: hw.Envelope) -> hw.Outcome:
    """Every tool result waits for a person before the model reads it."""
    return hw.Suspend(reason="a person reads the result first", code="look")


plugin = hw.Plugin(namespace="shop", version="1.0.0", middleware=[BigRefunds, look_at_result])
