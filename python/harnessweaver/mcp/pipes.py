"""The proxy's own stdin and stdout as event-loop pipes, without worker threads.

The SDK's stdio server reads and writes through ``anyio.wrap_file``: every line read and
every message written is a hand-off to a worker thread and back, a dozen per tool call, which
is most of what the proxy adds over stdio. Where both ends are pipes (as a client that starts
the proxy gives it) the proxy reads and writes them on the event loop itself. Like the SDK,
it keeps fd 1 for its messages alone: while serving, fd 1 is stderr, so a stray ``print`` in
a middleware never lands inside the protocol, and fd 0 is the null device.

Anything else (a terminal, a file, another event loop than asyncio) gets ``None``: the SDK's
own streams then.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

from .upstream import MAX_MESSAGE

__all__ = ["MAX_LINE", "Pipes", "pipes"]

MAX_LINE = MAX_MESSAGE
"""The longest line (one message) read from the client, in bytes; a longer one is answered
as a parse error and skipped, so a hostile client cannot fill memory."""


def _pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class Pipes:
    """stdin's lines (decoded as the SDK does: UTF-8, bad bytes replaced) and a writer with
    the ``write``/``flush`` the SDK's stdio server calls."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while True:
            try:
                line = await self.reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as end:
                if end.partial:
                    yield end.partial.decode("utf-8", "replace")
                return
            except asyncio.LimitOverrunError:
                await self._skip_line()
                yield "\x00 a line longer than the proxy reads\n"  # not JSON: a parse error
                continue
            yield line.decode("utf-8", "replace")

    async def _skip_line(self) -> None:
        while True:
            try:
                await self.reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as over:
                await self.reader.readexactly(over.consumed)
            except asyncio.IncompleteReadError:
                return

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


async def pipes() -> Pipes | None:
    """This process's stdin and stdout on the running asyncio loop, or ``None``."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    if not (_pipe(0) and _pipe(1)):
        return None
    messages_in, messages_out = os.dup(0), os.dup(1)
    reader = asyncio.StreamReader(limit=MAX_LINE)
    protocol: Any = asyncio.StreamReaderProtocol(reader)
    await loop.connect_read_pipe(lambda: protocol, os.fdopen(messages_in, "rb", buffering=0))
    transport, out_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(messages_out, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, out_protocol, reader, loop)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # a stray print goes to stderr, never into the protocol
    return Pipes(reader, writer)
