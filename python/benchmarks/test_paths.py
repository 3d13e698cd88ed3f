"""The other paths an emit takes, at N = 8 with 2 s timeouts, each next to its own floor: a
modified event handed along the chain, a Block in the middle, and a closed failure there."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from conftest import PER, measure
from workloads import (
    EVENT,
    blocks,
    bus_of,
    chain_of,
    floor_handing_on,
    floor_until_answer,
    modifies,
    raises,
    returns_none,
)

import harnessweaver as hw

PATHS = {
    # name: (the chain, the floor that does the same middleware work)
    "modified": (lambda: chain_of((modifies, 8)), floor_handing_on),
    "block-middle": (
        lambda: chain_of((returns_none, 4), (blocks, 1), (returns_none, 3)),
        floor_until_answer,
    ),
    "closed-failure": (
        lambda: chain_of((returns_none, 4), (raises, 1), (returns_none, 3)),
        floor_until_answer,
    ),
}


def check(path: str, result: hw.HookResult, records: list[dict[str, Any]]) -> None:
    """What each path must produce, so a broken bus fails instead of being timed."""
    if path == "modified":
        # The first modification is the combined outcome (ties go to the earlier answer); the
        # event is the last one.
        assert result.outcome.kind == "continue" and result.outcome.modified is not None
        assert sorted(result.event.call.arguments) == sorted(
            ["amount_usd", "card", *(f"seen{i}" for i in range(8))]
        )
        assert [r["modified"] for r in records] == [True] * 9
    elif path == "block-middle":
        assert result.outcome == hw.Block("over the refund cap", code="refund_cap")
        names = [r.get("middleware") for r in records]
        assert names == [*(f"none{i}" for i in range(4)), "block4", None]
    else:
        reason = "middleware raise4 failed: exception"
        assert result.outcome == hw.Block(reason, code="middleware_error")
        assert [r["kind"] for r in records] == ["outcome"] * 4 + ["failure", "hook"]
        assert records[4]["error"] == "ValueError"


@pytest.mark.parametrize("path", list(PATHS))
def test_path_floor(benchmark: Any, runner: asyncio.Runner, path: str) -> None:
    make, floor = PATHS[path]
    fns = make()
    per = PER[8]
    measure(
        benchmark,
        runner,
        lambda: floor(fns, per),
        group=f"{path} n=8",
        workload="floor",
        kind=path,
        n=8,
        per=per,
    )


@pytest.mark.parametrize("path", list(PATHS))
def test_path_emit(benchmark: Any, runner: asyncio.Runner, path: str) -> None:
    make: Callable[[], Any] = PATHS[path][0]
    bus = bus_of(make(), "2s")
    per = PER[8]

    async def batch(ctx: hw.RunContext) -> tuple[hw.HookResult, list[dict[str, Any]]]:
        result = None
        for _ in range(per):
            result = await bus.emit("tool.before", EVENT, ctx)
        assert result is not None
        # Only the last emit's records become dicts: reading them all would be timed too.
        trace = ctx.trace
        total = len(trace)
        return result, [trace[i] for i in range(total - total // per, total)]

    result, records = measure(
        benchmark,
        runner,
        batch,
        group=f"{path} n=8",
        fresh_context=True,
        workload="emit",
        kind=path,
        n=8,
        timeouts="2s",
        per=per,
    )
    check(path, result, records)
