"""p50 and p99 of the approvals book's calls (file, approve, claim) on memory and SQLite.

    PYTHONPATH=python python tools/bench_approvals.py [N]

Each of N rounds files a new record, approves it and claims it (docs/approvals.md). A figure
for the notes, not a test: this machine is shared, so compare the stores within one run.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from harnessweaver.approvals import Approvals
from harnessweaver.state import MemoryStore, Store
from harnessweaver.state.sqlite import SqliteStore


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _rounds(store: Store, n: int) -> dict[str, list[float]]:
    book = Approvals(store, spec="code")
    times: dict[str, list[float]] = {"file": [], "approve": [], "claim": []}
    for i in range(n):
        event = {"call": {"id": f"c{i}", "name": "refund", "arguments": {"order": i}}}
        a = time.perf_counter()
        record = await book.file(
            hook="tool.before", event=event, reason="bench", filed_by="bench", subject="run:b"
        )
        b = time.perf_counter()
        await book.approve(record.id)
        c = time.perf_counter()
        verdict = await book.claim(record.id, hook="tool.before", event=event, consumer=f"b{i}")
        d = time.perf_counter()
        assert verdict.kind == "approved"
        times["file"].append(b - a)
        times["approve"].append(c - b)
        times["claim"].append(d - c)
    return times


async def main(n: int) -> None:
    folder = Path(tempfile.mkdtemp())
    stores: list[tuple[str, Store]] = [
        ("memory", MemoryStore()),
        ("sqlite", SqliteStore(folder / "state.sqlite3")),
    ]
    for name, store in stores:
        try:
            times = await _rounds(store, n)
        finally:
            await store.close()
        shown = "  ".join(
            f"{call} p50 {statistics.median(xs) * 1e6:.0f} us"
            f" p99 {_quantile(xs, 0.99) * 1e6:.0f} us"
            for call, xs in times.items()
        )
        print(f"{name}: {shown}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
