"""Writing the hook command's answer, inside the fail-closed path.

An answer that cannot reach the agent whole must not end in a traceback and exit status 1,
which every agent reads as "go on": text UTF-8 cannot carry (a lone surrogate from the model's
tool input, echoed by a rewrite), a stdout that fails (a closed pipe, a full disk) or an exit
status other than the two the command answers with all become the blocking status with one
line on stderr. Standard library only: the warm client writes its answers through this too.
"""

from __future__ import annotations

import contextlib
from typing import IO, Final

__all__ = ["EXIT_BLOCK", "refusal", "write_answer"]

EXIT_BLOCK: Final = 2
"""``protocol.EXIT_BLOCK`` (not imported: the warm client loads only the standard library)."""
_ANSWERED: Final = frozenset({0, EXIT_BLOCK})


def refusal(problem: str, what: str = "error") -> str:
    """The one stderr line of a refusal by the command itself (``what``: ``error``, or
    ``refused`` for input beyond a limit)."""
    return f"harnessweaver hook: {what}: {problem} (failing closed)\n"


def write_answer(code: int, out: str, err: str, stdout: IO[str], stderr: IO[str]) -> int:
    """Write ``out`` on ``stdout`` and ``err`` on ``stderr``; return the exit status: ``code``,
    or :data:`EXIT_BLOCK` when the answer cannot be written as it is."""
    if code not in _ANSWERED:
        return _refuse(f"the answer's exit status {code!r:.20} is not one it gives", stderr)
    try:
        data = out.encode("utf-8")
    except UnicodeEncodeError:
        return _refuse("the answer holds text UTF-8 cannot carry (a lone surrogate)", stderr)
    if data:
        try:
            _put(stdout, out, data)
        except Exception as exc:  # OSError, a stream that cannot take the text, ...: never exit 1
            return _refuse(f"the answer could not be written: {type(exc).__name__}", stderr)
    _say(stderr, err)
    return code


def _refuse(problem: str, stderr: IO[str]) -> int:
    _say(stderr, refusal(problem))
    return EXIT_BLOCK


def _put(stream: IO[str], text: str, data: bytes) -> None:
    """Write UTF-8 whatever the stream's own encoding (the agents read UTF-8), then flush so a
    failure shows here and not at the interpreter's exit."""
    binary = getattr(stream, "buffer", None)
    if binary is None:
        stream.write(text)
    else:
        stream.flush()
        binary.write(data)
        binary.flush()
    stream.flush()


def _say(stderr: IO[str], text: str) -> None:
    """Best effort: the exit status carries the decision whether or not this is read."""
    if not text:
        return
    with contextlib.suppress(Exception):  # nowhere left to report it
        _put(stderr, text, text.encode("utf-8", "backslashreplace"))
