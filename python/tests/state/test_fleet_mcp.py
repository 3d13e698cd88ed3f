"""MCP proxy replicas on one shared store (issue 30: "several MCP proxy replicas").

- ``harnessweaver mcp`` as processes of its own (stdio, each fronting its own
  :mod:`mcp_servers` upstream) and an SDK server guarded in process by
  ``harnessweaver.mcp.guard`` (the proxy's gate), all on one harness spec whose ``state:``
  names a real Redis or PostgreSQL on loopback (``servers.py``; the URL through
  ``${HW_FLEET_URL}``) and an org rate limit: three SDK clients at once make twice the calls
  the limit allows. Exactly the limit reaches the tools, every other call is refused as the
  proxy reports a Block (an error result, code ``rate_limited``), and the store's counter
  holds exactly what went through.
- The store killed (SIGKILL) under a running proxy: its calls are refused (fail closed,
  ``state_unavailable``) and never reach the tool; the store started again, they go through.

Each test names its items with a fresh tag, so its keys are its own on the shared server.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from fleet import Fleet, Servers, totals
from inproc import upstream_server
from mcp import Client
from proxy_procs import proxy_stdio, records

import harnessweaver as hw
from harnessweaver.mcp import guard
from harnessweaver.mcp.convert import META_KEY

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")

BACKENDS = ("redis", "postgres")
CALLS = 8
"""Tool calls per client."""


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with contextlib.ExitStack() as stack:
        yield Servers(stack)


def spec_file(folder: Path, backend: str, fleet: Fleet, *, timeout: str = "5s") -> Path:
    """One org rate limit of ``fleet.rate`` calls per hour on ``backend`` (``${HW_FLEET_URL}``)."""
    spec = folder / "harness.yaml"
    spec.write_text(
        f"state: {{backend: {backend}, url: '${{HW_FLEET_URL}}', timeout: {timeout}}}\n"
        "middleware:\n"
        f"  - {{use: harnessweaver.rate_limit, id: {fleet.rate_item}, scope: org,"
        f" limit: {fleet.rate}, per: 1h}}\n",
        encoding="utf-8",
    )
    return spec


def decision(result: Any) -> tuple[bool, str | None]:
    """(the tool answered, the refusal's code): a Block is an error result whose ``_meta``
    carries the decision (docs/integrations/mcp.md, "What each outcome does")."""
    if not result.is_error:
        return True, None
    meta = result.meta or {}
    assert meta.get(META_KEY, {}).get("outcome") == "block", result
    return False, str(meta[META_KEY]["code"])


def ran(record: Path) -> list[str]:
    """The texts the upstream's ``echo`` got, in order (its ``--record`` file)."""
    return [r["arguments"]["text"] for r in records(record)] if record.exists() else []


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_proxy_processes_and_an_in_process_guard_share_one_rate_limit(
    backend: str, servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = servers.url(backend)
    monkeypatch.setenv("HW_FLEET_URL", url)  # the proxies' environment (child_env), and ours
    clients = 3  # two proxy processes, one in-process guard
    limit = clients * CALLS // 2  # half of the calls
    fleet = Fleet(budget=10, rate=limit)
    spec = spec_file(tmp_path, backend, fleet)
    logs = [tmp_path / f"upstream-{n}.jsonl" for n in range(2)]
    guarded: list[dict[str, Any]] = []  # the in-process upstream's calls
    ready: asyncio.Barrier

    async def calls(session: Any, number: int) -> list[tuple[bool, str | None]]:
        await ready.wait()  # every session is open (the proxies started): all call at once
        return [
            decision(await session.call_tool("echo", {"text": f"c{number}-{n}"}))
            for n in range(CALLS)
        ]

    async def proxied(number: int) -> list[tuple[bool, str | None]]:
        async with Client(proxy_stdio(spec, record=logs[number])) as session:
            return await calls(session, number)

    async def in_process(number: int) -> list[tuple[bool, str | None]]:
        harness = hw.load(spec)
        try:
            async with Client(guard(upstream_server(guarded), harness)) as session:
                return await calls(session, number)
        finally:
            await harness.aclose()

    async def together() -> list[list[tuple[bool, str | None]]]:
        nonlocal ready
        ready = asyncio.Barrier(clients)
        return list(await asyncio.gather(proxied(0), proxied(1), in_process(2)))

    answered = asyncio.run(together())
    codes = [code for client in answered for ok, code in client if not ok]
    # Exactly the limit went through, across the three; every other call was refused.
    assert sum(ok for client in answered for ok, _ in client) == limit, answered
    assert codes == ["rate_limited"] * (clients * CALLS - limit), answered
    # The tools ran exactly for the calls that went through, and for no refused one.
    ran_for = [ran(logs[0]), ran(logs[1]), [call["text"] for call in guarded]]
    for number, client in enumerate(answered):
        assert ran_for[number] == [f"c{number}-{n}" for n, (ok, _) in enumerate(client) if ok]
    # The store counted each call that went through once.
    _, counted = totals(backend, url, fleet)
    assert counted == limit


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_proxy_fails_closed_while_the_store_is_down_and_recovers(
    backend: str, servers: Servers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = servers.url(backend)
    server = servers.found[backend]
    monkeypatch.setenv("HW_FLEET_URL", url)
    fleet = Fleet(budget=10, rate=1000)
    spec = spec_file(tmp_path, backend, fleet, timeout="2s")
    log = tmp_path / "upstream.jsonl"

    async def session() -> list[tuple[bool, str | None]]:
        async with Client(proxy_stdio(spec, record=log)) as client:
            found = [decision(await client.call_tool("echo", {"text": "before"}))]
            await asyncio.to_thread(server.kill)
            try:
                found.append(decision(await client.call_tool("echo", {"text": "down"})))
            finally:
                await asyncio.to_thread(server.start)
            found.append(decision(await client.call_tool("echo", {"text": "after"})))
            return found

    assert asyncio.run(session()) == [(True, None), (False, "state_unavailable"), (True, None)]
    assert ran(log) == ["before", "after"]  # the refused call never reached the tool
    _, counted = totals(backend, url, fleet)
    assert counted == 2  # the append-only file / WAL kept the first charge
