"""Cedar policies in process (issue 33): the latency of one ``tool.before`` emit through a bus
with ``harnessweaver.cedar`` at 10, 100 and 1,000 generated policies, beside the same
decisions made by a hand-written Python middleware (the floor, ``cedar_workload.PythonPolicy``).

``cedar`` rows: each round emits ``PER`` calls through the Python bus (the paired floor),
then as many through the Cedar bus, the calls cycling through six decisions (allowed, over a
limit, a forbidden account, a forbidden tool, an unknown user: ``cedar_workload.events``).
Each emit is timed alone too: ``p50_ms``/``p99_ms`` of the Cedar emits beside
``floor_p50_ms``/``floor_p99_ms`` of the Python ones (the aim: <= 50 µs p99 at 100
policies, docs/policies.md "Performance"); the ratio is the median of the rounds' paired
ratios. Before timing, both buses must decide every call alike (outcome and code): a
broken policy set fails here instead of being timed.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path
from typing import Any

import pytest
from cedar_workload import COUNTS, cycle, events, specs
from conftest import ROUNDS, measure

import harnessweaver as hw

pytest.importorskip("cedarpy", reason="the Cedar rows need harnessweaver[cedar] (cedarpy)")

QUICK = bool(os.environ.get("HARNESSWEAVER_BENCH_QUICK"))
PER = {10: 300, 100: 200, 1000: 40}
"""Emits per round and bus: a round of the Cedar bus takes a few ms at each size."""


def _percentiles(times: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``times`` in milliseconds (nearest rank)."""
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)) - 1)]
    return statistics.median(ordered) * 1e3, p99 * 1e3


def _contexts(users: set[str]) -> dict[str, hw.RunContext]:
    """One run per user, its trace bounded: a long benchmark must not grow it."""
    return {
        user: hw.RunContext(hw.Envelope(attributes={"user": user}), hw.Trace(limit=1024))
        for user in users
    }


def _decision(result: hw.HookResult) -> tuple[str, str | None]:
    outcome = result.outcome
    return type(outcome).__name__, getattr(outcome, "code", None)


@pytest.mark.parametrize("n", COUNTS)
def test_cedar_per_evaluation(
    n: int, benchmark: Any, runner: asyncio.Runner, tmp_path: Path
) -> None:
    cedar_spec, python_spec = specs(n, tmp_path)
    cedar, python = hw.load(cedar_spec).bus, hw.load(python_spec).bus
    calls = events(n)
    contexts = _contexts({user for user, _ in calls})

    async def decisions(bus: hw.HookBus) -> list[tuple[str, str | None]]:
        found = []
        for user, event in calls:
            found.append(_decision(await bus.emit("tool.before", event, contexts[user])))
        return found

    expected = runner.run(decisions(python))
    assert runner.run(decisions(cedar)) == expected  # the same decisions, or nothing is timed
    assert {kind for kind, _ in expected} == {"Continue", "Block"}
    per = max(10, PER[n] // 4) if QUICK else PER[n]
    order = cycle(calls)
    timed: list[float] = []
    floors: list[float] = []

    async def emits(bus: hw.HookBus, times: list[float]) -> None:
        for _ in range(per):
            user, event = next(order)
            ctx = contexts[user]
            started = time.perf_counter()
            await bus.emit("tool.before", event, ctx)
            times.append(time.perf_counter() - started)

    async def batch() -> None:
        await emits(cedar, timed)

    async def floor() -> None:  # paired floor: the Python bus, the same calls, each round
        await emits(python, floors)

    runner.run(batch())  # warm-up: first-call caches on both sides
    runner.run(floor())
    timed.clear()
    floors.clear()
    measure(
        benchmark,
        runner,
        batch,
        group="cedar",
        floor=floor,
        rounds=ROUNDS,
        workload="cedar",
        kind=f"{n} policies",
        n=n,
        per=per,
    )
    (p50, p99), (floor_p50, floor_p99) = _percentiles(timed), _percentiles(floors)
    benchmark.extra_info.update(
        p50_ms=p50,
        p99_ms=p99,
        floor_p50_ms=floor_p50,
        floor_p99_ms=floor_p99,
        emits=len(timed),
    )
