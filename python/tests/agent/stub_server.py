"""A stub chat-completions server for the provider tests: HTTP/1.1 on 127.0.0.1, an
ephemeral port, one request per connection, scripted replies. Nothing leaves the machine."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class Stub:
    """Replies with ``replies`` in order: ``(status, body)``, a body being JSON data or raw
    text. ``received`` keeps every request."""

    replies: list[tuple[int, Any]]
    port: int = 0
    received: list[Received] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _read_request(self, stream: SocketStream) -> Received:
        data = b""
        while b"\r\n\r\n" not in data:
            data += await stream.receive(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            key, _, value = line.partition(":")
            headers[key.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            body += await stream.receive(65536)
        return Received(method, path, headers, json.loads(body) if body else None)

    async def handle(self, stream: SocketStream) -> None:
        async with stream:
            try:
                self.received.append(await self._read_request(stream))
            except anyio.EndOfStream:  # the client went away before sending a request
                return
            status, reply = self.replies.pop(0)
            raw = (reply if isinstance(reply, str) else json.dumps(reply)).encode()
            head = (
                f"HTTP/1.1 {status} Stub\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(raw)}\r\nConnection: close\r\n\r\n"
            )
            await stream.send(head.encode() + raw)


@asynccontextmanager
async def stub_server(*replies: tuple[int, Any]) -> AsyncIterator[Stub]:
    """Serve ``replies`` until the block ends."""
    stub = Stub(list(replies))
    async with await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0) as listener:
        stub.port = listener.extra(SocketAttribute.local_port)
        async with anyio.create_task_group() as group:
            group.start_soon(listener.serve, stub.handle)
            yield stub
            group.cancel_scope.cancel()


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """A chat-completions response body."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "cmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


def function_call(id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}
