"""A stdio client's lines, screened: one that is not a JSON-RPC message gets its error.

The SDK's stdio server drops a line it cannot parse without a word, so a client that sent a
request with a malformed line waits for ever. JSON-RPC 2.0 answers it: a line that is not
JSON is a parse error (-32700, ``id: null``), JSON that is not a message an invalid request
(-32600, with the id when one can be read). The answer goes out on the server's own write
stream, so it never lands inside another message; the session goes on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage

__all__ = ["Screened", "problem"]


def problem(line: str) -> types.JSONRPCError | None:
    """The error a line earns, or ``None`` for a message (and for a blank line)."""
    if not line.strip():
        return None
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    try:
        types.jsonrpc_message_adapter.validate_python(value, by_name=False)
    except (ValueError, RecursionError):
        ident = value.get("id") if isinstance(value, dict) else None
        if isinstance(ident, bool) or not isinstance(ident, str | int):
            ident = None
        return _error(ident, types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC message")
    return None


def _error(ident: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message)
    )


class Screened:
    """This process's stdin, as the SDK's stdio server reads it (text lines, UTF-8 with
    undecodable bytes replaced), less the lines that are not messages: those are answered on
    ``write`` once the server has given it."""

    def __init__(self) -> None:
        raw = open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115 - lives as the process
        self._lines = anyio.wrap_file(TextIOWrapper(raw, encoding="utf-8", errors="replace"))
        self.write: Any = None
        self._ready = anyio.Event()

    def answer_on(self, write: Any) -> None:
        self.write = write
        self._ready.set()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._screened()

    async def _screened(self) -> AsyncIterator[str]:
        async for line in self._lines:
            error = problem(line)
            if error is None:
                yield line
                continue
            await self._ready.wait()
            await self.write.send(SessionMessage(error))
