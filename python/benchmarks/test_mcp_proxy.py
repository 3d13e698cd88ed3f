"""``harnessweaver mcp``: the latency a ``tools/call`` gains through the proxy (issue 29).

The same SDK ``Client`` call is made directly to an upstream server and through the proxy in
front of that same server, in the same rounds (each round times a batch of direct calls, then
one through the proxy: the machine's noise hits both). The proxy runs a spec of 8 pass-through
plugin middleware on ``tool.before`` and ``tool.after`` (2 s timeouts) with its trace on
(``--trace FILE``). Rows (docs/performance.md, "MCP proxy (issue 29)"):

- ``mcp-proxy stdio``: the proxy fronting the upstream over stdio (both started by the client).
- ``mcp-proxy http`` and ``http-legacy``: ``--upstream URL --listen 127.0.0.1:PORT`` in front of
  the upstream served by uvicorn, the client speaking 2026-07-28 (stateless, the SDK's default)
  and 2025-11-25 (``mode="legacy"``: a session).
- ``mcp-guard in-process``: ``harnessweaver.mcp.guard`` on an in-process server against a bare
  one, through the SDK's in-process client.

Each call's result is checked (the argument echoed back), and so is the trace: 8 ``tool.before``
records per call through the proxy. Per-call p50 and p99 of both sides go in ``extra_info``
(``p50_ms``, ``floor_p50_ms``...); the report shows them and the added latency. None is asserted.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROUNDS, measure
from mcp import Client
from mcp_procs import (
    MIDDLEWARE,
    UPSTREAM,
    Held,
    http_proxy,
    http_upstream,
    proxy_command,
    stdio_params,
    write_spec,
)
from mcp_upstream import make_server

PER = 40
"""Calls per batch (about 1-10 ms each): ROUNDS batches a side, p99 over ROUNDS x PER calls."""


def _percentiles(times: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``times`` (seconds) in milliseconds (nearest rank)."""
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)) - 1)]
    return statistics.median(ordered) * 1e3, p99 * 1e3


async def _calls(client: Client, count: int, times: list[float], numbers: Any) -> None:
    for _ in range(count):
        text = f"call {next(numbers)}"
        started = time.perf_counter()
        result = await client.call_tool("echo", {"text": text})
        times.append(time.perf_counter() - started)
        assert not result.is_error, result
        assert [c.text for c in result.content] == [text], result  # type: ignore[union-attr]


def _paired(
    benchmark: Any, runner: asyncio.Runner, direct: Client, through: Client, kind: str, **info: Any
) -> int:
    """Times ``through`` against ``direct``; returns how many calls went ``through``."""
    numbers = itertools.count()
    rounds: list[list[float]] = []
    floors: list[list[float]] = []

    async def batch() -> None:
        rounds.append([])
        await _calls(through, PER, rounds[-1], numbers)

    async def floor() -> None:
        floors.append([])
        await _calls(direct, PER, floors[-1], numbers)

    runner.run(floor())  # the first calls of a session (tool listing, caches) are not timed
    runner.run(batch())
    untimed = 1 + min(2, ROUNDS - 1)  # that one, then measure's warm-up rounds
    measure(
        benchmark,
        runner,
        batch,
        group="mcp-proxy",
        floor=floor,
        kind=kind,
        n=MIDDLEWARE,
        timeouts="2s",
        per=PER,
        **info,
    )
    timed = [t for batch_times in rounds[untimed:] for t in batch_times]
    timed_floors = [t for batch_times in floors[untimed:] for t in batch_times]
    (p50, p99), (floor_p50, floor_p99) = _percentiles(timed), _percentiles(timed_floors)
    benchmark.extra_info.update(
        p50_ms=p50, p99_ms=p99, floor_p50_ms=floor_p50, floor_p99_ms=floor_p99
    )
    return sum(len(times) for times in rounds)


def _check_trace(trace: Path, calls: int) -> None:
    """One ``tool.before`` and one ``tool.after`` record per middleware and call."""
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    for hook in ("tool.before", "tool.after"):
        ours = [
            r for r in records
            if r.get("hook") == hook and str(r.get("middleware", "")).startswith("pass")
        ]  # fmt: skip
        assert len(ours) == MIDDLEWARE * calls, (hook, len(ours), calls)
        assert {r["outcome"] for r in ours} == {"continue"}


def test_mcp_proxy_stdio(benchmark: Any, runner: asyncio.Runner, tmp_path: Path) -> None:
    spec, trace = write_spec(tmp_path), tmp_path / "trace.jsonl"
    upstream = [sys.executable, str(UPSTREAM), "stdio"]
    direct = Held(runner, stdio_params(upstream))
    through = Held(runner, stdio_params([*proxy_command(spec, trace), "--", *upstream]))
    try:
        calls = _paired(
            benchmark, runner, direct.client, through.client, "stdio", workload="mcp-proxy"
        )
    finally:
        through.close()
        direct.close()
    _check_trace(trace, calls)


@pytest.mark.parametrize(("mode", "kind"), [("auto", "http"), ("legacy", "http-legacy")])
def test_mcp_proxy_http(
    benchmark: Any, runner: asyncio.Runner, tmp_path: Path, mode: str, kind: str
) -> None:
    spec, trace = write_spec(tmp_path), tmp_path / "trace.jsonl"
    with http_upstream() as upstream, http_proxy(proxy_command(spec, trace), upstream) as (url, _):
        direct = Held(runner, upstream, mode=mode)
        through = Held(runner, url, mode=mode)
        try:
            calls = _paired(
                benchmark, runner, direct.client, through.client, kind, workload="mcp-proxy"
            )
        finally:
            through.close()
            direct.close()
    _check_trace(trace, calls)


def test_mcp_guard_in_process(benchmark: Any, runner: asyncio.Runner, tmp_path: Path) -> None:
    from harnessweaver.mcp import guard

    spec, trace = write_spec(tmp_path), tmp_path / "trace.jsonl"
    # An open stream, closed here once the calls are timed (a path would be closed when the
    # guard is collected).
    with trace.open("w", encoding="utf-8") as sink:
        guarded = guard(make_server(), spec, trace=sink)
        direct = Held(runner, make_server())
        through = Held(runner, guarded)
        try:
            calls = _paired(
                benchmark, runner, direct.client, through.client, "in-process", workload="mcp-guard"
            )
        finally:
            through.close()
            direct.close()
    _check_trace(trace, calls)
