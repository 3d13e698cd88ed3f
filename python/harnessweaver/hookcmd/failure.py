"""Whether a tool's result, as an agent reports it after the call, is a failure.

The tool-failure guard counts failures, so a failure the command does not recognise is a
guard that never fires. Each agent says it differently:

- Claude Code sends a failed call as its own event (``PostToolUseFailure``, read in
  ``translate``); an object with an ``error`` is a failure in any agent.
- Gemini CLI reports a failed shell command as text only: ``tool_response.llmContent`` ends
  with status lines after the command's output (``Exit Code: 2``, ``Signal: SIGTERM``,
  ``Process Group PGID: 123``); ``error`` is set only for the tool's own errors.
- Codex (0.169) sends a shell command's bare output as ``tool_response``: nothing in the
  document says how it exited. Its transcript (``transcript_path``, JSON lines) records each
  command's end, ``item_completed`` with the call's id, ``status`` and ``exit_code``; that
  is read. A transcript that cannot be read, or holds no such line yet, leaves the call
  counted as a success (what the document alone says).
- An MCP tool's result (``CallToolResult``) with ``isError: true`` is a failure.
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import Any

__all__ = ["failed"]

_STATUS = re.compile(
    r"(?P<key>Error|Exit Code|Signal|Background PIDs|Process Group PGID): ?(?P<value>.*)"
)
"""One of the status lines Gemini CLI's shell tools write after the output."""

_TRANSCRIPT_TAIL = 8 * 1024 * 1024
"""How much of the end of a Codex transcript is read: the call just ended, so its line is
among the last (a command's whole output can be on it)."""


def failed(agent: str, doc: dict[str, Any]) -> bool:
    """Whether the document's ``tool_response`` reports a failure."""
    output = doc.get("tool_response")
    if isinstance(output, dict) and (
        output.get("error") not in (None, "", False) or output.get("isError") is True
    ):
        return True  # an error, or an MCP tool's result (CallToolResult) marked isError
    if agent == "gemini" and isinstance(output, dict):
        return _gemini_status_failed(_text(output.get("llmContent")))
    if agent == "codex":
        return _codex_transcript_failed(doc)
    return False


def _text(content: Any) -> str:
    """``llmContent``: a string, or a list of parts of which the text ones count."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _gemini_status_failed(text: str) -> bool:
    """The status lines at the end of ``text`` (after the output, inside Gemini's
    ``<untrusted_context>`` wrapper) report a non-zero exit code or a signal. Only the
    trailing block is read, so a line the command itself printed earlier does not count."""
    lines = text.rstrip().splitlines()
    if lines and lines[-1].strip() == "</untrusted_context>":
        lines.pop()
    for line in reversed(lines):
        status = _STATUS.fullmatch(line.strip())
        if status is None:
            return False
        key, value = status["key"], status["value"].strip()
        if key == "Exit Code" and re.fullmatch(r"-?\d+", value) and int(value) != 0:
            return True
        if key == "Signal" and value not in ("", "(none)"):
            return True
    return False


def _codex_transcript_failed(doc: dict[str, Any]) -> bool:
    """Codex's transcript says the call ``tool_use_id`` ended with a non-zero exit code or
    failed; ``False`` when it says nothing (no transcript, no such line)."""
    path, call = doc.get("transcript_path"), doc.get("tool_use_id")
    if not isinstance(path, str) or not path or not isinstance(call, str) or not call:
        return False
    tail = _tail(path)
    if tail is None:
        return False
    needle = json.dumps(call).encode()
    for line in reversed(tail.splitlines()):
        if needle in line and b'"item_completed"' in line:
            item = _completed_item(line, call)
            if item is not None:
                code = item.get("exit_code")
                return item.get("status") == "failed" or (isinstance(code, int) and code != 0)
    return False


def _tail(path: str) -> bytes | None:
    """The last :data:`_TRANSCRIPT_TAIL` bytes of the regular file ``path``; ``None`` for
    anything else. The path comes from the document: a device (``/dev/zero``) would be read
    without end and a FIFO would block, so neither is read (opened without blocking)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        os.lseek(fd, max(0, info.st_size - _TRANSCRIPT_TAIL), os.SEEK_SET)
        chunks, left = [], _TRANSCRIPT_TAIL
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _completed_item(line: bytes, call: str) -> dict[str, Any] | None:
    """The item of an ``item_completed`` line about the call ``call``, else ``None``."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):  # the tail's first line may be cut; any may be hostile
        return None
    payload = entry.get("payload") if isinstance(entry, dict) else None
    item = payload.get("item") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or payload.get("type") != "item_completed":
        return None
    return item if isinstance(item, dict) and item.get("id") == call else None
