"""What immutability does and does not promise (docs/events.md, "What immutability protects";
SECURITY.md): ordinary in-place changes raise ``TypeError``; deliberate bypasses of the frozen
types are neither prevented nor detected. Pinned on both cores so the docs cannot silently
become wrong in either direction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from conftest import tool_call

import harnessweaver as hw

BYPASSES: dict[str, Callable[[Any], None]] = {
    "dict.__setitem__": lambda e: dict.__setitem__(e.call.arguments, "amount", 10_000),
    "list.append": lambda e: list.append(e.call.arguments["items"], "smuggled"),
    "object.__setattr__": lambda e: object.__setattr__(e.call, "name", "smuggled"),
    "__dict__": lambda e: e.call.__dict__.__setitem__("name", "smuggled"),
}
ACCIDENTS: dict[str, Callable[[Any], None]] = {
    "item assignment": lambda e: e.call.arguments.__setitem__("amount", 10_000),
    "append": lambda e: e.call.arguments["items"].append("smuggled"),
    "attribute assignment": lambda e: setattr(e.call, "name", "smuggled"),
}


def view(event: Any) -> tuple[object, object, object]:
    arguments = event.call.arguments
    return event.call.name, arguments.get("amount"), tuple(arguments["items"])


def chain_of(change: Callable[[Any], None], seen: list[object]) -> hw.HookBus:
    async def changer(event: Any, env: hw.Envelope) -> None:
        change(event)

    async def watcher(event: Any, env: hw.Envelope) -> None:
        seen.append(view(event))

    bus = hw.HookBus()
    bus.register(hw.middleware(hooks=["tool.before"], fail_mode="open")(changer))
    bus.register(hw.middleware(hooks=["tool.before"], fail_mode="closed")(watcher))
    return bus


@pytest.mark.anyio
@pytest.mark.parametrize("how", sorted(ACCIDENTS))
async def test_an_ordinary_in_place_change_raises_and_changes_nothing(how: str) -> None:
    seen: list[object] = []
    event = tool_call(amount=5, items=["a"])
    ctx = hw.RunContext()
    result = await chain_of(ACCIDENTS[how], seen).emit("tool.before", event, ctx)
    assert seen == [view(tool_call(amount=5, items=["a"]))]
    assert view(result.event) == view(tool_call(amount=5, items=["a"]))
    assert next((r["kind"], r.get("error")) for r in ctx.trace) == ("failure", "TypeError")


@pytest.mark.anyio
@pytest.mark.parametrize("how", sorted(BYPASSES))
async def test_a_deliberate_bypass_is_neither_prevented_nor_detected(how: str) -> None:
    """Documented, not desired: in-process middleware is trusted code (SECURITY.md)."""
    seen: list[object] = []
    event = tool_call(amount=5, items=["a"])
    before = view(event)
    ctx = hw.RunContext()
    result = await chain_of(BYPASSES[how], seen).emit("tool.before", event, ctx)
    assert seen == [view(event)] and view(event) != before  # the caller's own event changed
    assert result.event is event  # ... and it is what the result holds
    assert [(r["kind"], r.get("modified")) for r in ctx.trace] == [
        ("outcome", False),
        ("outcome", False),
        ("hook", False),
    ]
