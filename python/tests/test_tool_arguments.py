"""``ToolCall.arguments_as``: typed tool arguments for middleware authors."""

from __future__ import annotations

import anyio
import pytest
from conftest import tool_call
from pydantic import BaseModel, ConfigDict, ValidationError

import harnessweaver as hw


class RefundArgs(BaseModel):
    amount_usd: float = 0
    tags: list[str] = []


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    amount_usd: float


def test_arguments_are_validated_into_the_model() -> None:
    event = tool_call(order=42, amount_usd=900, tags=["vip"])
    parsed = event.call.arguments_as(RefundArgs)
    assert (parsed.amount_usd, parsed.tags) == (900.0, ["vip"])
    parsed.tags.append("changed")  # a fresh object: the event is untouched (I18)
    assert event.call.arguments["tags"] == ["vip"]
    assert tool_call().call.arguments_as(RefundArgs).amount_usd == 0


@pytest.mark.parametrize(
    ("arguments", "model"),
    [({"amount_usd": "lots"}, RefundArgs), ({"tags": "vip"}, RefundArgs), ({"x": 1}, Strict)],
)
def test_arguments_that_do_not_fit_raise(arguments: dict[str, object], model: type) -> None:
    with pytest.raises(ValidationError):
        tool_call(**arguments).call.arguments_as(model)


def test_a_closed_middleware_that_cannot_read_the_arguments_blocks() -> None:
    @hw.middleware(hooks=["tool.before"], fail_mode="closed")
    async def cap(event: hw.ToolCallEvent, env: hw.Envelope) -> hw.Outcome | None:
        if event.call.arguments_as(RefundArgs).amount_usd > 500:
            return hw.Block("over the cap", code="cap")
        return None

    bus = hw.HookBus()
    bus.register(cap)
    ctx = hw.RunContext()

    async def emit(event: hw.ToolCallEvent) -> hw.HookResult:
        return await bus.emit("tool.before", event, ctx)

    assert anyio.run(emit, tool_call(amount_usd=100)).outcome == hw.Continue()
    blocked = anyio.run(emit, tool_call(amount_usd="a lot")).outcome
    assert isinstance(blocked, hw.Block) and blocked.code == "middleware_error"
    (failure,) = [r for r in ctx.trace if r["kind"] == "failure"]
    assert (failure["failure"], failure["error"]) == ("exception", "ValidationError")
