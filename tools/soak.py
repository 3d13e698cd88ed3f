"""Soak: drive many emits through one run context and print resident memory as they go.

    HARNESSWEAVER_CORE=rust python tools/soak.py --emits 10000000 --sink jsonl
    HARNESSWEAVER_CORE=python python tools/soak.py --emits 1000000 --sink count

Issue 13: a service that keeps one context must not run out of memory. The trace hands its
records to a sink (JSON Lines to /dev/null, or a callback that counts them), or is drained
(`--sink drain`), or keeps its default limit (`--sink none`: the newest 2^20 records). Resident
memory (``/proc/self/statm``) is sampled every ``--every`` emits; a flat series is the result.
This is a benchmark to run by hand, not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from typing import Any

import harnessweaver as hw

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mib() -> float:
    """Resident memory now, in MiB (Linux)."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * PAGE / 2**20


def make_trace(kind: str) -> tuple[hw.Trace, list[int]]:
    counted = [0]
    if kind == "jsonl":
        return hw.Trace(sink=hw.JsonlSink(os.devnull)), counted
    if kind == "count":

        def count(records: list[dict[str, Any]]) -> None:
            counted[0] += len(records)

        return hw.Trace(sink=count), counted
    return hw.Trace(), counted


async def soak(emits: int, every: int, kind: str, middleware: int) -> int:
    bus = hw.HookBus()
    for i in range(middleware):

        async def noop(event: Any, env: hw.Envelope) -> None:
            return None

        bus.register(hw.middleware(name=f"noop_{i}", hooks=["tool.before"], fail_mode="open")(noop))
    trace, counted = make_trace(kind)
    ctx = hw.RunContext(trace=trace)
    event = hw.ToolCallEvent(
        tool=hw.ToolSpec(name="refund"), call=hw.ToolCall(name="refund", arguments={"amount": 1})
    )
    emit = bus.emit
    drained = 0
    start = time.perf_counter()
    print(f"core={hw.CORE} sink={kind} middleware={middleware} emits={emits:,}", flush=True)
    print(f"{'emits':>12} {'rss MiB':>9} {'held':>9} {'seconds':>8}", flush=True)
    print(f"{0:>12,} {rss_mib():>9.1f} {len(trace):>9,} {0:>8.1f}", flush=True)
    for done in range(every, emits + 1, every):
        for _ in range(every):
            await emit("tool.before", event, ctx)
        if kind == "drain":
            drained += len(trace.drain())
        seconds = time.perf_counter() - start
        print(f"{done:>12,} {rss_mib():>9.1f} {len(trace):>9,} {seconds:>8.1f}", flush=True)
    trace.close()
    handed = counted[0] + drained
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak rss {peak:.1f} MiB; dropped {trace.dropped:,}; counted/drained {handed:,}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--emits", type=int, default=10_000_000)
    parser.add_argument("--every", type=int, default=1_000_000)
    parser.add_argument("--sink", choices=["jsonl", "count", "drain", "none"], default="jsonl")
    parser.add_argument("--middleware", type=int, default=1)
    args = parser.parse_args(argv)
    return asyncio.run(soak(args.emits, args.every, args.sink, args.middleware))


if __name__ == "__main__":
    sys.exit(main())
