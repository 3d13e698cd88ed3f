"""The two things every bench measurement times, paired round by round: an emit of a hook
point on the bus, and its floor, the same middleware (``HookBus.handler``) awaited in a plain
loop on the same event, with no timeout, fail mode, trace or reduction around them.

Both ``harnessweaver bench`` and the pytest fixture of :mod:`harnessweaver.testing` use this
module, so their ratios mean the same thing (and the same as ``nox -s bench``'s paired
ratios: the median of per-round ratios, each round timing the floor right before the emit).
"""

from __future__ import annotations

import inspect
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .._pycore.matcher import CARRIED, key_value
from ..bus import HookBus
from ..context import RunContext
from ..envelope import Envelope
from ..outcomes import HookResult

__all__ = ["Chain", "chain_of", "emit_pass", "floor_pass", "paired_ratio"]


@dataclass(frozen=True, slots=True)
class Chain:
    """The middleware an emit of ``hook`` runs for one event (matchers applied, I22): their
    registered names and handlers, in run order."""

    hook: str
    names: tuple[str, ...]
    handlers: tuple[Callable[..., Any], ...]


def chain_of(bus: HookBus, hook: str, event: Any) -> Chain:
    """The chain ``bus`` runs for ``event`` at ``hook``: ``chain_for`` the event's matcher key
    (a tool's name, a model's) on the hook points that carry one, else the whole chain."""
    key = CARRIED.get(hook)
    declarations = bus.chain(hook) if key is None else bus.chain_for(hook, key_value(key, event))
    names = tuple(declaration.name for declaration in declarations)
    return Chain(hook, names, tuple(bus.handler(name) for name in names))


async def floor_pass(chain: Chain, event: Any, env: Envelope) -> None:
    """Every handler of ``chain`` awaited once on ``event``, in order. An exception is caught
    and the loop goes on (the bus would resolve it by the fail mode; the floor counts the
    work), and every handler runs even after an answer, so the floor is the whole chain's."""
    for handler in chain.handlers:
        try:
            answer = handler(event, env)
            if inspect.isawaitable(answer):
                await answer
        except Exception:  # a failing middleware's cost still counts: the bus resolves it
            continue


async def emit_pass(bus: HookBus, hook: str, event: Any, ctx: RunContext) -> HookResult:
    """One emit of ``event`` at ``hook`` on ``bus`` in ``ctx``."""
    return await bus.emit(hook, event, ctx)


def paired_ratio(times: Sequence[float], floors: Sequence[float]) -> float:
    """The median of ``time / floor`` over rounds timed in pairs (the floor of a round timed
    right before its emits): what a shared machine's bursts of load, which move separately
    timed runs apart, leave nearly untouched. A floor of 0 (a clock too coarse) is skipped."""
    ratios = [t / f for t, f in zip(times, floors, strict=True) if f > 0]
    if not ratios:
        raise ValueError("no round with a floor above 0: time more emits per round")
    return statistics.median(ratios)
