"""What the hook command takes on stdin: at most so many bytes, nested at most so deep.

An event document larger than the limit is refused without reading past it (the agent's
document is never held whole, nor echoed); one nested deeper than :data:`MAX_DEPTH` is
refused before it is parsed, since Python's JSON parser and pydantic both recurse and would
fail with a ``RecursionError`` (or, from about 254 levels, a ``ValidationError``) instead of a
line naming the limit. Standard library only: the warm client reads stdin through this too.
"""

from __future__ import annotations

import os
from typing import IO, Final

__all__ = [
    "MAX_DEPTH",
    "MAX_INPUT",
    "MAX_INPUT_CEILING",
    "MAX_INPUT_ENV",
    "LimitError",
    "check_depth",
    "max_input",
    "read_input",
]

MAX_INPUT_ENV: Final = "HARNESSWEAVER_HOOK_MAX_INPUT"
MAX_INPUT: Final = 16 * 1024 * 1024
"""The default limit of an event document, in bytes: 16 MiB. A Write of a large file, a tool
result, or Gemini CLI's ``BeforeModel`` request with a long history fit well inside it."""
MAX_INPUT_CEILING: Final = 1024 * 1024 * 1024
"""The largest limit the variable may set (1 GiB)."""
MAX_DEPTH: Final = 128
"""How deeply arrays and objects may nest in an event document (the document itself is 1)."""

_NOT_BRACKETS: Final = bytes(b for b in range(256) if b not in b"[]{}")
_NOT_BRACKETS_OR_QUOTES: Final = bytes(b for b in range(256) if b not in b'[]{}"')
_OPENS: Final = bytes.maketrans(b"[{]}", b"(())")
_CHUNK: Final = 16
_RUNS: dict[bytes, tuple[int, int]] = {}
"""Per run of brackets: how much it changes the depth, and its highest point on the way."""


class LimitError(ValueError):
    """The document is beyond a limit, or the limit's variable holds a value it cannot; the
    message names the limit and how to change it, never the document's content."""


def max_input() -> int:
    """The limit on stdin in bytes: ``HARNESSWEAVER_HOOK_MAX_INPUT``, else :data:`MAX_INPUT`."""
    given = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not given:
        return MAX_INPUT
    if given.isascii() and given.isdigit() and 1 <= int(given) <= MAX_INPUT_CEILING:
        return int(given)
    raise LimitError(
        f"{MAX_INPUT_ENV}={os.environ.get(MAX_INPUT_ENV)!r:.40}: expected the largest event "
        f"document in bytes, a whole number from 1 to {MAX_INPUT_CEILING} (unset: {MAX_INPUT})"
    )


def read_input(stream: IO[bytes], limit: int) -> bytes:
    """The document on ``stream``, reading at most ``limit + 1`` bytes: :class:`LimitError`
    when there are more than ``limit``."""
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        raise LimitError(
            f"the event document is larger than {limit} bytes, the limit "
            f"({MAX_INPUT_ENV}; default {MAX_INPUT})"
        )
    return raw


def check_depth(raw: bytes, limit: int = MAX_DEPTH) -> None:
    """:class:`LimitError` when arrays and objects in ``raw`` nest deeper than ``limit``.

    A scan of the bytes, without recursion: the strings are taken out (a bracket in a string
    does not nest), then the brackets left are counted. A document with fewer opening brackets
    than the limit is not scanned at all. Input that is not JSON is left to the parser, which
    refuses it; at worst, the scan miscounts it and refuses it for its depth."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return
    if _too_deep(_outside_strings(raw).translate(_OPENS, _NOT_BRACKETS), limit):
        raise LimitError(
            f"the event document nests arrays and objects more than {limit} deep, the limit"
        )


def _outside_strings(raw: bytes) -> bytes:
    """``raw`` without its strings' contents: the escaped backslashes and quotes go first, so
    every quote left opens or closes a string (bytes operations only: fast on 16 MiB)."""
    plain = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    return b"".join(plain.translate(None, _NOT_BRACKETS_OR_QUOTES).split(b'"')[::2])


def _too_deep(brackets: bytes, limit: int) -> bool:
    """Whether ``brackets`` (``(`` opens, ``)`` closes) go deeper than ``limit``, counted a
    run of :data:`_CHUNK` at a time (a table lookup each, not a Python step per bracket)."""
    depth = 0
    for start in range(0, len(brackets), _CHUNK):
        run = brackets[start : start + _CHUNK]
        change, top = _RUNS.get(run) or _run(run)
        if depth + top > limit:
            return True
        depth += change
    return False


def _run(run: bytes) -> tuple[int, int]:
    depth = top = 0
    for byte in run:
        depth += 1 if byte == 40 else -1  # "("
        top = max(top, depth)
    if len(_RUNS) < 65536:
        _RUNS[run] = (depth, top)
    return depth, top
