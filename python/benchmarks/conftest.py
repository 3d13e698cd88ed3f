"""Shared machinery: one event loop per session, and batches measured by pytest-benchmark.

Run with ``nox -s bench`` (both cores, the criterion and Node benchmarks, one table), or one
core alone: ``HARNESSWEAVER_CORE=rust pytest python/benchmarks``. Every benchmark checks what
it ran, so a broken bus fails here instead of being timed; none asserts a time.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import pytest

import harnessweaver as hw

ROUNDS = 5 if os.environ.get("HARNESSWEAVER_BENCH_QUICK") else 21
"""Rounds per benchmark; the report takes the median round (the machine is noisy).
``nox -s bench -- --quick`` sets ``HARNESSWEAVER_BENCH_QUICK`` for a smoke run."""

# Emits or floor passes per round, by chain length: a round takes about 1-5 ms, long enough
# for the clock and short enough for many rounds.
PER = {0: 4000, 1: 4000, 8: 1000, 32: 300}
SUSPENDING = 10
"""Middleware that suspend cost an event-loop trip each: a tenth as many per round."""


@pytest.fixture(scope="session")
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as runner:
        yield runner


def pytest_report_header() -> str:
    return f"harnessweaver core: {hw.CORE}"


Batch = Callable[..., Coroutine[Any, Any, Any]]


def measure(
    benchmark: Any,
    runner: asyncio.Runner,
    batch: Batch,
    *,
    group: str,
    fresh_context: bool = False,
    rounds: int = ROUNDS,
    floor: Batch | None = None,
    **info: Any,
) -> Any:
    """Time ``batch`` (a coroutine function making ``info['per']`` operations) over ROUNDS
    rounds; ``fresh_context`` gives each round a new run context (its trace starts empty).

    With ``floor`` (the plain loop over the same middleware), each round first times one floor
    batch, untimed by pytest-benchmark, and the round's ratio is taken against that: the
    median of these paired ratios (``extra_info['paired_ratio']``) is what a shared machine's
    bursts of load, which move separately timed benchmarks apart, leave nearly untouched.
    """
    benchmark.group = group
    benchmark.extra_info.update(info, core=hw.CORE)
    floors: list[float] = []
    times: list[float] = []

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        if floor is not None:
            started = time.perf_counter()
            runner.run(floor())
            floors.append(time.perf_counter() - started)
        return ((hw.RunContext(),) if fresh_context else ()), {}

    def run(*args: Any) -> Any:
        started = time.perf_counter()
        result = runner.run(batch(*args))
        times.append(time.perf_counter() - started)
        return result

    warmup = min(2, rounds - 1)
    result = benchmark.pedantic(run, setup=setup, rounds=rounds, warmup_rounds=warmup, iterations=1)
    if floor is not None:
        pairs = list(zip(times, floors, strict=True))[warmup:]
        per = int(info["per"])
        benchmark.extra_info["paired_ratio"] = statistics.median(t / f for t, f in pairs)
        benchmark.extra_info["paired_floor_ns"] = statistics.median(f for _, f in pairs) * 1e9 / per
    return result
