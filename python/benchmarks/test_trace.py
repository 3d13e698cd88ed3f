"""The trace holds compact records and becomes dicts or JSON only when read: its memory per
record, and a 1,000,000-record trace written as JSON Lines and read back (the Rust core; the
pure-Python core, a reference, does a tenth of it)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from conftest import measure
from workloads import EVENT, bus_of, chain_of, returns_none

import harnessweaver as hw

RECORDS = 1_000_000 if hw.CORE == "rust" else 100_000


@pytest.fixture(scope="module")
def big_trace() -> hw.Trace:
    """RECORDS records made by real emits (9 per emit), then copied up by JSON Lines."""
    bus = bus_of(chain_of((returns_none, 8)), "2s")
    ctx = hw.RunContext()

    async def emits() -> None:
        for _ in range(1000):
            await bus.emit("tool.before", EVENT, ctx)

    asyncio.run(emits())
    lines = ctx.trace.to_jsonl().splitlines(keepends=True)
    copies = -(-RECORDS // len(lines))
    return hw.Trace.from_jsonl("".join((lines * copies)[:RECORDS]))


def test_trace_round_trip(benchmark: Any, runner: asyncio.Runner, big_trace: hw.Trace) -> None:
    async def batch() -> hw.Trace:
        return hw.Trace.from_jsonl(big_trace.to_jsonl())

    back = measure(
        benchmark,
        runner,
        batch,
        group="trace",
        rounds=3,  # seconds each, and steady
        workload="trace-round-trip",
        n=RECORDS,
        per=RECORDS,
        bytes_per_record=(sys.getsizeof(big_trace) - sys.getsizeof(hw.Trace())) / RECORDS,
    )
    assert len(back) == len(big_trace) == RECORDS
    assert back[0] == big_trace[0] and back[-1] == big_trace[-1]
    assert back.to_jsonl() == big_trace.to_jsonl()
