"""Checking a middleware against the hook contracts before it ships (I14, ``docs/contracts.md``).

``hw.check_contracts(middleware)`` runs a middleware over sample events, on a bus in warn mode
with the active core, and reports every modification that breaks a contract rule. Without
``events`` it uses the catalogue's sample event of each hook point the middleware attaches to
(``conformance/catalogue.json`` "samples"), so an author can vet a middleware in one line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from ._select import core
from .bus import HookBus
from .context import RunContext
from .envelope import Envelope
from .events import EVENT_TYPES, Event
from .middleware import spec_of

__all__ = ["CONTRACT_RULES", "ContractViolation", "check_contract", "check_contracts"]

CONTRACT_RULES: tuple[str, ...] = tuple(core.CONTRACT_RULES)
"""Every hook-contract rule id (``hook/name``), in the order the core checks them."""


@dataclass(frozen=True, slots=True)
class ContractViolation:
    """One modification that broke a contract: the hook point, the sample event (its index
    among the events tried at that hook point) and the rule id."""

    hook: str
    index: int
    rule: str


def check_contract(hook: str, before: Event, after: Event) -> str | None:
    """The id of the first contract rule of ``hook`` that changing ``before`` into ``after``
    breaks, or ``None``: what a bus in warn or strict mode records for that modification."""
    return core.check_contract(hook, before, after)


def _samples() -> dict[str, Any]:
    """The catalogue's sample events (the corpus found as the conformance driver finds it)."""
    from .conformance.cases import find_corpus

    text = (find_corpus(None) / "catalogue.json").read_text(encoding="utf-8")
    return dict(json.loads(text)["samples"])


def _events(
    middleware: Any, events: Mapping[str, Iterable[Event]] | None
) -> dict[str, list[Event]]:
    if events is not None:
        return {hook: list(given) for hook, given in events.items()}
    spec = spec_of(middleware)
    if spec is None:
        raise TypeError(f"check_contracts() needs a declared middleware, got {middleware!r}")
    samples = _samples()
    return {
        hook: [EVENT_TYPES[hook].model_validate(samples[hook])] for hook in spec.declaration.hooks
    }


async def _run(middleware: Any, events: dict[str, list[Event]]) -> list[ContractViolation]:
    bus = HookBus(contracts="warn")
    bus.register(middleware, hooks=tuple(events))
    found: list[ContractViolation] = []
    for hook, given in events.items():
        for index, event in enumerate(given):
            ctx = RunContext(envelope=Envelope(run_id="check-contracts"))
            await bus.emit(hook, event, ctx)
            found.extend(
                ContractViolation(hook, index, record["contract"])
                for record in ctx.trace
                if "contract" in record
            )
    return found


def check_contracts(
    middleware: Any, events: Mapping[str, Iterable[Event]] | None = None
) -> list[ContractViolation]:
    """Run ``middleware`` over sample events and return every contract rule it broke.

    ``events`` maps hook points to the events to try there (each must be of that hook point's
    event type, and the middleware must attach to it); by default, the catalogue's sample event
    of each hook point it declares. The middleware runs on a fresh bus in warn mode, so every
    event is tried whatever it breaks. An empty list means no sample showed a violation.
    Call it from synchronous code (tests, a REPL); it runs its own event loop.
    """
    chosen = _events(middleware, events)
    return anyio.run(_run, middleware, chosen)
