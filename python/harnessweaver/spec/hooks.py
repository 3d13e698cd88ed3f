"""A middleware's hook points as a spec item chooses them, when its class says how.

A class may set ``item_hooks = ItemHooks(default=(...), kind=...)``: an item that names no
``hooks:`` gets ``default`` (a subset of the declared hook points: ``harnessweaver.cedar``
decides ``tool.before`` unless asked for more), and an item naming a hook point the class does
not declare is a problem of that ``kind`` (its rule closes the message), reported at the
``hooks:`` line instead of the core's ``hooks_widened``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ItemHooks", "item_hooks_of", "refused_hook"]


@dataclass(frozen=True, slots=True)
class ItemHooks:
    """``default``: the hook points of an item without ``hooks:``; ``kind``: the problem kind
    of a hook point the middleware does not declare."""

    default: tuple[str, ...]
    kind: str


def item_hooks_of(target: Any) -> ItemHooks | None:
    """The ``item_hooks`` of a middleware class (or of an instance's class), if any."""
    found = getattr(target if isinstance(target, type) else type(target), "item_hooks", None)
    return found if isinstance(found, ItemHooks) else None


def refused_hook(keys: Mapping[str, Any], declared: tuple[str, ...]) -> str | None:
    """The first hook point of the item's ``hooks:`` (a list of strings) that is not declared."""
    hooks = keys.get("hooks")
    if not isinstance(hooks, list) or not all(isinstance(hook, str) for hook in hooks):
        return None  # the core says what is wrong with it
    return next((hook for hook in hooks if hook not in declared), None)
