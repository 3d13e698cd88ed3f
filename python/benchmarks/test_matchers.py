"""A chain with matchers (I22): 32 middleware on tool.before, 4 of them for the tool called
(``refund_*``) and 28 for others (``web_*``), next to the floor of awaiting the 4 by hand.
What the bus must show is that the 28 that do not match cost next to nothing."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import PER, measure
from workloads import HOOK, chain_of, floor_loop, last_emit_records, returns_none

import harnessweaver as hw

MATCHING = 4
TOTAL = 32


def _bus() -> tuple[hw.HookBus, list[Any]]:
    fns = chain_of((returns_none, TOTAL))
    bus = hw.HookBus()
    matching = []
    for i, fn in enumerate(fns):
        # Every eighth matches: the 4 that run are spread over the chain, not bunched.
        hit = i % (TOTAL // MATCHING) == 0
        pattern = "refund_*" if hit else "web_*"
        declare = hw.middleware(
            hooks=[HOOK], fail_mode="closed", timeout="2s", match={"tool": pattern}
        )
        bus.register(declare(fn))
        if hit:
            matching.append(fn)
    return bus, matching


def test_matched_floor(benchmark: Any, runner: asyncio.Runner) -> None:
    _, matching = _bus()
    per = PER[8]
    measure(
        benchmark,
        runner,
        lambda: floor_loop(matching, per),
        group="matched-4-of-32",
        workload="floor",
        kind="matched-4-of-32",
        n=TOTAL,
        per=per,
    )


def test_matched_emit(benchmark: Any, runner: asyncio.Runner) -> None:
    bus, matching = _bus()
    per = PER[8]
    records = measure(
        benchmark,
        runner,
        last_emit_records(bus, per),
        group="matched-4-of-32",
        fresh_context=True,
        floor=lambda: floor_loop(matching, per),
        workload="emit",
        kind="matched-4-of-32",
        n=TOTAL,
        timeouts="2s",
        per=per,
    )
    # Only the 4 that match run and leave records (I22), so a broken bus is not timed.
    assert [r.get("middleware") for r in records] == [fn.__name__ for fn in matching] + [None]
