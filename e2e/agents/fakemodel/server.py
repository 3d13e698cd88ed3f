"""What every fake model server shares: a thread serving HTTP on 127.0.0.1, a script of turns,
and a log of the requests it was sent.

A vendor module subclasses :class:`Handler` (its ``route`` answers one request) and the test
runs the agent against :class:`FakeServer.url`. The script is decided from the conversation
the agent sends, not from a counter, so a resumed session (a new process sending the whole
history again) gets the next turn, and an agent's side requests (titles, token counts) do not
use one up.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeServer", "Handler", "Turn"]


@dataclass(frozen=True)
class Turn:
    """One scripted answer of the model: a tool call (``tool`` with ``arguments``) or text."""

    text: str = ""
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    namespace: str | None = None
    """Responses API only: the namespace of a namespaced tool (Codex offers an MCP server's
    tools as the namespace ``mcp__<server>``, each called by its own name within it)."""


class Handler(BaseHTTPRequestHandler):
    """One request; ``self.server`` is the :class:`FakeServer`'s HTTP server."""

    protocol_version = "HTTP/1.1"
    fake: FakeServer  # set on the subclass made per server

    def route(self, path: str, body: Any) -> None:  # pragma: no cover - per vendor
        raise NotImplementedError

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        self.fake.requests.append((self.command, self.path, body))
        self.route(self.path, body)

    def do_GET(self) -> None:
        self.fake.requests.append((self.command, self.path, None))
        self.route(self.path, None)

    def send_json(self, status: int, doc: Any) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, events: list[tuple[str | None, Any]]) -> None:
        """A complete ``text/event-stream`` body: ``(event name or None, data)`` pairs."""
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n")
        payload = "".join(chunks).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the log is `requests`
        pass


class FakeServer:
    """A server of ``handler`` on 127.0.0.1 (a free port), scripted with ``turns``; a context
    manager that starts and stops its thread."""

    def __init__(self, handler: type[Handler], turns: list[Turn]) -> None:
        self.turns = turns
        self.requests: list[tuple[str, str, Any]] = []
        self.on_turn: Callable[[int, Turn], None] | None = None
        """Called with ``answered`` and the turn just before it is sent: a test's way to change
        the world while the model "thinks" (say, break the spec between two hook events)."""
        bound = type(handler.__name__, (handler,), {"fake": self})
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), bound)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_port}"

    def turn(self, answered: int) -> Turn:
        """The turn after ``answered`` tool results (the last one again past the script)."""
        turn = self.turns[min(answered, len(self.turns) - 1)]
        if self.on_turn is not None:
            self.on_turn(answered, turn)
        return turn

    def __enter__(self) -> FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
