"""Warnings on answers (I24), in pure Python (the Rust core has the same in ``warning.rs``).

An outcome holds its ``warnings`` as given; the walk judges them when it takes the answer: a
list or tuple of ``str`` with no lone surrogate, else the answer is an invalid return. Empty
texts are dropped, the first ``MAX_WARNINGS`` kept, each cut to ``MAX_WARNING_CHARS``
characters (code points, which is what ``len`` counts on a ``str``).

A value is judged by what it holds, never by what its methods say (I29): a subclass of
``list``, ``tuple`` or ``str`` is read through the base type's own methods (``list.__iter__``,
``str.isascii``...), as the Rust core reads the objects' storage, so an overridden
``__iter__``, ``__len__``, ``__str__``, ``__eq__`` or ``encode`` is never called and cannot
raise into the bus or change what is kept. The work is bounded by what the middleware built:
the one check that reads a whole text (for a lone surrogate, on non-ASCII texts only) runs
once per distinct text object, so ``[s] * 10_000`` costs one check of ``s``, not 10,000 (the
Rust core gets the same from the UTF-8 form CPython caches on the string).
"""

from __future__ import annotations

from typing import Final

from .text import whole_text

__all__ = [
    "CUT_MARK",
    "INVALID",
    "MAX_WARNINGS",
    "MAX_WARNING_CHARS",
    "judge",
    "valid_in_trace",
]

MAX_WARNINGS: Final = 8
MAX_WARNING_CHARS: Final = 256
CUT_MARK: Final = "\u2026"


class _Invalid:
    __slots__ = ()


INVALID: Final = _Invalid()
"""What ``judge`` answers for warnings that make the answer an invalid return."""


def _items(value: object) -> tuple[object, ...] | None:
    """The items a list or tuple (subclasses included, by its real type) holds, read from its
    storage; ``None`` for anything else."""
    kind = type(value)
    if issubclass(kind, list):
        return tuple(list.__iter__(value))  # type: ignore[arg-type]
    if issubclass(kind, tuple):
        return tuple(tuple.__iter__(value))  # type: ignore[arg-type]
    return None


def _all_text(items: tuple[object, ...]) -> bool:
    """Whether every item is a ``str`` (by its real type) holding no lone surrogate; each
    distinct non-ASCII text object is read once."""
    seen: set[int] | None = None
    for item in items:
        if not issubclass(type(item), str):
            return False
        if str.isascii(item):  # type: ignore[arg-type]
            continue
        if seen is None:
            seen = set()
        elif id(item) in seen:
            continue  # the items hold it alive: its id stands for this very object
        if not whole_text(item):  # type: ignore[arg-type]
            return False
        seen.add(id(item))
    return True


def judge(value: object) -> tuple[str, ...] | _Invalid | None:
    """The warnings kept of ``value`` (``None`` when none is), or ``INVALID``."""
    items = _items(value)  # a tuple: the list cannot change under us from here on
    if items is None or not _all_text(items):
        return INVALID
    kept: list[str] = []
    for item in items:
        text = str.__str__(item)  # an exact str of its storage
        if text:
            if len(text) > MAX_WARNING_CHARS:
                text = text[: MAX_WARNING_CHARS - 1] + CUT_MARK
            kept.append(text)
            if len(kept) == MAX_WARNINGS:
                break
    return tuple(kept) if kept else None


def valid_in_trace(value: object) -> tuple[str, ...]:
    """A trace line's ``warnings`` (I24): 1 to 8 texts of 1 to 256 characters, as a tuple;
    anything else raises ``ValueError``."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_WARNINGS:
        raise ValueError(f"invalid warnings {value!r}: 1 to {MAX_WARNINGS} texts (I24)")
    for text in value:
        if not isinstance(text, str) or not 1 <= len(text) <= MAX_WARNING_CHARS:
            raise ValueError(
                f"invalid warning {text!r}: a text of 1 to {MAX_WARNING_CHARS} characters (I24)"
            )
        if not whole_text(text):
            raise ValueError("invalid warning: it holds a lone surrogate (I24)")
    return tuple(value)
