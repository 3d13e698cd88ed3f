"""What registering costs (issue 13), counted rather than timed: a registration plans no
chain; the first emit (or ``chain``) of a hook point after a change plans that one chain,
and emits with nothing changed in between plan nothing. ``Registry._plan_builds`` counts the
chains a core has planned. Registering n middleware used to replan each one's hook points,
every one from all n: quadratic. The time figure is the benchmark's (``nox -s bench``)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import tool_call

import harnessweaver as hw

pytestmark = pytest.mark.anyio

BANDS = ("task", "platform", "baseline", "app")  # registration order against band order


def registered(bus: hw.HookBus, count: int, start: int = 0) -> None:
    for i in range(start, start + count):

        async def mw(event: Any, env: hw.Envelope) -> None:
            return None

        mw.__name__ = mw.__qualname__ = f"mw{i}"
        hooks = ["tool.before", "tool.after"] if i % 2 else ["model.before"]
        bus.register(hw.middleware(hooks=hooks, fail_mode="closed", band=BANDS[i % 4])(mw))


def builds(bus: hw.HookBus) -> int:
    count: int = bus._registry._plan_builds
    return count


async def test_registering_plans_no_chain_until_one_is_emitted(ctx: hw.RunContext) -> None:
    bus = hw.HookBus()
    registered(bus, 2000)
    assert builds(bus) == 0
    for _ in range(3):
        await bus.emit("tool.before", tool_call(), ctx)
    assert builds(bus) == 1  # planned by the first emit, walked by the other two
    chain = bus.chain("tool.after")
    assert len(chain) == 1000 and builds(bus) == 2
    outward = ("task", "app", "platform", "baseline")  # an outbound hook point: reversed
    assert [d.band for d in chain] == sorted((d.band for d in chain), key=outward.index)
    assert len(bus.chain("model.before")) == 1000 and builds(bus) == 3
    bus.chain("tool.after")
    assert bus._registry.has_timeouts("tool.after") is False
    assert builds(bus) == 3


async def test_each_change_costs_one_plan_of_each_hook_point_it_touches_when_emitted(
    ctx: hw.RunContext,
) -> None:
    bus = hw.HookBus()
    for step in range(50):
        registered(bus, 20, start=20 * step)  # ten of them on tool.before
        await bus.emit("tool.before", tool_call(), ctx)
        await bus.emit("tool.before", tool_call(), ctx)
    assert builds(bus) == 50
    bus.unregister("mw1")  # tool.before and tool.after
    bus.unregister("mw0")  # model.before: not emitted, so not planned
    result = await bus.emit("tool.before", tool_call(), ctx)
    assert result.outcome == hw.Continue()
    assert builds(bus) == 51
    assert len(bus.chain("tool.before")) == 499 and builds(bus) == 51
