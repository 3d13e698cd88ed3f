"""Warnings on answers (I24), in pure Python (the Rust core has the same in ``warning.rs``).

An outcome holds its ``warnings`` as given; the walk judges them when it takes the answer: a
list or tuple of ``str`` with no lone surrogate, else the answer is an invalid return. Empty
texts are dropped, the first ``MAX_WARNINGS`` kept, each cut to ``MAX_WARNING_CHARS``
characters (code points, which is what ``len`` counts on a ``str``).
"""

from __future__ import annotations

from typing import Final

__all__ = ["CUT_MARK", "INVALID", "MAX_WARNINGS", "MAX_WARNING_CHARS", "judge", "valid_in_trace"]

MAX_WARNINGS: Final = 8
MAX_WARNING_CHARS: Final = 256
CUT_MARK: Final = "\u2026"


class _Invalid:
    __slots__ = ()


INVALID: Final = _Invalid()
"""What ``judge`` answers for warnings that make the answer an invalid return."""


def _is_text(item: object) -> bool:
    if not isinstance(item, str):
        return False
    if item.isascii():
        return True
    try:
        item.encode("utf-8")
    except UnicodeEncodeError:
        return False  # a lone surrogate: no trace or JSON can carry it (I16)
    return True


def judge(value: object) -> tuple[str, ...] | _Invalid | None:
    """The warnings kept of ``value`` (``None`` when none is), or ``INVALID``."""
    if not isinstance(value, list | tuple):
        return INVALID
    items = tuple(value)  # a list cannot change under us from here on
    if not all(_is_text(item) for item in items):
        return INVALID
    kept: list[str] = []
    for item in items:
        if item and len(kept) < MAX_WARNINGS:
            text = str(item)
            if len(text) > MAX_WARNING_CHARS:
                text = text[: MAX_WARNING_CHARS - 1] + CUT_MARK
            kept.append(text)
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
        if not _is_text(text):
            raise ValueError("invalid warning: it holds a lone surrogate (I24)")
    return tuple(value)
