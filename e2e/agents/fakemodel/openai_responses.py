"""A fake OpenAI Responses API (``POST /v1/responses``, streaming SSE) for Codex CLI.

Each request is answered with the turn after the number of tool results
(``function_call_output`` items) in its ``input``: a tool turn streams one ``function_call``
item, a text turn streams ``output_text`` deltas in an assistant message; both end with
``response.completed`` carrying usage. Anything else Codex asks at start (``GET /v1/models``
and the like) gets a harmless empty answer.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from .server import Handler, Turn

__all__ = ["ResponsesHandler", "answered", "function_outputs"]

_USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 10,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 110,
}


def function_outputs(body: Any) -> list[dict[str, Any]]:
    """The ``function_call_output`` items of a Responses request (the tool results sent back)."""
    items = body.get("input") if isinstance(body, dict) else None
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]


def answered(body: Any) -> int:
    """How many tool results the conversation in ``body`` holds."""
    return len(function_outputs(body))


def _tool_events(turn: Turn) -> list[tuple[str | None, Any]]:
    item_id = f"fc_{uuid.uuid4().hex[:12]}"
    call_id = f"call_{uuid.uuid4().hex[:12]}"
    item = {
        "type": "function_call",
        "id": item_id,
        "call_id": call_id,
        "name": turn.tool,
        "arguments": json.dumps(turn.arguments),
        "status": "completed",
    }
    if turn.namespace is not None:
        item["namespace"] = turn.namespace
    added = {**item, "arguments": "", "status": "in_progress"}
    return [
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": added},
        ),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
    ]


def _text_events(turn: Turn) -> list[tuple[str | None, Any]]:
    item_id = f"msg_{uuid.uuid4().hex[:12]}"
    message = {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": turn.text, "annotations": []}],
    }
    added = {**message, "status": "in_progress", "content": []}
    delta = {
        "type": "response.output_text.delta",
        "item_id": item_id,
        "output_index": 0,
        "content_index": 0,
        "delta": turn.text,
    }
    return [
        (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": 0, "item": added},
        ),
        ("response.output_text.delta", delta),
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": message},
        ),
    ]


class ResponsesHandler(Handler):
    """``POST …/responses`` scripted from the conversation; other paths answered empty."""

    def route(self, path: str, body: Any) -> None:
        if self.command == "POST" and path.rstrip("/").endswith("/responses"):
            self._respond(body)
        elif path.split("?")[0].rstrip("/").endswith("/models"):
            self.send_json(200, {"object": "list", "data": [], "models": []})
        else:
            self.send_json(404, {"error": {"message": "not scripted", "type": "not_found"}})

    def _respond(self, body: Any) -> None:
        turn = self.fake.turn(answered(body))
        response_id = f"resp_{uuid.uuid4().hex[:12]}"
        shell = {"id": response_id, "object": "response", "status": "in_progress", "output": []}
        events: list[tuple[str | None, Any]] = [
            ("response.created", {"type": "response.created", "response": shell}),
        ]
        events += _tool_events(turn) if turn.tool else _text_events(turn)
        done = {**shell, "status": "completed", "usage": _USAGE}
        events.append(("response.completed", {"type": "response.completed", "response": done}))
        self.send_sse(events)
