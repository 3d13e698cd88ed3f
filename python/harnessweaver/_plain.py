"""Odd values at the Python API, read the way the Rust core reads them (docs/events.md, "Odd
values at the Python API"). Shared by the pure-Python core and ``bus.py``.

A ``str`` or ``int`` subclass is read as its plain value, never through its own dunders: a
``__hash__``, ``__eq__`` or ``__str__`` that raises or lies changes nothing (the Rust core reads
the characters or digits themselves). The bus's classes cannot be subclassed, copied or
pickled, and say so with the Rust core's words.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar, cast

__all__ = ["IMMUTABLE", "LIVE", "final", "plain_int", "plain_str", "uncopyable"]

T = TypeVar("T", bound=type)

IMMUTABLE = "it cannot change, so share the object itself"
"""Why a value of the bus (a declaration, a result) is not copied."""
LIVE = "it holds live state of this process (middleware, records, a sink)"
"""Why a live object of the bus (a bus, a trace, a context) is not copied."""


def plain_str(value: object) -> object:
    """A ``str`` subclass as the plain ``str`` of its characters; anything else unchanged.
    ``str.__str__`` copies the characters without calling anything the subclass defines."""
    kind = type(value)  # the real type: a claimed ``__class__`` is never asked
    if kind is str or not issubclass(kind, str):
        return value
    return str.__str__(cast("str", value))


def plain_int(value: object) -> object:
    """An ``int`` subclass (``bool`` included) as the plain ``int`` of its value; anything
    else unchanged (``int.__int__`` reads the digits, never the subclass's methods)."""
    kind = type(value)
    if kind is int or not issubclass(kind, int):
        return value
    return int.__int__(cast("int", value))


def final(shown: str) -> Callable[[T], T]:
    """Makes a class refuse subclasses, as the Rust core's classes do (``TypeError``)."""

    def refuse(*args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(f"type '{shown}' is not an acceptable base type")

    def decorate(cls: T) -> T:
        cls.__init_subclass__ = classmethod(refuse)  # type: ignore[assignment]
        return cls

    return decorate


def uncopyable(name: str, why: str) -> Callable[[T], T]:
    """Makes a class refuse ``copy.copy``, ``copy.deepcopy`` and ``pickle`` (all of them go
    through ``__reduce_ex__``) with the Rust core's ``TypeError``."""

    def refuse(self: object, protocol: object) -> NoReturn:
        raise TypeError(f"harnessweaver.{name} objects cannot be copied or pickled: {why}")

    def decorate(cls: T) -> T:
        cls.__reduce_ex__ = refuse  # type: ignore[assignment]
        return cls

    return decorate
