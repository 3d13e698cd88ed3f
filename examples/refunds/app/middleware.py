"""The refund desk's middleware: the specification's refund guard, and the org's tracer."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

import harnessweaver as hw

ALL_HOOKS = [
    "task.start",
    "step.start",
    "model.before",
    "model.after",
    "tool.before",
    "tool.after",
    "step.end",
    "task.end",
]

AUDIT_LOG: list[str] = []
"""What the tracer saw: the type of every event, in order."""


@hw.middleware(hooks=["tool.before"], band="app", fail_mode="closed", timeout="2s")
async def no_weekend_refunds(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
    """Refunds asked for at the weekend wait for someone in finance."""
    if event.tool.name == "refund_payment" and env.clock.is_weekend():
        return hw.Suspend(reason="weekend refunds need approval", approver_role="finance")
    return None


class RefundArgs(BaseModel):
    """The refund tool's parameters, as the cap reads them."""

    amount_usd: float = 0


class CapSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    max_usd: float


@hw.middleware(hooks=["tool.before"], fail_mode="closed", config=CapSettings)
class RefundCap:
    def __init__(self, config: CapSettings) -> None:
        self.max_usd = config.max_usd

    async def __call__(self, event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.tool.name != "refund_payment":
            return None
        # Typed arguments: a call whose arguments do not fit raises, and fail-closed blocks it.
        if event.call.arguments_as(RefundArgs).amount_usd > self.max_usd:
            return hw.Block(reason="over the refund cap", code="refund_cap")
        return None


@hw.middleware(hooks=ALL_HOOKS, fail_mode="closed", timeout="250ms")
async def audit_tracer(event: hw.Event, env: hw.Envelope) -> None:
    """The org's tracer: notes every event. It lives in baseline, so it fails closed (R2)."""
    AUDIT_LOG.append(type(event).__name__)
    return None
