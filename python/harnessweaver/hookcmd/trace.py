"""``harnessweaver hook --trace FILE``: what each event decided, appended as JSON Lines.

The records are the bus's own (``docs/trace.md``): one per middleware that ran, then the hook
record, with ``run`` = the agent's session id, so ``hw.Trace.read_jsonl`` reads the file back.
Each process emits once, so every event's records carry emit ordinal 1. When the command
itself refuses an event whose hook point it knows (the session was refused earlier, the spec
does not load, the state or the answer fails), it adds a hook record of its own: outcome
``block`` and a code naming the cause (:data:`CODES`); exception types only ever reach stderr,
messages nowhere (R9). A document it cannot read names no session, so it leaves no record.

Concurrent invocations of one session append to one file: each event's lines are one
``write`` to a file opened for appending, under an exclusive ``flock``, so lines never
interleave.

A trace that cannot be written does not change the decision: the call was judged, and turning
a full disk into a refusal of every tool (or the reverse, letting a refused one run) would make
the audit log decide. A line on stderr says the trace failed.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Final

__all__ = ["CODES", "EventTrace", "current"]

CODES: Final = {
    "session": "hook_session_refused",
    "input": "hook_invalid_event",
    "limit": "hook_input_limit",
    "spec": "hook_spec_error",
    "error": "hook_error",
    "answer": "hook_answer_unwritable",
}
"""The code of the command's own hook record, by cause."""

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_TOOL_HOOKS: Final = frozenset({"tool.before", "tool.after"})

current: ContextVar[EventTrace | None] = ContextVar("harnessweaver_hook_trace", default=None)
"""The trace of the event being answered (``None``: not traced); ``_emit`` adds to it."""


class EventTrace:
    """The records of one event, written to ``path`` at its end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines: list[str] = []
        self.emits = 0
        self.failed: str | None = None

    def add_bus(self, trace: Any) -> None:
        """The bus's records of one emit (the run context's ``hw.Trace``)."""
        self.emits += 1
        try:
            self.lines.append(trace.to_jsonl())
        except Exception as exc:  # reported by write(), the decision stands
            self.failed = type(exc).__name__

    def add_refusal(self, hook: str, session: str, tool: object, cause: str) -> None:
        """The command's own hook record: it refused the event (``cause`` in :data:`CODES`)."""
        record: dict[str, Any] = {"emit": self.emits + 1, "hook": hook, "run": _shown(session)}
        if hook in _TOOL_HOOKS and isinstance(tool, str):
            record["tool"] = _shown(tool)
        record |= {"kind": "hook", "outcome": "block", "modified": False, "code": CODES[cause]}
        self.emits += 1
        self.lines.append(json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n")

    def write(self) -> str | None:
        """Append the records; ``None``, or the stderr line saying the trace failed."""
        failed = self.failed
        if self.lines:
            try:
                _append(self.path, "".join(self.lines).encode("utf-8"))
            except Exception as exc:  # never the decision's concern: see the module's docstring
                failed = type(exc).__name__
        if failed is None:
            return None
        return (
            f"harnessweaver hook: warning: the trace {str(self.path)!r:.200} was not written: "
            f"{failed} (the decision stands)"
        )


def _shown(text: str) -> str:
    """A run id or tool name as the bus writes it: a lone surrogate becomes U+FFFD (I21)."""
    return _SURROGATE.sub("\ufffd", text)


def _append(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
