"""Whether a middleware can ever suspend: read once, from its code, when it is registered.

Only a middleware that gives control back to the event loop can be handed its caller's
cancellation, and so only one that can suspend can swallow it (I30). The Rust core sees every
suspension as it steps each coroutine; the pure core awaits a middleware whole (the cheapest
way to run it), so it asks this instead: an ``async def`` whose code holds no suspension point
(no ``await``, ``async with`` or ``async for``) never suspends, and the emit then spends nothing
on looking at its caller's cancellation. Anything else (a callable object, a generator-based
coroutine, a function returning some awaitable) may suspend.
"""

from __future__ import annotations

import dis
import inspect
from typing import Any

__all__ = ["may_suspend"]

# Every suspension point yields to the caller: ``await``, ``async with`` and ``async for``
# compile to a yield (``YIELD_VALUE``; ``SEND`` delegates it; ``YIELD_FROM`` before 3.11).
_YIELDS = frozenset(
    dis.opmap[name] for name in ("YIELD_VALUE", "YIELD_FROM", "SEND") if name in dis.opmap
)


def may_suspend(call: Any) -> bool:
    """False only for a plain ``async def`` (or a method of one) with no suspension point."""
    function = getattr(call, "__func__", call) if inspect.ismethod(call) else call
    if not inspect.isfunction(function) or not inspect.iscoroutinefunction(function):
        return True
    try:
        return any(op.opcode in _YIELDS for op in dis.get_instructions(function.__code__))
    except Exception:  # an odd code object: assume the worst, it only costs a look
        return True
