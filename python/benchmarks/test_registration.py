"""Registration plans chains up front (sorted by band and order, direction applied), so the
cost of a bus is paid at registration: 1,000 middleware registered, then one more and its
removal on that bus (each a replan of the hook points it touches)."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import measure
from workloads import returns_none

import harnessweaver as hw

BANDS = ("baseline", "platform", "app", "task")
HOOKS = (["tool.before"], ["tool.before", "tool.after"], ["model.before"])


def declared(count: int, start: int = 0) -> list[Any]:
    """``count`` middleware spread over bands and hook points."""
    return [
        hw.middleware(hooks=HOOKS[i % 3], fail_mode="closed", band=BANDS[i % 4], timeout="2s")(
            returns_none(i)
        )
        for i in range(start, start + count)
    ]


def test_register_1000(benchmark: Any, runner: asyncio.Runner) -> None:
    middleware = declared(1000)

    async def batch() -> hw.HookBus:
        bus = hw.HookBus()
        for m in middleware:
            bus.register(m)
        return bus

    bus = measure(
        benchmark, runner, batch, group="registration", workload="register", n=1000, per=1000
    )
    chain = bus.chain("tool.before")
    assert len(chain) == 667  # two of every three declare tool.before
    assert [d.band for d in chain] == sorted((d.band for d in chain), key=BANDS.index)


def test_replan_at_1000(benchmark: Any, runner: asyncio.Runner) -> None:
    bus = hw.HookBus()
    for m in declared(1000):
        bus.register(m)
    (extra,) = declared(1, start=1000)

    async def batch() -> int:
        bus.register(extra)
        length = len(bus.chain("tool.before"))
        bus.unregister(extra.spec.name)
        return length

    length = measure(
        benchmark, runner, batch, group="registration", workload="replan", n=1000, per=1
    )
    assert length == 668 and len(bus.chain("tool.before")) == 667
