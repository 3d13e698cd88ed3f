"""Whether a Python ``str`` is Unicode text (paired with the Rust core's ``to_str``).

A ``str`` may hold a lone surrogate, which UTF-8, a trace and JSON cannot carry (I16). A
subclass of ``str`` is read through ``str``'s own methods, from its storage, as the Rust core
reads it: an overridden ``isascii`` or ``encode`` is never called (I29).
"""

from __future__ import annotations

__all__ = ["whole_text"]


def whole_text(text: str) -> bool:
    """Whether ``text`` (a ``str`` by its real type) holds no lone surrogate."""
    if str.isascii(text):  # O(1) in CPython: the string's storage says so
        return True
    try:
        str.encode(text, "utf-8")
    except UnicodeEncodeError:
        return False
    return True
