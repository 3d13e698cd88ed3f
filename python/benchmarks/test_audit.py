"""Audit mode (I25): 8 middleware on tool.before, every one audited and answering a Block
(a policy being rolled out that would block), next to the floor of awaiting the 8 by hand.
All 8 run (an audited Block stops nothing) and each leaves its record; what the bus must
show is that recording what they would have done costs about what recording an answer does."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import PER, measure
from workloads import HOOK, blocks, chain_of, floor_loop, last_emit_records

import harnessweaver as hw

N = 8


def _bus() -> tuple[hw.HookBus, list[Any]]:
    fns = chain_of((blocks, N))
    bus = hw.HookBus()
    for fn in fns:
        declare = hw.middleware(hooks=[HOOK], fail_mode="closed", timeout="2s", mode="audit")
        bus.register(declare(fn))
    return bus, fns


def test_audited_floor(benchmark: Any, runner: asyncio.Runner) -> None:
    _, fns = _bus()
    per = PER[N]
    measure(
        benchmark,
        runner,
        lambda: floor_loop(fns, per),
        group="audited-8",
        workload="floor",
        kind="audited-8",
        n=N,
        per=per,
    )


def test_audited_emit(benchmark: Any, runner: asyncio.Runner) -> None:
    bus, fns = _bus()
    per = PER[N]
    records = measure(
        benchmark,
        runner,
        last_emit_records(bus, per),
        group="audited-8",
        fresh_context=True,
        floor=lambda: floor_loop(fns, per),
        workload="emit",
        kind="audited-8",
        n=N,
        timeouts="2s",
        per=per,
    )
    # All 8 ran and say what they would have done; the emit continued (I25), so a broken bus
    # is not timed.
    assert [(r.get("middleware"), r["outcome"], r.get("audit")) for r in records] == [
        *((fn.__name__, "block", True) for fn in fns),
        (None, "continue", None),
    ]
