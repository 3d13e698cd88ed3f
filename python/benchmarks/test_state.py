"""Guard state a fleet shares (issue 30): what a guarded call costs on each backend, and a
large run that must not overspend.

``state`` rows: one guarded model call is ``model.before`` then ``model.after`` through a bus
with an org-scoped ``budget_guard`` (``reserve_tokens``: reserve at ``model.before``, commit
and release at ``model.after``) and an org-scoped ``rate_limit`` (reserve and commit at
``model.before``), attached to a store of each backend (``memory``, ``sqlite``, ``redis``,
``postgres``; the servers real, on loopback: python/tests/state/servers.py). The floor, timed
in the same rounds, call by call in turn, is the same two emits on a bus with no middleware.
Each call is timed alone too: ``p50_ms``/``p99_ms`` of the guarded calls beside
``floor_p50_ms``/``floor_p99_ms``; their difference is the latency the state adds (the aim:
<= 1 ms at p99 with Redis, docs/performance.md "Fleet state (issue 30)").

Redis runs as servers.py starts it (append-only file, ``appendfsync always``: every charge on
disk before the answer) and again with ``appendfsync everysec`` (Redis's default), both rows.

``state-fleet`` row: 64 workers x 4 processes x 1,000 runs (``HARNESSWEAVER_BENCH_QUICK``: 16 x
2 x 50) on Redis, each run one guarded model call through ``fleet_worker.py``; the budget is
half of what they ask for: checked not overspent and every charge counted. The rate limit's
window is 2 s (a window of an hour would hold every call as a live hold, which the store sums
on each call: docs/state.md, "Running at scale").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROUNDS

import harnessweaver as hw

STATE_TESTS = Path(__file__).resolve().parents[1] / "tests" / "state"
sys.path.insert(0, str(STATE_TESTS))

QUICK = bool(os.environ.get("HARNESSWEAVER_BENCH_QUICK"))
PER = 50 if QUICK else 200
"""Guarded calls (and floor calls) per round."""
FLEET = (16, 2, 50) if QUICK else (64, 4, 1000)
"""Workers per process, processes, runs per worker."""


def _percentiles(times: list[float]) -> tuple[float, float]:
    """p50 and p99 of ``times`` in milliseconds (nearest rank)."""
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered)) - 1)]
    return statistics.median(ordered) * 1e3, p99 * 1e3


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Any]]:
    found: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        from servers import postgres_server, redis_server

        found["stack"] = stack
        found["redis"] = redis_server
        found["postgres"] = postgres_server
        yield found


def _url(servers: dict[str, Any], backend: str) -> str:
    key = f"{backend}-server"
    if key not in servers:
        servers[key] = servers["stack"].enter_context(servers[backend]())
    return str(servers[key].url)


def _store(backend: str, servers: dict[str, Any], tmp: Path) -> Any:
    from harnessweaver.state import MemoryStore, SqliteStore

    if backend == "memory":
        return MemoryStore()
    if backend == "sqlite":
        return SqliteStore(tmp / "state.sqlite3")
    if backend.startswith("redis"):
        from harnessweaver.state.redis import RedisStore

        return RedisStore(_url(servers, "redis"))
    from harnessweaver.state.postgres import PostgresStore

    return PostgresStore(_url(servers, "postgres"))


def _guarded_bus(store: Any, tag: str) -> hw.HookBus:
    from harnessweaver.builtins import BudgetGuard, RateLimit
    from harnessweaver.builtins.budget import BudgetSettings
    from harnessweaver.builtins.rates import RateLimitSettings
    from harnessweaver.state import attach

    budget = BudgetGuard(
        BudgetSettings(max_tokens=10**15, reserve_tokens=10, scope="org", warn_at=None)
    )
    rate = RateLimit(RateLimitSettings(limit=10**6, per="1s", scope="org"))
    attach(budget, store, name=f"budget-{tag}", timeout=5.0)
    attach(rate, store, name=f"rate-{tag}", timeout=5.0)
    bus = hw.HookBus()
    bus.register(rate)
    bus.register(budget)
    return bus


_REQUEST = hw.ModelRequest(model="m", messages=(hw.Message(role="user", content="hello"),))
_RESPONSE = hw.ModelResponse(
    message=hw.Message(role="assistant", content="hi"),
    usage=hw.Usage(input_tokens=0, output_tokens=10),
)


async def _call(bus: hw.HookBus, number: int) -> bool:
    """One guarded model call; whether it went through."""
    ctx = hw.RunContext(hw.Envelope(run_id=f"bench-{number}"))
    before = await bus.emit("model.before", hw.ModelRequestEvent(step=1, request=_REQUEST), ctx)
    if isinstance(before.outcome, hw.Block):
        return False
    await bus.emit("model.after", hw.ModelResponseEvent(step=1, response=_RESPONSE), ctx)
    return True


async def _set_fsync(url: str, policy: str) -> None:
    import redis.asyncio as aioredis

    client = aioredis.from_url(url)
    try:
        await client.config_set("appendfsync", policy)
    finally:
        await client.aclose()


@pytest.mark.parametrize("backend", ["memory", "sqlite", "redis", "redis-everysec", "postgres"])
def test_state_per_guarded_call(
    backend: str, benchmark: Any, runner: asyncio.Runner, servers: dict[str, Any]
) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="hw-bench-state-"))
    store = _store(backend, servers, tmp)
    if backend.startswith("redis"):
        policy = "everysec" if backend == "redis-everysec" else "always"
        runner.run(_set_fsync(_url(servers, "redis"), policy))
    tag = f"{backend}-{os.getpid()}-{time.monotonic_ns()}"
    bus, plain = _guarded_bus(store, tag), hw.HookBus()
    numbers = iter(range(10**9))
    guarded: list[float] = []
    floors: list[float] = []
    passed: list[bool] = []

    async def batch() -> None:
        for _ in range(PER):
            number = next(numbers)
            started = time.perf_counter()
            await _call(plain, number)
            floors.append(time.perf_counter() - started)
            started = time.perf_counter()
            passed.append(await _call(bus, number))
            guarded.append(time.perf_counter() - started)

    async def floor() -> None:  # paired floor: the plain bus alone, PER calls
        for _ in range(PER):
            await _call(plain, next(numbers))

    runner.run(batch())  # warm-up: connections, scripts loaded, tables created
    guarded.clear()
    floors.clear()
    from conftest import measure

    measure(
        benchmark,
        runner,
        batch,
        group="state",
        floor=floor,
        rounds=ROUNDS,
        workload="state",
        kind=backend,
        n=2,
        per=PER,
    )
    assert passed and all(passed)
    tokens = runner.run(store.total(_token_key(tag)))
    assert tokens == 10 * len(passed)  # every guarded call charged once, none lost
    runner.run(store.close())
    (p50, p99), (floor_p50, floor_p99) = _percentiles(guarded), _percentiles(floors)
    benchmark.extra_info.update(
        p50_ms=p50,
        p99_ms=p99,
        floor_p50_ms=floor_p50,
        floor_p99_ms=floor_p99,
        added_p50_ms=p50 - floor_p50,
        added_p99_ms=p99 - floor_p99,
        calls=len(guarded),
    )


def _token_key(tag: str) -> str:
    from harnessweaver.state import state_key

    return state_key("app", f"budget-{tag}", "org", "-", "tokens")


def test_state_fleet_run(benchmark: Any, servers: dict[str, Any], tmp_path: Path) -> None:
    """64 workers x 4 processes x 1,000 runs on one Redis budget and rate limit."""
    from fleet import RESERVE, Fleet, Plan, run_fleet, totals

    workers, processes, runs = FLEET
    url = _url(servers, "redis")
    asyncio.run(_set_fsync(url, "everysec"))
    attempts = workers * processes * runs
    fleet = Fleet(budget=attempts // 2 * RESERVE, rate=attempts, per="2s")
    plan = Plan(python=(workers,) * processes, calls=runs, node=0, hooks=0, mode="bus")
    found: dict[str, Any] = {}

    def run() -> None:
        started = time.perf_counter()
        found["tally"] = run_fleet(fleet, plan, "redis", url, tmp_path)
        found["seconds"] = time.perf_counter() - started

    benchmark.group = "state-fleet"
    benchmark.pedantic(run, rounds=1, iterations=1)
    tally = found["tally"]
    tokens, calls = totals("redis", url, fleet)
    allowed = sum(tally.allowed)
    assert allowed <= fleet.budget and tokens == allowed  # no overspend, no lost charge
    assert len(tally.allowed) == attempts // 2
    assert "rate_limited" not in tally.codes and calls <= attempts  # the window's calls only
    benchmark.extra_info.update(
        workload="state-fleet",
        kind="redis",
        n=None,
        per=attempts,
        workers=workers,
        processes=processes,
        runs=runs,
        allowed=len(tally.allowed),
        refused=dict(tally.codes),
        seconds=found["seconds"],
        runs_per_second=attempts / found["seconds"],
        core=hw.CORE,
    )
