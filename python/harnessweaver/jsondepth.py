"""How deeply a parsed JSON value nests, checked without recursion.

Python's JSON parser stops recursing at about 1,000 levels (a ``RecursionError``), but what
reads a value afterwards (pydantic, which stops at about 254; a recursive walk; a journal line
that holds the value a few levels down) stops sooner. A reader that takes JSON from outside
bounds it here first, and refuses a deeper value as its own kind of error.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["nests_deeper"]

_CONTAINERS: Final = (dict, list)  # what json.loads makes: exactly these types


def nests_deeper(value: Any, limit: int) -> bool:
    """Whether ``value`` (as ``json.loads`` made it) nests arrays and objects more than
    ``limit`` deep (a scalar is 0, ``[]`` and ``{}`` are 1): a walk a level at a time."""
    level = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:  # the containers one deeper than the last level
        depth += 1
        if depth > limit:
            return True
        level = [
            child
            for item in level
            for child in (item.values() if type(item) is dict else item)
            if type(child) in _CONTAINERS
        ]
    return False
