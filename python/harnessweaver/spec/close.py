"""Did you mean …?: the name a misspelt key most likely meant.

A key written with ``-`` for ``_`` (``fail-mode:``) or in other capitals is the name it
spells, whatever :func:`difflib.get_close_matches` makes of it; otherwise the closest name by
that ratio, as ``difflib`` finds it (TypeScript: ``spec/close.ts``, the same ratio).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["closest"]


def _folded(key: str) -> str:
    return key.replace("-", "_").lower()


def closest(key: str, *groups: Iterable[str]) -> str | None:
    """The name of ``groups`` that ``key`` most likely meant, or ``None``.

    Each group is tried in turn, first for a name spelt alike but for ``-``/``_`` and
    capitals, then by ratio, so a setting is suggested before a reserved key."""
    lists = [list(group) for group in groups]
    for names in lists:
        same = [name for name in names if _folded(name) == _folded(key)]
        if same:
            return same[0]
    for names in lists:
        close = difflib.get_close_matches(key.replace("-", "_"), names, n=1)
        if close:
            return close[0]
    return None
