"""Just enough of the Anthropic Messages API for Claude Code: ``POST /v1/messages`` (streamed
as server-sent events, or one JSON document), ``POST /v1/messages/count_tokens``, and a
harmless answer to anything else the CLI asks at start.

The scripted turn is chosen by the number of ``tool_result`` blocks in the conversation, so
a resumed session (``claude -p --resume``, a new process sending the whole history) gets the
next turn. A request without ``tools`` is a side request of the CLI (a title, a summary): it
is answered with plain text and uses no turn up.
"""

from __future__ import annotations

import json
from typing import Any

from .server import Handler, Turn

__all__ = ["AnthropicHandler", "answered", "tool_results"]

_USAGE = {"input_tokens": 12, "output_tokens": 4}


def tool_results(body: Any) -> list[dict[str, Any]]:
    """Every ``tool_result`` block of a Messages request, oldest first."""
    found: list[dict[str, Any]] = []
    for message in (body or {}).get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            found += [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
    return found


def answered(body: Any) -> int:
    """How many tool calls of the script the conversation has answered."""
    return len(tool_results(body))


def _blocks(turn: Turn, number: int) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if turn.text or turn.tool is None:
        blocks.append({"type": "text", "text": turn.text or "Done."})
    if turn.tool is not None:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_fake{number:04d}",
                "name": turn.tool,
                "input": dict(turn.arguments),
            }
        )
    return blocks


def _stream(message: dict[str, Any]) -> list[tuple[str | None, Any]]:
    head = dict(message, content=[], stop_reason=None, stop_sequence=None)
    events: list[tuple[str | None, Any]] = [
        ("message_start", {"type": "message_start", "message": head})
    ]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            start: dict[str, Any] = {"type": "text", "text": ""}
            delta: dict[str, Any] = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            ),
            (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            ),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": _USAGE["output_tokens"]},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


class AnthropicHandler(Handler):
    """Answers Claude Code's requests from the server's script."""

    def route(self, path: str, body: Any) -> None:
        path = path.split("?", 1)[0]
        if path == "/v1/messages/count_tokens":
            self.send_json(200, {"input_tokens": 12})
        elif path == "/v1/messages" and isinstance(body, dict):
            self._messages(body)
        else:  # start-up probes, feature flags: an empty, harmless answer
            self.send_json(200, {})

    def _messages(self, body: dict[str, Any]) -> None:
        if body.get("tools"):
            done = answered(body)
            turn = self.fake.turn(done)
        else:
            done, turn = 0, Turn(text="ok")
        content = _blocks(turn, done)
        message = {
            "id": f"msg_fake{len(self.fake.requests):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "claude-fake",
            "content": content,
            "stop_reason": "tool_use" if turn.tool is not None else "end_turn",
            "stop_sequence": None,
            "usage": dict(_USAGE),
        }
        if body.get("stream"):
            self.send_sse(_stream(message))
        else:
            self.send_json(200, message)
