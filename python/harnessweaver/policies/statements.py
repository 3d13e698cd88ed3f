"""Cedar policy text split into its statements, to say on which line a bad one starts.

Only used when a policy file does not parse as a whole (the fast path parses the whole set at
once): each statement is then parsed alone and the first that fails is reported at its line.
A statement ends at a ``;`` outside string literals and ``//`` comments; what follows the
last ``;`` counts only when it holds more than blanks and comments.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Statement", "split_statements"]


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement: its text (with its ``;``) and the 1-based line its first token is on."""

    text: str
    line: int


def split_statements(text: str) -> list[Statement]:
    """The statements of ``text``, in order."""
    found: list[Statement] = []
    start = 0
    first: int | None = None  # offset of the statement's first character that is not blank
    line = 1
    first_line = 1
    i = 0
    size = len(text)
    while i < size:
        char = text[i]
        if char == "\n":
            line += 1
        elif char == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = size if end < 0 else end
            continue
        elif not char.isspace():
            if first is None:
                first, first_line = i, line
            if char == '"':
                end = _string_end(text, i + 1)
                line += text.count("\n", i, end)  # a string may hold a line break
                i = end
                continue
            if char == ";":
                found.append(Statement(text[start : i + 1], first_line))
                start, first = i + 1, None
        i += 1
    if first is not None:
        found.append(Statement(text[start:], first_line))
    return found


def _string_end(text: str, i: int) -> int:
    """The offset just past the string literal whose contents start at ``i``."""
    size = len(text)
    while i < size:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        i += 1
        if char == '"':
            return i
    return size
