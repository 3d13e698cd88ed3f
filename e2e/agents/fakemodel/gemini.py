"""Just enough of the Gemini API (``generativelanguage`` v1beta) for Gemini CLI.

``POST /v1beta/models/<model>:streamGenerateContent`` (``?alt=sse``) and ``:generateContent``
answer with the scripted turn: a ``functionCall`` part for a tool call, a ``text`` part
otherwise, with ``finishReason`` and ``usageMetadata``. The turn is chosen from the
conversation: the number of model turns already in ``contents`` (each tool call was answered
by a ``functionResponse``, each text ended an invocation), so a resumed session, which sends
its whole history again, gets the next turn even after an invocation that ended in text.
``:countTokens`` and anything else the CLI asks on start are answered harmlessly.

Side requests the CLI may make besides the main conversation (a request for JSON, such as its
"who speaks next" check; not seen with a fixed model) are answered with a JSON text that ends
the turn, and do not use up a turn.
"""

from __future__ import annotations

import json
from typing import Any

from .server import Handler, Turn

__all__ = ["GeminiHandler", "answered", "candidate", "chunks"]

_USAGE = {"promptTokenCount": 12, "candidatesTokenCount": 5, "totalTokenCount": 17}


def answered(body: Any) -> int:
    """How many turns of the model the conversation holds."""
    contents = (body or {}).get("contents") or []
    return sum(1 for content in contents if content.get("role") == "model")


def candidate(turn: Turn, answered_so_far: int) -> dict[str, Any]:
    """One ``GenerateContentResponse`` holding ``turn`` as the model's whole answer."""
    if turn.tool:
        call = {"name": turn.tool, "args": turn.arguments, "id": f"call-{answered_so_far}"}
        parts: list[dict[str, Any]] = [{"functionCall": call}]
        if turn.text:
            parts.insert(0, {"text": turn.text})
    else:
        parts = [{"text": turn.text or "Done."}]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": _USAGE,
        "modelVersion": "fake-gemini",
    }


def chunks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """``doc`` as a stream: a text answer in two chunks (only the last one finishes and
    carries the usage, as the real API streams), anything else in one."""
    first = doc["candidates"][0]
    parts = first["content"]["parts"]
    if len(parts) != 1 or "text" not in parts[0] or len(parts[0]["text"]) < 2:
        return [doc]
    text = parts[0]["text"]
    half = len(text) // 2
    head = {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text[:half]}]}, "index": 0}]
    }
    tail = json.loads(json.dumps(doc))
    tail["candidates"][0]["content"]["parts"] = [{"text": text[half:]}]
    return [head, tail]


def _side_answer(body: Any) -> dict[str, Any] | None:
    """The answer to a side request (one asking for JSON), or ``None`` for the conversation."""
    config = (body or {}).get("generationConfig") or {}
    wants_json = config.get("responseMimeType") == "application/json" or (
        "responseSchema" in config or "responseJsonSchema" in config
    )
    if not wants_json:
        return None
    text = json.dumps({"next_speaker": "user", "reasoning": "the turn is over"})
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
        ],
        "usageMetadata": _USAGE,
    }


class GeminiHandler(Handler):
    """Routes the Gemini API's model methods; every other request gets an empty object.

    ``split_text``: stream a text answer in two chunks (Gemini CLI then fires ``AfterModel``
    once per chunk, each a hook process: off unless a test is about that)."""

    split_text = False

    def route(self, path: str, body: Any) -> None:
        method = path.split("?", 1)[0].rsplit(":", 1)[-1] if ":" in path else ""
        if method == "countTokens":
            self.send_json(200, {"totalTokens": 12})
            return
        if method not in ("streamGenerateContent", "generateContent"):
            self.send_json(200, {})
            return
        doc = _side_answer(body)
        if doc is None:
            count = answered(body)
            doc = candidate(self.fake.turn(count), count)
        if method == "generateContent":
            self.send_json(200, doc)
        else:
            streamed = chunks(doc) if self.split_text else [doc]
            self.send_sse([(None, chunk) for chunk in streamed])
