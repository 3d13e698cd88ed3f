"""The rounds of ``harnessweaver bench``: per hook point, the floor, the emit and each
middleware alone, timed one operation at a time, round after round.

Each round times, in this order: a floor batch (``per`` floor passes: the chain's handlers
awaited in a plain loop), an emit batch (``per`` emits on the bus, in a fresh RunContext so
that the trace does not grow over the run), then ``per`` calls of each middleware alone. The
events cycle through the hook's events, the same sequence for the floor and the emit. The
first :data:`WARMUP` rounds are dropped. The paired ratio (``floor.paired_ratio``) compares the
emit batch with the floor batch of the same round.
"""

from __future__ import annotations

import math
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..bus import HookBus
from ..context import RunContext
from ..envelope import Envelope
from ..events import Event
from .floor import Chain, chain_of, emit_pass, floor_pass, paired_ratio

__all__ = ["WARMUP", "HookRun", "Stop", "Unbounded", "chains_of", "measure_hook", "percentile"]

WARMUP = 2
"""Rounds run first and dropped: imports, caches and the allocator settle in them."""

Tick = Callable[[], None]
"""Called after every round (the progress bar)."""


@dataclass(frozen=True, slots=True)
class Stop:
    """An emit of one of the hook's events that did not answer ``continue``: who answered
    the combined outcome (the first in run order to give it, rule 3) and its code."""

    event: int
    kind: str
    middleware: str | None
    code: str | None


@dataclass(slots=True)
class HookRun:
    """What the timed rounds of one hook point gave (nanoseconds)."""

    hook: str
    middleware: tuple[str, ...]
    events: int
    emits: list[int] = field(default_factory=list)
    floors: list[int] = field(default_factory=list)
    emit_batches: list[float] = field(default_factory=list)
    floor_batches: list[float] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    each: dict[str, list[int]] = field(default_factory=dict)
    stops: list[Stop] = field(default_factory=list)

    @property
    def ratio(self) -> float:
        return paired_ratio(self.emit_batches, self.floor_batches)


def chains_of(bus: HookBus, hook: str, events: Sequence[Event]) -> list[Chain]:
    """The chain each event runs (matchers applied, I22)."""
    return [chain_of(bus, hook, event) for event in events]


def percentile(values: Sequence[int], share: float) -> float:
    """The nearest-rank percentile (p99: a time that one of the timed operations really took,
    never one between two); ``share`` 0.5 is the median."""
    if share == 0.5:
        return float(statistics.median(values))
    ordered = sorted(values)
    rank = min(len(ordered), max(1, math.ceil(share * len(ordered))))
    return float(ordered[rank - 1])


class Unbounded(Exception):
    """A middleware that did not answer in time on an emit: the bus cut it off at its timeout
    or the hook's deadline, but the floor and its own calls, which await it bare, would wait
    for it without end. The message names the hook point, the middleware and what to do."""


def _cut_off(hook: str, trace: Any) -> None:
    """Raise :class:`Unbounded` for the first middleware the emit cut off (``trace``)."""
    for record in trace:
        if record.get("kind") == "failure" and record.get("failure") in ("timeout", "deadline"):
            raise Unbounded(
                f"{hook}: `{record.get('middleware')}` did not answer in time on an emit of the "
                f"event ({record.get('failure')}): the bus cuts it off there, but the floor "
                "awaits it bare and would wait without end; time events it answers, or leave "
                f"{hook} out (--hook)"
            )


async def _probe(bus: HookBus, hook: str, events: Sequence[Event]) -> list[Stop]:
    """One emit of each event, untimed, in a context of its own: which events the chain does
    not let through, and who stopped them (read from the trace); :class:`Unbounded` when a
    middleware did not answer in time."""
    stops: list[Stop] = []
    for index, event in enumerate(events):
        ctx = RunContext()
        result = await bus.emit(hook, event, ctx)
        _cut_off(hook, ctx.trace)
        kind = result.outcome.kind
        if kind == "continue":
            continue
        code = getattr(result.outcome, "code", None)
        who = next(
            (
                record.get("middleware")
                for record in ctx.trace
                if record.get("kind") == "outcome" and record.get("outcome") == kind
            ),
            None,
        )
        stops.append(Stop(index, kind, None if who is None else str(who), code))
    return stops


def _members(bus: HookBus, hook: str, chains: Sequence[Chain]) -> tuple[str, ...]:
    """Every middleware some event's chain runs, in the hook's run order."""
    present = {name for chain in chains for name in chain.names}
    return tuple(d.name for d in bus.chain(hook) if d.name in present)


async def measure_hook(
    bus: HookBus, hook: str, events: Sequence[Event], rounds: int, per: int, tick: Tick
) -> HookRun:
    """Time ``hook`` on ``bus`` for ``rounds`` rounds of ``per`` operations each."""
    chains = chains_of(bus, hook, events)
    members = _members(bus, hook, chains)
    run = HookRun(hook, members, len(events), stops=await _probe(bus, hook, events))
    run.each = {name: [] for name in members}
    # Each middleware alone cycles through the events whose chain runs it.
    alone = {
        name: [e for e, chain in zip(events, chains, strict=True) if name in chain.names]
        for name in members
    }
    # Timed as a chain of one, by the floor's own loop, so that the shares add up to the floor.
    single = {name: Chain(hook, (name,), (bus.handler(name),)) for name in members}
    clock = time.perf_counter_ns
    count = len(events)
    for round_number in range(rounds):
        kept = round_number >= WARMUP
        env = Envelope()
        ctx = RunContext(envelope=env)  # what the emit's middleware see as env, fresh per round
        floors, emits = [], []
        for i in range(per):
            k = i % count
            start = clock()
            await floor_pass(chains[k], events[k], env)
            floors.append(clock() - start)
        for i in range(per):
            k = i % count
            start = clock()
            result = await emit_pass(bus, hook, events[k], ctx)
            emits.append(clock() - start)
            if kept:
                run.outcomes[result.outcome.kind] += 1
        for name in members:
            chain, own = single[name], alone[name]
            times = run.each[name]
            for i in range(per):
                start = clock()
                await floor_pass(chain, own[i % len(own)], env)
                if kept:
                    times.append(clock() - start)
        if kept:
            run.floors.extend(floors)
            run.emits.extend(emits)
            run.floor_batches.append(float(sum(floors)))
            run.emit_batches.append(float(sum(emits)))
        tick()
    return run
