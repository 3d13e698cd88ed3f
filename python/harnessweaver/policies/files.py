"""The files a ``harnessweaver.cedar`` item names (its policies, schema and entities), read as
UTF-8 text (I38).

They are read once, when the spec loads; a file that is missing, unreadable, too large or not
UTF-8 is a :class:`CedarLoadError` at the path the spec writes, so the loader reports it as it
reports a policy that does not parse.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..spec.limits import MAX_BYTES
from .errors import CedarLoadError

__all__ = ["PolicySource", "read_policy_file"]


@dataclass(frozen=True, slots=True)
class PolicySource:
    """One policy file's text and the path the spec writes for it."""

    file: str
    text: str


def read_policy_file(folder: Path, written: str, key: str) -> PolicySource:
    """The file ``written`` (relative to ``folder`` unless absolute), read as UTF-8 text."""
    path = folder / written  # an absolute `written` replaces the folder
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise CedarLoadError(key, why="the file does not exist", file=written, line=1) from None
    except OSError:
        raise CedarLoadError(key, why="the file cannot be read", file=written, line=1) from None
    if len(data) > MAX_BYTES:
        why = f"the file is larger than {MAX_BYTES:,} bytes"
        raise CedarLoadError(key, why=why, file=written, line=1)
    try:
        return PolicySource(written, data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        why = "the file is not UTF-8 text"
        raise CedarLoadError(key, why=why, file=written, line=line) from None
