"""Hostile containers and texts shared by the hostile-answer tests (issue 28, I24, I29):
subclasses of ``str``, ``list`` and ``tuple`` whose methods raise, and an object that claims
to be a list. Every method raises :class:`HostileError` with :data:`SECRET`, which must appear
nowhere the bus writes (R9)."""

from __future__ import annotations

from typing import Any

__all__ = [
    "SECRET",
    "ClaimsList",
    "HostileError",
    "RaisingList",
    "RaisingStr",
    "RaisingTuple",
    "boom",
]

SECRET = "hostile-message-7f3a"


class HostileError(Exception):
    """What the hostile methods raise; its message must never be seen."""


def boom(*args: object, **kwargs: object) -> Any:
    raise HostileError(SECRET)


class RaisingStr(str):
    """A ``str`` every one of whose overridable methods raises."""

    __len__ = __str__ = __repr__ = __eq__ = __hash__ = __bool__ = __iter__ = boom
    __getitem__ = isascii = encode = __format__ = boom


class RaisingList(list[Any]):
    __iter__ = __len__ = __getitem__ = __bool__ = __reversed__ = boom


class RaisingTuple(tuple[Any, ...]):
    __iter__ = __len__ = __getitem__ = __bool__ = boom


class ClaimsList:
    """Claims to be a list through ``__class__``; is none."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return list
