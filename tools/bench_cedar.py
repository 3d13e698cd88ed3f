"""p50 and p99 of one ``tool.before`` emit through ``harnessweaver.cedar`` at 10, 100 and 1,000
generated policies, beside the same decisions made by a hand-written Python middleware (the
floor), each loaded from a ``harness.yaml`` (``python/benchmarks/cedar_workload.py``).

    PYTHONPATH=python python tools/bench_cedar.py [N]

``N`` emits per bus and size (default 2000; a tenth at 1,000 policies), the calls cycling
through allowed, over-a-limit, forbidden and unknown-user requests, Cedar and Python emits
alternating; the Cedar p99 also in this thread's CPU time, which a shared machine's
descheduling does not inflate. Also prints the time to load each policy set. A figure
for the notes, not a test: this machine is shared, so read the ratios to the floor measured
in the same run. The issue's aim: <= 50 µs p99 at 100 policies.
"""

from __future__ import annotations

import asyncio
import importlib
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import harnessweaver as hw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python" / "benchmarks"))
# The benchmark's own workload module (python/benchmarks is pytest's folder, not a package):
# imported before a spec names it, so the Python floor's `plugins: {local: [cedar_workload]}`
# finds it loaded.
workload: Any = importlib.import_module("cedar_workload")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


Times = tuple[list[float], list[float], list[float], float]


async def _times(n: int, folder: Path, rounds: int) -> Times:
    """Per-emit seconds of the Cedar bus (wall clock, then this thread's CPU time: what is left
    when the process was descheduled) and of the Python bus, and the time a load of the Cedar
    spec takes (the whole spec: files read, policies parsed, entities)."""
    cedar_spec, python_spec = workload.specs(n, folder)
    hw.load(cedar_spec)  # the first load imports the engine: not the policies' cost
    started = time.perf_counter()
    cedar = hw.load(cedar_spec).bus
    loaded = time.perf_counter() - started
    python = hw.load(python_spec).bus
    calls = workload.events(n)
    contexts = {
        user: hw.RunContext(hw.Envelope(attributes={"user": user}), hw.Trace(limit=1024))
        for user, _ in calls
    }
    for user, event in calls:  # the same decisions, or nothing is timed
        ctx = contexts[user]
        a = (await cedar.emit("tool.before", event, ctx)).outcome
        b = (await python.emit("tool.before", event, ctx)).outcome
        same = type(a) is type(b) and getattr(a, "code", None) == getattr(b, "code", None)
        if not same:
            raise SystemExit(f"{n} policies: Cedar decided {a!r}, Python {b!r}")
    timed: list[float] = []
    cpu: list[float] = []
    floor: list[float] = []
    for index in range(rounds):
        user, event = calls[index % len(calls)]
        ctx = contexts[user]
        started, running = time.perf_counter(), time.thread_time()
        await cedar.emit("tool.before", event, ctx)
        timed.append(time.perf_counter() - started)
        cpu.append(time.thread_time() - running)
        started = time.perf_counter()
        await python.emit("tool.before", event, ctx)
        floor.append(time.perf_counter() - started)
    return timed, cpu, floor, loaded


async def main(rounds: int) -> None:
    print(f"harnessweaver.cedar, one tool.before emit  [{hw.CORE} core]")
    print(
        "policies  load      cedar p50   cedar p99   (cpu p99)   python p50  python p99  ratio p50"
    )
    with tempfile.TemporaryDirectory(prefix="hw-bench-cedar-") as name:
        for n in workload.COUNTS:
            count = rounds if n < 1000 else max(50, rounds // 10)
            xs, cpu, fs, loaded = await _times(n, Path(name) / str(n), count)
            p50, f50 = statistics.median(xs), statistics.median(fs)
            print(
                f"{n:>8}  {loaded * 1e3:6.1f} ms  {p50 * 1e6:7.1f} us  "
                f"{_quantile(xs, 0.99) * 1e6:7.1f} us  ({_quantile(cpu, 0.99) * 1e6:7.1f} us)  "
                f"{f50 * 1e6:7.1f} us  "
                f"{_quantile(fs, 0.99) * 1e6:7.1f} us  {p50 / f50:6.2f}x"
            )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
