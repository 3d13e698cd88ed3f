"""The matrix of issue 5: N middleware x timeouts x (complete at once | suspend once), each
next to its floor (a chain that suspends under 2 s timeouts next to the ``asyncio.timeout``
floor as well), and pluggy calling N sync hookimpls (the closest peer) in the same run."""

from __future__ import annotations

import asyncio
from typing import Any

import pluggy
import pytest
from conftest import PER, SUSPENDING, measure
from workloads import BODIES, ENV, EVENT, bus_of, chain_of, floor_loop, floor_timeout_loop

import harnessweaver as hw

NS = (0, 1, 8, 32)
TIMEOUTS = {"none": None, "2s": "2s"}


def per_round(n: int, kind: str) -> int:
    """Operations per round for a chain of ``n`` middleware of ``kind``."""
    return PER[n] // SUSPENDING if kind == "suspend" and n else PER[n]


@pytest.mark.parametrize("kind", list(BODIES))
@pytest.mark.parametrize("n", NS)
def test_floor(benchmark: Any, runner: asyncio.Runner, n: int, kind: str) -> None:
    fns = chain_of((BODIES[kind], n))
    per = per_round(n, kind)
    measure(
        benchmark,
        runner,
        lambda: floor_loop(fns, per),
        group=f"{kind} n={n}",
        workload="floor",
        kind=kind,
        n=n,
        per=per,
    )


@pytest.mark.parametrize("n", NS)
def test_floor_timeout(benchmark: Any, runner: asyncio.Runner, n: int) -> None:
    fns = chain_of((BODIES["suspend"], n))
    per = per_round(n, "suspend")
    measure(
        benchmark,
        runner,
        lambda: floor_timeout_loop(fns, per),
        group=f"suspend n={n}",
        workload="floor-timeout",
        kind="suspend",
        n=n,
        per=per,
    )


def floor_of(fns: list[Any], kind: str, timeouts: str, per: int) -> Any:
    """The floor a row is paired with: a chain that suspends under timeouts against awaiting
    each middleware under ``asyncio.timeout`` (what its timers replace), the rest against the
    plain loop."""
    if kind == "suspend" and TIMEOUTS[timeouts] is not None:
        return lambda: floor_timeout_loop(fns, per)
    return lambda: floor_loop(fns, per)


@pytest.mark.parametrize("timeouts", list(TIMEOUTS))
@pytest.mark.parametrize("kind", list(BODIES))
@pytest.mark.parametrize("n", NS)
def test_emit(benchmark: Any, runner: asyncio.Runner, n: int, kind: str, timeouts: str) -> None:
    fns = chain_of((BODIES[kind], n))
    bus = bus_of(fns, TIMEOUTS[timeouts])
    per = per_round(n, kind)

    async def batch(ctx: hw.RunContext) -> tuple[hw.HookResult, int]:
        result = None
        for _ in range(per):
            result = await bus.emit("tool.before", EVENT, ctx)
        assert result is not None
        return result, len(ctx.trace)

    result, records = measure(
        benchmark,
        runner,
        batch,
        group=f"{kind} n={n}",
        fresh_context=True,
        floor=floor_of(fns, kind, timeouts, per),
        workload="emit",
        kind=kind,
        n=n,
        timeouts=timeouts,
        per=per,
    )
    assert result.outcome == hw.Continue() and result.event is EVENT
    assert records == per * (n + 1)  # a record per middleware and one for the hook point


class Spec:
    @pluggy.HookspecMarker("bench")
    def on_event(self, event: Any, envelope: Any) -> None: ...


def plugin_manager(n: int) -> pluggy.PluginManager:
    manager = pluggy.PluginManager("bench")
    manager.add_hookspecs(Spec)
    impl = pluggy.HookimplMarker("bench")
    for i in range(n):

        class Plugin:
            @impl
            def on_event(self, event: Any, envelope: Any) -> None:
                return None

        manager.register(Plugin(), name=f"plugin{i}")
    return manager


@pytest.mark.parametrize("n", NS)
def test_pluggy(benchmark: Any, runner: asyncio.Runner, n: int) -> None:
    hook = plugin_manager(n).hook.on_event
    per = PER[n]

    async def batch() -> list[Any]:
        results: list[Any] = []
        for _ in range(per):
            results = hook(event=EVENT, envelope=ENV)
        return results

    results = measure(
        benchmark,
        runner,
        batch,
        group=f"complete n={n}",
        workload="pluggy",
        kind="complete",
        n=n,
        per=per,
    )
    assert results == []  # every hookimpl returned None
    assert len(hook.get_hookimpls()) == n
