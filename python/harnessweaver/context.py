"""The run context an emit is made in: the envelope middleware see, and the trace it writes.

A trace keeps the newest ``limit`` records (I20). A service that runs for long gives its trace
a sink, ``Trace(sink=JsonlSink("trace.jsonl"))`` or any callable taking a list of record dicts,
and calls ``trace.close()`` (or uses ``with trace:``) at the end; or it takes records out with
``trace.drain()``.
"""

from __future__ import annotations

import json
import os
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from ._select import core

if TYPE_CHECKING:
    from ._pycore.context import RunContext
    from ._pycore.trace import Trace
else:
    RunContext = core.RunContext
    Trace = core.Trace

__all__ = ["JsonlSink", "RunContext", "Trace"]


class JsonlSink:
    """A trace sink that writes each record as one line of JSON to a path or an open text
    stream: the same lines as ``Trace.write_jsonl``. A path is created (or truncated, or with
    ``append=True`` appended to) and closed by ``close()``; a stream given is left open.

    The Rust core hands it JSON Lines text made without dicts (``write_text``).
    """

    __slots__ = ("_file", "_owned")

    def __init__(self, file: str | os.PathLike[str] | IO[str], *, append: bool = False) -> None:
        self._owned = isinstance(file, str | os.PathLike)
        if isinstance(file, str | os.PathLike):
            self._file: IO[str] = open(file, "a" if append else "w", encoding="utf-8")  # noqa: SIM115
        elif callable(getattr(file, "write", None)):
            self._file = file
        else:
            raise TypeError(f"JsonlSink needs a path or a text stream, got {file!r}")

    def __call__(self, records: list[dict[str, Any]]) -> None:
        """Write ``records`` (dicts with the keys of I8), one line each."""
        dumps = json.dumps
        self._file.write(
            "".join(dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records)
        )

    def write_text(self, text: str) -> None:
        """Write lines already made (each ending in a newline)."""
        self._file.write(text)

    def flush(self) -> None:
        self._file.flush()

    def close(self) -> None:
        """Flush; close the file when the sink opened it."""
        if self._owned:
            self._file.close()
        elif not self._file.closed:
            self._file.flush()

    def __enter__(self) -> JsonlSink:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
