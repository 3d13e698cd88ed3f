"""Chain deadlines (I26) through the Python API: per hook point and per emit, under asyncio and
trio. The corpus (failures/chain-deadline.json) pins the outcomes and records; these tests pin
the API (``HookBus(deadlines=)``, ``emit(deadline=)``, ``bus.deadline``), the validation, and
that a suspended middleware is really interrupted at the chain deadline."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import sleeper, tool_call, untimed

import harnessweaver as hw

pytestmark = pytest.mark.anyio


def passing(name: str, log: list[str], *, fail_mode: str = "open") -> Any:
    async def body(event: Any, env: hw.Envelope) -> None:
        log.append(name)

    body.__name__ = name
    return hw.middleware(hooks=["tool.before"], fail_mode=fail_mode)(body)


async def test_a_suspended_middleware_is_cut_off_and_the_rest_skipped(ctx: hw.RunContext) -> None:
    bus = hw.HookBus(deadlines={"tool.before": "50ms"})
    log: list[str] = []
    bus.register(sleeper("slow", 30, log))
    bus.register(passing("logger", log))
    bus.register(passing("guard", log, fail_mode="closed"))
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert log == ["slow start", "slow cancelled"]
    assert result.outcome == hw.Block("middleware guard failed: skipped", code="chain_deadline")
    records = untimed(ctx.trace)
    assert [(r.get("middleware"), r.get("failure")) for r in records] == [
        ("slow", "deadline"),
        ("logger", "skipped"),
        ("guard", "skipped"),
        (None, None),
    ]


async def test_an_emits_own_deadline_of_zero_calls_nothing(
    bus: hw.HookBus, ctx: hw.RunContext
) -> None:
    log: list[str] = []
    bus.register(passing("first", log))
    bus.register(passing("second", log))
    result = await bus.emit("tool.before", tool_call(), ctx, deadline=0)
    assert log == []
    assert result.outcome == hw.Continue()
    assert [r.get("failure") for r in untimed(ctx.trace)] == ["skipped", "skipped", None]


async def test_a_generous_deadline_changes_nothing(bus: hw.HookBus, ctx: hw.RunContext) -> None:
    log: list[str] = []
    bus.register(sleeper("quick", 0.001, log))
    result = await bus.emit("tool.before", tool_call(), ctx, deadline="30s")
    assert log == ["quick start", "quick done"]
    assert result.outcome == hw.Continue()
    assert untimed(ctx.trace)[0]["kind"] == "outcome"


async def test_the_earlier_deadline_applies(ctx: hw.RunContext) -> None:
    bus = hw.HookBus(deadlines={"tool.before": "30s"})
    log: list[str] = []
    bus.register(sleeper("slow", 30, log, fail_mode="closed"))
    result = await bus.emit("tool.before", tool_call(), ctx, deadline=0.05)
    assert result.outcome == hw.Block("middleware slow failed: deadline", code="chain_deadline")
    assert log == ["slow start", "slow cancelled"]


@pytest.mark.parametrize("bad", ["-1s", "soon", -0.5, True, [1], float("nan"), "\udcffs"])
async def test_a_bad_emit_deadline_is_an_error_and_nothing_runs(
    bus: hw.HookBus, ctx: hw.RunContext, bad: object
) -> None:
    log: list[str] = []
    bus.register(passing("guard", log))
    with pytest.raises(hw.EmitError) as caught:
        await bus.emit("tool.before", tool_call(), ctx, deadline=bad)  # type: ignore[arg-type]
    assert caught.value.kind == "invalid_deadline"
    assert caught.value.rule == "I26"
    assert "deadline of tool.before" in str(caught.value)
    assert log == [] and untimed(ctx.trace) == []


@pytest.mark.parametrize("bad", [0, "0s", "-1s", "2 s", False, None.__class__])
def test_a_bad_hook_point_deadline_is_a_registration_error(bad: object) -> None:
    with pytest.raises(hw.RegistrationError) as caught:
        hw.HookBus(deadlines={"model.after": bad})  # type: ignore[dict-item]
    assert caught.value.kind == "invalid_deadline"
    assert "deadline of model.after" in str(caught.value)


def test_a_deadline_for_an_unknown_hook_point_is_unknown_hook() -> None:
    with pytest.raises(hw.RegistrationError) as caught:
        hw.HookBus(deadlines={"tool.during": "1s"})
    assert caught.value.kind == "unknown_hook"


def test_the_bus_shows_its_deadlines() -> None:
    bus = hw.HookBus(deadlines={"tool.before": "1.5s", "model.before": 2})
    assert bus.deadline("tool.before") == 1.5
    assert bus.deadline("model.before") == 2.0
    assert bus.deadline("tool.after") is None
    with pytest.raises(hw.EmitError):
        bus.deadline("tool.during")
