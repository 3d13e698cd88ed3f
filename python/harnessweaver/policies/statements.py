"""Cedar policy text split into its statements, to say on which line a bad one starts.

Only used when a policy file does not parse as a whole (the fast path parses the whole set at
once): each statement is then parsed alone and the first that fails is reported at its line.
A statement ends at a ``;`` outside string literals and ``//`` comments; what follows the
last ``;`` counts only when it holds more than blanks and comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Head", "Statement", "Unreadable", "read_head", "split_statements"]


@dataclass(frozen=True, slots=True)
class Statement:
    """One statement: its text (with its ``;``) and the 1-based line its first token is on."""

    text: str
    line: int


_SKIP = re.compile(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|;', re.S)
"""What a statement's end is looked for past: string literals (an unterminated one runs to the
end), ``//`` comments, and the ``;`` that ends it."""
_BLANK = re.compile(r"(?:\s+|//[^\n]*)*")


def split_statements(text: str) -> list[Statement]:
    """The statements of ``text``, in order."""
    found: list[Statement] = []
    start = 0
    line = 1  # the line `start` is on
    for match in _SKIP.finditer(text):
        if match.group() != ";":
            continue
        end = match.end()
        found.append(Statement(text[start:end], line + _lines_before_token(text, start)))
        line += text.count("\n", start, end)
        start = end
    if _BLANK.fullmatch(text, start) is None:
        found.append(Statement(text[start:], line + _lines_before_token(text, start)))
    return found


def _lines_before_token(text: str, start: int) -> int:
    """How many line breaks come before the first token after ``start``."""
    blank = _BLANK.match(text, start)
    return 0 if blank is None else text.count("\n", start, blank.end())


@dataclass(frozen=True, slots=True)
class Head:
    """What the head of a policy says, read without the engine: its annotations (``None``
    values are bare ``@name``) and its ``action ==`` and ``resource ==`` scope constraints
    (``(type, id)``, ``None`` when the scope says anything else)."""

    annotations: dict[str, str | None]
    action: tuple[str, str] | None
    resource: tuple[str, str] | None


class Unreadable(Exception):
    """A head this reader does not read plainly (an escape in a string, an odd token): the
    engine's JSON form of the policy is used instead."""


_NEXT = re.compile(r'(?:\s|//[^\n]*)*("(?:[^"\\]|\\.)*"|::|==|[A-Za-z_][A-Za-z0-9_]*|.)', re.S)
"""The next token past blanks and comments: a string, ``::``, ``==``, a name, one character."""


class _Tokens:
    """The tokens of a statement, read one at a time: only its head is ever read."""

    __slots__ = ("_at", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._at = 0

    def next(self) -> str:
        found = _NEXT.match(self._text, self._at)
        if found is None:
            raise Unreadable("end")
        self._at = found.end()
        return found.group(1)


def _plain_string(token: str) -> str:
    if len(token) < 2 or not token.startswith('"') or not token.endswith('"') or "\\" in token:
        raise Unreadable(token[:16])
    return token[1:-1]


def _clause(tokens: _Tokens, end: str) -> list[str]:
    """The tokens of one scope clause up to ``end`` (``,`` or ``)``) at depth 0."""
    depth = 0
    found: list[str] = []
    while True:
        token = tokens.next()
        if depth == 0 and token == end:
            return found
        if token in ("(", "["):
            depth += 1
        elif token in (")", "]"):
            depth -= 1
        found.append(token)


def _equals(clause: list[str], variable: str) -> tuple[str, str] | None:
    """``(type, id)`` of ``variable == Type::"id"``; ``None`` for any other constraint."""
    if len(clause) < 5 or clause[:2] != [variable, "=="] or clause[-2] != "::":
        return None
    path = clause[2:-2]
    names = path[0::2]
    if path[1::2] != ["::"] * (len(names) - 1) or not all(n.isidentifier() for n in names):
        raise Unreadable("entity")
    return "::".join(names), _plain_string(clause[-1])


def read_head(text: str) -> Head:
    """The annotations and scope keys of one policy statement; :class:`Unreadable` when it
    cannot tell for sure."""
    tokens = _Tokens(text)
    annotations: dict[str, str | None] = {}
    token = tokens.next()
    while token == "@":
        name = tokens.next()
        if not name.isidentifier() or name in annotations:
            raise Unreadable("annotation")
        token = tokens.next()
        if token == "(":
            annotations[name] = _plain_string(tokens.next())
            if tokens.next() != ")":
                raise Unreadable("annotation")
            token = tokens.next()
        else:
            annotations[name] = None
    if token not in ("permit", "forbid") or tokens.next() != "(":
        raise Unreadable("effect")
    principal = _clause(tokens, ",")
    action = _clause(tokens, ",")
    resource = _clause(tokens, ")")
    if not principal or principal[0] != "principal":
        raise Unreadable("scope")
    return Head(annotations, _equals(action, "action"), _equals(resource, "resource"))
