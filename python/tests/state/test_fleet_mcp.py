"""MCP proxy replicas on one Redis rate limit (issue 30: "several MCP proxy replicas"): two
servers guarded by ``harnessweaver.mcp.guard`` (the proxy's gate, in process), each with its
own harness loaded from one spec whose ``state:`` is a real Redis on loopback, take tool calls
at once from two SDK clients. The org rate limit lets exactly its limit of calls reach the
tools, across both replicas, and the store counts each once."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("redis")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from fleet import Fleet, totals
from inproc import upstream_server
from mcp import Client

import harnessweaver as hw
from harnessweaver.mcp import guard

CALLS = 8
"""Tool calls per client."""


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    from servers import redis_server

    with redis_server() as server:
        yield server.url


def test_mcp_replicas_share_one_rate_limit(
    redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HW_FLEET_URL", redis_url)
    limit = CALLS  # half of the two clients' calls
    fleet = Fleet(budget=10, rate=limit)
    spec = tmp_path / "harness.yaml"
    spec.write_text(
        f"state: {{backend: redis, url: '${{HW_FLEET_URL}}', timeout: 5s}}\n"
        "middleware:\n"
        f"  - {{use: harnessweaver.rate_limit, id: {fleet.rate_item}, scope: org,"
        f" limit: {limit}, per: 1h}}\n"
    )
    calls: list[dict[str, Any]] = []

    async def client(number: int) -> list[bool]:
        harness = hw.load(spec)
        try:
            server = guard(upstream_server(calls), harness)
            async with Client(server) as session:  # type: ignore[arg-type]
                results = [
                    await session.call_tool("echo", {"text": f"r{number}-{n}"})
                    for n in range(CALLS)
                ]
            return [not result.is_error for result in results]
        finally:
            await harness.aclose()

    async def both() -> list[list[bool]]:
        return list(await asyncio.gather(client(0), client(1)))

    answered = asyncio.run(both())
    through = sum(sum(replica) for replica in answered)
    assert through == limit == len(calls)  # exactly the limit reached the tools
    assert all(any(replica) for replica in answered)  # both replicas served calls
    _, counted = totals("redis", redis_url, fleet)
    assert counted == limit
