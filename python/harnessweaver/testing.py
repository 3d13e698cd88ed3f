"""A pytest-benchmark fixture: what your own bus costs per emit, against its floor, in your suite.

Put ``pytest_plugins = ["harnessweaver.testing"]`` in the suite's root ``conftest.py``, and
ask for ``emit_benchmark`` in a plain (not async) test: ``result = emit_benchmark(bus,
"tool.before", event)``, typed ``emit_benchmark: EmitBenchmarkFixture``.

Each round times a batch of ``per`` floor passes (the same middleware awaited in a plain loop:
``harnessweaver.benchcmd.floor``) right before a batch of ``per`` emits on the bus, in a fresh
``hw.RunContext``; the ratio is the median over rounds of the emit batch's time over its
round's floor batch's: what ``harnessweaver bench`` and ``nox -s bench`` report too.
pytest-benchmark times the emit batches (``--benchmark-json`` has them, with the ratio in
``extra_info``). docs/testing.md shows it whole.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import pytest

from ._select import CORE
from .benchcmd.floor import Chain, chain_of, emit_pass, floor_pass, paired_ratio
from .bus import HookBus
from .context import RunContext
from .events import EVENT_TYPES, Event
from .outcomes import HookResult

if TYPE_CHECKING:
    from .spec.loader import Harness

__all__ = ["EmitBenchmark", "EmitBenchmarkFixture", "emit_benchmark"]

_WARMUP = 2
"""Rounds run before the timed ones (fewer when only one round is asked for), as ``nox -s
bench`` does: the first batches pay for caches and the allocator."""

_INSTALL = (
    "the emit_benchmark fixture times with pytest-benchmark's `benchmark` fixture, which is "
    "not available: pip install pytest-benchmark (or it is disabled: -p no:benchmark)"
)


@dataclass(frozen=True, slots=True)
class EmitBenchmark:
    """What one ``emit_benchmark(...)`` call measured.

    ``ratio`` is the paired ratio (the median over rounds of emit-batch time / floor-batch
    time of the same round); ``emit_ns`` the median round's time per emit and ``floor_ns``
    per floor pass, in nanoseconds. ``rounds`` counts the timed rounds: 1 when pytest-benchmark
    is disabled (``--benchmark-disable`` runs the batch once, so the figures are one round's).
    ``last`` is the last emit's result, to check what ran (``result.last.outcome``).
    ``timed`` is False when pytest-benchmark is disabled: hold a ratio budget only when it is
    True (one cold round, with no warm-up, says little).
    """

    hook: str
    middleware: tuple[str, ...]
    ratio: float
    emit_ns: float
    floor_ns: float
    rounds: int
    per: int
    last: HookResult
    timed: bool


class EmitBenchmarkFixture(Protocol):
    """The type of the ``emit_benchmark`` fixture: annotate the test's argument with it."""

    def __call__(
        self,
        target: HookBus | Harness,
        hook: str,
        event: Event | Sequence[Event],
        *,
        per: int = 200,
        rounds: int = 21,
        context: Callable[[], RunContext] = RunContext,
    ) -> EmitBenchmark:
        """Time ``rounds`` rounds of ``per`` emits of ``event`` (a sequence: cycled) at
        ``hook`` on ``target`` (a bus, or a loaded harness: its bus), each against its floor;
        ``context`` makes each round's fresh run context (e.g. with a fixed clock)."""
        ...


def _bus_of(target: object) -> HookBus:
    if isinstance(target, HookBus):
        return target
    bus = getattr(target, "bus", None)
    if isinstance(bus, HookBus):  # a loaded harness (hw.load) or anything holding a bus
        return bus
    raise TypeError(f"emit_benchmark needs an hw.HookBus or a loaded hw.Harness, got {target!r}")


def _events_of(hook: str, event: object) -> tuple[Event, ...]:
    if hook not in EVENT_TYPES:
        known = ", ".join(EVENT_TYPES)
        raise ValueError(f"emit_benchmark: unknown hook point {hook!r} (the hook points: {known})")
    wanted = EVENT_TYPES[hook]
    given: tuple[object, ...]
    if isinstance(event, Sequence) and not isinstance(event, str | bytes):
        given = tuple(event)
    else:
        given = (event,)
    if not given:
        raise ValueError(f"emit_benchmark: no event to emit at {hook!r} (an empty sequence)")
    events: list[Event] = []
    for item in given:
        if not isinstance(item, wanted):
            raise TypeError(
                f"emit_benchmark: hook point {hook!r} takes a {wanted.__name__}, got {item!r}"
            )
        events.append(item)
    return tuple(events)


def _names(chains: Sequence[Chain]) -> tuple[str, ...]:
    """Every middleware that runs for some event, in first-seen order (a matcher may leave
    one out for some events)."""
    return tuple(dict.fromkeys(name for chain in chains for name in chain.names))


async def _floor_batch(
    chains: Sequence[Chain], events: Sequence[Event], ctx: RunContext, per: int
) -> int:
    """``per`` floor passes cycling through the events; its time in ns (the loop alone: the
    event loop's entry is left out of both batches, so the ratio is the bus's own)."""
    count = len(events)
    envelope = ctx.envelope
    started = time.perf_counter_ns()
    for index in range(per):
        await floor_pass(chains[index % count], events[index % count], envelope)
    return time.perf_counter_ns() - started


async def _emit_batch(
    bus: HookBus, hook: str, events: Sequence[Event], ctx: RunContext, per: int
) -> tuple[int, HookResult]:
    """``per`` emits cycling through the events in ``ctx``: its time in ns, the last result."""
    count = len(events)
    started = time.perf_counter_ns()
    result = await emit_pass(bus, hook, events[0], ctx)
    for index in range(1, per):
        result = await emit_pass(bus, hook, events[index % count], ctx)
    return time.perf_counter_ns() - started, result


def _no_running_loop() -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        "emit_benchmark runs its batches on an event loop of its own: call it from a plain "
        "(def) test, not an async one"
    )


class _EmitBenchmarker:
    """The fixture's value: one measurement per test (pytest-benchmark times one thing)."""

    def __init__(self, request: pytest.FixtureRequest) -> None:
        self._request = request
        self._used = False

    def _benchmark(self) -> Any:
        try:
            return self._request.getfixturevalue("benchmark")
        except pytest.FixtureLookupError:
            raise RuntimeError(_INSTALL) from None

    def __call__(
        self,
        target: HookBus | Harness,
        hook: str,
        event: Event | Sequence[Event],
        *,
        per: int = 200,
        rounds: int = 21,
        context: Callable[[], RunContext] = RunContext,
    ) -> EmitBenchmark:
        if self._used:
            raise RuntimeError(
                "emit_benchmark was already called in this test: pytest-benchmark times one "
                "thing per test, so benchmark each bus or hook point in a test of its own "
                "(@pytest.mark.parametrize makes one per case)"
            )
        for name, value in (("per", per), ("rounds", rounds)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"emit_benchmark: {name} must be a whole number >= 1, got {value!r}"
                )
        bus = _bus_of(target)
        events = _events_of(hook, event)
        chains = [chain_of(bus, hook, item) for item in events]
        names = _names(chains)
        if not names:
            registered = ", ".join(d.name for d in bus.chain(hook)) or "none"
            raise ValueError(
                f"emit_benchmark: no middleware runs at {hook!r} for the event(s) given (its "
                f"chain: {registered}; matchers applied): an empty chain has no floor to compare"
            )
        _no_running_loop()
        self._used = True  # from here on pytest-benchmark's fixture is taken
        benchmark = self._benchmark()
        with asyncio.Runner() as runner:
            return _measure(
                benchmark, runner, _Plan(bus, hook, events, chains, names, per, context), rounds
            )


@dataclass(frozen=True, slots=True)
class _Plan:
    """What one measurement emits, and on what: checked before anything is timed."""

    bus: HookBus
    hook: str
    events: tuple[Event, ...]
    chains: list[Chain]
    names: tuple[str, ...]
    per: int
    context: Callable[[], RunContext]

    def fresh(self) -> RunContext:
        ctx = self.context()
        if not isinstance(ctx, RunContext):
            raise TypeError(f"emit_benchmark: context() must return an hw.RunContext, got {ctx!r}")
        return ctx


def _measure(benchmark: Any, runner: asyncio.Runner, plan: _Plan, rounds: int) -> EmitBenchmark:
    """``benchmark.pedantic`` as python/benchmarks' ``measure``: the setup of each round
    times its floor batch (pytest-benchmark does not count it), then the round's emit batch
    is timed, in the round's fresh context (its trace starts empty, so it does not grow)."""
    floors: list[int] = []
    times: list[int] = []
    results: list[HookResult] = []

    def setup() -> tuple[tuple[RunContext], dict[str, Any]]:
        ctx = plan.fresh()
        floors.append(runner.run(_floor_batch(plan.chains, plan.events, ctx, plan.per)))
        return (ctx,), {}

    def run(ctx: RunContext) -> HookResult:
        elapsed, result = runner.run(_emit_batch(plan.bus, plan.hook, plan.events, ctx, plan.per))
        times.append(elapsed)
        results.append(result)
        return result

    if benchmark.group is None:
        benchmark.group = f"emit {plan.hook}"
    warmup = min(_WARMUP, rounds - 1)
    benchmark.pedantic(run, setup=setup, rounds=rounds, warmup_rounds=warmup, iterations=1)
    # Enabled: the warm-up rounds come first, then ``rounds``; disabled, pytest-benchmark
    # calls ``run`` once: the figures are then that one round's, and ``rounds`` says 1.
    kept = min(rounds, len(times))
    times, floors = times[-kept:], floors[-kept:]
    ratio = paired_ratio(times, floors)
    emit_ns = statistics.median(times) / plan.per
    floor_ns = statistics.median(floors) / plan.per
    benchmark.extra_info.update(
        hook=plan.hook,
        middleware=list(plan.names),
        core=CORE,
        per=plan.per,
        events=len(plan.events),
        paired_ratio=ratio,
        paired_floor_ns=floor_ns,
    )
    timed = not benchmark.disabled
    return EmitBenchmark(
        plan.hook, plan.names, ratio, emit_ns, floor_ns, kept, plan.per, results[-1], timed
    )


@pytest.fixture
def emit_benchmark(request: pytest.FixtureRequest) -> EmitBenchmarkFixture:
    """``emit_benchmark(target, hook, event, *, per=200, rounds=21, context=hw.RunContext)
    -> EmitBenchmark``: time ``per`` emits of ``event`` (or a sequence of events, cycled) at
    ``hook`` on ``target`` (an ``hw.HookBus`` or a loaded ``hw.Harness``) against the same
    middleware in a plain loop, ``rounds`` rounds after two warm-up rounds, with
    pytest-benchmark; ``context()`` makes each round's fresh run context. Once per test, from
    a plain (not async) test; pytest-benchmark is looked up only then (a clear error without
    it)."""
    return _EmitBenchmarker(request)
