"""The trajectory journal: JSON Lines, one line per completed step, written as the run goes.

Every line is written whole (UTF-8, ending with a newline) and flushed. Lines are in format
2 (``"v": 2``, ``delta.py``): each holds what changed since the line before, so a journal
grows with the steps, not with their square. Format 1 lines (no ``v``: each line the whole
state, as :mod:`.lines` models) are still read, and a resume appends format 2 lines to them.

After a crash the journal is read up to its last complete line: the bytes after the last
newline (a line the crash cut, maybe inside a character) are ignored, and :func:`recover`
gives the state to resume from; appending to the journal cuts them off first. Every format 2
line also counts the records of the trace file written before it (``trace``), so that a
resume can cut the trace back to the journal's last line (``records.py``).
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from .delta import FORMAT, Base, decode_line, encode_line
from .errors import JournalError
from .lines import LINES, DecisionLine, EndLine, JournalLine, Line, StartLine, resumable_state
from .state import RunState

__all__ = [
    "DecisionLine",
    "EndLine",
    "JournalLine",
    "JournalWriter",
    "Scan",
    "StartLine",
    "cut_torn_tail",
    "read_journal",
    "recover",
    "scan",
]

_RULE = "journal"
_TOO_DEEP = "arrays and objects nest too deeply to read"
logger = logging.getLogger(__name__)


def cut_torn_tail(path: Path) -> int:
    """Drop whatever follows the last newline (a line a crash left half written); the number
    of bytes dropped."""
    if not path.exists():
        return 0
    with open(path, "rb+") as handle:
        data = handle.read()
        whole = data.rfind(b"\n") + 1
        if whole < len(data):
            handle.truncate(whole)
    return len(data) - whole


@dataclass(frozen=True, slots=True)
class Scan:
    """A journal read up to its last complete line."""

    lines: tuple[Line, ...]
    base: Base
    """What the next line is written against."""
    trace: int | None
    """The trace records the last line counts (``None``: no line, or a format 1 line)."""
    whole: int
    """Bytes of complete lines."""
    torn: int
    """Bytes after the last newline: a line a crash cut."""


def _unreadable(path: Path, number: int, why: str) -> JournalError:
    return JournalError(
        "invalid_journal",
        _RULE,
        f"{path}: line {number} is not a journal line ({why}); only a torn last line, one "
        f"without its newline, is skipped ({_RULE})",
    )


def _why(exc: Exception) -> str:
    """What is wrong with a line, without its text (a line holds the run's data)."""
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(map(str, first["loc"])) or "(line)"
        return f"{where}: {first['type']}"
    if isinstance(exc, UnicodeDecodeError):
        return f"invalid UTF-8 at byte {exc.start}"
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON at character {exc.pos}"
    if isinstance(exc, KeyError):
        return f"missing field {exc.args[0]!r}"
    if isinstance(exc, TypeError | AttributeError):
        return "a field has the wrong type"
    return str(exc)  # our own ValueErrors, which name the bad value


def _line(text: bytes, base: Base) -> tuple[Line, int | None]:
    raw: Any = json.loads(text.decode("utf-8"))
    if not isinstance(raw, dict):
        raise ValueError(f"a line is a JSON object, not {type(raw).__name__}")
    version = raw.get("v")
    if version is None:  # format 1: the line is the model
        return LINES.validate_python(raw), None
    if version != FORMAT:
        raise ValueError(f"format {version!r}: this harnessweaver reads formats 1 and {FORMAT}")
    trace = raw.get("trace")
    if trace is not None and (not isinstance(trace, int) or isinstance(trace, bool)):
        raise ValueError(f"trace {trace!r}: a count of trace records")
    return decode_line(raw, base), trace


def scan(path: str | os.PathLike[str]) -> Scan:
    """A journal's complete lines, decoded in order (an absent journal has none). A last line
    without its newline is ignored; any other line that does not decode is an error."""
    journal = Path(path)
    data = journal.read_bytes() if journal.exists() else b""
    whole = data.rfind(b"\n") + 1
    lines: list[Line] = []
    base, trace = Base(), None
    start = 0
    while start < whole:
        end = data.index(b"\n", start)
        try:
            line, trace = _line(data[start:end], base)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise _unreadable(journal, len(lines) + 1, _why(exc)) from None
        except RecursionError:  # the parser's (or a model's) recursion, on a hostile line
            raise _unreadable(journal, len(lines) + 1, _TOO_DEEP) from None
        lines.append(line)
        base = base.after(line)
        start = end + 1
    return Scan(tuple(lines), base, trace, whole, len(data) - whole)


def read_journal(path: str | os.PathLike[str]) -> tuple[Line, ...]:
    """Every complete line of a journal, in order, each with its whole state. A last line
    without its newline (a crash while writing it) is ignored; any other line that does not
    decode is an error."""
    return scan(path).lines


def recover(path: str | os.PathLike[str]) -> RunState | None:
    """The state to resume a run from, after its last complete journal line (``None`` for a
    journal with no complete line: nothing was admitted, start the run again).

    A state with ``pending`` set needs a decision; one whose ``phase`` is ``"ended"`` cannot
    be resumed; any other (a crash, ``provider_error``, a budget) resumes with no decision.
    A crash in the middle of a step resumes at the start of that step, so its tool calls may
    run again. What was dropped (a torn last line) is logged.
    """
    found = scan(path)
    if found.torn:
        logger.warning(
            "journal %s: ignored a torn last line (%d bytes after the last newline)",
            path,
            found.torn,
        )
    if not found.lines:
        logger.info("journal %s: no complete line, nothing to resume", path)
        return None
    state = resumable_state(found.lines[-1])
    logger.info(
        "journal %s: run %s recovered after line %d (%s), phase %s, %d steps",
        path,
        state.run_id,
        len(found.lines),
        found.lines[-1].kind,
        state.phase,
        state.steps,
    )
    return state


class JournalWriter:
    """Appends lines to a journal in format 2, each flushed as soon as it is written.

    Appending, the journal is read first (``scanned``, or read here): its torn tail is cut
    off, and the first line written is a delta against the state its last line left.
    """

    __slots__ = ("_base", "_handle", "path")

    def __init__(
        self, path: str | os.PathLike[str], *, append: bool, scanned: Scan | None = None
    ) -> None:
        self.path = Path(path)
        self._base = Base()
        if append:
            found = scan(self.path) if scanned is None else scanned
            self._base = found.base
            if found.torn:
                os.truncate(self.path, found.whole)
        self._handle: IO[bytes] = open(self.path, "ab" if append else "wb")  # noqa: SIM115 - closed by close()

    def write(self, line: Line, *, trace: int | None = None) -> None:
        """Write ``line``; ``trace``: the trace records written before it, in all."""
        raw = encode_line(line, self._base)
        if trace is not None:
            raw["trace"] = trace
        text = json.dumps(raw, ensure_ascii=False, separators=(",", ":"), allow_nan=True)
        self._handle.write(text.encode("utf-8") + b"\n")
        self._handle.flush()
        self._base = self._base.after(line)

    def close(self) -> None:
        self._handle.close()
